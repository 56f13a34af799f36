// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The TopsRT API: argument checks, then the device model. Every misuse is an error return. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define INIT_OR_FAIL()                                   \
	do {                                             \
		topsError_t init_err_ = sim_init();      \
		if (init_err_)                           \
			return sim_set_error(init_err_); \
	} while (0)

#define FAIL(e) return sim_set_error(e)

/* --- errors ----------------------------------------------------------------------------------- */

static const struct {
	topsError_t e;
	const char *name, *text;
} errors[] = {
	{ topsSuccess, "topsSuccess", "no error" },
	{ topsErrorInvalidValue, "topsErrorInvalidValue", "invalid argument" },
	{ topsErrorOutOfMemory, "topsErrorOutOfMemory", "out of memory" },
	{ topsErrorNotInitialized, "topsErrorNotInitialized", "initialization error" },
	{ topsErrorInvalidConfiguration, "topsErrorInvalidConfiguration",
	  "invalid configuration argument" },
	{ topsErrorInvalidDevicePointer, "topsErrorInvalidDevicePointer",
	  "invalid device pointer" },
	{ topsErrorInvalidMemcpyDirection, "topsErrorInvalidMemcpyDirection",
	  "invalid copy direction for memcpy" },
	{ topsErrorInvalidDeviceFunction, "topsErrorInvalidDeviceFunction",
	  "invalid device function" },
	{ topsErrorNoDevice, "topsErrorNoDevice", "no GCU device is detected" },
	{ topsErrorInvalidDevice, "topsErrorInvalidDevice", "invalid device ordinal" },
	{ topsErrorInvalidImage, "topsErrorInvalidImage", "device kernel image is invalid" },
	{ topsErrorInvalidResourceHandle, "topsErrorInvalidResourceHandle",
	  "invalid resource handle" },
	{ topsErrorFileNotFound, "topsErrorFileNotFound", "file not found" },
	{ topsErrorNotFound, "topsErrorNotFound", "named symbol not found" },
	{ topsErrorNotReady, "topsErrorNotReady", "device not ready" },
	{ topsErrorLaunchFailure, "topsErrorLaunchFailure", "unspecified launch failure" },
	{ topsErrorNotSupported, "topsErrorNotSupported", "operation not supported" },
	{ topsErrorUnknown, "topsErrorUnknown", "unknown error" },
};

API const char *topsGetErrorName(topsError_t error)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].e == error)
			return errors[i].name;
	return "topsErrorUnknown";
}

API const char *topsGetErrorString(topsError_t error)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].e == error)
			return errors[i].text;
	return "unknown error";
}

API topsError_t topsGetLastError(void)
{
	return sim_take_error(true);
}

API topsError_t topsPeekAtLastError(void)
{
	return sim_take_error(false);
}

/* --- devices ---------------------------------------------------------------------------------- */

API topsError_t topsGetDeviceCount(int *count)
{
	if (!count)
		FAIL(topsErrorInvalidValue);
	*count = 0;
	INIT_OR_FAIL();
	*count = sim.ndev;
	return topsSuccess;
}

API topsError_t topsSetDevice(int device)
{
	INIT_OR_FAIL();
	return sim_set_error(sim_set_current(device));
}

API topsError_t topsGetDevice(int *device)
{
	if (!device)
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	*device = sim_current_ordinal();
	return topsSuccess;
}

API topsError_t topsGetDeviceProperties(topsDeviceProp_t *prop, int device)
{
	struct sim_device *d;

	if (!prop)
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	if (device < 0 || device >= sim.ndev)
		FAIL(topsErrorInvalidDevice);
	d = &sim.dev[device];
	memset(prop, 0, sizeof(*prop));
	strcpy(prop->name, "Enflame GCU S60");
	prop->totalGlobalMem = d->mem_total;
	prop->sharedMemPerBlock = 64 * 1024;
	prop->maxThreadsPerBlock = 1024;
	prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = prop->maxThreadsDim[2] = 1024;
	prop->maxGridSize[0] = prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
	prop->clockRate = (int)(d->region.hdr->tick_hz / 1000);
	prop->multiProcessorCount = 24;
	prop->major = 3;
	prop->minor = 0;
	prop->pciBusID = 0x3b + d->phys;
	prop->asyncEngineCount = 3;
	return topsSuccess;
}

API topsError_t topsDeviceSynchronize(void)
{
	struct sim_device *d;

	INIT_OR_FAIL();
	d = sim_current_device();
	sim_wait(d, sim_device_done(d));
	return topsSuccess;
}

/* --- memory ----------------------------------------------------------------------------------- */

API topsError_t topsMalloc(void **ptr, size_t size)
{
	if (!ptr || !size)
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	return sim_set_error(mem_dev_alloc(sim_current_device(), size, ptr));
}

API topsError_t topsFree(void *ptr)
{
	struct sim_device *d;

	if (!ptr)
		return topsSuccess;
	INIT_OR_FAIL();
	d = mem_dev_owner(ptr);
	if (!d)
		FAIL(topsErrorInvalidValue);
	sim_wait(d, sim_device_done(d)); /* as on a GCU: memory is freed once its work is done */
	return sim_set_error(mem_dev_free(ptr));
}

API topsError_t topsHostMalloc(void **ptr, size_t size, unsigned int flags)
{
	void *p;

	if (!ptr || !size || flags)
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	if (posix_memalign(&p, 4096, size))
		FAIL(topsErrorOutOfMemory);
	if (handle_add(H_HOSTMEM, p)) {
		free(p);
		FAIL(topsErrorOutOfMemory);
	}
	*ptr = p;
	return topsSuccess;
}

API topsError_t topsHostFree(void *ptr)
{
	if (!ptr)
		return topsSuccess;
	if (!handle_del(H_HOSTMEM, ptr))
		FAIL(topsErrorInvalidValue);
	free(ptr);
	return topsSuccess;
}

/* which device a copy runs on and in which direction; an error when a pointer is wrong */
static topsError_t classify_copy(void *dst, const void *src, size_t n, topsMemcpyKind *kind,
				 struct sim_device **dev)
{
	struct sim_device *dd = mem_dev_find(dst, n), *sd = mem_dev_find(src, n);
	bool dst_dev = dd || mem_dev_owner(dst), src_dev = sd || mem_dev_owner(src);

	if (*kind == topsMemcpyDefault)
		*kind = dst_dev ? (src_dev ? topsMemcpyDeviceToDevice : topsMemcpyHostToDevice)
				: (src_dev ? topsMemcpyDeviceToHost : topsMemcpyHostToHost);
	switch (*kind) {
	case topsMemcpyHostToHost:
		if (dst_dev || src_dev)
			return topsErrorInvalidMemcpyDirection;
		*dev = sim_current_device();
		return topsSuccess;
	case topsMemcpyHostToDevice:
		if (src_dev)
			return topsErrorInvalidMemcpyDirection;
		*dev = dd;
		return dd	 ? topsSuccess
		       : dst_dev ? topsErrorInvalidValue
				 : topsErrorInvalidDevicePointer;
	case topsMemcpyDeviceToHost:
		if (dst_dev)
			return topsErrorInvalidMemcpyDirection;
		*dev = sd;
		return sd	 ? topsSuccess
		       : src_dev ? topsErrorInvalidValue
				 : topsErrorInvalidDevicePointer;
	case topsMemcpyDeviceToDevice:
		*dev = dd;
		if (dd && sd)
			return topsSuccess;
		return (dst_dev && src_dev) ? topsErrorInvalidValue : topsErrorInvalidDevicePointer;
	default:
		return topsErrorInvalidMemcpyDirection;
	}
}

static topsError_t copy(void *dst, const void *src, size_t n, topsMemcpyKind kind,
			topsStream_t stream, bool async)
{
	struct sim_device *dev = NULL;
	struct topsStream_st *s;
	struct sim_cmd c = { .kind = GCU_REC_MEMCPY, .engine = GCU_ENGINE_ODTE, .bytes = n };
	topsError_t e;
	uint64_t end;

	if (!dst || !src || !n)
		FAIL(topsErrorInvalidValue);
	if ((unsigned)kind > topsMemcpyDefault)
		FAIL(topsErrorInvalidMemcpyDirection);
	INIT_OR_FAIL();
	e = classify_copy(dst, src, n, &kind, &dev);
	if (e)
		FAIL(e);
	s = async ? sim_stream(stream) : &dev->default_stream;
	if (!s)
		FAIL(topsErrorInvalidResourceHandle);
	memmove(dst, src, n);
	c.copy_kind = (enum gcu_copy_kind)kind;
	c.dur_ns = model_copy_ns(c.copy_kind, n);
	end = sim_submit(s, &c);
	if (!async)
		sim_wait(s->dev, end);
	return topsSuccess;
}

API topsError_t topsMemcpy(void *dst, const void *src, size_t sizeBytes, topsMemcpyKind kind)
{
	return copy(dst, src, sizeBytes, kind, NULL, false);
}

API topsError_t topsMemcpyAsync(void *dst, const void *src, size_t sizeBytes, topsMemcpyKind kind,
				topsStream_t stream)
{
	return copy(dst, src, sizeBytes, kind, stream, true);
}

API topsError_t topsMemcpyHtoD(topsDeviceptr_t dst, void *src, size_t sizeBytes)
{
	return copy(dst, src, sizeBytes, topsMemcpyHostToDevice, NULL, false);
}

API topsError_t topsMemcpyDtoH(void *dst, topsDeviceptr_t src, size_t sizeBytes)
{
	return copy(dst, src, sizeBytes, topsMemcpyDeviceToHost, NULL, false);
}

API topsError_t topsMemcpyDtoD(topsDeviceptr_t dst, topsDeviceptr_t src, size_t sizeBytes)
{
	return copy(dst, src, sizeBytes, topsMemcpyDeviceToDevice, NULL, false);
}

API topsError_t topsMemcpyHtoDAsync(topsDeviceptr_t dst, void *src, size_t sizeBytes,
				    topsStream_t stream)
{
	return copy(dst, src, sizeBytes, topsMemcpyHostToDevice, stream, true);
}

API topsError_t topsMemcpyDtoHAsync(void *dst, topsDeviceptr_t src, size_t sizeBytes,
				    topsStream_t stream)
{
	return copy(dst, src, sizeBytes, topsMemcpyDeviceToHost, stream, true);
}

API topsError_t topsMemcpyDtoDAsync(topsDeviceptr_t dst, topsDeviceptr_t src, size_t sizeBytes,
				    topsStream_t stream)
{
	return copy(dst, src, sizeBytes, topsMemcpyDeviceToDevice, stream, true);
}

static topsError_t set(void *dst, int value, size_t n, topsStream_t stream, bool async)
{
	struct sim_device *dev;
	struct topsStream_st *s;
	struct sim_cmd c = { .kind = GCU_REC_MEMSET,
			     .engine = GCU_ENGINE_ODTE,
			     .copy_kind = GCU_COPY_NONE,
			     .bytes = n };
	uint64_t end;

	if (!dst || !n)
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	dev = mem_dev_find(dst, n);
	if (!dev)
		FAIL(mem_dev_owner(dst) ? topsErrorInvalidValue : topsErrorInvalidDevicePointer);
	s = async ? sim_stream(stream) : &dev->default_stream;
	if (!s)
		FAIL(topsErrorInvalidResourceHandle);
	memset(dst, value, n);
	c.dur_ns = model_memset_ns(n);
	end = sim_submit(s, &c);
	if (!async)
		sim_wait(s->dev, end);
	return topsSuccess;
}

API topsError_t topsMemset(void *dst, int value, size_t sizeBytes)
{
	return set(dst, value, sizeBytes, NULL, false);
}

API topsError_t topsMemsetAsync(void *dst, int value, size_t sizeBytes, topsStream_t stream)
{
	return set(dst, value, sizeBytes, stream, true);
}

/* --- streams ---------------------------------------------------------------------------------- */

API topsError_t topsStreamCreateWithFlags(topsStream_t *stream, unsigned int flags)
{
	struct topsStream_st *s;
	struct sim_device *d;

	if (!stream || (flags & ~(unsigned)topsStreamNonBlocking))
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	d = sim_current_device();
	s = calloc(1, sizeof(*s));
	if (!s)
		FAIL(topsErrorOutOfMemory);
	s->dev = d;
	s->flags = flags;
	s->id = __atomic_fetch_add(&sim.next_stream_id, 1, __ATOMIC_RELAXED);
	if (handle_add(H_STREAM, s)) {
		free(s);
		FAIL(topsErrorOutOfMemory);
	}
	pthread_mutex_lock(&d->lock);
	s->next = d->streams;
	d->streams = s;
	pthread_mutex_unlock(&d->lock);
	*stream = s;
	return topsSuccess;
}

API topsError_t topsStreamCreate(topsStream_t *stream)
{
	return topsStreamCreateWithFlags(stream, topsStreamDefault);
}

API topsError_t topsStreamDestroy(topsStream_t stream)
{
	struct sim_device *d;

	if (!stream || !handle_del(H_STREAM, stream))
		FAIL(topsErrorInvalidResourceHandle);
	d = stream->dev;
	pthread_mutex_lock(&d->lock);
	for (struct topsStream_st **p = &d->streams; *p; p = &(*p)->next) {
		if (*p == stream) {
			*p = stream->next;
			break;
		}
	}
	if (stream->ready > d->orphan_ready)
		d->orphan_ready = stream->ready; /* its work still runs to the end */
	pthread_mutex_unlock(&d->lock);
	free(stream);
	return topsSuccess;
}

API topsError_t topsStreamSynchronize(topsStream_t stream)
{
	struct topsStream_st *s;

	INIT_OR_FAIL();
	s = sim_stream(stream);
	if (!s)
		FAIL(topsErrorInvalidResourceHandle);
	sim_wait(s->dev, sim_stream_done(s));
	return topsSuccess;
}

API topsError_t topsStreamQuery(topsStream_t stream)
{
	struct topsStream_st *s;

	INIT_OR_FAIL();
	s = sim_stream(stream);
	if (!s)
		FAIL(topsErrorInvalidResourceHandle);
	return sim_device_now(s->dev) < sim_stream_done(s) ? topsErrorNotReady : topsSuccess;
}

API topsError_t topsStreamWaitEvent(topsStream_t stream, topsEvent_t event, unsigned int flags)
{
	struct topsStream_st *s;

	INIT_OR_FAIL();
	s = sim_stream(stream);
	if (!s || !handle_has(H_EVENT, event))
		FAIL(topsErrorInvalidResourceHandle);
	if (flags)
		FAIL(topsErrorInvalidValue);
	if (!event->recorded)
		return topsSuccess;
	pthread_mutex_lock(&s->dev->lock);
	if (event->ticks > s->ready)
		s->ready = event->ticks;
	pthread_mutex_unlock(&s->dev->lock);
	return topsSuccess;
}

/* --- events ----------------------------------------------------------------------------------- */

API topsError_t topsEventCreateWithFlags(topsEvent_t *event, unsigned int flags)
{
	struct topsEvent_st *e;

	if (!event || (flags & ~(unsigned)(topsEventBlockingSync | topsEventDisableTiming)))
		FAIL(topsErrorInvalidValue);
	INIT_OR_FAIL();
	e = calloc(1, sizeof(*e));
	if (!e)
		FAIL(topsErrorOutOfMemory);
	e->flags = flags;
	e->dev = sim_current_device();
	if (handle_add(H_EVENT, e)) {
		free(e);
		FAIL(topsErrorOutOfMemory);
	}
	*event = e;
	return topsSuccess;
}

API topsError_t topsEventCreate(topsEvent_t *event)
{
	return topsEventCreateWithFlags(event, topsEventDefault);
}

API topsError_t topsEventRecord(topsEvent_t event, topsStream_t stream)
{
	struct topsStream_st *s;
	uint64_t done, now;

	INIT_OR_FAIL();
	s = sim_stream(stream);
	if (!s || !handle_has(H_EVENT, event))
		FAIL(topsErrorInvalidResourceHandle);
	now = sim_device_now(s->dev);
	done = sim_stream_done(s);
	event->dev = s->dev;
	event->ticks = done > now ? done : now;
	event->recorded = true;
	return topsSuccess;
}

API topsError_t topsEventSynchronize(topsEvent_t event)
{
	INIT_OR_FAIL();
	if (!handle_has(H_EVENT, event))
		FAIL(topsErrorInvalidResourceHandle);
	if (event->recorded)
		sim_wait(event->dev, event->ticks);
	return topsSuccess;
}

API topsError_t topsEventQuery(topsEvent_t event)
{
	INIT_OR_FAIL();
	if (!handle_has(H_EVENT, event))
		FAIL(topsErrorInvalidResourceHandle);
	if (event->recorded && sim_device_now(event->dev) < event->ticks)
		return topsErrorNotReady;
	return topsSuccess;
}

API topsError_t topsEventElapsedTime(float *ms, topsEvent_t start, topsEvent_t stop)
{
	INIT_OR_FAIL();
	if (!ms)
		FAIL(topsErrorInvalidValue);
	if (!handle_has(H_EVENT, start) || !handle_has(H_EVENT, stop) || !start->recorded ||
	    !stop->recorded || ((start->flags | stop->flags) & topsEventDisableTiming))
		FAIL(topsErrorInvalidResourceHandle);
	if (start->dev != stop->dev)
		FAIL(topsErrorInvalidValue);
	if (sim_device_now(stop->dev) < stop->ticks || sim_device_now(start->dev) < start->ticks)
		FAIL(topsErrorNotReady);
	*ms = (float)(((double)stop->ticks - (double)start->ticks) * 1e3 /
		      (double)start->dev->region.hdr->tick_hz);
	return topsSuccess;
}

API topsError_t topsEventDestroy(topsEvent_t event)
{
	if (!event || !handle_del(H_EVENT, event))
		FAIL(topsErrorInvalidResourceHandle);
	free(event);
	return topsSuccess;
}
