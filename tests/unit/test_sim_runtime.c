// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The simulated TopsRT API: data really moves, streams order work, synchronization waits for
 * the modeled end, events time it, devices map through TOPS_VISIBLE_DEVICES, and every misuse is
 * an error return. The device records what it does only while a reader has enabled it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver/writer.h"
#include "sim_env.h"
#include "tops/tops_runtime_api.h"

#define D3(a) ((dim3){ (a), 1, 1 })

static void add_one(void **args, dim3 grid, dim3 block)
{
	int *p = *(int **)args[0];
	unsigned long n = *(unsigned long *)args[1];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		p[i]++;
}

/* 20 ms of device time, whatever the arguments */
static void slow(void **args, dim3 grid, dim3 block)
{
	(void)args;
	(void)grid;
	(void)block;
}

static void unregistered(void **args, dim3 grid, dim3 block)
{
	(void)args;
	(void)grid;
	(void)block;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_round_trip(void **state)
{
	size_t n = 100000, bytes = n * sizeof(int);
	int *h = malloc(bytes), *back = malloc(bytes), *d1, *d2;
	unsigned long count = n;
	void *args[] = { &d2, &count };

	(void)state;
	for (size_t i = 0; i < n; i++)
		h[i] = (int)(i * 7);
	assert_int_equal(topsMalloc((void **)&d1, bytes), topsSuccess);
	assert_int_equal(topsMalloc((void **)&d2, bytes), topsSuccess);
	assert_int_equal(topsMemcpy(d1, h, bytes, topsMemcpyHostToDevice), topsSuccess);
	assert_int_equal(topsMemcpyDtoD(d2, d1, bytes), topsSuccess);
	assert_int_equal(topsLaunchKernel((const void *)add_one, D3(4), D3(64), args, 0, NULL),
			 topsSuccess);
	assert_int_equal(topsMemcpy(back, d2, bytes, topsMemcpyDefault), topsSuccess);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(back[i], (int)(i * 7) + 1);
	assert_int_equal(topsMemset(d1, 0xab, bytes), topsSuccess);
	assert_int_equal(topsMemcpyDtoH(back, d1, bytes), topsSuccess);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(back[i], (int)0xabababab);
	assert_int_equal(topsFree(d1), topsSuccess);
	assert_int_equal(topsFree(d2), topsSuccess);
	free(h);
	free(back);
}

static void test_misuse(void **state)
{
	int host[16], *d, *freed;
	topsStream_t s, dead;
	topsEvent_t e;
	void *p;
	float ms;

	(void)state;
	assert_int_equal(topsMalloc(NULL, 16), topsErrorInvalidValue);
	assert_int_equal(topsMalloc(&p, 0), topsErrorInvalidValue);
	assert_int_equal(topsMalloc(&p, 1ull << 50), topsErrorOutOfMemory);
	assert_int_equal(topsMalloc((void **)&d, sizeof(host)), topsSuccess);
	assert_int_equal(topsMalloc((void **)&freed, 64), topsSuccess);
	assert_int_equal(topsFree(freed), topsSuccess);
	assert_int_equal(topsFree(freed), topsErrorInvalidValue); /* twice */
	assert_int_equal(topsFree(host), topsErrorInvalidValue);  /* not device memory */
	assert_int_equal(topsFree(d + 1), topsErrorInvalidValue); /* not its start */
	assert_int_equal(topsFree(NULL), topsSuccess);
	assert_int_equal(topsHostFree(host), topsErrorInvalidValue);

	assert_int_equal(topsMemcpy(host, host + 8, 0, topsMemcpyHostToHost),
			 topsErrorInvalidValue);
	assert_int_equal(topsMemcpy(NULL, host, 4, topsMemcpyHostToDevice), topsErrorInvalidValue);
	/* a host pointer where a device one belongs, and the reverse */
	assert_int_equal(topsMemcpy(host, host, 4, topsMemcpyHostToDevice),
			 topsErrorInvalidDevicePointer);
	assert_int_equal(topsMemcpy(d, d, 4, topsMemcpyHostToDevice),
			 topsErrorInvalidMemcpyDirection);
	assert_int_equal(topsMemcpy(freed, host, 4, topsMemcpyHostToDevice),
			 topsErrorInvalidDevicePointer);
	/* past the end of the allocation */
	assert_int_equal(topsMemcpy(d, host, sizeof(host) + 4, topsMemcpyHostToDevice),
			 topsErrorInvalidValue);
	assert_int_equal(topsMemcpy(d, host, 4, (topsMemcpyKind)7),
			 topsErrorInvalidMemcpyDirection);
	assert_int_equal(topsMemset(host, 0, 4), topsErrorInvalidDevicePointer);
	assert_int_equal(topsMemset(d, 0, 0), topsErrorInvalidValue);

	/* streams and events: made-up and destroyed handles */
	assert_int_equal(topsStreamCreate(&s), topsSuccess);
	assert_int_equal(topsStreamCreate(&dead), topsSuccess);
	assert_int_equal(topsStreamDestroy(dead), topsSuccess);
	assert_int_equal(topsStreamDestroy(dead), topsErrorInvalidResourceHandle);
	assert_int_equal(topsStreamSynchronize(dead), topsErrorInvalidResourceHandle);
	assert_int_equal(topsStreamSynchronize((topsStream_t)host), topsErrorInvalidResourceHandle);
	assert_int_equal(topsMemcpyAsync(d, host, 4, topsMemcpyHostToDevice, dead),
			 topsErrorInvalidResourceHandle);
	assert_int_equal(topsStreamDestroy(NULL), topsErrorInvalidResourceHandle);
	assert_int_equal(topsStreamCreateWithFlags(&s, 0x80), topsErrorInvalidValue);
	assert_int_equal(topsEventCreate(&e), topsSuccess);
	assert_int_equal(topsEventElapsedTime(&ms, e, e), topsErrorInvalidResourceHandle);
	assert_int_equal(topsEventDestroy(e), topsSuccess);
	assert_int_equal(topsEventRecord(e, NULL), topsErrorInvalidResourceHandle);
	assert_int_equal(topsStreamWaitEvent(s, e, 0), topsErrorInvalidResourceHandle);

	/* kernels */
	assert_int_equal(topsLaunchKernel((const void *)unregistered, D3(1), D3(1), NULL, 0, NULL),
			 topsErrorInvalidDeviceFunction);
	assert_int_equal(topsLaunchKernel(NULL, D3(1), D3(1), NULL, 0, NULL),
			 topsErrorInvalidDeviceFunction);
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(2048), NULL, 0, NULL),
			 topsErrorInvalidConfiguration);
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(0), D3(1), NULL, 0, NULL),
			 topsErrorInvalidConfiguration);
	assert_int_equal(topsLaunchKernel((const void *)add_one, D3(1), D3(1), NULL, 0, NULL),
			 topsErrorInvalidValue); /* its element count argument is missing */
	assert_int_equal(topsModuleLoad((topsModule_t *)&p, "/nonexistent/module.so"),
			 topsErrorFileNotFound);
	assert_int_equal(topsModuleLoad((topsModule_t *)&p, "/etc/hostname"),
			 topsErrorInvalidImage);
	assert_int_equal(topsModuleGetFunction((topsFunction_t *)&p, (topsModule_t)host, "x"),
			 topsErrorInvalidResourceHandle);
	assert_int_equal(
		topsModuleLaunchKernel((topsFunction_t)host, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
		topsErrorInvalidResourceHandle);
	assert_int_equal(topsSetDevice(99), topsErrorInvalidDevice);
	assert_int_equal(topsGetDeviceProperties(NULL, 0), topsErrorInvalidValue);

	/* the last error is remembered until read */
	assert_int_equal(topsPeekAtLastError(), topsErrorInvalidValue);
	assert_int_equal(topsGetLastError(), topsErrorInvalidValue);
	assert_int_equal(topsGetLastError(), topsSuccess);

	assert_int_equal(topsStreamDestroy(s), topsSuccess);
	assert_int_equal(topsFree(d), topsSuccess);
}

static void test_error_strings(void **state)
{
	static const topsError_t all[] = {
		topsSuccess,
		topsErrorInvalidValue,
		topsErrorOutOfMemory,
		topsErrorNotInitialized,
		topsErrorInvalidConfiguration,
		topsErrorInvalidDevicePointer,
		topsErrorInvalidMemcpyDirection,
		topsErrorInvalidDeviceFunction,
		topsErrorNoDevice,
		topsErrorInvalidDevice,
		topsErrorInvalidImage,
		topsErrorInvalidResourceHandle,
		topsErrorFileNotFound,
		topsErrorNotFound,
		topsErrorNotReady,
		topsErrorLaunchFailure,
		topsErrorNotSupported,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		assert_int_equal(strncmp(topsGetErrorName(all[i]), "topsError", 9) != 0,
				 all[i] == topsSuccess);
		assert_string_not_equal(topsGetErrorString(all[i]), "unknown error");
	}
	assert_string_equal(topsGetErrorName(topsErrorNotReady), "topsErrorNotReady");
	assert_string_equal(topsGetErrorName(topsErrorOutOfMemory), "topsErrorOutOfMemory");
	assert_string_equal(topsGetErrorName((topsError_t)12345), "topsErrorUnknown");
	assert_int_equal(topsErrorNotReady, 600);
	assert_int_equal(topsErrorOutOfMemory, 2);
	assert_int_equal(topsMemcpyDefault, 4);
}

/* waits last until the modeled end; queries say not ready before it */
static void test_sync_waits_and_events(void **state)
{
	topsStream_t s;
	topsEvent_t a, b;
	uint64_t t0, t1;
	float ms;

	(void)state;
	assert_int_equal(topsStreamCreate(&s), topsSuccess);
	assert_int_equal(topsEventCreate(&a), topsSuccess);
	assert_int_equal(topsEventCreate(&b), topsSuccess);
	t0 = now_ns();
	assert_int_equal(topsEventRecord(a, s), topsSuccess);
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, s),
			 topsSuccess);
	assert_int_equal(topsEventRecord(b, s), topsSuccess);
	assert_int_equal(topsStreamQuery(s), topsErrorNotReady);
	assert_int_equal(topsEventQuery(b), topsErrorNotReady);
	assert_int_equal(topsEventElapsedTime(&ms, a, b), topsErrorNotReady);
	assert_int_equal(topsStreamSynchronize(s), topsSuccess);
	t1 = now_ns();
	assert_true(t1 - t0 >= 20000000ull);
	assert_int_equal(topsStreamQuery(s), topsSuccess);
	assert_int_equal(topsEventQuery(b), topsSuccess);
	assert_int_equal(topsEventElapsedTime(&ms, a, b), topsSuccess);
	assert_true(ms >= 20.0f && ms < 25.0f);

	/* device synchronization and a blocking copy wait too */
	t0 = now_ns();
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, s),
			 topsSuccess);
	assert_int_equal(topsDeviceSynchronize(), topsSuccess);
	assert_true(now_ns() - t0 >= 20000000ull);

	assert_int_equal(topsEventDestroy(a), topsSuccess);
	assert_int_equal(topsEventDestroy(b), topsSuccess);
	assert_int_equal(topsStreamDestroy(s), topsSuccess);
}

static int read_all(struct gcu_ro_dev *dev, struct gcu_record *out, int max)
{
	int n = 0, got;

	while (n < max && (got = gcu_ro_read(dev, out + n, max - n)) > 0)
		n += got;
	return n;
}

/* streams run in order, engines are shared, the legacy default stream waits for the others;
 * TOPS_VISIBLE_DEVICES=2,0 makes the application's device 0 the GCU 2 */
static void test_records(void **state)
{
	struct gcu_ro_dev *g2, *g0;
	struct gcu_record r[64];
	topsStream_t s1, s2;
	int host[1024], *d, count, n;
	char err[256];
	topsDeviceProp_t prop;

	(void)state;
	assert_int_equal(topsGetDeviceCount(&count), topsSuccess);
	assert_int_equal(count, 2);
	assert_int_equal(topsGetDeviceProperties(&prop, 0), topsSuccess);
	assert_int_equal(prop.clockRate, 1550000); /* GCU 2's clock */
	assert_int_equal(gcu_ro_open(2, &g2, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_open(0, &g0, err, sizeof(err)), 0);

	/* nothing enabled: nothing recorded (the ring does not move) */
	assert_int_equal(topsSetDevice(0), topsSuccess);
	{
		uint64_t head = __atomic_load_n(&((struct gcu_region *)g2)->hdr->head, 0);

		assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, NULL),
				 topsSuccess);
		assert_int_equal(__atomic_load_n(&((struct gcu_region *)g2)->hdr->head, 0), head);
	}
	assert_int_equal(topsDeviceSynchronize(), topsSuccess);

	assert_int_equal(gcu_ro_enable(g2, GCU_ACT_OPERATOR | GCU_ACT_MEMCPY), 0);
	assert_int_equal(gcu_ro_enable(g0, GCU_ACT_OPERATOR | GCU_ACT_MEMCPY), 0);
	assert_int_equal(topsStreamCreate(&s1), topsSuccess);
	assert_int_equal(topsStreamCreateWithFlags(&s2, topsStreamNonBlocking), topsSuccess);
	assert_int_equal(topsMalloc((void **)&d, sizeof(host)), topsSuccess);
	memset(host, 0, sizeof(host));
	/* r0: kernel on s1; r1: kernel on s2 (waits for the engine); r2: copy on s2 (another
	 * engine, but after r1 on its stream); r3: copy on the default stream (after s1, and
	 * the copy engine is taken until r2 ends) */
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, s1),
			 topsSuccess);
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, s2),
			 topsSuccess);
	assert_int_equal(topsMemcpyAsync(d, host, sizeof(host), topsMemcpyHostToDevice, s2),
			 topsSuccess);
	assert_int_equal(topsMemcpyAsync(d, host, sizeof(host), topsMemcpyHostToDevice, NULL),
			 topsSuccess);
	assert_int_equal(topsDeviceSynchronize(), topsSuccess);
	n = read_all(g2, r, 64);
	assert_int_equal(n, 4);
	assert_int_equal(r[0].kind, GCU_REC_KERNEL);
	assert_int_equal(r[0].device, 2);
	assert_int_equal(r[0].pid, (uint32_t)getpid());
	assert_int_equal(r[0].end_ticks - r[0].start_ticks, 31000000); /* 20 ms at 1.55 GHz */
	assert_string_equal(gcu_ro_name(g2, r[0].name_id), "slow()");
	assert_int_equal(r[1].stream_id, r[2].stream_id);
	assert_true(r[0].stream_id != r[1].stream_id);
	assert_int_equal(r[1].start_ticks, r[0].end_ticks); /* compute engine contention */
	assert_int_equal(r[2].kind, GCU_REC_MEMCPY);
	assert_int_equal(r[2].copy_kind, GCU_COPY_HTOD);
	assert_int_equal(r[2].bytes, sizeof(host));
	assert_int_equal(r[2].start_ticks, r[1].end_ticks); /* stream order */
	assert_int_equal(r[3].stream_id, 0);
	assert_int_equal(r[3].start_ticks, r[2].end_ticks);
	for (int i = 1; i < n; i++)
		assert_int_equal(r[i].launch_id, r[i - 1].launch_id + 1);
	assert_int_equal(gcu_ro_read(g0, r, 64), 0);

	/* the legacy default stream: a blocking stream waits for it, a non-blocking one does not */
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, NULL),
			 topsSuccess);
	assert_int_equal(topsMemcpyAsync(d, host, sizeof(host), topsMemcpyHostToDevice, s2),
			 topsSuccess);
	assert_int_equal(topsMemcpyAsync(d, host, sizeof(host), topsMemcpyHostToDevice, s1),
			 topsSuccess);
	assert_int_equal(topsDeviceSynchronize(), topsSuccess);
	assert_int_equal(read_all(g2, r, 64), 3);
	assert_int_equal(r[0].stream_id, 0);
	assert_true(r[1].start_ticks < r[0].end_ticks);
	assert_true(r[2].start_ticks >= r[0].end_ticks);

	/* the application's device 1 is GCU 0 */
	assert_int_equal(topsSetDevice(1), topsSuccess);
	assert_int_equal(topsLaunchKernel((const void *)slow, D3(1), D3(1), NULL, 0, NULL),
			 topsSuccess);
	assert_int_equal(topsDeviceSynchronize(), topsSuccess);
	assert_int_equal(read_all(g0, r, 64), 1);
	assert_int_equal(r[0].device, 0);
	assert_int_equal(gcu_ro_read(g2, r, 64), 0);
	assert_int_equal(topsSetDevice(0), topsSuccess);

	assert_int_equal(topsFree(d), topsSuccess);
	assert_int_equal(topsStreamDestroy(s1), topsSuccess);
	assert_int_equal(topsStreamDestroy(s2), topsSuccess);
	gcu_ro_close(g2);
	gcu_ro_close(g0);
}

static int setup(void **state)
{
	static const topsKernelInfo k_add = { "add_one(int*, unsigned long)", 1000, 10, 1, 4 };
	static const topsKernelInfo k_slow = { "slow()", 20000000, 0, -1, 0 };

	(void)state;
	if (sim_env_setup("3"))
		return -1;
	setenv("TOPS_VISIBLE_DEVICES", "2,0", 1);
	if (__topsRegisterKernel(add_one, &k_add) || __topsRegisterKernel(slow, &k_slow))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return sim_env_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_error_strings), cmocka_unit_test(test_sync_waits_and_events),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests_name("sim_runtime", tests, setup, teardown);
}
