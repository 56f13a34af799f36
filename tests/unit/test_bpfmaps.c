// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Releasing descriptors (links, in topsprof): at once, on threads; later, by a child process that
 * outlives the caller. Pipes stand in for links: a pipe's read end sees EOF once the last copy of
 * its write end is closed, which tells who closed it and when. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/bpfmaps.h"

#define NPIPES 300 /* more than one message's worth (253) */

static int rd[NPIPES], wr[NPIPES];

static void make_pipes(int n)
{
	for (int i = 0; i < n; i++) {
		int p[2];

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		rd[i] = p[0];
		wr[i] = p[1];
	}
}

/* the write end's last copy is closed: EOF within 10 s */
static void expect_eof(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(fd, &c, 1), 0);
	close(fd);
}

/* pid is a process that has not ended (a zombie has) */
static bool running(pid_t pid)
{
	char path[64], line[256], *close_paren;
	FILE *f;
	bool r = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')))
		r = close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
	fclose(f);
	return r;
}

static void test_release_now(void **state)
{
	(void)state;
	make_pipes(40);
	bpf_release_now(NULL, 0, wr, 40);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(fcntl(wr[i], F_GETFD), -1);
		expect_eof(rd[i]);
	}
}

/* handed over in two goes, the caller's copies closed at once; the child closes them (EOF here)
 * and ends once the caller let it go */
static void test_release_later(void **state)
{
	struct bpf_releaser *r = NULL;
	int status;
	pid_t pid;

	(void)state;
	make_pipes(NPIPES);
	assert_int_equal(bpf_releaser_open(&r), 0);
	assert_non_null(r);
	bpf_release_later(r, wr, 2);
	bpf_release_later(r, wr + 2, NPIPES - 2);
	for (int i = 0; i < NPIPES; i++)
		assert_int_equal(fcntl(wr[i], F_GETFD), -1);
	/* released while the caller still holds the releaser */
	expect_eof(rd[0]);
	expect_eof(rd[1]);
	pid = bpf_releaser_close(r);
	assert_true(pid > 0);
	for (int i = 2; i < NPIPES; i++)
		expect_eof(rd[i]);
	/* not a child of the caller's: it ends (and init reaps it) on its own */
	assert_int_equal(waitpid(pid, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	for (int i = 0; i < 1000 && running(pid); i++)
		usleep(10000);
	assert_false(running(pid));
}

/* no releaser: released at once */
static void test_release_without(void **state)
{
	(void)state;
	make_pipes(3);
	bpf_release_later(NULL, wr, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fcntl(wr[i], F_GETFD), -1);
		expect_eof(rd[i]);
	}
	assert_int_equal(bpf_releaser_close(NULL), 0);
}

static void *wait_for_pipe(void *p)
{
	char c;

	return (void *)(intptr_t)read(*(int *)p, &c, 1);
}

/* no child forked while another thread runs (it could inherit a lock that thread holds) */
static void test_releaser_single_threaded(void **state)
{
	struct bpf_releaser *r = (void *)1;
	pthread_t th;

	(void)state;
	make_pipes(1);
	assert_int_equal(pthread_create(&th, NULL, wait_for_pipe, &rd[0]), 0);
	assert_int_equal(bpf_releaser_open(&r), -EDEADLK);
	assert_null(r);
	close(wr[0]);
	assert_int_equal(pthread_join(th, NULL), 0);
	close(rd[0]);
	/* the thread gone, the child starts */
	assert_int_equal(bpf_releaser_open(&r), 0);
	assert_true(bpf_releaser_close(r) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release_now),
		cmocka_unit_test(test_release_later),
		cmocka_unit_test(test_release_without),
		cmocka_unit_test(test_releaser_single_threaded),
	};

	return cmocka_run_group_tests_name("bpfmaps", tests, NULL, NULL);
}
