/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Visual-profiler data (vpd): an SQLite database per profiled process. Field tools read
 *   gcu_op(id, name, start_timestamp, end_timestamp, device, stream, launch_id, duration,
 *          view_id, ...)          name second, duration (ns) eighth, view_id "dev:<id>,user:<id>"
 *   dev(id, row_name, node, category)     the rows named "GCU Kernels" are the kernel rows
 * and we add process, api_call, topstx_range, topstx_mark, memcpy, stack, sample, counter and
 * meta. Every timestamp is in ns since the epoch, so files of many hosts line up.
 */
#ifndef TOPSPROF_VPD_H
#define TOPSPROF_VPD_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "lib/outfile.h"

#define VPD_FORMAT  "topsprof-vpd"
#define VPD_VERSION 2 /* 2: stack rows with counts, counter rows */

struct vpd_identity {
	const char *host;
	const char *rank;    /* "" when not a rank of a distributed job */
	const char *command; /* the profiled command line */
};

/* the rank of this process in a distributed job (OMPI_COMM_WORLD_RANK, PMI_RANK, RANK...), or
 * "" */
const char *vpd_rank(void);
/* this host's name, as the files are named ("localhost" when it has none) */
void vpd_host(char *host, size_t len);

/* While an import reads the calls, the api_call rows of the first few processes written by a
 * thread of its own as the model keeps them (model.h, on_call): the import's work and SQLite's
 * at once. Started before the import (NULL when it cannot be: vpd_export then writes every
 * row), given to vpd_export, freed after it (and after a failed import: nothing is left of
 * its files) and before the model, whose strings its rows point at */
struct vpd_stream;
struct vpd_stream *vpd_stream_start(const struct outtarget *dir);
void vpd_stream_call(void *stream, const struct model *m, const struct api_call *c, size_t i);
void vpd_stream_free(struct vpd_stream *s);
/* the rows it wrote, and the files they went to (read after vpd_export) */
uint64_t vpd_stream_rows(const struct vpd_stream *s, size_t *files);

/* one vpd per profiled process of m into dir (prepared before the run, outfile.h), named
 * <host>-rank<R>-<pid>.vpd (rank part left out outside a distributed job), with the rows stream
 * (NULL: none) wrote; the number written, or -1 with the reason in err */
int vpd_export(const struct outtarget *dir, const struct model *m, const struct vpd_identity *id,
	       struct vpd_stream *stream, char *err, size_t errlen);
/* a vpd back into a model, read through one descriptor (infile.h) by SQLite, which keeps only
 * its page cache in memory; 0, or -1 with the reason in err (the file not named) */
int vpd_import(const char *path, struct model *m, char *err, size_t errlen);
/* --import-profile FILE: a vpd, or a profile file (store.h), told apart by its first bytes; the
 * file is opened once (infile.h) and read through that descriptor */
int vpd_import_profile(const char *path, struct model *m, char *err, size_t errlen);
/* every *.vpd of dir into the file out (prepared, outfile.h), each member opened, checked and
 * merged once (infile.h; read through its descriptor, never wholly in memory); the number of
 * files merged, -1 with "DIR[/MEMBER]: reason" in err (the input), or VPD_MERGE_OUTPUT with
 * "OUT: reason" (the output: nothing is left of it either way) */
#define VPD_MERGE_OUTPUT (-2)
int vpd_merge(const char *dir, const struct outtarget *out, char *err, size_t errlen);

#endif
