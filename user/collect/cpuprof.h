/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* CPU callstack sampling (bpf/cpu.bpf.c): a software cpu-clock perf event per CPU at the asked
 * frequency. By frame pointers, the tracked processes' samples are counted per stack in the
 * kernel; else each sample's registers and stack copy are unwound here as they come
 * (symbols/unwind.c) and counted per stack. Their mappings are captured while they live; at the
 * end, the stacks are named into a cpu_profile. Memory grows with the distinct stacks (at most
 * 1M: samples of a new stack past them are lost, counted) and code addresses seen, not with the
 * samples. */
#ifndef TOPSPROF_CPUPROF_H
#define TOPSPROF_CPUPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "model/cpustacks.h"

struct cpuprof;

struct cpuprof_opts {
	bool system_wide;
	bool collecting;
	uint32_t hz;
	bool unwind_fp; /* frame pointers in the kernel; else stack copies unwound here */
	int pid_map_fd; /* the process tracker's tracked_pids */
};

int cpuprof_open(struct cpuprof **out, const struct cpuprof_opts *o);
void cpuprof_close(struct cpuprof *c);

void cpuprof_set_collecting(struct cpuprof *c, bool on);
/* topsprof cancel: the counts start again from nothing */
void cpuprof_clear(struct cpuprof *c);
/* capture the mappings of the processes sampled so far (they vanish when a process exits):
 * call it when cpuprof_epoll_fd() is readable (a process was sampled for the first time) and
 * now and then (a live process's mappings are read again every second, for dlopen) */
void cpuprof_poll(struct cpuprof *c);
/* -1 when c is NULL */
int cpuprof_epoll_fd(const struct cpuprof *c);
/* the sampled stacks, named, and the losses */
int cpuprof_collect(struct cpuprof *c, struct cpu_profile *p);

#endif
