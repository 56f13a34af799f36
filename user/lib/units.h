/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Numbers with units as users type them: sizes (4096, 4KB, 1MB), frequencies (100Hz),
 * durations (2.5s, 500ms). Suffixes are case-insensitive; K/KB/KiB all mean 1024. */
#ifndef TOPSPROF_UNITS_H
#define TOPSPROF_UNITS_H

#include <stdint.h>

/* each returns 0, or -1 when s is not a number with one of the accepted suffixes (or overflows) */
int parse_bytes(const char *s, uint64_t *out);
int parse_hz(const char *s, uint64_t *out);
int parse_seconds(const char *s, double *out);
int parse_uint(const char *s, uint64_t *out);

#endif
