// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The manual's example: three kernels (warm_up, scalar_add, vector_add), host-to-device and
 * device-to-host copies, stream synchronizations. Checks its results. */
#include <math.h>
#include <string.h>

#include "common.h"

#define N 1000000ul

static void warm_up(void **args, dim3 grid, dim3 block)
{
	(void)args;
	(void)grid;
	(void)block;
}

/* c[i] = a[i] + b[0] */
static void scalar_add(void **args, dim3 grid, dim3 block)
{
	float *a = *(float **)args[0], *b = *(float **)args[1], *c = *(float **)args[2];
	unsigned long n = *(unsigned long *)args[3];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		c[i] = a[i] + b[0];
}

/* c[i] = a[i] + b[i] */
static void vector_add(void **args, dim3 grid, dim3 block)
{
	float *a = *(float **)args[0], *b = *(float **)args[1], *c = *(float **)args[2];
	unsigned long n = *(unsigned long *)args[3];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		c[i] = a[i] + b[i];
}

/* what the compiler's start-up code would register: device time 13.44us, 56.61ms, 8.55ms */
__attribute__((constructor)) static void register_kernels(void)
{
	static const topsKernelInfo k_warm_up = { "warm_up()", 13440, 0, -1, 0 };
	static const topsKernelInfo k_scalar = {
		"scalar_add(float*, float*, float*, unsigned long)", 10000, 56600, 3, 8
	};
	static const topsKernelInfo k_vector = {
		"vector_add(float*, float*, float*, unsigned long)", 10000, 8540, 3, 12
	};

	CHECK(__topsRegisterKernel(warm_up, &k_warm_up));
	CHECK(__topsRegisterKernel(scalar_add, &k_scalar));
	CHECK(__topsRegisterKernel(vector_add, &k_vector));
}

int main(void)
{
	size_t bytes = N * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c1 = malloc(bytes), *c2 = malloc(bytes);
	float *da, *db, *dc1, *dc2;
	unsigned long n = N;
	void *args1[] = { &da, &db, &dc1, &n }, *args2[] = { &da, &db, &dc2, &n };
	topsStream_t stream;
	int bad = 0;

	if (!a || !b || !c1 || !c2)
		return 1;
	for (unsigned long i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = (float)(2 * i + 1);
	}
	CHECK(topsSetDevice(0));
	CHECK(topsMalloc((void **)&da, bytes));
	CHECK(topsMalloc((void **)&db, bytes));
	CHECK(topsMalloc((void **)&dc1, bytes));
	CHECK(topsMalloc((void **)&dc2, bytes));
	CHECK(topsStreamCreate(&stream));

	CHECK(topsLaunchKernel((const void *)warm_up, DIM3(1, 1, 1), DIM3(1, 1, 1), NULL, 0,
			       stream));
	CHECK(topsStreamSynchronize(stream));

	CHECK(topsMemcpyAsync(da, a, bytes, topsMemcpyHostToDevice, stream));
	CHECK(topsMemcpyAsync(db, b, bytes, topsMemcpyHostToDevice, stream));
	CHECK(topsStreamSynchronize(stream));

	CHECK(topsLaunchKernel((const void *)scalar_add, DIM3(256, 1, 1), DIM3(256, 1, 1), args1, 0,
			       stream));
	CHECK(topsStreamSynchronize(stream));
	CHECK(topsLaunchKernel((const void *)vector_add, DIM3(256, 1, 1), DIM3(256, 1, 1), args2, 0,
			       stream));
	CHECK(topsStreamSynchronize(stream));

	CHECK(topsMemcpyAsync(c1, dc1, bytes, topsMemcpyDeviceToHost, stream));
	CHECK(topsMemcpyAsync(c2, dc2, bytes, topsMemcpyDeviceToHost, stream));
	CHECK(topsStreamSynchronize(stream));

	for (unsigned long i = 0; i < N; i++) {
		bad += fabsf(c1[i] - (a[i] + b[0])) > 1e-3f * (1 + fabsf(c1[i]));
		bad += fabsf(c2[i] - (a[i] + b[i])) > 1e-3f * (1 + fabsf(c2[i]));
	}
	CHECK(topsStreamDestroy(stream));
	CHECK(topsFree(da));
	CHECK(topsFree(db));
	CHECK(topsFree(dc1));
	CHECK(topsFree(dc2));
	free(a);
	free(b);
	free(c1);
	free(c2);
	if (bad) {
		fprintf(stderr, "simpleElemwiseAdd: %d wrong results\n", bad);
		return 1;
	}
	printf("simpleElemwiseAdd: PASSED\n");
	return 0;
}
