// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* CPU callstack sampling: a software cpu-clock perf event on every CPU runs this program; a
 * sample of a tracked process counts its user and kernel stacks. Nothing is streamed: topsprof
 * reads the counts and the stacks at the end. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"
#include "events.h"
#include "tracked.h"
#include "user_returns.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384); /* topsprof may resize before load */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CPU_STACK_DEPTH * sizeof(__u64));
} cpu_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cpu_key);
	__type(value, __u64);
} cpu_counts SEC(".maps");

/* the processes sampled so far; the first sample of each is announced on cpu_new */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64); /* the image last announced (announce_process) */
} cpu_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} cpu_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPU_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cpu_drops SEC(".maps");

static __always_inline void count_drop(__u32 which)
{
	count_in(&cpu_drops, which);
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct cpu_key key = { .tgid = id >> 32, .tid = (__u32)id };
	__u64 zero = 0, *n;

	if (!key.tgid || !collecting) /* the idle task */
		return 0;
	if (!is_tracked(key.tgid))
		return 0;
	announce_process(&cpu_seen, &cpu_new, key.tgid);
	key.ustack = bpf_get_stackid(ctx, &cpu_stacks, BPF_F_USER_STACK);
	key.kstack = bpf_get_stackid(ctx, &cpu_stacks, 0);
	kc_user_returns(&key.uret);
	/* a negative id stays in the key: -EFAULT, no frames on that side; else the stack was lost
	 * (-ENOMEM: the map is full; -EEXIST: its bucket holds another stack) */
	n = lookup_or_init(&cpu_counts, &key, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		count_drop(CPU_DROP_COUNT);
	return 0;
}
