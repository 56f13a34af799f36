/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The simulated KMD's ioctls on /dev/gcuN (sim/kmd/gcusim.c), for the runtime (sim/rt/) and the
 * module alike. The device node's mapping is the driver's region (user/gcu/region.h): the
 * profiler records and names, which topsprof reads by mapping the node as well. */
#ifndef GCUSIM_IOCTL_H
#define GCUSIM_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "../driver/submit.h" /* struct gcu_cmd */

struct gcusim_info {
	__u32 device;	   /* the physical device */
	__u32 devices;	   /* how many the driver has */
	__u64 region_size; /* the mapping's size */
	__u64 tick_hz;	   /* the device clock */
	__u64 mem_total;   /* device memory, bytes */
	__u64 mem_used;	   /* of it taken, by every process */
};

/* device memory taken or given back by the caller (what an open file holds goes back when it is
 * closed, as when its process ends) */
struct gcusim_mem {
	__u64 bytes;
	__u32 op; /* GCUSIM_MEM_ALLOC, GCUSIM_MEM_FREE */
	__u32 reserved;
};
#define GCUSIM_MEM_ALLOC 1
#define GCUSIM_MEM_FREE	 2

/* a kernel's name, put in the device's name table: its id for struct gcu_cmd's name_id */
struct gcusim_name {
	__u64 name; /* user pointer to the NUL-terminated name */
	__u32 id;   /* out: 0 when the table is full */
	__u32 reserved;
};

/* the device's facts */
#define GCUSIM_IOC_INFO _IOR('G', 1, struct gcusim_info)
/* sleep in the driver until CLOCK_MONOTONIC reaches the __u64 (ns) given: the device's command
 * ends then (the runtime's blocking calls); -EINTR when a signal came first */
#define GCUSIM_IOC_WAIT _IOW('G', 2, __u64)
/* queue a command on the device (its place: after the caller's stream, struct gcu_cmd's
 * stream_ready, and the engine's earlier work of this open file) and record it where a profiler
 * reads; stream_ready and start_ticks come back */
#define GCUSIM_IOC_SUBMIT _IOWR('G', 3, struct gcu_cmd)
/* device memory: -ENOMEM when the device has not that much left, -EINVAL when the caller gives
 * back more than it holds */
#define GCUSIM_IOC_MEM	_IOW('G', 4, struct gcusim_mem)
#define GCUSIM_IOC_NAME _IOWR('G', 5, struct gcusim_name)

#endif
