/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Naming sampled stack frames: user addresses through the process's captured mappings and each
 * file's symbols (read once per file), kernel addresses through kallsyms (read on first use). A
 * frame nothing names is "[unknown]" with what is known of it: file and offset, or address. */
#ifndef TOPSPROF_SYMBOLIZE_H
#define TOPSPROF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/ksyms.h"
#include "symbols/procmaps.h"
#include "symbols/symtab.h"

struct symfile {
	char *path;
	struct symtab *t; /* NULL when it could not be read */
	int err;
};

struct symbolizer {
	struct symfile *files;
	size_t nfiles, capfiles;
	const char *kallsyms_path;
	struct ksyms k;
	int kerr; /* why kernel frames are not named: -errno, 0 when they are */
	int kloaded;
};

/* kallsyms_path: NULL for /proc/kallsyms */
void symbolizer_init(struct symbolizer *s, const char *kallsyms_path);
void symbolizer_free(struct symbolizer *s);

/* The name of user frame ip of a process whose mappings are m, written into buf (truncated to
 * len); returns buf. */
const char *symbolize_user(struct symbolizer *s, const struct procmaps *m, uint64_t ip, char *buf,
			   size_t len);
/* The same for a kernel frame: "function", with " [module]" for a module's. */
const char *symbolize_kernel(struct symbolizer *s, uint64_t ip, char *buf, size_t len);

#endif
