// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "gcu/clock.h"

#include <math.h>

/* below this span of ticks the drift cannot be told from the jitter of the pairs */
#define MIN_FIT_SPAN_NS 1e6

int clock_fit(const struct sync_pair *p, size_t n, uint64_t tick_hz, struct clock_fit *f)
{
	double st = 0, sh = 0, stt = 0, sth = 0, span;

	if (!n)
		return -1;
	/* centred sums, so that no 1e13-sized products lose the nanoseconds */
	for (size_t i = 0; i < n; i++) {
		st += (double)(p[i].ticks - p[0].ticks);
		sh += (double)(p[i].host_ns - p[0].host_ns);
	}
	f->t0 = st / (double)n;
	f->h0 = sh / (double)n;
	for (size_t i = 0; i < n; i++) {
		double dt = (double)(p[i].ticks - p[0].ticks) - f->t0;
		double dh = (double)(p[i].host_ns - p[0].host_ns) - f->h0;

		stt += dt * dt;
		sth += dt * dh;
	}
	f->slope = tick_hz ? 1e9 / (double)tick_hz : 1.0;
	span = (double)(p[n - 1].host_ns - p[0].host_ns);
	if (n >= 2 && stt > 0 && span >= MIN_FIT_SPAN_NS)
		f->slope = sth / stt;
	/* back to absolute values: the origin is the first pair */
	f->t0 += (double)p[0].ticks;
	f->h0 += (double)p[0].host_ns;
	return 0;
}

uint64_t clock_to_host(const struct clock_fit *f, uint64_t ticks)
{
	double h = f->h0 + ((double)ticks - f->t0) * f->slope;

	return h <= 0 ? 0 : (uint64_t)llround(h);
}
