/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A collector: one source of what a run records (API calls, processes, CPU stacks, kernel
 * callstacks, utilization, GCU records), behind one interface, so that the run drives every
 * one the same way (collection.h) and a new one is one file and one row in collection.c.
 *
 * Life of a collector in a run:
 *   wanted   whether the run's settings ask for it
 *   open     load and attach (the application is held, not started yet), leaving its handle in
 *            the state every other operation gets
 *   begin    the application is followed and about to be released (optional)
 *   follow   a process joins the followed set (the application, or a new process held until
 *            this returns): what is scoped to processes goes in for it (optional; 0 or -errno)
 *   unfollow a followed process ended (optional)
 *   set_collecting   topsprof start / stop from another terminal
 *   clear    topsprof cancel: drain what is in flight, then forget what was collected
 *   fd       a descriptor that becomes readable when there is something to poll, or -1
 *   poll     read what came into the model (called at every wake of the loop)
 *   finish   the run ended: read what is left (optional)
 *   report   counters, aggregates and losses into the model, before the analysis
 *   close    release everything (also after a failed open: the handle may be NULL)
 */
#ifndef TOPSPROF_COLLECTOR_H
#define TOPSPROF_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "model/model.h"
#include "target/discover.h"

struct bpf_releaser;

/* what the run asks of the collectors, from its options */
struct collect_settings {
	bool system_wide;
	bool launched;	 /* an application is launched (not attached, not the whole host) */
	bool collecting; /* from the start (--profile-from-start on) */
	bool stats_mode; /* statistics are enough: no call is streamed */
	/* API calls */
	unsigned trace_domains; /* enum trace_domain mask */
	uint32_t max_str_bytes;
	uint64_t buffer_size;
	const struct discovery *found; /* the libraries to probe */
	/* CPU stacks */
	bool cpu_stacks;
	uint32_t cpu_hz;
	bool cpu_unwind_fp; /* user stacks by frame pointers in the kernel, not copied */
	/* kernel callstacks */
	bool kernel_stacks;
	enum kc_filter kfilter;
	const char *kfilter_name; /* as given, for the report: "current", "kmd", ... */
	const char *kfilter_functions;
	const char *kmd_module;
	/* utilization */
	bool cpu_util, mem_util;
	uint32_t util_hz;
	/* GCU records: enum gcu_activity mask */
	unsigned gcu_activities;
};

/* what the collectors share in a run */
struct collect_env {
	const struct collect_settings *set;
	struct model *m;
	bool collecting; /* now */
	/* every event as it comes, for --export-rawdata; NULL: none */
	void (*tap)(void *ctx, const void *event, size_t size);
	void *tap_ctx;
	/* the processes followed: their map, made before the collectors open, and the process
	 * collector's handle (set when it has opened) */
	struct proctree *pt;
	int pid_map_fd, gen_map_fd;
	/* the API probes are links of each followed process, and a new process is held until its
	 * own are in (the kernel has uprobe_multi links and can hold; not --system-wide) */
	bool scoped;
	/* where the scoped probes' links go, a process's when it ends, the rest at the end of the
	 * run; NULL: released here */
	struct bpf_releaser *releaser;
	/* every open collector's follow / unfollow (collection.c): 0 or the first -errno */
	int (*follow)(struct collect_env *env, pid_t pid);
	void (*unfollow)(struct collect_env *env, pid_t pid);
};

/* one collector in a run: the run's shared state, and its own handle */
struct collector_state {
	struct collect_env *env;
	void *h;
};

struct collector {
	const char *name;
	bool (*wanted)(const struct collect_settings *s);
	int (*open)(struct collector_state *st); /* 0, or 1 after one error line */
	void (*begin)(struct collector_state *st);
	int (*follow)(struct collector_state *st, pid_t pid);
	void (*unfollow)(struct collector_state *st, pid_t pid);
	void (*set_collecting)(struct collector_state *st, bool on);
	void (*clear)(struct collector_state *st);
	int (*fd)(const struct collector_state *st);
	void (*poll)(struct collector_state *st);
	void (*finish)(struct collector_state *st);
	void (*report)(struct collector_state *st);
	void (*close)(struct collector_state *st);
};

extern const struct collector proc_collector, api_collector, cpu_collector, kernel_collector,
	util_collector, gcu_collector;

#endif
