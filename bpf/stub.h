/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* For kernels without attach cookies (Linux 5.15) or bpf_get_func_ip (5.15): topsprof attaches a
 * stub of a few instructions per probe instead of the program itself (user/collect/bpfstub.c).
 * The stub puts its probe's value (the cookie, the function's address) in stub_value and
 * tail-calls the program in its slot of stub_progs, which reads the value back here. A
 * kprobe-type program runs on one CPU from start to end and never nests another on that CPU
 * (bpf_prog_active), so the CPU's slot holds the stub's value until the program reads it. */
#ifndef TOPSPROF_BPF_STUB_H
#define TOPSPROF_BPF_STUB_H

#include <bpf/bpf_helpers.h>

#define STUB_SLOTS 2

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} stub_value SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, STUB_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} stub_progs SEC(".maps");

/* the value the stub that ran this program left */
static __always_inline __u64 stub_value_get(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&stub_value, &zero);

	return v ? *v : 0;
}

#endif
