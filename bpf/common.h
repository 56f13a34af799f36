/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Helpers and flags every BPF object of topsprof uses. */
#ifndef TOPSPROF_BPF_COMMON_H
#define TOPSPROF_BPF_COMMON_H

#include <bpf/bpf_core_read.h>

/* one load the compiler neither repeats nor leaves out (another CPU, or topsprof, writes it) */
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))

/* topsprof start/stop switch it (--profile-from-start off: false at load) */
bool collecting = true;

/* key's value in a hash map, made from init when it has none (another CPU may make it first:
 * then that one); NULL when the map is full */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *init)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* one more of a loss: index which of a per-CPU array of __u64 counters. Atomically: a sleepable
 * program (api_entry) may be preempted by another run on the same CPU between a load and a
 * store. A lock-prefixed add of a CPU's own cache line costs a few ns, on paths that count
 * losses (rare). */
static __always_inline void count_in(void *drops, __u32 which)
{
	__u64 *n = bpf_map_lookup_elem(drops, &which);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* The first stack taken of a process, and the first after each of its execs (a new image, whose
 * mappings are new), announced: seen (a hash, u32 tgid -> u64 the image: the task's
 * self_exec_id) keeps every process once, ring (a ring buffer) carries the tgid to topsprof,
 * which reads the process's mappings at once (a short-lived process, or image, is gone soon). A
 * full ring loses nothing: topsprof walks seen now and then. tgid is the current task's. */
static __always_inline void announce_process(void *seen, void *ring, __u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 image = BPF_CORE_READ(task, self_exec_id), *known;
	__u32 *e;

	known = bpf_map_lookup_elem(seen, &tgid);
	if (known) {
		if (*known == image)
			return;
		*known = image;
	} else if (bpf_map_update_elem(seen, &tgid, &image, BPF_NOEXIST)) {
		return;
	}
	e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
	if (!e)
		return;
	*e = tgid;
	bpf_ringbuf_submit(e, 0);
}

#endif
