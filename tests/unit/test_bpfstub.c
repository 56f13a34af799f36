// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The fallbacks for older kernels (collect/bpfstub.c), as root: a stub hands its value to the
 * program in its slot (and does nothing when the slot is empty); stubs on uprobes made by hand
 * (entry and return) reach their program once a call each, and nothing once closed; the
 * arguments of a raw tracepoint and the members of a struct are read from the kernel's BTF; a
 * feature said no to by the environment is taken as missing. Skips loudly without root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/bpfinsn.h"
#include "collect/bpfstub.h"
#include "collect/tracer.h"
#include "target/elfinfo.h"

#define LD_MAP(d, fd) LD_IMM64(d, BPF_PSEUDO_MAP_FD, fd)

static bool can_bpf;

struct maps {
	int value, progs, counter;
};

static int setup(void **state)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	m->value = m->progs = m->counter = -1;
	*state = m;
	if (!can_bpf)
		return 0;
	m->value = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4, 16, 1, NULL); /* stub_slot */
	m->progs = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, 4, 4, 2, NULL);
	m->counter = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1, NULL);
	return m->value < 0 || m->progs < 0 || m->counter < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct maps *m = *state;

	if (m->value >= 0)
		close(m->value);
	if (m->progs >= 0)
		close(m->progs);
	if (m->counter >= 0)
		close(m->counter);
	free(m);
	return 0;
}

/* a program of type that reads the value the stub left: returns its half (returns: the low
 * one, or the high one when high), or adds it to counter[0] (else) */
static int load_target(enum bpf_prog_type type, const struct maps *m, bool returns, bool high)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		LD_MAP(BPF_REG_1, m->value),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0),
		INSN(BPF_JMP | BPF_JA, 0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_6, BPF_REG_0, 0, 0), /* r6 = value */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_6, 0, 0),
		INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, high ? 32 : 0),
		INSN(returns ? BPF_JMP | BPF_EXIT : BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		LD_MAP(BPF_REG_1, m->counter),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 1, 0),
		INSN(BPF_STX | BPF_XADD | BPF_DW, BPF_REG_0, BPF_REG_6, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	/* returns: up to the exit after r0 = value (the verifier refuses code never reached) */
	int fd = bpf_prog_load(type, NULL, "Dual BSD/GPL", insns,
			       returns ? 14 : sizeof(insns) / sizeof(insns[0]), NULL);

	assert_true(fd >= 0);
	return fd;
}

static void put_slot(const struct maps *m, uint32_t slot, int prog)
{
	assert_int_equal(bpf_map_update_elem(m->progs, &slot, &prog, BPF_ANY), 0);
}

static uint32_t run(int prog)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt));

	assert_int_equal(bpf_prog_test_run_opts(prog, &o), 0);
	return o.retval;
}

/* whether a CPU's slot holds value, written by this thread */
static bool slot_of_thread(const struct maps *m, uint64_t value)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t self = (uint64_t)getpid() << 32 | (uint64_t)gettid();
	uint64_t(*v)[2] = calloc((size_t)ncpu, sizeof(*v));
	uint32_t zero = 0;
	bool found = false;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(m->value, &zero, v), 0);
	for (int c = 0; c < ncpu; c++)
		found |= v[c][0] == value && v[c][1] == self;
	free(v);
	return found;
}

static void test_stub_hands_value(void **state)
{
	struct maps *m = *state;
	int target, stub, empty;

	if (!can_bpf)
		skip();
	target = load_target(BPF_PROG_TYPE_SOCKET_FILTER, m, true, false);
	put_slot(m, 0, target);
	stub = bpf_stub_load(BPF_PROG_TYPE_SOCKET_FILTER, m->value, m->progs, 0,
			     0x1234567890abcdefull);
	assert_true(stub >= 0);
	assert_int_equal(run(stub), 0x90abcdefu);
	/* both halves, and the thread that ran it beside */
	assert_true(slot_of_thread(m, 0x1234567890abcdefull));
	close(target);
	target = load_target(BPF_PROG_TYPE_SOCKET_FILTER, m, true, true);
	put_slot(m, 0, target);
	assert_int_equal(run(stub), 0x12345678u);
	/* another stub, another value, one target */
	close(stub);
	stub = bpf_stub_load(BPF_PROG_TYPE_SOCKET_FILTER, m->value, m->progs, 0,
			     0xfedcba9800000000ull);
	assert_true(stub >= 0);
	assert_int_equal(run(stub), 0xfedcba98u);
	/* slot 1 holds nothing: the stub returns 0 */
	empty = bpf_stub_load(BPF_PROG_TYPE_SOCKET_FILTER, m->value, m->progs, 1, 7);
	assert_true(empty >= 0);
	assert_int_equal(run(empty), 0);
	close(empty);
	close(stub);
	close(target);
	/* a map that is no map: the error, not a descriptor */
	assert_true(bpf_stub_load(BPF_PROG_TYPE_SOCKET_FILTER, -1, m->progs, 0, 1) < 0);
}

/* the function the uprobes are put on */
__attribute__((noinline)) int probed(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static uint64_t counter(const struct maps *m)
{
	uint32_t zero = 0;
	uint64_t v = 0;

	assert_int_equal(bpf_map_lookup_elem(m->counter, &zero, &v), 0);
	return v;
}

static void test_uprobes_through_stubs(void **state)
{
	const char *names[] = { "probed" };
	struct maps *m = *state;
	char exe[4096];
	uint64_t off = 0;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int target, stub[2], ev[2], calls = 0;

	if (!can_bpf)
		skip();
	assert_true(len > 0);
	exe[len] = '\0';
	assert_int_equal(elf_func_offsets(exe, names, 1, &off), 1);
	off = probe_offset(exe, off);
	target = load_target(BPF_PROG_TYPE_KPROBE, m, false, false);
	put_slot(m, 1, target);
	for (int r = 0; r < 2; r++) {
		stub[r] = bpf_stub_load(BPF_PROG_TYPE_KPROBE, m->value, m->progs, 1, r ? 100 : 7);
		assert_true(stub[r] >= 0);
		ev[r] = perf_probe_attach(stub[r], true, r, exe, off, -1);
		assert_true(ev[r] >= 0);
		close(stub[r]); /* the event holds it */
	}
	close(target); /* the program array holds it */
	for (int i = 0; i < 5; i++)
		calls += probed(i) > 0;
	assert_int_equal(calls, 5);
	assert_int_equal(counter(m), 5 * (7 + 100));
	close(ev[0]);
	close(ev[1]);
	probed(1);
	assert_int_equal(counter(m), 5 * (7 + 100));
	/* no such file: the error */
	assert_true(perf_probe_attach(0, true, false, "/nonexistent/file", 0, -1) < 0);
}

static void test_kernel_btf(void **state)
{
	struct btf *v = btf__load_vmlinux_btf();
	int n;

	(void)state;
	if (!v)
		skip(); /* a kernel without BTF */
	/* preempt, prev, next (and prev_state from Linux 5.18 on) */
	n = btf_tp_nargs(v, "sched_switch");
	assert_true(n == 3 || n == 4);
	assert_int_equal(btf_tp_nargs(v, "sys_enter"), 2);
	assert_int_equal(btf_tp_nargs(v, "no_such_tracepoint"), -ENOENT);
	/* members, and members of nameless members (vm_start is in one from Linux 6.x on) */
	assert_int_equal(btf_struct_has(v, "task_struct", "pid"), 1);
	assert_int_equal(btf_struct_has(v, "vm_area_struct", "vm_start"), 1);
	assert_int_equal(btf_struct_has(v, "task_struct", "no_such_member"), 0);
	assert_int_equal(btf_struct_has(v, "no_such_struct", "pid"), -ENOENT);
	btf__free(v);
}

static void test_helper_said_no(void **state)
{
	(void)state;
	if (!can_bpf)
		skip();
	/* every kernel here has bpf_map_lookup_elem */
	assert_true(bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_map_lookup_elem, NULL));
	unsetenv("TOPSPROF_TEST_NO");
	assert_true(bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_map_lookup_elem,
				    "TOPSPROF_TEST_NO"));
	/* set says no, whatever its value, as the other TOPSPROF_NO_* switches */
	setenv("TOPSPROF_TEST_NO", "1", 1);
	assert_false(bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_map_lookup_elem,
				     "TOPSPROF_TEST_NO"));
	setenv("TOPSPROF_TEST_NO", "", 1);
	assert_false(bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_map_lookup_elem,
				     "TOPSPROF_TEST_NO"));
	unsetenv("TOPSPROF_TEST_NO");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stub_hands_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uprobes_through_stubs, setup, teardown),
		cmocka_unit_test(test_kernel_btf),
		cmocka_unit_test(test_helper_said_no),
	};

	/* loading BPF is root's here: without it the BPF tests say they skipped */
	can_bpf = !geteuid();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
