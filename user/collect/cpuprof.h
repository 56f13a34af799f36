/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* CPU callstack sampling (bpf/cpu.bpf.c): a software cpu-clock perf event per CPU at the asked
 * frequency; the tracked processes' samples counted per stack in the kernel; their mappings
 * captured while they live; at the end, the stacks named into a cpu_profile. */
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
