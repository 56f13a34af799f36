/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Small /proc files, read whole. */
#ifndef TOPSPROF_PROCFS_H
#define TOPSPROF_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* the file at path into buf (NUL-terminated, cut to len - 1 bytes): its length or -errno */
ssize_t procfs_read(const char *path, char *buf, size_t len);
/* the name in the text of a /proc/PID/stat; "" when there is none */
void procfs_stat_comm(const char *stat, char *comm, size_t len);

#endif
