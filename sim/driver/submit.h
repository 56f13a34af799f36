/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The simulated device's command queue: a command's place on the device and its profiler
 * records. Plain C in device ticks (no division), compiled into the user-space device
 * (libtopsrt) and into the kernel-mode driver (sim/kmd), which run the same model. */
#ifndef SIM_DRIVER_SUBMIT_H
#define SIM_DRIVER_SUBMIT_H

#include "gcu/region.h"

/* a command's place on the device: start = max(stream ready, engine free, submit) */
struct model_slot {
	uint64_t start, end;
};
struct model_slot model_schedule(uint64_t *engine_free, uint64_t *stream_ready, uint64_t submit,
				 uint64_t dur);

/* a command as the device takes it: the driver's GCUSIM_IOC_SUBMIT argument too (fixed layout) */
struct gcu_cmd {
	uint32_t kind;	    /* enum gcu_record_kind */
	uint32_t engine;    /* enum gcu_engine */
	uint32_t copy_kind; /* enum gcu_copy_kind, GCU_COPY_NONE for kernels */
	uint32_t stream_id;
	uint32_t name_id;    /* a kernel's name in the device's name table */
	uint32_t dte;	     /* a kernel whose CDTE/SDTE moves take place (profile meta) */
	uint32_t pid, tid;   /* who submitted it (the driver sets them) */
	uint64_t launch_id;  /* the process's id of the command */
	uint64_t bytes;	     /* copies, memsets */
	uint64_t dte_bytes;  /* a kernel's DTE moves */
	uint64_t dur_ticks;  /* its cost on its engine */
	uint64_t cdte_ticks; /* its moves' costs, inside the kernel */
	uint64_t sdte_ticks;
	uint64_t submit_ticks; /* the device clock when it was submitted */
	uint64_t stream_ready; /* in: when the stream's earlier work ends; out: when this ends */
	uint64_t start_ticks;  /* out */
};

/* Place c on the device (engine_free: GCU_ENGINE_COUNT ends of each engine's work) and append
 * its records to r's ring for the activities the readers want. */
void gcu_device_submit(struct gcu_region *r, uint64_t *engine_free, struct gcu_cmd *c);

#endif
