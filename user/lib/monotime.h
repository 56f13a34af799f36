/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The host's monotonic clock, the one every host time of topsprof is on. */
#ifndef TOPSPROF_MONOTIME_H
#define TOPSPROF_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline double mono_s(void)
{
	return (double)mono_ns() / 1e9;
}

#endif
