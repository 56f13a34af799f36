/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The simulated runtime's internals: devices and their timing model, memory, streams, events,
 * kernels. Nothing here is exported from libtopsrt.so (see libtopsrt.map). */
#ifndef SIM_RT_INTERNAL_H
#define SIM_RT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../driver/submit.h"
#include "../driver/writer.h"
#include "tops/tops_runtime_api.h"

#define API __attribute__((visibility("default"), noinline))

/* --- the device timing model (model.c): pure functions, unit-tested --------------------------- */

/* device cost of a command, in ns */
uint64_t model_copy_ns(enum gcu_copy_kind kind, uint64_t bytes);
uint64_t model_memset_ns(uint64_t bytes);
uint64_t model_kernel_ns(const topsKernelInfo *k, uint64_t elems, bool dte_profiling);
/* a kernel's internal data move on CDTE or SDTE; never longer than half the kernel */
uint64_t model_dte_ns(enum gcu_engine engine, uint64_t bytes, uint64_t kernel_ns);

/* a command's place on the device, and its records: ../driver/submit.h (model_schedule,
 * gcu_device_submit), which the kernel-mode driver runs too */

/* --- devices (device.c) ----------------------------------------------------------------------- */

struct topsStream_st {
	struct sim_device *dev;
	uint32_t id; /* 0: the device's default stream */
	unsigned flags;
	uint64_t ready; /* device ticks at which its last command ends */
	struct topsStream_st *next;
};

struct topsEvent_st {
	struct sim_device *dev;
	unsigned flags;
	bool recorded;
	uint64_t ticks;
};

struct sim_device {
	int ordinal; /* as the application numbers it */
	int phys;    /* the GCU behind it (TOPS_VISIBLE_DEVICES) */
	struct gcu_region region;
	pthread_mutex_t lock; /* timing state and stream list */
	uint64_t engine_free[GCU_ENGINE_COUNT];
	struct topsStream_st default_stream;
	struct topsStream_st *streams; /* created streams */
	uint64_t orphan_ready;	       /* end of the work of destroyed streams */
	uint64_t mem_total, mem_used;
};

struct sim_kernel {
	topsKernelFn fn;
	topsKernelInfo info; /* name owned */
	struct topsModule_st *module;
	uint32_t name_id[GCU_RO_MAX_DEVICES]; /* per physical device; 0: not registered yet */
};

/* what a command does, for sim_submit */
struct sim_cmd {
	enum gcu_record_kind kind;
	enum gcu_engine engine;
	enum gcu_copy_kind copy_kind;
	uint64_t bytes;
	uint64_t dur_ns;
	struct sim_kernel *kernel; /* kernels */
	uint64_t elems;
};

struct sim_rt {
	topsError_t init_error;
	int ndev;
	struct sim_device dev[GCU_RO_MAX_DEVICES];
	bool profile_meta; /* ENFLAME_GENERATE_PROFILE_META=true */
	uint32_t next_stream_id;
	uint64_t next_launch_id;
};

extern struct sim_rt sim;

topsError_t sim_init(void); /* once; then sim.init_error */
struct sim_device *sim_current_device(void);
topsError_t sim_set_current(int ordinal);
int sim_current_ordinal(void);

topsError_t sim_set_error(topsError_t e); /* remembers it for topsGetLastError, returns it */
topsError_t sim_take_error(bool clear);

/* submit a command on stream s; returns its end in device ticks */
uint64_t sim_submit(struct topsStream_st *s, const struct sim_cmd *c);
/* when everything submitted so far on s (with the default stream's ordering rules) ends */
uint64_t sim_stream_done(struct topsStream_st *s);
uint64_t sim_device_done(struct sim_device *d);
/* block until the device clock reaches ticks */
void sim_wait(struct sim_device *d, uint64_t ticks);
uint64_t sim_device_now(struct sim_device *d);

/* --- handles (handles.c): streams, events, modules are checked before use -------------------- */

enum handle_kind {
	H_STREAM,
	H_EVENT,
	H_MODULE,
	H_FUNCTION,
	H_HOSTMEM,
	H__COUNT
};
int handle_add(enum handle_kind k, const void *p);
bool handle_del(enum handle_kind k, const void *p);
bool handle_has(enum handle_kind k, const void *p);

/* the stream a call names: NULL is the current device's default stream; a stale or foreign
 * handle yields NULL */
struct topsStream_st *sim_stream(topsStream_t s);

/* --- memory (memory.c) ------------------------------------------------------------------------ */

topsError_t mem_dev_alloc(struct sim_device *d, size_t size, void **out);
topsError_t mem_dev_free(void *p);
/* the device holding [p, p + len) in one allocation, or NULL */
struct sim_device *mem_dev_find(const void *p, size_t len);
/* the device of any allocation containing p (whatever the length), or NULL */
struct sim_device *mem_dev_owner(const void *p);

/* --- kernels (kernel.c) ----------------------------------------------------------------------- */

struct sim_kernel *kernel_find(topsKernelFn fn);
topsError_t kernel_launch(struct sim_kernel *k, dim3 grid, dim3 block, void **args,
			  topsStream_t stream);

#endif
