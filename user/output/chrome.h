/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* --export-chrome-trace: the Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing
 * open: API calls on their threads, topstx ranges, GCU records per device and stream, a flow
 * arrow from each call to the GCU record it caused, a counter per device of the commands
 * running, and the utilization series as counters (the host's under a process of its own). */
#ifndef TOPSPROF_CHROME_H
#define TOPSPROF_CHROME_H

#include <stdio.h>

#include "model/model.h"

/* the process id under which device d's records appear */
#define CHROME_GCU_PID(d) (1000000000 + (d))
/* the process id under which the host's utilization appears */
#define CHROME_HOST_PID 999999999

void chrome_write(FILE *out, const struct model *m);

#endif
