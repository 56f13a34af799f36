/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The text reports, in the manual's layout: every line starts ==PID==. */
#ifndef TOPSPROF_REPORT_H
#define TOPSPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct report_opts {
	uint32_t pid;  /* of the ==PID== prefix */
	bool api_only; /* --print-api-summary */
	bool gcu_only; /* --print-gcu-summary */
	bool per_gcu;  /* --print-summary-per-gcu */
};

void report_summary(FILE *out, const struct model *m, const struct report_opts *o);
/* --print-gcu-trace: every record in time order, start relative to the first */
void report_gcu_trace(FILE *out, const struct model *m, uint32_t pid);
/* the name a GCU record is reported under: the kernel's, or "[Memcpy HtoD 4.00MB]" */
const char *report_op_label(const struct gcu_op *op, char *buf, size_t len);

/* the activity a record belongs to: Operator, Memcpy, Memcpy_cdte, Memcpy_sdte */
const char *report_op_type(const struct gcu_op *op);

/* --export-csv: the printed report as CSV */
void report_csv_summary(FILE *out, const struct model *m, const struct report_opts *o);
void report_csv_gcu_trace(FILE *out, const struct model *m);

/* the progress line the manual shows while the profile is processed */
void report_progress(FILE *out, double seconds);

#endif
