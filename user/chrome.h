/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* --export-chrome-trace: the Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing
 * open: API calls on their threads, topstx ranges, GCU records per device and stream, a flow
 * arrow from each call to the GCU record it caused, and a counter per device of the commands
 * running. */
#ifndef TOPSPROF_CHROME_H
#define TOPSPROF_CHROME_H

#include <stdio.h>

#include "model.h"

/* the process id under which device d's records appear */
#define CHROME_GCU_PID(d) (1000000000 + (d))

void chrome_write(FILE *out, const struct model *m);

#endif
