/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The set of processes topsprof profiles, one definition for every object that follows them:
 * bpf/proc.bpf.c fills it (seeded by topsprof, grown on fork, shrunk on exit); the others are
 * handed the same map (bpf_map__reuse_fd), which must match this shape. */
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

static __always_inline bool is_tracked(__u32 tgid)
{
	return !filter_pids || bpf_map_lookup_elem(&tracked_pids, &tgid);
}

#endif
