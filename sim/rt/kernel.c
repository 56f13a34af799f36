// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernels: the registry that compiler start-up code (or a module's) fills, modules, launches.
 * A kernel runs on the host when launched; the device model charges its device time. */
#include "internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct topsModule_st {
	void *dl;
};

#define MAX_THREADS_PER_BLOCK 1024

static struct sim_kernel **kernels;
static size_t nkernels, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* kernels registered while topsModuleLoad() runs a module's constructors belong to it */
static __thread struct topsModule_st *loading_module;

API topsError_t __topsRegisterKernel(topsKernelFn fn, const topsKernelInfo *info)
{
	struct sim_kernel *k = NULL;
	char *name;

	if (!fn || !info || !info->name || !*info->name)
		return sim_set_error(topsErrorInvalidValue);
	name = strdup(info->name);
	if (!name)
		return sim_set_error(topsErrorOutOfMemory);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkernels; i++)
		if (kernels[i]->fn == fn)
			k = kernels[i];
	if (!k && nkernels == cap) {
		size_t ncap = cap ? cap * 2 : 64;
		struct sim_kernel **n = realloc(kernels, ncap * sizeof(*n));

		if (n) {
			kernels = n;
			cap = ncap;
		}
	}
	if (!k && nkernels < cap && (k = calloc(1, sizeof(*k))) != NULL)
		kernels[nkernels++] = k;
	if (k) {
		free((char *)k->info.name);
		k->fn = fn;
		k->info = *info;
		k->info.name = name;
		k->module = loading_module;
		memset(k->name_id, 0, sizeof(k->name_id));
	}
	pthread_mutex_unlock(&lock);
	if (!k) {
		free(name);
		return sim_set_error(topsErrorOutOfMemory);
	}
	handle_add(H_FUNCTION, k);
	return topsSuccess;
}

struct sim_kernel *kernel_find(topsKernelFn fn)
{
	struct sim_kernel *k = NULL;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkernels && !k; i++)
		if (kernels[i]->fn == fn)
			k = kernels[i];
	pthread_mutex_unlock(&lock);
	return k;
}

topsError_t kernel_launch(struct sim_kernel *k, dim3 grid, dim3 block, void **args,
			  topsStream_t stream)
{
	struct topsStream_st *s = sim_stream(stream);
	struct sim_cmd c = { .kind = GCU_REC_KERNEL, .engine = GCU_ENGINE_COMPUTE, .kernel = k };

	if (!s)
		return topsErrorInvalidResourceHandle;
	if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z ||
	    (uint64_t)block.x * block.y * block.z > MAX_THREADS_PER_BLOCK)
		return topsErrorInvalidConfiguration;
	if (k->info.elems_arg >= 0) {
		if (!args || !args[k->info.elems_arg])
			return topsErrorInvalidValue;
		c.elems = *(const unsigned long *)args[k->info.elems_arg];
	} else {
		c.elems = (uint64_t)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	}
	k->fn(args, grid, block);
	sim_submit(s, &c);
	return topsSuccess;
}

API topsError_t topsLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
				 void **args, size_t sharedMemBytes, topsStream_t stream)
{
	struct sim_kernel *k;
	topsError_t e = sim_init();

	(void)sharedMemBytes;
	if (e)
		return sim_set_error(e);
	k = function_address ? kernel_find((topsKernelFn)(uintptr_t)function_address) : NULL;
	if (!k)
		return sim_set_error(topsErrorInvalidDeviceFunction);
	return sim_set_error(kernel_launch(k, numBlocks, dimBlocks, args, stream));
}

API topsError_t topsModuleLoad(topsModule_t *module, const char *fname)
{
	struct topsModule_st *m;
	topsError_t e = sim_init();

	if (e)
		return sim_set_error(e);
	if (!module || !fname)
		return sim_set_error(topsErrorInvalidValue);
	if (access(fname, R_OK))
		return sim_set_error(topsErrorFileNotFound);
	m = calloc(1, sizeof(*m));
	if (!m)
		return sim_set_error(topsErrorOutOfMemory);
	loading_module = m;
	m->dl = dlopen(fname, RTLD_NOW | RTLD_LOCAL);
	loading_module = NULL;
	if (!m->dl) {
		free(m);
		return sim_set_error(topsErrorInvalidImage);
	}
	handle_add(H_MODULE, m);
	*module = m;
	return topsSuccess;
}

/* "vector_add" names "vector_add(float*, float*, float*, unsigned long)" too */
static bool name_matches(const char *full, const char *want)
{
	size_t n = strlen(want);

	return !strcmp(full, want) || (!strncmp(full, want, n) && full[n] == '(');
}

API topsError_t topsModuleGetFunction(topsFunction_t *function, topsModule_t module,
				      const char *kname)
{
	struct sim_kernel *k = NULL;

	if (!function || !kname)
		return sim_set_error(topsErrorInvalidValue);
	if (!handle_has(H_MODULE, module))
		return sim_set_error(topsErrorInvalidResourceHandle);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkernels && !k; i++)
		if (kernels[i]->module == module && name_matches(kernels[i]->info.name, kname))
			k = kernels[i];
	pthread_mutex_unlock(&lock);
	if (!k)
		return sim_set_error(topsErrorNotFound);
	*function = (topsFunction_t)k;
	return topsSuccess;
}

API topsError_t topsModuleUnload(topsModule_t module)
{
	size_t j = 0;

	if (!handle_del(H_MODULE, module))
		return sim_set_error(topsErrorInvalidResourceHandle);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nkernels; i++) {
		if (kernels[i]->module == module) {
			handle_del(H_FUNCTION, kernels[i]);
			free((char *)kernels[i]->info.name);
			free(kernels[i]);
		} else {
			kernels[j++] = kernels[i];
		}
	}
	nkernels = j;
	pthread_mutex_unlock(&lock);
	dlclose(module->dl);
	free(module);
	return topsSuccess;
}

API topsError_t topsModuleLaunchKernel(topsFunction_t f, unsigned int gridDimX,
				       unsigned int gridDimY, unsigned int gridDimZ,
				       unsigned int blockDimX, unsigned int blockDimY,
				       unsigned int blockDimZ, unsigned int sharedMemBytes,
				       topsStream_t stream, void **kernelParams, void **extra)
{
	dim3 grid = { gridDimX, gridDimY, gridDimZ }, block = { blockDimX, blockDimY, blockDimZ };
	topsError_t e = sim_init();

	(void)sharedMemBytes;
	if (e)
		return sim_set_error(e);
	if (!handle_has(H_FUNCTION, f))
		return sim_set_error(topsErrorInvalidResourceHandle);
	if (extra)
		return sim_set_error(topsErrorNotSupported);
	return sim_set_error(
		kernel_launch((struct sim_kernel *)f, grid, block, kernelParams, stream));
}
