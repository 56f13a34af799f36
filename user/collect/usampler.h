/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The utilization sampler: at --utilization-frequency, each tracked process's CPU time (its
 * CPU-time clock, clock_getcpuclockid: every thread's, those ended too, in ns) and memory
 * (/proc/PID/statm), and the host's (/proc/stat, /proc/meminfo; the host's CPU at 10 Hz at most,
 * since /proc/stat counts in 10 ms ticks), added to a util_profile. A timerfd paces it;
 * topsprof's event loop waits on it. */
#ifndef TOPSPROF_USAMPLER_H
#define TOPSPROF_USAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/utilization.h"

struct usampler;

struct usampler_opts {
	bool cpu, mem;
	bool collecting;
	uint32_t hz;
	int pid_map_fd; /* the process tracker's tracked_pids; -1: none */
	/* more processes to sample (system-wide: those seen using a GCU), their first sight a
	 * baseline: up to max pids into out, the number given; NULL: none */
	size_t (*more_pids)(void *ctx, uint32_t *out, size_t max);
	void *ctx;
};

/* start sampling into u (its settings filled in); 0 or -errno, said */
int usampler_open(struct usampler **out, const struct usampler_opts *o, struct util_profile *u);
void usampler_close(struct usampler *s);
/* the timer's fd, for epoll; -1 when s is NULL */
int usampler_fd(const struct usampler *s);
/* when the fd is readable: take the sample that is due */
void usampler_poll(struct usampler *s);
void usampler_set_collecting(struct usampler *s, bool on);

/* parsers of the /proc files read, for the tests: 0, or -EINVAL when the text is not one */
int usampler_parse_stat(const char *text, uint64_t *busy, uint64_t *total);
int usampler_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);
int usampler_parse_statm(const char *text, uint64_t page, uint64_t *vsz, uint64_t *rss);
/* /proc/PID/stat: when the process started (clock ticks after boot) and its threads */
int usampler_parse_pidstat(const char *text, uint64_t *start, uint32_t *threads);

#endif
