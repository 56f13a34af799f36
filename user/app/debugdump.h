/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* --debug-dump: the raw state of a run (its raw data) and what topsprof did (a text file), in
 * the current directory, for a bug report. */
#ifndef TOPSPROF_DEBUGDUMP_H
#define TOPSPROF_DEBUGDUMP_H

#include <stdbool.h>

#include "app/cli.h"
#include "lib/outfile.h"
#include "model/model.h"
#include "target/discover.h"

/* topsprof-debug-PID.{raw,txt} (the raw one unless --export-rawdata names it: raw_given), or
 * -RANDOM names when another user took those; 0, or -1 after one error line */
int debug_dump_prepare(bool force, bool raw_given, struct outtarget *raw, struct outtarget *txt);

struct debug_facts {
	const struct cli *cli;
	const struct discovery *found;
	bool stats_mode;
	const char *session;
	const struct model *m;
};

/* the text, into txt (raw: the raw data written beside it, for the message) */
void debug_dump_write(const struct outtarget *txt, const struct outtarget *raw,
		      const struct debug_facts *x);

#endif
