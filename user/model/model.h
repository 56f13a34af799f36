/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The profile as collected: processes, API calls (with their strings), statistics, topstx
 * ranges and marks, and every loss. Reports and exports read it; collectors fill it. */
#ifndef TOPSPROF_MODEL_H
#define TOPSPROF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/runtime/apitable.h"
#include "model/calls.h"
#include "model/cpustacks.h"
#include "events.h"
#include "gcu_readout.h"
#include "model/kstacks.h"
#include "model/utilization.h"

struct fn_stat {
	uint64_t count, total_ns, min_ns, max_ns;
};

struct tx_range {
	char *domain; /* NULL: the default domain */
	char *name;
	uint32_t pid, tid;
	uint64_t start_ns, end_ns;
	bool truncated;
};

struct proc_info {
	uint32_t pid, ppid;
	char comm[TASK_COMM_LEN];
	bool exited;
	int exit_code;
};

/* a GCU profiler record as the model keeps it: the readout's (struct gcu_record) but the ring's
 * position, in 52 bytes against 64, 4-byte aligned (the call index follows it) */
struct gcu_oprec {
	uint64_t launch_id, start_ticks, end_ticks, bytes;
	uint32_t pid, tid, stream_id, name_id;
	uint8_t device, kind, engine, copy_kind;
} __attribute__((packed, aligned(4)));

/* one GCU profiler record, put on the host's clock: 80 bytes (millions in a long run) */
struct gcu_op {
	struct gcu_oprec rec;
	int32_t call;		   /* the API call that caused it: index into calls, or -1 */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	const char *name;	   /* kernels and DTE moves: the kernel's name (model-owned) */
};

/* the readout's record of a model's */
struct gcu_record gcu_op_record(const struct gcu_op *op);

struct sync_pair {
	uint64_t host_ns, ticks;
};

struct gcu_dev {
	bool present;
	uint64_t tick_hz; /* nominal */
	struct sync_pair *pairs;
	size_t npairs, pairs_cap;
	uint64_t overflow; /* records the device dropped */
	char **names;	   /* name_id -> name */
	uint32_t nnames;
};

struct model {
	uint32_t root_pid;
	char *header;	      /* the run's first line, as printed (without the ==PID== prefix) */
	double process_s;     /* how long processing took, as the progress line says */
	uint64_t buffer_size; /* --buffer-size of the run */
	bool system_wide;     /* every process's records are the profile's */
	/* the profiled span: from the application's start to its end */
	uint64_t span_start_ns, span_end_ns;
	/* GCU records, as read; host times once model_finish() aligned them */
	struct gcu_op *ops;
	size_t nops, ops_cap;
	struct gcu_dev dev[GCU_RO_MAX_DEVICES];
	unsigned gcu_activities; /* enum gcu_activity mask collected */
	bool gcu_joined;	 /* joins computed (the calls were streamed) */
	uint64_t joined, unjoined_records, unjoined_calls;
	/* runtime statistics per function (from BPF maps in statistics mode, else from calls) */
	struct fn_stat stats[API_MAX_FNS];
	/* every streamed call, in the order they returned; with summary_only, the topstx calls.
	 * Read them with model_call() or calls_get(); ncalls == calls.n */
	struct call_store calls;
	size_t ncalls;
	/* set before events stream, when no output needs every call (only a summary is asked
	 * for): a runtime call is not kept but counted here, and its statistics are added up in
	 * streamed as it arrives (model_finish() takes them as it would the calls'). The topstx
	 * calls are kept: they are few, and make the ranges and marks */
	bool summary_only;
	/* NULL, or given each call once it is kept (c as given, i its index in calls): an
	 * output written while the calls are read (vpd.h) */
	void (*on_call)(void *ctx, const struct model *m, const struct api_call *c, size_t i);
	void *on_call_ctx;
	uint64_t calls_not_kept;
	struct fn_stat streamed[API_MAX_FNS];
	struct tx_range *ranges;
	size_t nranges, ranges_cap;
	struct {
		char *domain, *name;
		uint64_t count;
	} * marks;
	size_t nmarks, marks_cap;
	uint64_t tx_open; /* ranges never closed */
	struct proc_info *procs;
	size_t nprocs, procs_cap;
	uint64_t first_ns, last_ns;
	struct cpu_profile cpu;	      /* --cpu-profiling-callstack */
	struct util_profile util;     /* --cpu-utilization, --memory-utilization */
	struct kernel_profile kernel; /* --kernel-callstack */
	/* losses */
	uint64_t lost_calls, lost_strings, lost_depth, lost_stats, lost_proc_events, lost_pids;
	/* strings neither the probe nor topsprof could read (API_STR_FAULT), shown as
	 * "[unreadable string at 0x...]"; and, not losses, those topsprof read from the process
	 * after the probe faulted (str_recovered), those the probe faulted in (str_faulted_in) */
	uint64_t lost_unreadable, str_recovered, str_faulted_in;
	/* strings whose call has not returned yet */
	struct pending_str *pending;
	size_t npending, pending_cap;
};

void model_init(struct model *m);
void model_free(struct model *m);

void model_add_proc_event(struct model *m, const struct tp_proc_event *e);
void model_add_str(struct model *m, const struct tp_str_event *e);
void model_add_call(struct model *m, const struct tp_api_event *e);
/* an imported call with its flags and strings as stored (copied: the caller keeps its own);
 * 1 kept, 0 not kept (only a summary is asked for), -1 out of memory */
int model_add_call_strs(struct model *m, const struct tp_api_event *e, char *const str[2],
			const uint32_t len[2], const bool truncated[2]);

/* call i (< m->ncalls), whole; its strings are the model's */
static inline struct api_call model_call(const struct model *m, size_t i)
{
	struct api_call c;

	calls_get(&m->calls, i, &c);
	return c;
}
void model_add_stat(struct model *m, uint32_t fn, const struct api_stat *s);
void model_add_gcu(struct model *m, const struct gcu_record *r, const char *name);
void model_add_sync(struct model *m, int dev, uint64_t host_ns, uint64_t ticks);

/* after collection: runtime statistics from the calls, topstx ranges paired.
 * include_domains: comma list of custom topstx domains to keep, "all", or NULL for none */
void model_finish(struct model *m, bool stats_from_calls, const char *include_domains);

uint64_t model_lost_total(const struct model *m);

/* keep only the GCU records of the profiled processes (the root and every process it forked):
 * other profiled applications share the devices */
void model_keep_own_gcu(struct model *m);

/* topsprof cancel: forget what was collected so far (calls, statistics, GCU records, strings);
 * the run's own facts (processes, devices, header) stay */
void model_clear_collected(struct model *m);

#endif
