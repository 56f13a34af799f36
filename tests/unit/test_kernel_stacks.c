// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel callstacks: the profile's merging and order, the functions filter's address ranges from
 * kallsyms, system call names, and (as root) the BPF programs: the tracepoint programs follow a
 * child's futex waits with their kernel stacks; the kprobe programs pass the kernel's verifier
 * even where they cannot be attached; fentry is tried and its answer checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/kfuncs.h"
#include "collect/kprof.h"
#include "lib/log.h"
#include "model/kstacks.h"
#include "symbols/ksyms.h"
#include "collect/syscalls.h"

static void test_profile_merge(void **state)
{
	struct kernel_profile p = { 0 };
	struct kernel_stack a = { .pid = 7,
				  .comm = "app",
				  .entry = "futex",
				  .driver = true,
				  .offcpu = true,
				  .frames = "main;f_[k]",
				  .count = 2,
				  .total_ns = 100,
				  .max_ns = 60 };
	struct kernel_stack b = a;

	(void)state;
	assert_int_equal(kernel_add_entry(&p, "futex", true, 2, 100, 60), 0);
	assert_int_equal(kernel_add_entry(&p, "read", false, 5, 500, 400), 0);
	assert_int_equal(kernel_add_entry(&p, "futex", true, 1, 50, 50), 0);
	assert_int_equal(kernel_add_entry(&p, "futex", false, 1, 1, 1), 0);
	assert_int_equal(kernel_add_stack(&p, &a), 0);
	b.count = 1;
	b.total_ns = 90;
	b.max_ns = 90;
	assert_int_equal(kernel_add_stack(&p, &b), 0);
	b.entry = NULL; /* off CPU outside a call: another stack */
	assert_int_equal(kernel_add_stack(&p, &b), 0);
	kernel_profile_finish(&p);
	/* by time, most first; equal (name, driver) merged */
	assert_int_equal(p.ne, 3);
	assert_string_equal(p.e[0].name, "read");
	assert_string_equal(p.e[1].name, "futex");
	assert_true(p.e[1].driver);
	assert_int_equal(p.e[1].calls, 3);
	assert_int_equal(p.e[1].total_ns, 150);
	assert_int_equal(p.e[1].max_ns, 60);
	assert_false(p.e[2].driver);
	assert_int_equal(p.ns, 2);
	assert_string_equal(p.s[0].entry, "futex");
	assert_int_equal(p.s[0].count, 3);
	assert_int_equal(p.s[0].total_ns, 190);
	assert_int_equal(p.s[0].max_ns, 90);
	assert_null(p.s[1].entry);
	kernel_profile_clear(&p);
	assert_int_equal(p.ne + p.ns, 0);
	kernel_profile_free(&p);
}

static void test_function_ranges(void **state)
{
	char path[] = "/tmp/topsprof-kc.XXXXXX", bad[64];
	uint64_t start[4], end[4];
	struct ksyms k;
	uint32_t n;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	assert_non_null(f);
	fputs("ffffffff81001000 T futex_wait\n"
	      "ffffffff81001800 t helper\n"
	      "ffffffff81002000 t dup_fn\n"
	      "ffffffff81002100 T other\n"
	      "ffffffff81003000 t dup_fn\n"
	      "ffffffff81003400 T last\n"
	      "ffffffff81003400 T __last_alias\n"
	      "ffffffff81003500 T after\n",
	      f);
	fclose(f);
	assert_int_equal(ksyms_load(&k, path), 0);
	unlink(path);
	assert_int_equal(
		kprof_function_ranges(&k, "futex_wait,dup_fn", start, end, 4, &n, bad, sizeof(bad)),
		0);
	assert_int_equal(n, 3); /* a name held by two static functions: both */
	assert_int_equal(start[0], 0xffffffff81001000);
	assert_int_equal(end[0], 0xffffffff81001800);
	assert_int_equal(start[1], 0xffffffff81002000);
	assert_int_equal(end[1], 0xffffffff81002100);
	assert_int_equal(start[2], 0xffffffff81003000);
	assert_int_equal(end[2], 0xffffffff81003400);
	/* a name sharing its address with another: it ends where the next address begins */
	assert_int_equal(kprof_function_ranges(&k, "last", start, end, 4, &n, bad, sizeof(bad)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(start[0], 0xffffffff81003400);
	assert_int_equal(end[0], 0xffffffff81003500);
	assert_int_equal(
		kprof_function_ranges(&k, "futex_wait,nope", start, end, 4, &n, bad, sizeof(bad)),
		-ENOENT);
	assert_string_equal(bad, "nope");
	assert_int_equal(
		kprof_function_ranges(&k, "dup_fn,futex_wait", start, end, 2, &n, bad, sizeof(bad)),
		-E2BIG);
	ksyms_free(&k);
}

static void test_syscall_names(void **state)
{
	(void)state;
	assert_string_equal(syscall_name(SYS_read), "read");
	assert_string_equal(syscall_name(SYS_futex), "futex");
	assert_string_equal(syscall_name(SYS_ioctl), "ioctl");
	assert_string_equal(syscall_name(335), "uretprobe"); /* newer than the headers */
	assert_null(syscall_name(99999));
}

/* a child that waits three times 30 ms on a futex nobody wakes */
static pid_t waiting_child(int go_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		uint32_t word = 0;
		char c;

		if (read(go_fd, &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 3; i++) {
			struct timespec ts = { 0, 30000000 };

			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		}
		_exit(0);
	}
	return pid;
}

static void test_bpf_live(void **state)
{
	struct kprof_opts o = { .filter = KC_FILTER_ALL,
				.kmd_module = "enflame",
				.collecting = true,
				.pid_map_fd = -1 };
	struct kernel_profile p = { 0 };
	struct kprof_probes pr;
	struct kprof *k;
	int pfd[2], status;
	bool found = false;
	pid_t child;

	(void)state;
	if (geteuid())
		skip();
	/* libbpf speaks under --debug only, as in topsprof: a refused fentry is no news */
	libbpf_set_print(log_libbpf);
	assert_int_equal(kprof_open(&k, &o), 0);
	kprof_probes(k, &pr);
	/* the kprobe programs passed the verifier here, kprobes or not */
	assert_true(pr.kprobe_load == 0 || (pr.kprobe_load == 1 && pr.fentry_load == 0));
	if (pr.fentry_load)
		print_message("fentry refused by this kernel: %s\n", strerror(-pr.fentry_load));
	assert_int_equal(pipe(pfd), 0);
	child = waiting_child(pfd[0]);
	assert_true(child > 0);
	assert_int_equal(write(pfd[1], "g", 1), 1);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(kprof_collect(k, &p), 0);
	for (size_t i = 0; i < p.ns; i++) {
		const struct kernel_stack *s = &p.s[i];

		if (s->pid != (uint32_t)child || !s->entry || strcmp(s->entry, "futex"))
			continue;
		found = true;
		assert_true(s->offcpu);
		assert_int_equal(s->count, 3);
		assert_true(s->total_ns >= 85000000 && s->total_ns < 200000000);
		assert_non_null(strstr(s->frames, "futex_wait"));
		assert_non_null(strstr(s->frames, "schedule"));
		/* the program's own frames are not shown */
		assert_null(strstr(s->frames, "bpf_prog_"));
	}
	assert_true(found);
	/* the calls: the child's three futex waits at least, none in the driver */
	found = false;
	for (size_t i = 0; i < p.ne; i++)
		if (!strcmp(p.e[i].name, "futex") && !p.e[i].driver) {
			found = true;
			assert_true(p.e[i].calls >= 3);
			assert_true(p.e[i].total_ns >= 85000000);
		}
	assert_true(found);
	for (size_t i = 0; i < p.ns; i++)
		assert_int_not_equal(p.s[i].pid, (uint32_t)getpid()); /* never topsprof's own */
	kernel_profile_free(&p);
	kprof_close(k);
	close(pfd[0]);
	close(pfd[1]);
}

/* the functions ftrace can patch, one module's or all, from tracefs' list; the names no probe
 * takes; a map's kernel memory */
static void test_kfuncs(void **state)
{
	(void)state;
	char path[] = "/tmp/topsprof-aff.XXXXXX";
	struct kfuncs_traceable t;
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("do_syscall_64\n"
	      "null_queue_rq [null_blk]\n"
	      "brd_submit_bio [brd]\n"
	      "end_cmd [null_blk]\n"
	      "broken [null_blk\n"
	      "\n"
	      "null_exit [null_blk]\n",
	      f);
	fclose(f);
	assert_int_equal(kfuncs_traceable_load(&t, path, "null_blk"), 0);
	assert_int_equal(t.n, 3);
	assert_true(kfuncs_traceable_has(&t, "null_queue_rq"));
	assert_true(kfuncs_traceable_has(&t, "end_cmd"));
	assert_false(kfuncs_traceable_has(&t, "brd_submit_bio"));
	assert_false(kfuncs_traceable_has(&t, "do_syscall_64"));
	assert_false(kfuncs_traceable_has(&t, "broken"));
	kfuncs_traceable_free(&t);
	/* every module's and the core kernel's */
	assert_int_equal(kfuncs_traceable_load(&t, path, NULL), 0);
	assert_int_equal(t.n, 5);
	assert_true(kfuncs_traceable_has(&t, "do_syscall_64"));
	assert_true(kfuncs_traceable_has(&t, "brd_submit_bio"));
	kfuncs_traceable_free(&t);
	/* a module with nothing there: an empty list, which has nothing */
	assert_int_equal(kfuncs_traceable_load(&t, path, "gcusim"), 0);
	assert_int_equal(t.n, 0);
	assert_false(kfuncs_traceable_has(&t, "null_queue_rq"));
	kfuncs_traceable_free(&t);
	unlink(path);
	assert_int_equal(kfuncs_traceable_load(&t, path, "null_blk"), -ENOENT);

	assert_true(kfuncs_never_probed("cleanup_module"));
	assert_true(kfuncs_never_probed("init_module"));
	assert_true(kfuncs_never_probed("__pfx_null_queue_rq"));
	assert_true(kfuncs_never_probed("__cfi_null_queue_rq"));
	assert_true(kfuncs_never_probed("__SCT__tp_func_block_rq_issue"));
	assert_true(kfuncs_never_probed("null_handle_cmd.cold"));
	assert_false(kfuncs_never_probed("null_queue_rq"));
	assert_false(kfuncs_never_probed("brd_insert_page.part.0"));
	assert_false(kfuncs_never_probed("null_exit"));

	if (geteuid())
		return;
	/* a map's memory, as the kernel charges it */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "kfuncs_test", 4, 4096, 256, NULL);
	assert_true(fd >= 0);
	assert_true(kfuncs_memlock(fd) >= 4096 * 256);
	close(fd);
	assert_int_equal(kfuncs_memlock(-1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_merge), cmocka_unit_test(test_function_ranges),
		cmocka_unit_test(test_syscall_names), cmocka_unit_test(test_kfuncs),
		cmocka_unit_test(test_bpf_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
