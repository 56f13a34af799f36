/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The API tracer (bpf/api.bpf.c): load it, attach its probes to every traced function of a
 * library (or an executable with the runtime linked in), switch collection, read its maps. */
#ifndef TOPSPROF_TRACER_H
#define TOPSPROF_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/runtime/runtime.h"
#include "model/model.h"
#include "collect/strrecover.h" /* the strings the probe sends as faulted are read again with it */

struct tracer;
struct bpf_releaser;

struct tracer_opts {
	bool stats_mode;
	bool system_wide;
	bool collecting;
	uint32_t max_str_bytes;
	uint64_t buffer_size;
	int pid_map_fd; /* the process tracker's tracked_pids */
	/* probes in the followed processes alone (tracer_follow), where the kernel has
	 * uprobe_multi links; with single uprobes (attach cookies needed), in the first process
	 * followed alone, on the files from a second on; else (and without) in every process that
	 * maps a probed file */
	bool scoped;
	struct bpf_releaser *releaser; /* where followed processes' links go (the caller's) */
};

int tracer_open(struct tracer **out, const struct tracer_opts *o);
void tracer_close(struct tracer *t);

/* probe every function of lib that path defines (path: lib, or an executable with it linked in);
 * the number of functions probed, or -errno. A function that begins with endbr64 is probed
 * after it (no single-step). */
int tracer_attach(struct tracer *t, const char *path, const struct runtime_lib *lib);

/* scoped probes (tracer_opts.scoped, and the kernel has them): tracer_attach keeps what to
 * probe, and tracer_follow makes it links for one process (none for one that has them; with
 * single uprobes, for the first process, and the probes on the files at the second);
 * tracer_unfollow lets a process's links go (in the background). tracer_unscope attaches what was kept for every process instead, from then on.
 * 0 or -errno */
int tracer_follow(struct tracer *t, pid_t pid);
void tracer_unfollow(struct tracer *t, pid_t pid);
int tracer_unscope(struct tracer *t);

void tracer_set_collecting(struct tracer *t, bool on);
/* topsprof cancel: the in-kernel statistics start again from nothing */
void tracer_clear(struct tracer *t);
int tracer_events_fd(const struct tracer *t);

/* statistics-mode aggregates and loss counters into the model */
int tracer_collect_maps(struct tracer *t, struct model *m);

/* the file offset to probe for a function at off: after a leading endbr64 */
uint64_t probe_offset(const char *path, uint64_t off);

#endif
