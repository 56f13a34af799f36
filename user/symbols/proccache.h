/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The mappings and names of the processes whose stacks were taken, captured while they live so
 * that their addresses still resolve after they exit. A process is read when first seen, at every
 * poll during its first second (its exec and the dynamic loader change its mappings, and a
 * short-lived one may be gone before long), then once a second (dlopen). The files a process in
 * another mount namespace (a container) mapped are opened through /proc/PID/map_files and held
 * open; they are never looked up by their paths on this host. */
#ifndef TOPSPROF_PROCCACHE_H
#define TOPSPROF_PROCCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "symbols/procmaps.h"

struct cached_proc {
	uint32_t tgid;
	bool gone;
	bool pruned;		  /* gone, and taken out of the BPF map of processes seen */
	bool read_once;		  /* its name read at least once */
	char comm[TASK_COMM_LEN]; /* made safe for the folded format */
	struct procmaps maps;
	uint64_t first_ns, read_ns;
};

/* a file of another mount namespace, held open so that it can be read after its process ends */
struct held_file {
	uint64_t dev, ino;
	int fd;
};

struct proccache {
	struct cached_proc *v;
	size_t n, cap;
	struct held_file *held; /* by (dev, ino): one descriptor per file */
	size_t nheld, capheld;
	size_t held_max;      /* 0: not set yet */
	bool held_full;	      /* said */
	uint64_t self_mnt_ns; /* topsprof's mount namespace (its inode); 0: not read yet */
	uint32_t *slots;      /* open addressing by tgid: index + 1 into v, 0 free */
	size_t nslots;	      /* a power of two, at least twice n */
};

/* (re)read a process's mappings and name, as its age asks; now: CLOCK_MONOTONIC ns. A process
 * gone, or exiting (its mappings read empty), keeps the last ones read. */
void proccache_capture(struct proccache *pc, uint32_t tgid, uint64_t now);
/* a process announced again: it exec'd, or its pid was taken by a new process; the new image's
 * mappings and name replace the ones kept (the stacks of both share the pid: those taken before
 * are named from the new image's too) */
void proccache_renew(struct proccache *pc, uint32_t tgid, uint64_t now);
/* the same for every key (a u32 tgid) of a BPF hash map */
void proccache_capture_map(struct proccache *pc, int map_fd, uint64_t now);
const struct cached_proc *proccache_find(const struct proccache *pc, uint32_t tgid);
void proccache_free(struct proccache *pc);

/* The processes a BPF object took stacks of, watched: it announces each on a ring buffer (a u32
 * tgid) when it takes its first stack, and keeps them all as the keys of a hash map, walked now and
 * then for those whose announcement was lost. A process gone leaves the map, so that the map
 * never fills on a long run, and a new process with its pid is announced anew. */
struct proc_watch {
	struct proccache cache;
	struct ring_buffer *rb;
	int seen_fd;
	uint64_t walked_ns;
};

/* 0 or -errno */
int proc_watch_init(struct proc_watch *w, int ring_fd, int seen_fd);
/* capture what was announced; walk the map too when due, or at once with all */
void proc_watch_poll(struct proc_watch *w, bool all);
int proc_watch_epoll_fd(const struct proc_watch *w);
void proc_watch_free(struct proc_watch *w);

#endif
