// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Enflame's TopsRT: the runtime (libtopsrt.so) and the range API (libtopstx.so). Each row says
 * what the probes capture of a function and what its arguments mean; adding a traced function is
 * adding a row. */
#include "target/runtime/runtime.h"

#include <stddef.h>

#define S	API_CK_STACK
#define STR(i)	(API_CK_STR | API_CK_ARG_IDX(i))
#define ATTR(i) (API_CK_ATTR | API_CK_ARG_IDX(i))
#define TX	API_CK_TOPSTX
#define N	NO_ARG
#define W	API_CK_RET64

/* name, category, capture (W: returns 64 bits), size, kind, stream, func, dev, fixed kind,
 * tx, domain, id */
static const struct api_fn runtime_fns[] = {
	/* runtime: kernels */
	API_ROW("topsLaunchKernel", CAT_LAUNCH, S, N, N, 7, 0, N, N, TX_NONE, N, N),
	API_ROW("topsModuleLaunchKernel", CAT_LAUNCH, S, N, N, 8, 0, N, N, TX_NONE, N, N),
	API_ROW("topsModuleLoad", CAT_OTHER, STR(1), N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsModuleUnload", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsModuleGetFunction", CAT_OTHER, STR(2), N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("__topsRegisterKernel", CAT_OTHER, 0, N, N, N, 0, N, N, TX_NONE, N, N),
	/* runtime: copies and memsets */
	API_ROW("topsMemcpy", CAT_MEMCPY, 0, 2, 3, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsMemcpyAsync", CAT_MEMCPY, 0, 2, 3, 4, N, N, N, TX_NONE, N, N),
	API_ROW("topsMemcpyHtoD", CAT_MEMCPY, 0, 2, N, N, N, N, 1, TX_NONE, N, N),
	API_ROW("topsMemcpyDtoH", CAT_MEMCPY, 0, 2, N, N, N, N, 2, TX_NONE, N, N),
	API_ROW("topsMemcpyDtoD", CAT_MEMCPY, 0, 2, N, N, N, N, 3, TX_NONE, N, N),
	API_ROW("topsMemcpyHtoDAsync", CAT_MEMCPY, 0, 2, N, 3, N, N, 1, TX_NONE, N, N),
	API_ROW("topsMemcpyDtoHAsync", CAT_MEMCPY, 0, 2, N, 3, N, N, 2, TX_NONE, N, N),
	API_ROW("topsMemcpyDtoDAsync", CAT_MEMCPY, 0, 2, N, 3, N, N, 3, TX_NONE, N, N),
	API_ROW("topsMemset", CAT_MEMSET, 0, 2, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsMemsetAsync", CAT_MEMSET, 0, 2, N, 3, N, N, N, TX_NONE, N, N),
	/* runtime: synchronization */
	API_ROW("topsDeviceSynchronize", CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsStreamSynchronize", CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N),
	API_ROW("topsStreamQuery", CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N),
	API_ROW("topsStreamWaitEvent", CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventSynchronize", CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventQuery", CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N),
	/* runtime: memory */
	API_ROW("topsMalloc", CAT_ALLOC, 0, 1, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsFree", CAT_ALLOC, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsHostMalloc", CAT_ALLOC, 0, 1, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsHostFree", CAT_ALLOC, 0, N, N, N, N, N, N, TX_NONE, N, N),
	/* runtime: streams, events, devices, errors */
	API_ROW("topsStreamCreate", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsStreamCreateWithFlags", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsStreamDestroy", CAT_OTHER, 0, N, N, 0, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventCreate", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventCreateWithFlags", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventRecord", CAT_OTHER, 0, N, N, 1, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventElapsedTime", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsEventDestroy", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsSetDevice", CAT_OTHER, 0, N, N, N, N, 0, N, TX_NONE, N, N),
	API_ROW("topsGetDevice", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsGetDeviceCount", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsGetDeviceProperties", CAT_OTHER, 0, N, N, N, N, 1, N, TX_NONE, N, N),
	API_ROW("topsGetLastError", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsPeekAtLastError", CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsGetErrorName", CAT_OTHER, W, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("topsGetErrorString", CAT_OTHER, W, N, N, N, N, N, N, TX_NONE, N, N),
};

static const struct api_fn topstx_fns[] = {
	/* topstx: the default domain */
	API_ROW("topstxRangePush", CAT_OTHER, TX | ATTR(0), N, N, N, N, N, N, TX_PUSH, N, N),
	API_ROW("topstxRangePushA", CAT_OTHER, TX | STR(0), N, N, N, N, N, N, TX_PUSH, N, N),
	API_ROW("topstxRangePop", CAT_OTHER, TX, N, N, N, N, N, N, TX_POP, N, N),
	API_ROW("topstxRangeStart", CAT_OTHER, TX | ATTR(0) | W, N, N, N, N, N, N, TX_START, N, N),
	API_ROW("topstxRangeEnd", CAT_OTHER, TX, N, N, N, N, N, N, TX_END, N, 0),
	API_ROW("topstxMark", CAT_OTHER, TX | ATTR(0), N, N, N, N, N, N, TX_MARK, N, N),
	/* topstx: custom domains */
	API_ROW("topstxDomainCreate", CAT_OTHER, TX | STR(0) | W, N, N, N, N, N, N, TX_DOMAIN_NEW,
		N, N),
	API_ROW("topstxDomainDestroy", CAT_OTHER, TX, N, N, N, N, N, N, TX_DOMAIN_DEL, 0, N),
	API_ROW("topstxDomainNameCategory", CAT_OTHER, TX | STR(2), N, N, N, N, N, N, TX_DOMAIN_CAT,
		0, N),
	API_ROW("topstxDomainRangePush", CAT_OTHER, TX | ATTR(1), N, N, N, N, N, N, TX_PUSH, 0, N),
	API_ROW("topstxDomainRangePop", CAT_OTHER, TX, N, N, N, N, N, N, TX_POP, 0, N),
	API_ROW("topstxDomainRangeStart", CAT_OTHER, TX | ATTR(1) | W, N, N, N, N, N, N, TX_START,
		0, N),
	API_ROW("topstxDomainRangeEnd", CAT_OTHER, TX, N, N, N, N, N, N, TX_END, 0, 1),
	API_ROW("topstxDomainMark", CAT_OTHER, TX | ATTR(1), N, N, N, N, N, N, TX_MARK, 0, N),
};

static const struct runtime_lib tops_libs[] = {
	{ .soname = "libtopsrt.so.1",
	  .probe_symbol = "topsLaunchKernel",
	  .domain = DOM_RUNTIME,
	  .fns = runtime_fns,
	  .nfns = sizeof(runtime_fns) / sizeof(runtime_fns[0]) },
	{ .soname = "libtopstx.so.1",
	  .probe_symbol = "topstxRangePush",
	  .domain = DOM_TOPSTX,
	  .fns = topstx_fns,
	  .nfns = sizeof(topstx_fns) / sizeof(topstx_fns[0]) },
};

/* a destroyed stream's handle may be given to the next stream created: the join tells them
 * apart by these calls */
static const char *const tops_stream_destroy[] = { "topsStreamDestroy", NULL };

static const struct runtime tops = {
	.name = "tops",
	.what = "the GCU runtime",
	.dirs = "/opt/tops/lib",
	.libs = tops_libs,
	.nlibs = sizeof(tops_libs) / sizeof(tops_libs[0]),
	.stream_destroy = tops_stream_destroy,
};
RUNTIME_REGISTER(tops);
