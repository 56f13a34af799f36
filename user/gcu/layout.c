// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The driver region's layout (region.h): plain C that the simulated KMD module (sim/kmd/)
 * compiles too, so that the kernel's driver and the user-space device lay their regions out
 * alike. */
#include "gcu/region.h"

#include <string.h>

#define NS_PER_S 1000000000ll

uint64_t gcu_region_layout_size(void)
{
	return 4096 + (uint64_t)GCU_RING_CAPACITY * sizeof(struct gcu_record) +
	       (uint64_t)GCU_NAMES_CAPACITY * sizeof(struct gcu_name_entry) + GCU_HEAP_SIZE;
}

uint64_t gcu_default_tick_hz(int device)
{
	return 1500000000ull + (uint64_t)device * 25000000ull;
}

int64_t gcu_default_drift_ppb(int device)
{
	return device % 2 ? -12000 : 20000;
}

void gcu_region_init(struct gcu_region_hdr *h, int device, uint64_t tick_hz, int64_t drift_ppb)
{
	memset(h, 0, sizeof(*h));
	h->version_major = GCU_RO_VERSION_MAJOR;
	h->version_minor = GCU_RO_VERSION_MINOR;
	h->device = (uint32_t)device;
	h->header_size = sizeof(*h);
	h->region_size = gcu_region_layout_size();
	h->tick_hz = tick_hz ? tick_hz : 1500000000ull;
	h->drift_ppb = drift_ppb <= -NS_PER_S / 2 || drift_ppb >= NS_PER_S / 2 ? 0 : drift_ppb;
	h->tick_origin = ((uint64_t)device + 3) * 0x100000000ull + 12345;
	h->ring_capacity = GCU_RING_CAPACITY;
	h->ring_offset = 4096;
	h->names_capacity = GCU_NAMES_CAPACITY;
	h->names_offset = h->ring_offset + GCU_RING_CAPACITY * (uint32_t)sizeof(struct gcu_record);
	h->heap_size = GCU_HEAP_SIZE;
	h->heap_offset =
		h->names_offset + GCU_NAMES_CAPACITY * (uint32_t)sizeof(struct gcu_name_entry);
	h->magic = GCU_RO_MAGIC;
}

void gcu_region_view(struct gcu_region *r, void *map, const struct gcu_region_hdr *h)
{
	r->hdr = map;
	r->size = h->region_size;
	r->ring_capacity = GCU_RING_CAPACITY;
	r->names_capacity = GCU_NAMES_CAPACITY;
	r->heap_size = GCU_HEAP_SIZE;
	r->ring = (struct gcu_record *)((char *)map + h->ring_offset);
	r->names = (struct gcu_name_entry *)((char *)map + h->names_offset);
	r->heap = (char *)map + h->heap_offset;
}
