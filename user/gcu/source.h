/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Where GCU profiler records come from: a device source enables activities on every GCU, reads
 * the records while the application runs (so the device ring does not overflow), takes
 * clock-sync pairs and reports what the devices dropped. Backends: the driver readout of
 * include/gcu_readout.h (the simulated GCU's, and the KMD's in the VM test bed). */
#ifndef TOPSPROF_GCU_SOURCE_H
#define TOPSPROF_GCU_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

struct gcu_source;

struct gcu_backend {
	const char *name;
	int (*device_count)(void);
	int (*open)(int dev, void **handle, char *err, size_t errlen);
	int (*enable)(void *handle, unsigned activities);
	int (*read)(void *handle, struct gcu_record *out, int max);
	const char *(*name_of)(void *handle, uint32_t name_id);
	int (*sync_pair)(void *handle, uint64_t *host_ns, uint64_t *ticks);
	uint64_t (*overflow)(const void *handle);
	uint64_t (*tick_hz)(const void *handle);
	void (*close)(void *handle);
};

extern const struct gcu_backend gcu_backend_readout;

/* open every device of the backend and enable activities (enum gcu_activity mask); a device
 * that cannot be used is skipped with a warning. -ENODEV when none can. */
int gcu_source_open(struct gcu_source **out, const struct gcu_backend *b, unsigned activities,
		    struct model *m);
/* read what the devices have written into the model; the number of records, or -errno */
int gcu_source_poll(struct gcu_source *s, struct model *m);
/* a clock-sync pair of every device into the model */
void gcu_source_sync(struct gcu_source *s, struct model *m);
/* the last records, a last sync pair, the drop counts; then disable */
void gcu_source_finish(struct gcu_source *s, struct model *m);
void gcu_source_close(struct gcu_source *s);
/* stop or start the devices recording for this source (topsprof stop / start) */
void gcu_source_pause(struct gcu_source *s, bool paused);

#endif
