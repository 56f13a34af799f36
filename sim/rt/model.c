// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The device cost model: deterministic, so the same program yields the same device times. */
#include "internal.h"

/* ODTE bandwidth per copy kind, in picoseconds per byte (83 ps/B is about 12 GB/s) */
static const uint64_t copy_ps_per_byte[] = {
	[GCU_COPY_HTOH] = 50,
	[GCU_COPY_HTOD] = 83,
	[GCU_COPY_DTOH] = 83,
	[GCU_COPY_DTOD] = 20,
};
#define COPY_BASE_NS	   1500
#define MEMSET_BASE_NS	   800
#define MEMSET_PS_PER_BYTE 10
#define CDTE_PS_PER_BYTE   40
#define SDTE_PS_PER_BYTE   60
/* collecting CDTE/SDTE slows kernels down (the manual warns of it): 5% */
#define DTE_OVERHEAD_PCT 5

uint64_t model_copy_ns(enum gcu_copy_kind kind, uint64_t bytes)
{
	uint64_t ps = kind <= GCU_COPY_DTOD ? copy_ps_per_byte[kind] : copy_ps_per_byte[0];

	return COPY_BASE_NS + bytes * ps / 1000;
}

uint64_t model_memset_ns(uint64_t bytes)
{
	return MEMSET_BASE_NS + bytes * MEMSET_PS_PER_BYTE / 1000;
}

uint64_t model_kernel_ns(const topsKernelInfo *k, uint64_t elems, bool dte_profiling)
{
	uint64_t ns = k->base_ns + elems * k->ps_per_elem / 1000;

	return dte_profiling ? ns + ns * DTE_OVERHEAD_PCT / 100 : ns;
}

uint64_t model_dte_ns(enum gcu_engine engine, uint64_t bytes, uint64_t kernel_ns)
{
	uint64_t ns =
		bytes * (engine == GCU_ENGINE_CDTE ? CDTE_PS_PER_BYTE : SDTE_PS_PER_BYTE) / 1000;

	return ns < kernel_ns / 2 ? ns : kernel_ns / 2;
}
