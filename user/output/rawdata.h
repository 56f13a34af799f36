/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Raw data (--export-rawdata / --import-rawdata): the event streams as the BPF ring buffers
 * delivered them, the GCU records as the devices wrote them, the clock-sync pairs, the
 * in-kernel statistics and loss counters, and what is needed to analyse them again (the run's
 * settings, the probed libraries). Importing replays them through the same analysis, so it
 * reproduces the profile.
 *
 * A gzip stream (its CRC32 guards the content) of records { u32 type | u32 length | bytes },
 * beginning with the magic record "TOPSRAW" and a version.
 */
#ifndef TOPSPROF_RAWDATA_H
#define TOPSPROF_RAWDATA_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "lib/outfile.h"

/* 2: the samplers' sections; 3: the functions by name; 4: the calls packed (LEB128, deltas);
 * 1 to 3 are still read */
#define RAW_VERSION 4

struct raw_writer;

/* what the analysis of the raw data needs to know of the run */
struct raw_settings {
	bool stats_mode;
	char include_domains[4096]; /* --topstx-domain-include, or "" */
	bool has_include;
};

/* the writer, its file created in t's directory (prepared before the run) */
int raw_open(struct raw_writer **out, const struct outtarget *t, char *err, size_t errlen);
/* a ring buffer event, as delivered */
void raw_event(struct raw_writer *w, const void *data, size_t size);
/* a setting or fact of the run: key=value */
void raw_note(struct raw_writer *w, const char *key, const char *value);
/* the device side (records, sync pairs), kernel statistics and losses of the unfinished model,
 * then the file is closed and put in place; 0, or -1 with the reason in err */
int raw_finish(struct raw_writer *w, const struct model *m, const struct raw_settings *s, char *err,
	       size_t errlen);
void raw_abort(struct raw_writer *w);

/* replay a raw data file into an empty model, unfinished; 0 or -1 with the reason in err */
int raw_import(const char *path, struct model *m, struct raw_settings *s, char *err, size_t errlen);

#endif
