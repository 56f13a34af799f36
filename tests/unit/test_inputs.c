// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Input files (infile.h): regular files read, anything else refused at once and said what it
 * is; messages that name a file keep their reason whole. The importers refuse a FIFO without
 * waiting for a writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/infile.h"
#include "output/rawdata.h"
#include "output/store.h"
#include "output/vpd.h"

static char dir[64];

static const char *at(const char *name)
{
	static char path[4][256];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_inputs.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	write_file(at("regular"), "hello, file\n");
	write_file(at("empty"), "");
	if (mkfifo(at("fifo"), 0600) || symlink(at("fifo"), at("link-to-fifo")) ||
	    mkdir(at("dir"), 0700))
		return -1;
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("sock"));
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	close(s);
	/* a regression that blocks fails the test instead of hanging it */
	alarm(20);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void test_regular_file(void **state)
{
	struct stat st;
	unsigned char *data;
	char err[128], line[64];
	size_t len;
	FILE *f;
	int fd;

	(void)state;
	fd = infile_open(at("regular"), &st, err, sizeof(err));
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 12);
	/* blocking again, and not inherited by what topsprof runs */
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(infile_read_fd(fd, 100, &data, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 12);
	assert_string_equal((char *)data, "hello, file\n");
	free(data);
	/* pread: the descriptor's offset is left alone, so it reads again the same */
	assert_int_equal(infile_read_fd(fd, 100, &data, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 12);
	free(data);
	close(fd);

	assert_int_equal(infile_read(at("empty"), 100, &data, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 0);
	assert_int_equal(data[0], '\0');
	free(data);

	assert_int_equal(infile_read(at("regular"), 11, &data, &len, err, sizeof(err)), -1);
	assert_null(data);
	assert_string_equal(err, "larger than 11 bytes");
	assert_int_equal(infile_read(at("regular"), 12, &data, &len, err, sizeof(err)), 0);
	free(data);

	f = infile_fopen(at("regular"), err, sizeof(err));
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "hello, file\n");
	fclose(f);

	/* relative to a directory */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	{
		int in = infile_openat(fd, "regular", NULL, err, sizeof(err));

		assert_true(in >= 0);
		close(in);
		assert_int_equal(infile_openat(fd, "missing", NULL, err, sizeof(err)), -1);
		assert_string_equal(err, "No such file or directory");
	}
	close(fd);
}

static void test_refused(void **state)
{
	static const struct {
		const char *path, *reason;
	} cases[] = {
		{ "fifo", "not a regular file (a FIFO)" },
		{ "link-to-fifo", "not a regular file (a FIFO)" },
		{ "sock", "not a regular file (a socket)" },
		{ "dir", "not a regular file (a directory)" },
		{ "/dev/null", "not a regular file (a character device)" },
		{ "/dev/zero", "not a regular file (a character device)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = cases[i].path[0] == '/' ? cases[i].path : at(cases[i].path);
		unsigned char *data = (unsigned char *)"x";
		double t0 = now();
		char err[128] = "";
		size_t len;

		assert_int_equal(infile_open(path, NULL, err, sizeof(err)), -1);
		assert_string_equal(err, cases[i].reason);
		assert_null(infile_fopen(path, err, sizeof(err)));
		assert_string_equal(err, cases[i].reason);
		assert_int_equal(infile_read(path, 100, &data, &len, err, sizeof(err)), -1);
		assert_null(data);
		assert_string_equal(err, cases[i].reason);
		/* at once: nothing waited for a writer */
		assert_true(now() - t0 < 1.0);
	}
}

/* a merge of dir into out, prepared as topsprof prepares it (outfile.h); vpd_merge's result */
static int merge(const char *dir, const char *out, char *err, size_t errlen)
{
	struct outtarget t;
	int rc;

	if (outtarget_file(&t, out, false, err, errlen))
		return -3;
	rc = vpd_merge(dir, &t, err, errlen);
	outtarget_close(&t);
	return rc;
}

/* every importer refuses a FIFO at once, with the reason; a merge names its member */
static void test_importers(void **state)
{
	struct raw_settings rs;
	struct model m;
	char err[512];
	double t0 = now();

	(void)state;
	model_init(&m);
	assert_int_equal(store_read_profile(at("fifo"), &m, err, sizeof(err)), -1);
	assert_string_equal(err, "not a regular file (a FIFO)");
	assert_int_equal(raw_import(at("fifo"), &m, &rs, err, sizeof(err)), -1);
	assert_string_equal(err, "not a regular file (a FIFO)");
	assert_int_equal(vpd_import(at("sock"), &m, err, sizeof(err)), -1);
	assert_string_equal(err, "not a regular file (a socket)");
	assert_int_equal(vpd_import_profile(at("fifo"), &m, err, sizeof(err)), -1);
	assert_string_equal(err, "not a regular file (a FIFO)");
	assert_int_equal(vpd_import_profile(at("regular"), &m, err, sizeof(err)), -1);
	assert_string_equal(err, "not a topsprof profile (from --export-profile)");
	model_free(&m);

	/* a merge directory: a FIFO among its members is named, and nothing written */
	assert_int_equal(mkdir(at("merge"), 0700), 0);
	assert_int_equal(mkfifo(at("merge/rank3.vpd"), 0600), 0);
	assert_int_equal(merge(at("merge"), at("out.vpd"), err, sizeof(err)), -1);
	{
		char want[300];

		snprintf(want, sizeof(want), "%s: not a regular file (a FIFO)",
			 at("merge/rank3.vpd"));
		assert_string_equal(err, want);
	}
	write_file(at("merge/a.vpd"), "SQLite format 3 but nothing after the header");
	assert_int_equal(merge(at("merge"), at("out.vpd"), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/merge/a.vpd: "));
	assert_int_equal(access(at("out.vpd"), F_OK), -1);
	/* the merge directory itself a FIFO */
	assert_int_equal(merge(at("fifo"), at("out.vpd"), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "fifo: Not a directory"));
	assert_true(now() - t0 < 2.0);
}

/* a vpd is read by SQLite through the one descriptor topsprof opened: no journal or WAL beside
 * it is looked at, only SQLite's page cache is in memory (a sparse file of 8 GiB costs
 * nothing), and a merge reads each member once */
static void test_vpd_by_descriptor(void **state)
{
	struct vpd_identity id = { "h", "", "cmd" };
	struct outtarget t;
	struct rusage ru;
	struct model m;
	char err[512], buf[64];
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(at("vpd"), 0700), 0);
	assert_int_equal(outtarget_dir(&t, at("vpd"), false, err, sizeof(err)), 0);
	model_init(&m);
	m.root_pid = 42;
	assert_int_equal(vpd_export(&t, &m, &id, NULL, err, sizeof(err)), 1);
	model_free(&m);
	outtarget_close(&t);
	/* a hot journal and a WAL of anyone's making beside it: never read, never removed */
	write_file(at("vpd/h-42.vpd-journal"), "a journal of someone else's making");
	write_file(at("vpd/h-42.vpd-wal"), "a WAL of someone else's making");
	model_init(&m);
	assert_int_equal(vpd_import(at("vpd/h-42.vpd"), &m, err, sizeof(err)), 0);
	assert_int_equal(m.root_pid, 42);
	model_free(&m);
	f = fopen(at("vpd/h-42.vpd-journal"), "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "a journal of someone else's making");
	/* sparse, 8 GiB: read as its header says, without reading it all */
	assert_int_equal(truncate(at("vpd/h-42.vpd"), 1ll << 33), 0);
	model_init(&m);
	assert_int_equal(vpd_import_profile(at("vpd/h-42.vpd"), &m, err, sizeof(err)), 0);
	assert_int_equal(m.root_pid, 42);
	model_free(&m);
	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	assert_true(ru.ru_maxrss < 256 << 10);
	/* merged with itself under another name: two processes */
	assert_int_equal(link(at("vpd/h-42.vpd"), at("vpd/h-43.vpd")), 0);
	assert_int_equal(merge(at("vpd"), at("all.vpd"), err, sizeof(err)), 2);
	model_init(&m);
	assert_int_equal(vpd_import(at("all.vpd"), &m, err, sizeof(err)), 0);
	assert_int_equal(m.root_pid, 42);
	model_free(&m);
	/* an output that appeared after it was checked: the output's error */
	{
		struct outtarget o;

		assert_int_equal(outtarget_file(&o, at("all2.vpd"), false, err, sizeof(err)), 0);
		write_file(at("all2.vpd"), "another's");
		assert_int_equal(vpd_merge(at("vpd"), &o, err, sizeof(err)), VPD_MERGE_OUTPUT);
		assert_non_null(strstr(err, "all2.vpd: exists"));
		outtarget_close(&o);
	}
}

/* no byte written past errlen: the buffer is followed by guard bytes */
static void check_fits(const char *buf, size_t errlen, size_t cap)
{
	assert_true(strlen(buf) < errlen);
	for (size_t i = errlen; i < cap; i++)
		assert_int_equal((unsigned char)buf[i], 0xa5);
}

static bool ends_with(const char *s, const char *end)
{
	return strlen(s) >= strlen(end) && !strcmp(s + strlen(s) - strlen(end), end);
}

static bool valid_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : -1;

		if (n < 0)
			return false;
		for (p++; n; n--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static void test_named_errf(void **state)
{
	char name[5000], err[300];
	const char *reason = ": exists (use --force-overwrite to replace it)";
	size_t rl = strlen(reason);

	(void)state;
	/* what fits is as snprintf writes it */
	named_errf(err, sizeof(err), "/tmp/a.csv", ": %s", "No such file or directory");
	assert_string_equal(err, "/tmp/a.csv: No such file or directory");
	quoted_errf(err, sizeof(err), "zz", " is not a size (e.g. %s)", "8MB");
	assert_string_equal(err, "'zz' is not a size (e.g. 8MB)");
	/* exactly full */
	memset(name, 'n', sizeof(err) - 1 - rl);
	name[sizeof(err) - 1 - rl] = '\0';
	named_errf(err, sizeof(err), name, "%s", reason);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_memory_equal(err, name, strlen(name));
	assert_string_equal(err + strlen(name), reason);

	/* a name of PATH_MAX and more: cut in its middle, the reason whole, the buffer full */
	for (size_t i = 0; i < sizeof(name) - 1; i++)
		name[i] = (char)('a' + i % 26);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "/head", 5);
	memcpy(name + sizeof(name) - 11, "/rank3.vpd", 10);
	named_errf(err, sizeof(err), name, "%s", reason);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_memory_equal(err, "/head", 5);
	assert_non_null(strstr(err, "..."));
	assert_string_equal(err + strlen(err) - rl, reason);
	assert_non_null(strstr(err, "/rank3.vpd: exists"));
	/* its end keeps the larger part */
	assert_true(strstr(err, "...") - err < (ptrdiff_t)(sizeof(err) / 2));
	quoted_errf(err, sizeof(err), name, ": the name is too long");
	assert_int_equal(err[0], '\'');
	assert_string_equal(err + strlen(err) - strlen("': the name is too long"),
			    "': the name is too long");

	/* small buffers: never past the end, the reason kept as long as it fits */
	for (size_t len = 0; len < 80; len++) {
		char buf[96];

		memset(buf, 0xa5, sizeof(buf));
		named_errf(buf, len, name, ": %s", "No such file or directory");
		if (!len) {
			assert_int_equal((unsigned char)buf[0], 0xa5);
			continue;
		}
		check_fits(buf, len, sizeof(buf));
		if (len > strlen(": No such file or directory") + 3) {
			assert_non_null(strstr(buf, "..."));
			assert_true(ends_with(buf, ": No such file or directory"));
		}
		memset(buf, 0xa5, sizeof(buf));
		quoted_errf(buf, len, name, " is not %s", "a process id");
		check_fits(buf, len, sizeof(buf));
		if (len > strlen("'' is not a process id") + 3) {
			assert_non_null(strstr(buf, "..."));
			assert_true(ends_with(buf, "' is not a process id"));
		}
	}
	/* a reason longer than the buffer is cut, the name given up */
	{
		char buf[32];

		memset(buf, 0xa5, sizeof(buf));
		named_errf(buf, 20, "name", "%s", ": a reason far longer than the buffer");
		check_fits(buf, 20, sizeof(buf));
		assert_string_equal(buf, "...: a reason far l");
	}
	/* a UTF-8 name is never cut inside a character */
	{
		char u[3000] = "";

		for (int i = 0; i < 900; i++)
			strcat(u, i % 2 ? "\xc3\xa9" : "\xe2\x82\xac"); /* é € */
		for (size_t len = 20; len < 120; len++) {
			named_errf(err, len, u, ": gone");
			assert_true(valid_utf8(err));
			assert_string_equal(err + strlen(err) - 6, ": gone");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_file), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_importers),    cmocka_unit_test(test_vpd_by_descriptor),
		cmocka_unit_test(test_named_errf),
	};

	return cmocka_run_group_tests_name("inputs", tests, setup, teardown);
}
