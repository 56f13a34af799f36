/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The profiled process tree, kept in BPF (bpf/proc.bpf.c): seed it with a process, and its
 * forked children join it and leave it on exit without topsprof having to notice in time. */
#ifndef TOPSPROF_PROCTREE_H
#define TOPSPROF_PROCTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"

struct proctree;

typedef void (*proctree_event_fn)(void *ctx, const struct tp_proc_event *e);

struct proctree_opts {
	bool system_wide; /* every process counts as tracked */
	/* the followed processes' map and their generation's, from proctree_maps_new; 0: its own */
	int pid_map_fd, gen_map_fd;
	/* hold a new process of the set (SIGSTOP, before its first instruction) that could call a
	 * probed function before its probes are in (bpf/proc.bpf.c), with an EV_PROC_HELD event,
	 * until proctree_release; proctree_set_probed says they are in */
	bool hold_new;
	proctree_event_fn on_event;
	void *ctx;
};

/* open, load and attach; returns 0 or -errno (and says what failed). Every pid here is a
 * global one (BPF sees those): topsprof must run in the initial pid namespace, the host's (it
 * profiles a container's processes from there); in another one it fails with -EPERM and one
 * line saying so */
int proctree_open(struct proctree **out, const struct proctree_opts *opts);
void proctree_close(struct proctree *pt);

/* the process joins the set (with the children it forks from now on); the set's generation
 * goes up, so that no BPF program keeps an answer it found before (bpf/tracked.h) */
int proctree_add(struct proctree *pt, pid_t tgid);
bool proctree_has(const struct proctree *pt, pid_t tgid);

/* the ring buffer's epoll fd, and draining it: number of events handled or -errno */
int proctree_epoll_fd(const struct proctree *pt);
int proctree_poll(struct proctree *pt, int timeout_ms);

/* whether new processes are held (hold_new asked for, and the kernel could attach it) */
bool proctree_holds(const struct proctree *pt);
/* a process's API probes are in: it is not held when it execs (hold_new); 0 or -errno */
int proctree_set_probed(struct proctree *pt, pid_t pid);
/* a process held (EV_PROC_HELD) runs on: 0 or -errno */
int proctree_release(struct proctree *pt, pid_t pid);
/* the collection is over and reported, the application runs on (--duration): from now on the
 * ring is only read for the processes held (a child that execs after the end), which run on at
 * once, unprobed; nothing else is recorded. At each look of wait_app; the programs stay (its
 * signals) */
void proctree_let_go(struct proctree *pt);

/* the tracked_pids map, and the tracked_gen one (the set's generation), for other BPF programs
 * to share; the generation now */
int proctree_map_fd(const struct proctree *pt);
int proctree_gen_fd(const struct proctree *pt);
uint64_t proctree_gen(const struct proctree *pt);

/* new, empty tracked_pids and tracked_gen maps (fds above 2): 0, or -errno and none. Made before
 * any BPF object is loaded, every collector's object can be loaded with them at once */
int proctree_maps_new(int *pid_map_fd, int *gen_map_fd);

/* signals generated for app (the launched application) are noted from now on; whether signal
 * sig reached it at or after since_ns (CLOCK_MONOTONIC) from a sender other than exclude, and
 * the sender in *sender. Pids are global ones, as topsprof sees them (proctree_open refuses a
 * pid namespace other than the initial one) */
void proctree_watch_signals(struct proctree *pt, pid_t app);
bool proctree_app_signaled(const struct proctree *pt, int sig, uint64_t since_ns, pid_t exclude,
			   pid_t *sender);

struct proctree_drops {
	uint64_t events; /* records lost to a full ring buffer */
	uint64_t pids;	 /* processes that could not join a full tracked_pids */
};
int proctree_drops(const struct proctree *pt, struct proctree_drops *d);

#endif
