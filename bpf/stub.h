/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* For kernels without attach cookies (Linux 5.15) or bpf_get_func_ip (5.15): topsprof attaches a
 * stub of a few instructions per probe instead of the program itself (user/collect/bpfstub.c).
 * The stub puts its probe's value (the cookie, the function's address) and its thread in
 * stub_value and tail-calls the program in its slot of stub_progs, which reads the value back
 * here. Those kernels run a uprobe's or kprobe's programs with preemption off, so that nothing
 * else runs on the CPU between the two; where a uprobe's may be preempted (Linux 6.0+, where
 * TOPSPROF_NO_COOKIE=1 takes this path) another thread's stub may take the CPU's slot meanwhile:
 * the thread tells, and the probe's event is counted lost rather than given another's value. */
#ifndef TOPSPROF_BPF_STUB_H
#define TOPSPROF_BPF_STUB_H

#include <bpf/bpf_helpers.h>

#define STUB_SLOTS 2

struct stub_slot {
	__u64 value;
	__u64 pid_tgid; /* the thread whose stub wrote it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stub_slot);
} stub_value SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, STUB_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} stub_progs SEC(".maps");

/* the value the stub that ran this program left: false when another thread's took its place */
static __always_inline bool stub_value_get(__u64 *value)
{
	__u32 zero = 0;
	struct stub_slot *s = bpf_map_lookup_elem(&stub_value, &zero);

	if (!s || s->pid_tgid != bpf_get_current_pid_tgid())
		return false;
	*value = s->value;
	return true;
}

#endif
