// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The BPF process tracker on this kernel: children join, threads do not count as processes,
 * exec is seen, exits leave with their status. Needs root (BPF); skips loudly without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "collect/bpfstub.h"
#include "collect/proctree.h"

#define MAX_EVENTS 256

static struct {
	int n;
	struct tp_proc_event ev[MAX_EVENTS];
} seen;

static void on_event(void *ctx, const struct tp_proc_event *e)
{
	(void)ctx;
	if (seen.n < MAX_EVENTS)
		seen.ev[seen.n++] = *e;
}

static const struct tp_proc_event *find(uint32_t type, uint32_t pid)
{
	for (int i = 0; i < seen.n; i++)
		if (seen.ev[i].hdr.type == type && seen.ev[i].hdr.pid == pid)
			return &seen.ev[i];
	return NULL;
}

static int count(uint32_t type, uint32_t pid)
{
	int n = 0;

	for (int i = 0; i < seen.n; i++)
		n += seen.ev[i].hdr.type == type && seen.ev[i].hdr.pid == pid;
	return n;
}

static int setup(void **state)
{
	struct proctree_opts o = { .on_event = on_event };
	struct proctree *pt = NULL;
	int err;

	libbpf_set_print(log_libbpf);
	err = proctree_open(&pt, &o);
	if (err)
		fprintf(stderr, "SKIP proctree: BPF is not available here (%s)\n", strerror(-err));
	*state = pt;
	return 0;
}

static int teardown(void **state)
{
	proctree_close(*state);
	return 0;
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* poll until the exit of pid was seen, or 2 s passed */
static void drain_until_exit(struct proctree *pt, uint32_t pid)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		assert_true(proctree_poll(pt, 10) >= 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!find(EV_PROC_EXIT, pid) && t.tv_sec - t0.tv_sec < 2);
}

static void test_tree(void **state)
{
	struct proctree *pt = *state;
	struct proctree_drops d;
	const struct tp_proc_event *e;
	pid_t self = getpid(), child, grandchild = 0;
	int pfd[2], status;
	pthread_t th;

	if (!pt)
		skip();
	assert_int_equal(proctree_add(pt, self), 0);
	assert_true(proctree_has(pt, self));
	assert_false(proctree_has(pt, 1));

	/* a thread is not a new process */
	assert_int_equal(pthread_create(&th, NULL, thread_fn, NULL), 0);
	pthread_join(th, NULL);

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	if (child == 0) {
		pid_t g = fork();

		if (g == 0)
			_exit(3);
		if (write(pfd[1], &g, sizeof(g)) != sizeof(g))
			_exit(100);
		waitpid(g, NULL, 0);
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(101);
	}
	assert_int_equal(read(pfd[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 5);
	drain_until_exit(pt, (uint32_t)child);

	e = find(EV_PROC_FORK, (uint32_t)child);
	assert_non_null(e);
	assert_int_equal(e->ppid, self);
	e = find(EV_PROC_FORK, (uint32_t)grandchild);
	assert_non_null(e);
	assert_int_equal(e->ppid, child);
	e = find(EV_PROC_EXIT, (uint32_t)grandchild);
	assert_non_null(e);
	assert_int_equal(e->exit_code, 3 << 8);
	e = find(EV_PROC_EXEC, (uint32_t)child);
	assert_non_null(e);
	assert_string_equal(e->comm, "sh");
	e = find(EV_PROC_EXIT, (uint32_t)child);
	assert_non_null(e);
	assert_int_equal(e->exit_code, 5 << 8);
	assert_string_equal(e->comm, "sh");
	/* the thread: no fork event of our own pid, no exit of ours */
	assert_int_equal(count(EV_PROC_FORK, (uint32_t)self), 0);
	assert_int_equal(count(EV_PROC_EXIT, (uint32_t)self), 0);
	/* gone from the set once exited; nothing lost */
	assert_false(proctree_has(pt, child));
	assert_false(proctree_has(pt, grandchild));
	assert_true(proctree_has(pt, self));
	assert_int_equal(proctree_drops(pt, &d), 0);
	assert_int_equal(d.events, 0);
	assert_int_equal(d.pids, 0);
}

static pid_t fork_and_reap(int code)
{
	pid_t child = fork();

	if (child == 0)
		_exit(code);
	waitpid(child, NULL, 0);
	return child;
}

/* nothing seeded: processes outside the tree are neither tracked nor reported */
static void test_untracked(void **state)
{
	struct proctree *pt = *state;
	pid_t child;

	if (!pt)
		skip();
	seen.n = 0;
	child = fork_and_reap(0);
	for (int i = 0; i < 10; i++)
		assert_true(proctree_poll(pt, 5) >= 0);
	assert_false(proctree_has(pt, getpid()));
	assert_null(find(EV_PROC_FORK, (uint32_t)child));
	assert_null(find(EV_PROC_EXIT, (uint32_t)child));
}

/* system-wide: every process counts */
static void test_system_wide(void **state)
{
	struct proctree_opts o = { .on_event = on_event, .system_wide = true };
	struct proctree *pt;
	pid_t child;

	(void)state;
	if (proctree_open(&pt, &o))
		skip();
	seen.n = 0;
	child = fork_and_reap(7);
	drain_until_exit(pt, (uint32_t)child);
	assert_true(proctree_has(pt, 1));
	assert_non_null(find(EV_PROC_FORK, (uint32_t)child));
	assert_int_equal(find(EV_PROC_EXIT, (uint32_t)child)->exit_code, 7 << 8);
	proctree_close(pt);
}

/* the set's generation goes up with every change (bpf/tracked.h): an add, a fork and an exit
 * inside the set; a process outside it changes nothing */
static void test_generation(void **state)
{
	struct proctree *pt = *state;
	uint64_t g0, g1, g2;
	pid_t outside, inside;
	int go[2], status;
	char c;

	if (!pt)
		skip();
	assert_int_equal(pipe(go), 0);
	outside = fork();
	if (outside == 0)
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	g0 = proctree_gen(pt);
	fork_and_reap(0); /* ours: not in the set */
	assert_int_equal(proctree_gen(pt), g0);
	assert_int_equal(proctree_add(pt, outside), 0);
	g1 = proctree_gen(pt);
	assert_true(g1 > g0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(outside, &status, 0), outside);
	drain_until_exit(pt, (uint32_t)outside);
	assert_false(proctree_has(pt, outside));
	g2 = proctree_gen(pt);
	assert_true(g2 > g1); /* it left */
	/* a child of a process in the set joins it, and leaves it */
	assert_int_equal(proctree_add(pt, getpid()), 0);
	g1 = proctree_gen(pt);
	inside = fork_and_reap(0);
	drain_until_exit(pt, (uint32_t)inside);
	assert_true(proctree_gen(pt) >= g1 + 2);
	close(go[0]);
	close(go[1]);
}

/* poll until the n-th EV_PROC_HELD of pid was seen, or 5 s passed */
static const struct tp_proc_event *wait_held(struct proctree *pt, uint32_t pid, int n)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		assert_true(proctree_poll(pt, 10) >= 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (count(EV_PROC_HELD, pid) < n && t.tv_sec - t0.tv_sec < 5);
	assert_int_equal(count(EV_PROC_HELD, pid), n);
	for (int i = seen.n - 1; i >= 0; i--)
		if (seen.ev[i].hdr.type == EV_PROC_HELD && seen.ev[i].hdr.pid == pid)
			return &seen.ev[i];
	return NULL;
}

static void *exec_fn(void *arg)
{
	(void)arg;
	execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
	_exit(102);
}

/* the file offset of a function of this program, from where it is mapped */
static uint64_t self_offset(const void *fn)
{
	uintptr_t at = (uintptr_t)fn, lo, hi;
	unsigned long long off;
	char line[512], path[256];
	uint64_t r = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (!r && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %255s", &lo, &hi, &off, path) == 4 &&
		    at >= lo && at < hi)
			r = at - lo + off;
	fclose(f);
	assert_true(r != 0);
	return r;
}

/* test_hold's children, killed when it ends, passed or failed: none may stay stopped */
static pid_t held_kids[8];
static int nheld_kids;

static pid_t kid(pid_t pid)
{
	assert_true(pid >= 0);
	if (pid > 0 && nheld_kids < 8)
		held_kids[nheld_kids++] = pid;
	return pid;
}

static int kill_kids(void **state)
{
	(void)state;
	while (nheld_kids)
		kill(held_kids[--nheld_kids], SIGKILL);
	return 0;
}

/* status of the child after it stopped or ended; the stops of held processes: a parent asks */
static int wait_child(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	return status;
}

/* the child is stopped (SIGSTOP), and the n-th hold of it told, for why */
static void expect_held(struct proctree *pt, pid_t child, int n, enum tp_hold_why why)
{
	const struct tp_proc_event *e;
	int status;

	assert_int_equal(waitpid(child, &status, WUNTRACED | WCONTINUED), child);
	if (WIFCONTINUED(status)) /* the end of its last hold */
		status = wait_child(child);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(WSTOPSIG(status), SIGSTOP);
	e = wait_held(pt, (uint32_t)child, n);
	assert_int_equal(e->ppid, why);
	assert_int_equal(e->exit_code, 0);
	assert_int_equal(e->hdr.tid, (uint32_t)child);
}

/* a child of a process the runtime's probes are in (its address space has a breakpoint) */
static pid_t fork_thread_exec(int ran_fd)
{
	pid_t child = kid(fork());

	if (child == 0) {
		pthread_t th;

		if (write(ran_fd, "r", 1) != 1)
			_exit(100);
		if (pthread_create(&th, NULL, exec_fn, NULL))
			_exit(101);
		pthread_join(th, NULL);
		_exit(103);
	}
	return child;
}

/* held: a new process that could call a probed function before its probes are in is stopped
 * before its first instruction, until released: a child with breakpoints of its parent, at its
 * fork; a child that execs before its probes are said to be in, at the exec; one whose new image
 * a thread other than its first exec'd, at that exec. Not held: a child without breakpoints at
 * its fork, one whose probes are in at its exec, a traced one. */
static void test_hold(void **state)
{
	struct proctree_opts o = { .on_event = on_event, .hold_new = true };
	struct proctree *pt;
	int ran[2], go[2], status, probe;
	pid_t child;
	char c;

	(void)state;
	if (proctree_open(&pt, &o))
		skip();
	if (!proctree_holds(pt)) {
		fprintf(stderr, "SKIP test_hold: this kernel cannot hold new processes\n");
		proctree_close(pt);
		skip();
	}
	seen.n = 0;
	assert_int_equal(proctree_add(pt, getpid()), 0);
	assert_int_equal(pipe(ran), 0);
	assert_int_equal(pipe(go), 0);

	/* no breakpoint here: the child runs at once; its exec, before its probes are in, is held */
	child = kid(fork());
	if (child == 0) {
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(102);
	}
	expect_held(pt, child, 1, HOLD_EXEC);
	assert_int_equal(proctree_release(pt, child), 0);
	status = wait_child(child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 5);

	/* its probes in before it execs: not held */
	child = kid(fork());
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(100);
		execl("/bin/sh", "sh", "-c", "exit 6", (char *)NULL);
		_exit(102);
	}
	assert_int_equal(proctree_set_probed(pt, child), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	status = wait_child(child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 6);

	/* traced: its tracer holds it, not topsprof */
	child = kid(fork());
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(100);
		execl("/bin/sh", "sh", "-c", "exit 8", (char *)NULL);
		_exit(102);
	}
	status = wait_child(child);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(WSTOPSIG(status), SIGTRAP); /* the exec's, for the tracer */
	assert_int_equal(ptrace(PTRACE_CONT, child, NULL, NULL), 0);
	status = wait_child(child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 8);

	/* with a breakpoint here (the runtime mapped and probed, as far as the child can tell): held
	 * at its fork, having run nothing */
	probe = perf_probe_attach(-1, true, false, "/proc/self/exe", self_offset(exec_fn),
				  getpid());
	if (probe < 0) {
		fprintf(stderr, "SKIP test_hold's fork: no uprobe (%s)\n", strerror(-probe));
		goto out;
	}
	child = fork_thread_exec(ran[1]);
	expect_held(pt, child, 1, HOLD_FORK);
	assert_int_equal(proctree_set_probed(pt, child), 0);
	assert_int_equal(proctree_release(pt, child), 0);
	assert_int_equal(read(ran[0], &c, 1), 1);
	/* the exec of its second thread: held again, with the process's pid, probes in or not */
	expect_held(pt, child, 2, HOLD_THREAD_EXEC);
	assert_int_equal(proctree_release(pt, child), 0);
	status = wait_child(child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	close(probe);
out:
	proctree_close(pt);
	close(ran[0]);
	close(ran[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untracked, setup, teardown),
		cmocka_unit_test(test_system_wide),
		cmocka_unit_test_setup_teardown(test_generation, setup, teardown),
		cmocka_unit_test_teardown(test_hold, kill_kids),
	};

	return cmocka_run_group_tests_name("proctree", tests, NULL, NULL);
}
