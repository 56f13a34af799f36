/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The driver's per-device region (see include/gcu_readout.h): its layout, mapping it, the
 * device clock, and the reader's side of the record ring and the name table, which
 * user/gcu/readout.c builds the reader API on. The device's side (appending records and names)
 * is the simulated device's, in sim/driver/writer.h. */
#ifndef TOPSPROF_GCU_REGION_H
#define TOPSPROF_GCU_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include "gcu_readout.h"

#define GCU_RING_CAPACITY  65536u /* records */
#define GCU_NAMES_CAPACITY 8192u  /* name table entries (< GCU_RO_MAX_NAME_ID) */
#define GCU_HEAP_SIZE	   (1u << 20)
#define GCU_NAME_MAX	   1023u

#define READER_QUIET_NS	   (1000ull * 1000 * 1000)

struct gcu_name_entry {
	uint32_t offset; /* into the heap */
	uint32_t len;
	uint32_t hash;
	uint32_t committed; /* set last, with release order */
};

/* one reader of the ring: several profilers may read one device, each from its own position */
#define GCU_MAX_READERS 8

struct gcu_reader_slot {
	uint32_t pid;	   /* 0: free */
	uint32_t enabled;  /* enum gcu_activity mask this reader wants */
	uint64_t alive_ns; /* when it last read: writers do not wait for a reader gone quiet */
	uint64_t tail;	   /* next position it reads */
	uint64_t overflow; /* records dropped while it read: the ring was full */
	uint64_t written;  /* records written while it read */
};

struct gcu_region_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t device;
	uint32_t header_size;
	uint64_t region_size;

	/* the device clock: ticks = origin + host_ns * tick_hz * (1e9 + drift_ppb) / 1e18 */
	uint64_t tick_hz;
	int64_t drift_ppb;
	uint64_t tick_origin;

	/* control, written by the readers */
	uint32_t enabled; /* enum gcu_activity mask: what any reader wants */
	uint32_t lock;	  /* readers changing their slots */

	/* the ring: a record is dropped only when the slowest reader has not read it yet */
	uint32_t ring_capacity;
	uint32_t ring_offset;
	uint64_t head; /* next position writers reserve */
	struct gcu_reader_slot readers[GCU_MAX_READERS];

	/* the name table: ids are entry index + 1; 0 means no name */
	uint32_t names_capacity;
	uint32_t names_offset;
	uint32_t heap_size;
	uint32_t heap_offset;
	uint32_t names_next;
	uint32_t heap_next;
};

struct gcu_region {
	struct gcu_region_hdr *hdr;
	/* the layout, checked once when mapped: the shared header is not trusted after that */
	uint32_t ring_capacity, names_capacity, heap_size;
	struct gcu_record *ring;
	struct gcu_name_entry *names;
	char *heap;
	uint64_t size;
	/* the kernel driver's device node, kept open for its ioctls (a region of the user-space
	 * device is a file, closed once mapped) */
	bool driver;
	int fd;
	/* reader state */
	int slot; /* this reader's slot, or -1 */
	uint64_t stuck_pos;
	uint64_t stuck_since_ns;
};

/* --- the layout (layout.c): portable C, compiled into the simulated KMD module too --------- */

/* a region's size */
uint64_t gcu_region_layout_size(void);
/* each device its own clock: frequency, drift, origin */
uint64_t gcu_default_tick_hz(int device);
int64_t gcu_default_drift_ppb(int device);
/* a new region's header for device (a drift out of +-0.5e9 ppb, or tick_hz 0, taken as none) */
void gcu_region_init(struct gcu_region_hdr *h, int device, uint64_t tick_hz, int64_t drift_ppb);
/* r's view of a region mapped at map whose header, checked already, is h: a private copy (the
 * mapped header is every user's to write) */
void gcu_region_view(struct gcu_region *r, void *map, const struct gcu_region_hdr *h);

/* --- mapping it, in user space (region.c) ---------------------------------------------------- */

/* $TOPS_SIM_DRIVER_DIR; else /dev when the kernel driver's /dev/gcu0 exists (sim/kmd: its
 * regions are the device nodes); else the user-space device's directory. The device count:
 * $TOPS_SIM_DEVICE_COUNT (-EINVAL when malformed); else the driver's device nodes there; else 2. */
const char *gcu_driver_dir(void);
int gcu_driver_device_count(void);

/* the region file of a device, in dir */
int gcu_region_path(const char *dir, int device, char *buf, size_t len);

/* map device's region, creating and initialising it when it does not exist yet (the kernel
 * driver's device nodes are never created: the driver makes them).
 * -EPROTO: not a region or a newer major version (err says which) */
int gcu_region_open(const char *dir, int device, struct gcu_region *r, char *err, size_t errlen);
void gcu_region_close(struct gcu_region *r);

uint64_t gcu_host_ns(void); /* CLOCK_MONOTONIC */
uint64_t gcu_host_to_ticks(const struct gcu_region_hdr *h, uint64_t host_ns);
uint64_t gcu_ticks_to_host(const struct gcu_region_hdr *h, uint64_t ticks);
uint64_t gcu_ns_to_ticks(const struct gcu_region_hdr *h, uint64_t ns); /* a duration */

static inline unsigned gcu_enabled(const struct gcu_region *r)
{
	return __atomic_load_n(&r->hdr->enabled, __ATOMIC_ACQUIRE);
}

/* reader: take a slot (a free one, or one whose process is gone) and want activities from the
 * records written from now on; -EBUSY when every slot is taken. 0 activities gives it back. */
int gcu_reader_enable(struct gcu_region *r, unsigned activities);
/* reader: take up to max records from this reader's position */
int gcu_ring_pop(struct gcu_region *r, struct gcu_record *out, int max);

/* the name id stands for, copied into buf (size bytes, NUL-terminated): the table is in memory
 * every user may write, so a name is never read where it lies (a writer could take its end
 * away while a reader runs along it); NULL when id names nothing */
const char *gcu_names_copy(const struct gcu_region *r, uint32_t id, char *buf, size_t size);

#endif
