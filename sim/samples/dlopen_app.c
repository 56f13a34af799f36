// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Loads libtopsrt.so only after it has started (as frameworks with plug-in back ends do), then
 * uses it through dlsym. usage: dlopen_app [delay-ms] */
#include <dlfcn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tops/tops_runtime_api.h"

#include <stdio.h>
#include <stdlib.h>

#define N 4096ul

struct rt {
	topsError_t (*reg)(topsKernelFn, const topsKernelInfo *);
	topsError_t (*malloc_)(void **, size_t);
	topsError_t (*free_)(void *);
	topsError_t (*memcpy_)(void *, const void *, size_t, topsMemcpyKind);
	topsError_t (*launch)(const void *, dim3, dim3, void **, size_t, topsStream_t);
	topsError_t (*sync)(void);
};

static void negate(void **args, dim3 grid, dim3 block)
{
	float *p = *(float **)args[0];
	unsigned long n = *(unsigned long *)args[1];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		p[i] = -p[i];
}

/* by its name, as frameworks load their back ends: the dynamic loader searches this program's
 * RUNPATH ($ORIGIN/../lib in the build tree), LD_LIBRARY_PATH, ld.so.cache and /usr/lib */
static void *open_runtime(void)
{
	return dlopen("libtopsrt.so.1", RTLD_NOW | RTLD_GLOBAL);
}

#define SYM(h, field, name)                                                \
	do {                                                               \
		*(void **)&(field) = dlsym(h, name);                       \
		if (!(field)) {                                            \
			fprintf(stderr, "dlopen_app: %s missing\n", name); \
			return 1;                                          \
		}                                                          \
	} while (0)

int main(int argc, char **argv)
{
	static const topsKernelInfo k = { "negate(float*, unsigned long)", 3000, 200, 1, 4 };
	long delay_ms = argc > 1 ? atol(argv[1]) : 50;
	struct timespec ts = { delay_ms / 1000, (delay_ms % 1000) * 1000000 };
	float h[N], *d;
	unsigned long n = N;
	void *args[] = { &d, &n };
	struct rt rt;
	void *lib;

	nanosleep(&ts, NULL); /* running, and no runtime mapped yet */
	lib = open_runtime();
	if (!lib) {
		fprintf(stderr, "dlopen_app: %s\n", dlerror());
		return 1;
	}
	SYM(lib, rt.reg, "__topsRegisterKernel");
	SYM(lib, rt.malloc_, "topsMalloc");
	SYM(lib, rt.free_, "topsFree");
	SYM(lib, rt.memcpy_, "topsMemcpy");
	SYM(lib, rt.launch, "topsLaunchKernel");
	SYM(lib, rt.sync, "topsDeviceSynchronize");
	for (unsigned long i = 0; i < N; i++)
		h[i] = (float)i;
	if (rt.reg(negate, &k) || rt.malloc_((void **)&d, sizeof(h)) ||
	    rt.memcpy_(d, h, sizeof(h), topsMemcpyHostToDevice) ||
	    rt.launch((const void *)negate, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, args, 0, NULL) ||
	    rt.sync() || rt.memcpy_(h, d, sizeof(h), topsMemcpyDeviceToHost) || rt.free_(d)) {
		fprintf(stderr, "dlopen_app: a runtime call failed\n");
		return 1;
	}
	for (unsigned long i = 0; i < N; i++) {
		if (h[i] != -(float)i) {
			fprintf(stderr, "dlopen_app: wrong result at %lu\n", i);
			return 1;
		}
	}
	printf("dlopen_app: PASSED\n");
	return 0;
}
