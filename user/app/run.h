/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef TOPSPROF_RUN_H
#define TOPSPROF_RUN_H

#include "app/cli.h"

/* profile the application of cli; returns topsprof's exit status (the application's) */
int cmd_profile(const struct cli *cli);
/* --import-profile FILE: print it as the run that saved it did */
int cmd_import(const struct cli *cli);
/* --visual-profiler-merge-from DIR --visual-profiler-merge-to FILE */
int cmd_merge(const struct cli *cli);

#endif
