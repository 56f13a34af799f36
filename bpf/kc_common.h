/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Kernel callstacks: what bpf/kernel.bpf.c (tracepoints) and bpf/kmd.bpf.c (kprobes, fentry on
 * the KMD's functions) share. topsprof loads kernel.bpf.c first and hands its maps to kmd.bpf.c,
 * so both count into the same maps. */
#ifndef TOPSPROF_KC_COMMON_H
#define TOPSPROF_KC_COMMON_H

#include "common.h"
#include "events.h"
#include "tracked.h"
#include "user_returns.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 filter = KC_FILTER_CURRENT; /* enum kc_filter */
const volatile __u32 self_tgid;			 /* topsprof: never followed */

/* per thread: the entry point it is in, and the wait it is in */
struct kc_thread {
	__u64 enter_ns;
	__u64 id;
	__u32 kind;   /* enum kc_entry_kind */
	__u32 flags;  /* KC_IN_DRIVER, KC_MATCHED */
	__u64 off_ns; /* off CPU since; 0: on CPU */
	struct kc_stack_key wait;
};

struct {
	__uint(type,
	       BPF_MAP_TYPE_LRU_HASH); /* a thread that exits inside a call leaves its entry */
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct kc_thread);
} kc_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kc_entry_key);
	__type(value, struct kc_totals);
} kc_entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CPU_STACK_DEPTH * sizeof(__u64));
} kc_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct kc_stack_key);
	__type(value, struct kc_totals);
} kc_stack_counts SEC(".maps");

/* the processes whose stacks were taken; the first of each is announced on kc_new, so that
 * topsprof reads its mappings while it lives */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64); /* the image last announced (announce_process) */
} kc_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} kc_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KC_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} kc_drops SEC(".maps");

/* filter kmd: the system call each CPU's thread is in (pid_tgid 0: none), so that a thread that
 * enters the KMD's functions through a file the driver does not own (a block device, a socket)
 * gets its system call counted as a call into the driver, from its start. Good only while the
 * thread has not left the CPU since (its context switches, counted then): a thread that moved
 * leaves its slot behind, stale */
struct kc_cpu_syscall {
	__u64 pid_tgid;
	__u64 enter_ns;
	__u64 id;
	__u64 switches; /* the thread's nvcsw + nivcsw at its entry */
};

/* Linux before 5.14 with the KMD under kprobes (topsprof: kernels without bpf_get_func_ip): the
 * kernel's unwinder stops at a kretprobe's trampoline, which a KMD function under kretprobe has
 * in place of its caller's address; the stack of anything inside the call ends there. Per thread,
 * the KMD calls it is in (innermost last): each one's kernel stack and those it goes on in
 * (kc_stack_key.kmore), so that topsprof puts the stacks end to end. */
const volatile bool kc_stitch = false;

#define KC_NEST 4

struct kc_nest {
	__u32 depth;
	__u32 pad;
	struct {
		__u64 ip;
		/* what a stack inside it gets as kmore: 1 + its kstack, then its own kmore[0] */
		__u32 kmore[KC_KMORE];
	} call[KC_NEST];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct kc_nest);
} kc_nests SEC(".maps");

/* k's kmore: the innermost KMD call the thread is in (kc_stitch) */
static __always_inline void kc_nest_more(__u32 tid, struct kc_stack_key *k)
{
	struct kc_nest *n;
	__u32 d;

	if (!kc_stitch || !(n = bpf_map_lookup_elem(&kc_nests, &tid)))
		return;
	d = n->depth;
	if (d == 0 || d > KC_NEST)
		return;
	d = (d - 1) & (KC_NEST - 1);
	k->kmore[0] = n->call[d].kmore[0];
	k->kmore[1] = n->call[d].kmore[1];
}

/* the thread enters the KMD's function ip, with stack k (kmore from kc_nest_more) */
static __always_inline void kc_nest_push(__u32 tid, __u64 ip, const struct kc_stack_key *k)
{
	struct kc_nest zero = {}, *n;
	__u32 d;

	if (!kc_stitch || !(n = lookup_or_init(&kc_nests, &tid, &zero)))
		return;
	d = n->depth;
	if (d >= KC_NEST)
		return; /* deeper: its stack ends at the trampoline */
	n->call[d].ip = ip;
	n->call[d].kmore[0] = k->kstack >= 0 ? (__u32)k->kstack + 1 : 0;
	n->call[d].kmore[1] = k->kmore[0];
	n->depth = d + 1;
}

/* the thread leaves ip: the calls from it inward are done (a return the kernel missed, with
 * more calls under way than kretprobe instances, leaves no stale call behind once an outer one
 * returns) */
static __always_inline void kc_nest_pop(__u32 tid, __u64 ip)
{
	struct kc_nest *n;

	if (!kc_stitch || !(n = bpf_map_lookup_elem(&kc_nests, &tid)))
		return;
	for (int i = KC_NEST - 1; i >= 0; i--) {
		if ((__u32)i < n->depth && n->call[i].ip == ip) {
			n->depth = (__u32)i;
			return;
		}
	}
}

static __always_inline __u64 kc_switches(struct task_struct *t)
{
	return BPF_CORE_READ(t, nvcsw) + BPF_CORE_READ(t, nivcsw);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kc_cpu_syscall);
} kc_cpu_syscall SEC(".maps");

static __always_inline void kc_count_drop(__u32 which)
{
	count_in(&kc_drops, which);
}

/* whether the filter takes the process: never topsprof, nor the idle threads (tgid 0) */
static __always_inline bool kc_takes(__u32 tgid)
{
	if (!tgid || tgid == self_tgid)
		return false;
	if (filter == KC_FILTER_CURRENT)
		return bpf_map_lookup_elem(&tracked_pids, &tgid) != NULL;
	return true;
}

static __always_inline bool kc_followed(__u32 tgid)
{
	return collecting && kc_takes(tgid);
}

static __always_inline void kc_announce(__u32 tgid)
{
	announce_process(&kc_seen, &kc_new, tgid);
}

/* one more call or wait of d ns under key in map (kc_entries or kc_stack_counts; a KMD call's
 * time comes at its return, d 0 at its entry) */
static __always_inline void kc_add(void *map, const void *key, __u64 d, __u32 drop)
{
	struct kc_totals zero = {}, *v = lookup_or_init(map, key, &zero);

	if (!v) {
		kc_count_drop(drop);
		return;
	}
	__sync_fetch_and_add(&v->count, 1);
	/* not an add of 0 (d 0 at a KMD call's entry), which the compiler makes an atomic OR:
	 * BPF_ATOMIC (Linux 5.12+), refused before even where it is never run */
	if (d)
		__sync_fetch_and_add(&v->total_ns, d);
	if (d > v->max_ns)
		v->max_ns = d;
}

static __always_inline void kc_add_entry(struct kc_entry_key *k, __u64 d)
{
	kc_add(&kc_entries, k, d, KC_DROP_ENTRY);
}

static __always_inline void kc_add_stack(struct kc_stack_key *k, __u64 d)
{
	kc_add(&kc_stack_counts, k, d, KC_DROP_STACK);
}

#endif
