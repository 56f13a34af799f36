// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A kernel module for topsModuleLoad(): its constructor registers its kernels, which the
 * runtime then attributes to the module being loaded. */
#include "tops/tops_runtime_api.h"

/* y[i] = a * x[i] + y[i] */
static void saxpy(void **args, dim3 grid, dim3 block)
{
	float a = *(float *)args[0];
	const float *x = *(float **)args[1];
	float *y = *(float **)args[2];
	unsigned long n = *(unsigned long *)args[3];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		y[i] = a * x[i] + y[i];
}

__attribute__((constructor)) static void register_kernels(void)
{
	static const topsKernelInfo k = { "saxpy(float, float const*, float*, unsigned long)", 6000,
					  300, 3, 12 };

	__topsRegisterKernel(saxpy, &k);
}
