/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Every file a finished profile is written as, one row each in exporters[] (export.c): the
 * option that asks for it, whether it names a directory, whether it needs every call (trace
 * mode), and its writer. A new format is its writer's file and one row. Every output is named
 * and opened before the run (a long run's results are never lost at its end: outfile.h) and
 * written from the finished model. */
#ifndef TOPSPROF_EXPORT_H
#define TOPSPROF_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/outfile.h"
#include "model/model.h"
#include "output/report.h"

struct vpd_stream; /* output/vpd.h */

/* what the writers are given */
struct export_in {
	const struct model *m;
	const struct report_opts *ro;
	bool gcu_trace;		/* --print-gcu-trace: the CSV is the trace, not the summary */
	const char *command;	/* the profiled command line */
	struct vpd_stream *vpd; /* exports_stream's, or NULL */
};

struct exporter {
	const char *option; /* "export-csv": --export-csv PATH */
	bool dir;	    /* PATH is a directory */
	bool every_call;    /* it needs every call: trace mode */
	/* NULL, or why this profile cannot be written so (one line) */
	const char *(*refuse)(const struct export_in *x);
	/* a file: write into f; nonzero for out of memory (a write error shows at the commit) */
	int (*write)(FILE *f, const struct export_in *x);
	/* a directory: the number of files written, or -1 with the reason in err */
	int (*write_dir)(const struct outtarget *dir, const struct export_in *x, char *err,
			 size_t errlen);
};

#define EXPORTERS_MAX 8
extern const struct exporter exporters[];
extern const unsigned nexporters;

/* the outputs of a run: exporters[i] writes to t[i] when t[i].open */
struct exports {
	struct outtarget t[EXPORTERS_MAX];
	struct vpd_stream *vpd; /* exports_stream */
};

/* option's PATH (%p, %h, %q{ENV} expanded) opened as its target before anything runs; a root
 * run warns when another user can change the directory. 0, or 1 after one error line */
int export_target(struct outtarget *t, const char *option, const char *pattern, bool dir,
		  bool force);

/* every exporter whose option path_of gives a PATH for; 0, or 1 after one error line (then
 * nothing stays open) */
int exports_prepare(struct exports *e, const char *(*path_of)(void *ctx, const char *option),
		    void *ctx, bool force);
/* before an import reads the calls: the vpd's api_call rows written as m keeps them (vpd.h),
 * when a vpd is asked for */
void exports_stream(struct exports *e, struct model *m);
/* write every prepared output; the number that failed, each said in one line */
int exports_write(const struct exports *e, const struct export_in *x);
/* the outputs closed (a stream's files not written are thrown away): before the model is
 * freed */
void exports_close(struct exports *e);

#endif
