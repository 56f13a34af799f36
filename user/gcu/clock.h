/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Device ticks to host CLOCK_MONOTONIC ns: a least-squares line through the clock-sync pairs
 * taken during the run, so both the offset and the drift of the device clock are taken out. */
#ifndef TOPSPROF_GCU_CLOCK_H
#define TOPSPROF_GCU_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct clock_fit {
	double t0, h0; /* a point on the line: mean ticks, mean host ns */
	double slope;  /* host ns per tick */
};

/* fit the pairs; with fewer than two pairs, or too short a span, the slope is the nominal
 * 1e9 / tick_hz. Returns -1 when there is no pair at all. */
int clock_fit(const struct sync_pair *p, size_t n, uint64_t tick_hz, struct clock_fit *f);
uint64_t clock_to_host(const struct clock_fit *f, uint64_t ticks);

#endif
