/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which runtime libraries (libtopsrt.so, libtopstx.so, ...) a program will really use, found the
 * way ld.so would: the executable itself (runtime linked in), its DT_NEEDED tree (RPATH,
 * LD_LIBRARY_PATH, RUNPATH, ld.so.cache, the default directories), or, for a library it
 * dlopen()s by name later, the same search plus the vendor's directories (/opt/tops/lib). Paths
 * may be looked up under another root (/proc/PID/root). */
#ifndef TOPSPROF_FINDLIB_H
#define TOPSPROF_FINDLIB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct findlib_target {
	const char *soname;	  /* "libtopsrt.so.1"; any libtopsrt.so* file matches */
	const char *probe_symbol; /* a function that tells a static copy: "topsLaunchKernel" */
	const char *vendor_dirs;  /* searched last for a dlopen() by name: "/opt/tops/lib:..." */
	char path[PATH_MAX];	  /* found: the file to probe, root included */
	bool in_executable;	  /* the executable has it linked in */
};

struct findlib_ctx {
	const char *root;	     /* "" or "/proc/PID/root" */
	const char *ld_library_path; /* the application's, or NULL */
	char looked[2048];	     /* where the search went, for the error message */
};

/* the file that execve(argv0) runs: argv0 itself when it has a '/', else found in PATH */
int findlib_resolve_exe(const char *argv0, const char *path_env, char *out, size_t len);

/* find each target for the program exe (a path as seen under ctx->root); returns how many were
 * found */
int findlib_find(struct findlib_ctx *ctx, const char *exe, struct findlib_target *t, int n);

/* the length of soname's part every version of the file shares: "libtopsrt.so" */
size_t findlib_prefix_len(const char *soname);
/* whether the file at path (its name) is a version of soname: libtopsrt.so, libtopsrt.so.1.2 */
bool findlib_matches(const char *path, const char *soname);

/* look a library name up in root's ld.so.cache; 0 and its path (as seen under root), or -ENOENT */
int findlib_ldcache(const char *root, const char *name, char *out, size_t len);

#endif
