/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * GCU driver readout: how a profiler reads a GCU's profiler records.
 *
 * The driver exposes, per device, a region that the device writes while a profiler has enabled
 * activities, and that one profiler (in any process) reads:
 *   - a header: layout version, device id, nominal tick frequency, the enabled activity mask,
 *     and a slot for each of up to 8 readers (its process, its position in the ring, what it
 *     wants, the records dropped while it read);
 *   - a ring of fixed-size profiler records (struct gcu_record);
 *   - a name table: name_id -> kernel name (demangled, e.g. "vector_add(float*, ...)");
 *   - clock-sync pairs: (host CLOCK_MONOTONIC ns, device ticks) read back to back.
 * Device timestamps are in device ticks: the device clock has its own frequency and origin and
 * drifts slightly against the host, so a profiler maps ticks to host time by fitting sync pairs.
 *
 * When no profiler has enabled an activity the device writes nothing for it and pays one load.
 *
 * The layout is versioned: a reader opens a region whose major version is its own and whose
 * minor version is any; it refuses a newer major version with a clear error.
 *
 * Reader API (this header; implemented by topsprof's user/gcu/readout.c on the region that
 * user/gcu/region.c maps):
 *
 *   n = gcu_ro_device_count();               how many GCUs the host has
 *   gcu_ro_open(0, &dev, err, sizeof(err));  map device 0's region (creating it if the driver
 *                                            has not yet); fails on a newer major version
 *   gcu_ro_enable(dev, GCU_ACT_OPERATOR | GCU_ACT_MEMCPY);
 *                                            take a reader slot and enable: the reader gets every
 *                                            record written from now on; -EBUSY when 8 live
 *                                            readers already read the device
 *   while (running)
 *       n = gcu_ro_read(dev, recs, 256);     copy out up to 256 records, oldest first
 *   gcu_ro_name(dev, rec.name_id)            the kernel's name, or NULL
 *   gcu_ro_sync_pair(dev, &host_ns, &ticks)  a fresh clock-sync pair
 *   gcu_ro_overflow(dev)                     records dropped since enable (the ring was full:
 *                                            a record waits for the slowest reader)
 *   gcu_ro_enable(dev, 0); gcu_ro_close(dev);
 *
 * Functions returning int return 0 (or a count) on success and -errno on failure.
 */
#ifndef GCU_READOUT_H
#define GCU_READOUT_H

#include <stddef.h>
#include <stdint.h>

#define GCU_RO_MAGIC	     0x52554347u /* "GCUR" */
#define GCU_RO_VERSION_MAJOR 2 /* 2.0: up to 8 readers at once, each at its own position */
#define GCU_RO_VERSION_MINOR 0

/* where the simulated driver keeps its regions; the environment may override it */
#define GCU_RO_DIR_ENV	   "TOPS_SIM_DRIVER_DIR"
#define GCU_RO_DIR_DEFAULT "/dev/shm/topsgcu-sim"
/* how many GCUs the simulated host has (1..GCU_RO_MAX_DEVICES); default 2 */
#define GCU_RO_COUNT_ENV   "TOPS_SIM_DEVICE_COUNT"
#define GCU_RO_MAX_DEVICES 16

/* name ids are below this */
#define GCU_RO_MAX_NAME_ID 65536

/* activities a profiler can enable (manual 4.3) */
enum gcu_activity {
	GCU_ACT_OPERATOR = 1u << 0, /* kernels on the compute engine */
	GCU_ACT_MEMCPY = 1u << 1,   /* ODTE: memcpy and memset */
	GCU_ACT_CDTE = 1u << 2,	    /* CDTE: kernels' internal data moves (needs profile meta) */
	GCU_ACT_SDTE = 1u << 3,	    /* SDTE: kernels' internal data moves (needs profile meta) */
};

enum gcu_record_kind {
	GCU_REC_KERNEL = 1,
	GCU_REC_MEMCPY = 2,
	GCU_REC_MEMSET = 3,
	GCU_REC_DTE = 4, /* a data move inside a kernel, on CDTE or SDTE */
};

enum gcu_engine {
	GCU_ENGINE_COMPUTE = 0,
	GCU_ENGINE_ODTE = 1,
	GCU_ENGINE_CDTE = 2,
	GCU_ENGINE_SDTE = 3,
	GCU_ENGINE_COUNT
};

/* copy kinds, as topsMemcpyKind numbers them */
enum gcu_copy_kind {
	GCU_COPY_HTOH = 0,
	GCU_COPY_HTOD = 1,
	GCU_COPY_DTOH = 2,
	GCU_COPY_DTOD = 3,
	GCU_COPY_NONE = 0xff,
};

/* one profiler record, 64 bytes */
struct gcu_record {
	uint64_t seq;	      /* ring position + 1 once written (used by the ring itself) */
	uint16_t kind;	      /* enum gcu_record_kind */
	uint8_t engine;	      /* enum gcu_engine */
	uint8_t copy_kind;    /* enum gcu_copy_kind, GCU_COPY_NONE for kernels */
	uint32_t device;      /* device id (physical) */
	uint32_t pid;	      /* host process that submitted the command */
	uint32_t stream_id;   /* the process's stream id; 0 is the default stream */
	uint64_t launch_id;   /* per-process id of the command (a kernel's DTE records share it) */
	uint32_t name_id;     /* kernels and DTE moves: index into the name table; else 0 */
	uint32_t tid;	      /* host thread that submitted the command */
	uint64_t start_ticks; /* device clock */
	uint64_t end_ticks;
	uint64_t bytes; /* copies, memsets, DTE moves */
};

struct gcu_ro_dev;

int gcu_ro_device_count(void);
/* the directory of the regions: $TOPS_SIM_DRIVER_DIR or GCU_RO_DIR_DEFAULT */
const char *gcu_ro_dir(void);

/* the file through which the runtime reaches device's driver: the runtime's system calls on it,
 * and its waits on the memory it maps, enter the driver. 0 or -ENAMETOOLONG */
int gcu_ro_device_path(int device, char *buf, size_t len);

int gcu_ro_open(int device, struct gcu_ro_dev **out, char *err, size_t errlen);
void gcu_ro_close(struct gcu_ro_dev *dev);

/* enable a mask of enum gcu_activity (claiming the device), or 0 to disable and release it */
int gcu_ro_enable(struct gcu_ro_dev *dev, unsigned activities);
/* copy up to max records, oldest first; 0 when none is ready */
int gcu_ro_read(struct gcu_ro_dev *dev, struct gcu_record *out, int max);
/* a kernel's name, or NULL: a copy, good until the next call on dev */
const char *gcu_ro_name(struct gcu_ro_dev *dev, uint32_t name_id);
int gcu_ro_sync_pair(struct gcu_ro_dev *dev, uint64_t *host_ns, uint64_t *ticks);
uint64_t gcu_ro_overflow(const struct gcu_ro_dev *dev);
uint64_t gcu_ro_tick_hz(const struct gcu_ro_dev *dev); /* nominal */
int gcu_ro_device_id(const struct gcu_ro_dev *dev);

#endif
