/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What a finished profile is shown as, from the options: the same for a live run and an
 * imported one. */
#ifndef TOPSPROF_PRESENT_H
#define TOPSPROF_PRESENT_H

#include <stdbool.h>
#include <stddef.h>

#include "app/cli.h"
#include "model/model.h"
#include "output/export.h"

/* the export options' outputs, named and opened before anything runs; 0, or 1 after one error
 * line */
int prepare_exports(const struct cli *cli, struct exports *e);
/* whether the asked outputs need every call, or statistics will do */
bool needs_every_call(const struct cli *cli);
/* the analysis after collection: the application's own GCU work, the clock fit, the join */
void finish_model(struct model *m, bool stats_mode, const char *include_domains);
/* the report, the warnings about what was lost, the exports; the number of exports that failed */
int print_outputs(const struct cli *cli, const struct model *m, const struct exports *e);

#endif
