// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The driver readout, the API of include/gcu_readout.h, on the region user/gcu/region.c maps. */
#include "gcu_readout.h"
#include "gcu/region.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gcu_ro_dev {
	struct gcu_region r;
	int device;
	bool claimed;
	char name[GCU_NAME_MAX + 1]; /* gcu_ro_name's answer */
};

const char *gcu_ro_dir(void)
{
	return gcu_driver_dir();
}

int gcu_ro_device_count(void)
{
	return gcu_driver_device_count();
}

int gcu_ro_device_path(int device, char *buf, size_t len)
{
	return gcu_region_path(gcu_ro_dir(), device, buf, len);
}

int gcu_ro_open(int device, struct gcu_ro_dev **out, char *err, size_t errlen)
{
	struct gcu_ro_dev *d;
	int count = gcu_ro_device_count(), rc;

	if (count < 0) {
		snprintf(err, errlen, "%s='%s' is not a device count (1 to %d)", GCU_RO_COUNT_ENV,
			 getenv(GCU_RO_COUNT_ENV), GCU_RO_MAX_DEVICES);
		return count;
	}
	if (device < 0 || device >= count) {
		snprintf(err, errlen, "no GCU %d: this host has %d", device, count);
		return -ENODEV;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = gcu_region_open(gcu_ro_dir(), device, &d->r, err, errlen);
	if (rc) {
		free(d);
		return rc;
	}
	d->device = device;
	*out = d;
	return 0;
}

void gcu_ro_close(struct gcu_ro_dev *d)
{
	if (!d)
		return;
	if (d->claimed)
		gcu_ro_enable(d, 0);
	gcu_region_close(&d->r);
	free(d);
}

int gcu_ro_enable(struct gcu_ro_dev *d, unsigned activities)
{
	int rc = gcu_reader_enable(&d->r, activities);

	d->claimed = d->r.slot >= 0;
	return rc;
}

int gcu_ro_read(struct gcu_ro_dev *d, struct gcu_record *out, int max)
{
	if (!d->claimed)
		return -EPERM;
	return max > 0 ? gcu_ring_pop(&d->r, out, max) : 0;
}

const char *gcu_ro_name(struct gcu_ro_dev *d, uint32_t name_id)
{
	return gcu_names_copy(&d->r, name_id, d->name, sizeof(d->name));
}

int gcu_ro_sync_pair(struct gcu_ro_dev *d, uint64_t *host_ns, uint64_t *ticks)
{
	/* the device timer and the host clock, read together */
	*host_ns = gcu_host_ns();
	*ticks = gcu_host_to_ticks(d->r.hdr, *host_ns);
	return 0;
}

uint64_t gcu_ro_overflow(const struct gcu_ro_dev *d)
{
	if (d->r.slot < 0)
		return 0;
	return __atomic_load_n(&d->r.hdr->readers[d->r.slot].overflow, __ATOMIC_RELAXED);
}

uint64_t gcu_ro_tick_hz(const struct gcu_ro_dev *d)
{
	return d->r.hdr->tick_hz;
}

int gcu_ro_device_id(const struct gcu_ro_dev *d)
{
	return d->device;
}
