/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Output file names for distributed runs: %p is topsprof's process id, %h the host name,
 * %q{NAME} the value of environment variable NAME (e.g. %q{OMPI_COMM_WORLD_RANK}, %q{RANK}),
 * %% a percent sign; so that the ranks of one job never write the same file. */
#ifndef TOPSPROF_OUTNAME_H
#define TOPSPROF_OUTNAME_H

#include <stddef.h>
#include <sys/types.h>

/* 0, or -1 with the reason in err (an unknown %x, a variable not set, too long) */
int outname_expand(const char *pattern, pid_t pid, char *out, size_t len, char *err, size_t errlen);

#endif
