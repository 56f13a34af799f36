/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The simulated device's side of the driver's region: what the device writes. */
#ifndef SIM_DRIVER_WRITER_H
#define SIM_DRIVER_WRITER_H

#include "gcu/region.h"

/* writer: append a record; -ENOSPC (and overflow counted for every reader) when the ring is
 * full */
int gcu_ring_push(struct gcu_region *r, const struct gcu_record *rec);

/* the id of name (added if new), or 0 when the table is full */
uint32_t gcu_names_add(struct gcu_region *r, const char *name);

#endif
