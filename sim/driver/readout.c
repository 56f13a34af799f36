// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The reader side of the simulated driver: the API of include/gcu_readout.h. */
#include "gcu_readout.h"
#include "region.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gcu_ro_dev {
	struct gcu_region r;
	int device;
	bool claimed;
};

const char *gcu_ro_dir(void)
{
	return gcu_driver_dir();
}

int gcu_ro_device_count(void)
{
	return gcu_driver_device_count();
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

static bool alive(uint32_t pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int gcu_ro_enable(struct gcu_ro_dev *d, unsigned activities)
{
	struct gcu_region_hdr *h = d->r.hdr;
	uint32_t self = (uint32_t)getpid();

	if (!activities) {
		if (d->claimed) {
			__atomic_store_n(&h->enabled, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&h->reader_pid, 0, __ATOMIC_RELEASE);
			d->claimed = false;
		}
		return 0;
	}
	if (!d->claimed) {
		uint32_t owner = __atomic_load_n(&h->reader_pid, __ATOMIC_ACQUIRE);

		for (;;) {
			if (owner && owner != self && alive(owner))
				return -EBUSY;
			if (__atomic_compare_exchange_n(&h->reader_pid, &owner, self, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				break;
		}
		d->claimed = true;
		/* what sits in the ring was written for an earlier reader: start afresh */
		__atomic_store_n(&h->tail, __atomic_load_n(&h->head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&h->overflow, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->written, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&h->enabled, activities, __ATOMIC_RELEASE);
	return 0;
}

int gcu_ro_read(struct gcu_ro_dev *d, struct gcu_record *out, int max)
{
	if (!d->claimed)
		return -EPERM;
	return max > 0 ? gcu_ring_pop(&d->r, out, max) : 0;
}

const char *gcu_ro_name(struct gcu_ro_dev *d, uint32_t name_id)
{
	return gcu_names_get(&d->r, name_id);
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
	return __atomic_load_n(&d->r.hdr->overflow, __ATOMIC_RELAXED);
}

uint64_t gcu_ro_tick_hz(const struct gcu_ro_dev *d)
{
	return d->r.hdr->tick_hz;
}

int gcu_ro_device_id(const struct gcu_ro_dev *d)
{
	return d->device;
}
