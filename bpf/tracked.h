/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The set of processes topsprof profiles, one definition for every object that follows them:
 * bpf/proc.bpf.c fills it (seeded by topsprof, grown on fork, shrunk on exit); the others are
 * handed the same maps (bpf_map__reuse_fd), which must match this shape. */
#ifndef TOPSPROF_BPF_TRACKED_H
#define TOPSPROF_BPF_TRACKED_H

/* false: every process counts as tracked (system-wide) */
const volatile bool filter_pids = true;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACKED_PIDS_MAX);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* tgid of the process it descends from (the root: itself) */
} tracked_pids SEC(".maps");

/* The set's generation: one more whenever a process joins it or leaves it, after the change
 * (proc.bpf.c on fork and exit; topsprof, through its mapping, when it adds a process). An
 * answer to "is this thread followed?" kept from an older generation is stale
 * (bpf/kernel.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} tracked_gen SEC(".maps");

static __always_inline bool is_tracked(__u32 tgid)
{
	return !filter_pids || bpf_map_lookup_elem(&tracked_pids, &tgid);
}

/* Bump the generation. A writer in BPF needs no barrier here: the thread whose answer changes
 * (a forked child; a later process that reuses an exited one's pid) first runs after a hand-off
 * through the scheduler's or the pid allocator's locks, which orders these stores before it. */
static __always_inline void tracked_changed(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&tracked_gen, &zero);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

#endif
