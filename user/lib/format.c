// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/format.h"

#include <math.h>
#include <stdio.h>

char *fmt_time(char *buf, double ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t u = 0;

	if (ns < 0)
		ns = 0;
	/* the next unit up once the value would print as 1000.00 or more */
	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       round(ns / units[u].scale * 100) >= 100000)
		u++;
	snprintf(buf, FMT_TIME_LEN, "%.2f%s", ns / units[u].scale, units[u].unit);
	return buf;
}

char *fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	/* decimal units, as the manual's reports name copies: [Memcpy HtoD 4.00MB] */
	if (bytes >= 1000000000ull)
		snprintf(buf, len, "%.2fGB", (double)bytes / 1e9);
	else if (bytes >= 1000000ull)
		snprintf(buf, len, "%.2fMB", (double)bytes / 1e6);
	else if (bytes >= 1000ull)
		snprintf(buf, len, "%.2fKB", (double)bytes / 1e3);
	else
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	return buf;
}
