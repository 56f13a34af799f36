/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The text reports, in the manual's layout: every line starts ==PID==. */
#ifndef TOPSPROF_REPORT_H
#define TOPSPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

struct report_opts {
	uint32_t pid;  /* of the ==PID== prefix */
	bool api_only; /* --print-api-summary */
};

void report_summary(FILE *out, const struct model *m, const struct report_opts *o);

/* the progress line the manual shows while the profile is processed */
void report_progress(FILE *out, double seconds);

#endif
