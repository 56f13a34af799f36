/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Output files: never overwrite one that exists unless --force-overwrite, and write atomically
 * (a temporary file beside it, renamed into place once complete), so that a crash or a full disk
 * leaves no half file. */
#ifndef TOPSPROF_OUTFILE_H
#define TOPSPROF_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct outfile {
	FILE *f;
	bool force; /* may replace a file that exists, even one that appeared meanwhile */
	char path[4096];
	char tmp[4096];
};

/* 0, or -1 with "PATH: reason" in err: it exists (and !force), or cannot be created */
int outfile_check(const char *path, bool force, char *err, size_t errlen);
int outfile_open(struct outfile *o, const char *path, bool force, char *err, size_t errlen);
/* flush, sync, rename into place; on failure the temporary file is removed */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);

#endif
