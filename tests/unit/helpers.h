/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What several unit tests need: the built simulator's files, and what a function under test
 * prints on stderr (its error lines are part of what it promises). Include after cmocka.h. */
#ifndef TESTS_HELPERS_H
#define TESTS_HELPERS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* a file of the built simulator (SIM_DIR): four at a time stay valid */
static inline const char *sim(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", SIM_DIR, rel);
	return buf[k];
}

static int saved_stderr = -1, captured_fd = -1;
static char captured[8192];

/* stderr into a file from now on */
static inline void capture_start(void)
{
	char name[] = "/tmp/topsprof-test.err.XXXXXX";

	fflush(stderr);
	captured_fd = mkstemp(name);
	assert_true(captured_fd >= 0);
	unlink(name);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(captured_fd, 2), 2);
}

/* stderr back; what was written meanwhile */
static inline const char *capture_end(void)
{
	ssize_t n;

	fflush(stderr);
	assert_int_equal(dup2(saved_stderr, 2), 2);
	close(saved_stderr);
	n = pread(captured_fd, captured, sizeof(captured) - 1, 0);
	close(captured_fd);
	captured[n > 0 ? n : 0] = '\0';
	return captured;
}

/* the number of lines of s */
static inline int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* a directory of a test's own, /tmp/NAME.XXXXXX, into dir (64 bytes): 0, or -1 */
static inline int test_dir_make(char *dir, const char *name)
{
	snprintf(dir, 64, "/tmp/%s.XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* it and all it holds gone: 0, or -1 */
static inline int test_dir_remove(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

#endif
