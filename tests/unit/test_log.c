// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The report's stream (out_stream): what is written reaches standard output as the buffer fills,
 * not at the end, whole and in order, control characters shown as '?'; with --quiet only the
 * log file has it, and with neither there is no stream at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

static char dir[64];
static int saved_stdout = -1;

static int setup(void **state)
{
	(void)state;
	return test_dir_make(dir, "test_log");
}

static int teardown(void **state)
{
	(void)state;
	return test_dir_remove(dir);
}

/* standard output into dir/name from now on */
static void stdout_to(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fflush(stdout);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	saved_stdout = dup(1);
	assert_int_equal(dup2(fd, 1), 1);
	close(fd);
}

static void stdout_back(void)
{
	fflush(stdout);
	assert_int_equal(dup2(saved_stdout, 1), 1);
	close(saved_stdout);
}

static off_t size_of(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) ? -1 : st.st_size;
}

/* the whole of dir/name, in a static buffer */
static const char *slurp(const char *name, size_t *len)
{
	static char buf[1 << 20];
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

/* 20,000 lines (about 400 KB): on standard output before the stream is closed, then all of them */
static void test_streams(void **state)
{
	FILE *f;
	const char *got;
	size_t len;
	int n = 0;

	(void)state;
	stdout_to("out");
	f = out_stream(false);
	assert_non_null(f);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "==42== line %06d of the trace\n", i);
	/* most of it is out already: the stream holds a buffer, not the report */
	assert_true(size_of("out") > 300000);
	fputs("a name with an escape \033[2J, a bell \a\n", f);
	fclose(f);
	stdout_back();
	got = slurp("out", &len);
	for (const char *p = got; (p = strstr(p, " of the trace\n")); p++)
		n++;
	assert_int_equal(n, 20000);
	assert_non_null(strstr(got, "==42== line 000000 of the trace\n==42== line 000001 "));
	assert_non_null(strstr(got, "==42== line 019999 of the trace\n"));
	assert_non_null(strstr(got, "a name with an escape ?[2J, a bell ?\n"));
	assert_int_equal(len, 20000 * strlen("==42== line 000000 of the trace\n") +
				      strlen("a name with an escape ?[2J, a bell ?\n"));
}

/* --quiet: nothing on standard output; the log file has it all. Neither: no stream */
static void test_quiet(void **state)
{
	char path[128], err[256];
	const char *got;
	size_t len;
	FILE *f;

	(void)state;
	assert_null(out_stream(true));
	snprintf(path, sizeof(path), "%s/log", dir);
	assert_int_equal(log_tee_open(path, false, err, sizeof(err)), 0);
	stdout_to("out");
	f = out_stream(true);
	assert_non_null(f);
	fputs("only in the log\n", f);
	fclose(f);
	stdout_back();
	assert_int_equal(log_tee_close(err, sizeof(err)), 0);
	assert_int_equal(size_of("out"), 0);
	got = slurp("log", &len);
	assert_string_equal(got, "only in the log\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
