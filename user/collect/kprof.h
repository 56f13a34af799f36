/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Kernel callstacks of GCU work (--kernel-callstack): the best mechanism the kernel offers,
 * probed at start and said under --debug. On the KMD's functions (or the filter's functions):
 * fentry/fexit, else kprobes; always the tracepoints: the system calls of the followed threads
 * (which of them entered the driver) and their waits off CPU at sched_switch. The kprobe and
 * fentry programs are loaded (so the kernel's verifier passes them) even where they cannot be
 * attached. At the end, the counts and stacks named into a kernel_profile. */
#ifndef TOPSPROF_KPROF_H
#define TOPSPROF_KPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "model/kstacks.h"

struct kprof;

struct kprof_opts {
	enum kc_filter filter;
	const char *functions; /* KC_FILTER_FUNCS: the comma list */
	const char *kmd_module;
	bool collecting;
	int pid_map_fd;	      /* the process tracker's tracked_pids */
	int gen_map_fd;	      /* and its tracked_gen, taken with pid_map_fd (not when -1) */
	bool follow_by_task;  /* "followed?" kept in task storage, not per CPU */
	const char *kallsyms; /* NULL: /proc/kallsyms */
};

/* 0, or -errno with the reason said */
int kprof_open(struct kprof **out, const struct kprof_opts *o);
void kprof_close(struct kprof *k);
void kprof_set_collecting(struct kprof *k, bool on);
void kprof_clear(struct kprof *k);
/* capture the mappings of processes whose stacks were taken (as cpuprof_poll) */
void kprof_poll(struct kprof *k);
int kprof_epoll_fd(const struct kprof *k);
/* the threads with an entry in kc_threads (a call or a wait under way): how many, the first
 * max of them in tids (for the tests) */
size_t kprof_threads(const struct kprof *k, uint32_t *tids, size_t max);
int kprof_collect(struct kprof *k, struct kernel_profile *p);

/* what the start-up probing found: whether the kprobe and fentry programs passed the verifier
 * (0, or the load's -errno; kprobe_load 1: not tried, fentry serves), and on how many functions
 * each was attached */
struct kprof_probes {
	int kprobe_load, fentry_load;
	size_t kprobe_attached, fentry_attached;
};
void kprof_probes(const struct kprof *k, struct kprof_probes *out);

/* the address ranges of the named kernel functions (a comma list; every symbol of a name), for
 * the functions filter: 0, or -ENOENT with the unknown name in bad (len bytes), or -E2BIG
 * beyond max ranges */
struct ksyms;
int kprof_function_ranges(const struct ksyms *ks, const char *list, uint64_t *start, uint64_t *end,
			  uint32_t max, uint32_t *n, char *bad, size_t len);

#endif
