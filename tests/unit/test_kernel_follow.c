// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel callstacks, which threads the tracepoint programs follow (as root, with the process
 * tracker's set, filter current): a process added after the programs started is followed from
 * then on, though its "not followed" was kept (per CPU, or in its task storage) before; its
 * forked child too; a process outside the set gets no entry in kc_threads nor a stack; the
 * entries of exited threads go (exit never returns from its system call). Each case runs with
 * the answer kept per CPU (the default) and in task storage (TOPSPROF_TASK_STORAGE=1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/kprof.h"
#include "collect/proctree.h"
#include "lib/log.h"
#include "model/kstacks.h"

struct fixture {
	struct proctree *pt;
	struct kprof *k;
	pid_t kids[4]; /* killed at the end, should a test fail while they wait */
	int nkids;
};

static pid_t spawn(struct fixture *f)
{
	pid_t pid = fork();

	if (pid > 0 && f->nkids < 4)
		f->kids[f->nkids++] = pid;
	return pid;
}

/* waitpid, and the child is no longer ours to kill (its pid may be another's soon) */
static pid_t reap(struct fixture *f, pid_t pid, int *status)
{
	pid_t got = waitpid(pid, status, 0);

	for (int i = 0; got == pid && i < f->nkids; i++)
		if (f->kids[i] == pid)
			f->kids[i] = f->kids[--f->nkids];
	return got;
}

static int open_both(void **state, bool by_task)
{
	static struct fixture f;
	struct proctree_opts po = { 0 };
	struct kprof_opts ko = { .filter = KC_FILTER_CURRENT,
				 .kmd_module = "enflame",
				 .collecting = true,
				 .follow_by_task = by_task };

	memset(&f, 0, sizeof(f));
	*state = &f;
	if (geteuid())
		return 0; /* the tests skip */
	libbpf_set_print(log_libbpf);
	assert_int_equal(proctree_open(&f.pt, &po), 0);
	ko.pid_map_fd = proctree_map_fd(f.pt);
	ko.gen_map_fd = proctree_gen_fd(f.pt);
	assert_int_equal(kprof_open(&f.k, &ko), 0);
	return 0;
}

static int per_cpu(void **state)
{
	return open_both(state, false);
}

static int by_task(void **state)
{
	return open_both(state, true);
}

static int close_both(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < f->nkids; i++)
		if (!kill(f->kids[i], SIGKILL))
			waitpid(f->kids[i], NULL, 0);
	kprof_close(f->k);
	proctree_close(f->pt);
	return 0;
}

/* n waits of ms on a futex nobody wakes */
static void futex_waits(int n, long ms)
{
	uint32_t word = 0;

	for (int i = 0; i < n; i++) {
		struct timespec ts = { 0, ms * 1000000L };

		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* the stack of pid's futex waits: how many */
static uint64_t futex_waits_of(const struct kernel_profile *p, pid_t pid)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].pid == (uint32_t)pid && p->s[i].entry &&
		    !strcmp(p->s[i].entry, "futex") && p->s[i].offcpu)
			n += p->s[i].count;
	return n;
}

static bool stack_of(const struct kernel_profile *p, pid_t pid)
{
	for (size_t i = 0; i < p->ns; i++)
		if (p->s[i].pid == (uint32_t)pid)
			return true;
	return false;
}

/* A child that makes system calls before it is added, on one CPU (so that its "not followed"
 * is kept there), then is added and waits three times on a futex, and forks a grandchild that
 * does the same: both followed from then on. */
static void test_added_later(void **state)
{
	struct fixture *f = *state;
	struct kernel_profile p = { 0 };
	int ready[2], go[2], status;
	pid_t child, grandchild;
	uint64_t gen;
	char c;

	if (!f->k)
		skip();
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	child = spawn(f);
	if (child == 0) {
		pid_t g;

		pin_to(0);
		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		futex_waits(3, 20);
		g = fork();
		if (g == 0) {
			futex_waits(3, 20);
			_exit(0);
		}
		if (write(ready[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		_exit(waitpid(g, &status, 0) == g && WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	assert_true(child > 0);
	assert_int_equal(read(ready[0], &c, 1), 1);
	gen = proctree_gen(f->pt);
	assert_int_equal(proctree_add(f->pt, child), 0);
	assert_true(proctree_gen(f->pt) > gen);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(ready[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	assert_int_equal(reap(f, child, &status), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(kprof_collect(f->k, &p), 0);
	/* followed: their waits are there (as many as slept: a timed wait whose time ran out
	 * before it slept, on a busy host, is no wait) */
	assert_true(futex_waits_of(&p, child) >= 1);
	assert_true(futex_waits_of(&p, grandchild) >= 1);
	for (size_t i = 0; i < p.ns; i++) /* nothing else followed */
		assert_true(p.s[i].pid == (uint32_t)child || p.s[i].pid == (uint32_t)grandchild);
	kernel_profile_free(&p);
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
}

/* whether pid is in the system call nr (/proc/PID/syscall names it while it blocks there) */
static bool in_syscall(pid_t pid, long nr)
{
	char path[64];
	long got = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	if (fscanf(fp, "%ld", &got) != 1)
		got = -1;
	fclose(fp);
	return got == nr;
}

/* A followed and an unfollowed process wait side by side on a shared futex: while both are in
 * it, kc_threads holds the followed one's wait and nothing of the other; their stacks
 * likewise. */
static void test_unfollowed_untouched(void **state)
{
	struct fixture *f = *state;
	struct kernel_profile p = { 0 };
	uint32_t *word, tids[4096];
	bool have[2] = { false, false };
	int go[2], status;
	char c;
	pid_t kid[2];
	size_t n;

	if (!f->k)
		skip();
	word = mmap(NULL, sizeof(*word), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(word != MAP_FAILED);
	*word = 0;
	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < 2; i++) {
		kid[i] = spawn(f);
		if (kid[i] == 0) {
			if (read(go[0], &c, 1) != 1) /* the first one followed by then */
				_exit(1);
			for (int j = 0; j < 1000; j++)
				syscall(SYS_getppid);
			while (!__atomic_load_n(word, __ATOMIC_SEQ_CST))
				syscall(SYS_futex, word, FUTEX_WAIT, 0, NULL, NULL, 0);
			futex_waits(2, 10);
			_exit(0);
		}
		assert_true(kid[i] > 0);
		if (i == 0)
			assert_int_equal(proctree_add(f->pt, kid[0]), 0);
	}
	assert_int_equal(write(go[1], "gg", 2), 2);
	/* both in their wait (a few seconds at most: no figure is measured) */
	for (int tries = 0; tries < 5000; tries++) {
		if (in_syscall(kid[0], SYS_futex) && in_syscall(kid[1], SYS_futex))
			break;
		usleep(1000);
	}
	assert_true(in_syscall(kid[0], SYS_futex) && in_syscall(kid[1], SYS_futex));
	n = kprof_threads(f->k, tids, 4096);
	assert_true(n <= 4096);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 2; j++)
			have[j] |= tids[i] == (uint32_t)kid[j];
	assert_true(have[0]);
	assert_false(have[1]);
	__atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, word, FUTEX_WAKE, 2, NULL, NULL, 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(reap(f, kid[i], &status), kid[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(kprof_collect(f->k, &p), 0);
	assert_true(futex_waits_of(&p, kid[0]) >= 1);
	assert_false(stack_of(&p, kid[1]));
	kernel_profile_free(&p);
	munmap(word, sizeof(*word));
	close(go[0]);
	close(go[1]);
}

static void *exit_now(void *arg)
{
	(void)arg;
	syscall(SYS_exit, 0); /* the system call that never returns: no sys_exit */
	return NULL;
}

/* A followed process whose threads end inside exit, and which ends in exit_group: none of them
 * leaves an entry in kc_threads behind. */
static void test_exited_threads_go(void **state)
{
	struct fixture *f = *state;
	uint32_t tids[64];
	int go[2], status;
	pid_t child;
	char c;

	if (!f->k)
		skip();
	assert_int_equal(pipe(go), 0);
	child = spawn(f);
	if (child == 0) {
		pthread_t th[20];

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 20; i++)
			if (pthread_create(&th[i], NULL, exit_now, NULL))
				_exit(1);
		for (int i = 0; i < 20; i++)
			pthread_join(th[i], NULL);
		futex_waits(1, 10);
		_exit(0);
	}
	assert_true(child > 0);
	assert_int_equal(proctree_add(f->pt, child), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(reap(f, child, &status), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* only the child's threads were followed, and every one has ended */
	assert_int_equal(kprof_threads(f->k, tids, 64), 0);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_added_later, per_cpu, close_both),
		cmocka_unit_test_setup_teardown(test_unfollowed_untouched, per_cpu, close_both),
		cmocka_unit_test_setup_teardown(test_exited_threads_go, per_cpu, close_both),
		cmocka_unit_test_setup_teardown(test_added_later, by_task, close_both),
		cmocka_unit_test_setup_teardown(test_unfollowed_untouched, by_task, close_both),
		cmocka_unit_test_setup_teardown(test_exited_threads_go, by_task, close_both),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
