/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A process's file mappings, from /proc/PID/maps, kept so that its sampled addresses resolve
 * after it has exited: which file an address falls in, and at what file offset. */
#ifndef TOPSPROF_PROCMAPS_H
#define TOPSPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmap {
	uint64_t start, end, pgoff;
	char *path;	 /* a file, or a pseudo name such as [vdso]; NULL when anonymous */
	char *open_path; /* where topsprof opens the file, when not at path (another mount
			  * namespace's file: "/proc/self/fd/N"); NULL: path */
	bool foreign;	 /* another mount namespace's: never looked up at path on this host */
};

struct procmaps {
	struct procmap *v; /* sorted by start */
	size_t n, cap;
};

/* Parse the text of a maps file (executable mappings only). 0, or -EINVAL on a malformed line,
 * -ENOMEM. */
int procmaps_parse(struct procmaps *m, const char *text);
/* Read /proc/PID/maps: 0, or -errno (-ENOENT once the process is gone). */
int procmaps_read(struct procmaps *m, int pid);
/* The same from an open maps file, which it closes. */
int procmaps_read_fd(struct procmaps *m, int fd);
void procmaps_free(struct procmaps *m);

/* The mapping holding addr, and the file offset addr stands for; NULL when none does. */
const struct procmap *procmaps_find(const struct procmaps *m, uint64_t addr, uint64_t *off);

#endif
