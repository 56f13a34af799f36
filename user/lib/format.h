/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* How numbers print in reports: times with two decimals and a unit picked by size (56.61ms,
 * 13.44us, 461.00ns, 1.20s), as the manual and the scripts that parse it expect. */
#ifndef TOPSPROF_FORMAT_H
#define TOPSPROF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define FMT_TIME_LEN 32

/* buf must hold FMT_TIME_LEN; returns buf */
char *fmt_time(char *buf, double ns);
/* decimal: "4.00MB" for 4000000, "16.38KB", "100B" */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes);

#endif
