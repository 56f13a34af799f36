/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* After a run: put every GCU record on the host clock, then tie it to the API call that caused
 * it. A record carries the process and thread that submitted its command and a per-process
 * launch id; a thread's submitting calls (launches, copies, memsets that succeeded) are matched
 * to its records in launch order, each match checked: the same kind, stream, size and kernel,
 * and the device starting after the call began. What cannot be matched is counted, never
 * guessed. */
#ifndef TOPSPROF_GCU_CORRELATE_H
#define TOPSPROF_GCU_CORRELATE_H

#include "model/model.h"

/* host times of every record (per-device clock fits) */
void gcu_align(struct model *m);
/* joins; needs every call (trace mode) */
void gcu_join(struct model *m);

#endif
