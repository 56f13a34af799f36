/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* CPU and memory utilization over time: one series for the host and one per profiled process,
 * sampled at --utilization-frequency; the report's averages and maxima come from them. */
#ifndef TOPSPROF_UTILIZATION_H
#define TOPSPROF_UTILIZATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTIL_HOST_PID 0 /* the host's series */

struct util_point {
	uint64_t t_ns; /* CLOCK_MONOTONIC, the end of the interval the CPU share is of */
	double cpu;    /* process: % of one CPU (up to 100 x CPUs); host: % of all CPUs */
	uint64_t rss;  /* bytes; host: memory in use (total - available) */
	uint64_t vsz;  /* bytes; host: 0 */
};

struct util_series {
	uint32_t pid; /* UTIL_HOST_PID for the host */
	char comm[16];
	struct util_point *v;
	size_t n, cap;
};

struct util_profile {
	bool cpu, mem; /* --cpu-utilization, --memory-utilization */
	uint32_t hz;
	uint32_t ncpus;
	uint64_t mem_total; /* the host's memory, bytes */
	uint64_t missed;    /* sampling periods that passed without a sample (topsprof was late) */
	struct util_series *s; /* the host first, then processes in the order first seen */
	size_t n, cap;
};

struct util_summary {
	size_t samples;
	double cpu_avg, cpu_max;
	double rss_avg, vsz_avg;
	uint64_t rss_max, vsz_max;
	uint64_t first_ns, last_ns;
};

/* the series of pid, made when missing (comm kept from the first call); NULL when out of memory */
struct util_series *util_series_get(struct util_profile *u, uint32_t pid, const char *comm);
/* a new series of pid, without looking for one (the readers of files, the sampler: they know) */
struct util_series *util_series_add(struct util_profile *u, uint32_t pid, const char *comm);
/* 0 or -ENOMEM */
int util_add(struct util_series *s, const struct util_point *p);
void util_summarize(const struct util_series *s, struct util_summary *out);
/* topsprof cancel: the points go, the series and settings stay */
void util_profile_clear(struct util_profile *u);
void util_profile_free(struct util_profile *u);

#endif
