// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "target/runtime/apitable.h"

#include <string.h>

#define S	API_CK_STACK
#define STR(i)	(API_CK_STR | API_CK_ARG_IDX(i))
#define ATTR(i) (API_CK_ATTR | API_CK_ARG_IDX(i))
#define TX	API_CK_TOPSTX
#define N	NO_ARG
#define W	API_CK_RET64

/* name, domain, category, capture (W: returns 64 bits), size, kind, stream, func, dev, fixed kind,
 * tx, domain, id */
const struct api_fn api_table[] = {
	/* runtime: kernels */
	{ "topsLaunchKernel", DOM_RUNTIME, CAT_LAUNCH, S, N, N, 7, 0, N, N, TX_NONE, N, N },
	{ "topsModuleLaunchKernel", DOM_RUNTIME, CAT_LAUNCH, S, N, N, 8, 0, N, N, TX_NONE, N, N },
	{ "topsModuleLoad", DOM_RUNTIME, CAT_OTHER, STR(1), N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsModuleUnload", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsModuleGetFunction", DOM_RUNTIME, CAT_OTHER, STR(2), N, N, N, N, N, N, TX_NONE, N,
	  N },
	{ "__topsRegisterKernel", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, 0, N, N, TX_NONE, N, N },
	/* runtime: copies and memsets */
	{ "topsMemcpy", DOM_RUNTIME, CAT_MEMCPY, 0, 2, 3, N, N, N, N, TX_NONE, N, N },
	{ "topsMemcpyAsync", DOM_RUNTIME, CAT_MEMCPY, 0, 2, 3, 4, N, N, N, TX_NONE, N, N },
	{ "topsMemcpyHtoD", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, N, N, N, 1, TX_NONE, N, N },
	{ "topsMemcpyDtoH", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, N, N, N, 2, TX_NONE, N, N },
	{ "topsMemcpyDtoD", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, N, N, N, 3, TX_NONE, N, N },
	{ "topsMemcpyHtoDAsync", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, 3, N, N, 1, TX_NONE, N, N },
	{ "topsMemcpyDtoHAsync", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, 3, N, N, 2, TX_NONE, N, N },
	{ "topsMemcpyDtoDAsync", DOM_RUNTIME, CAT_MEMCPY, 0, 2, N, 3, N, N, 3, TX_NONE, N, N },
	{ "topsMemset", DOM_RUNTIME, CAT_MEMSET, 0, 2, N, N, N, N, N, TX_NONE, N, N },
	{ "topsMemsetAsync", DOM_RUNTIME, CAT_MEMSET, 0, 2, N, 3, N, N, N, TX_NONE, N, N },
	/* runtime: synchronization */
	{ "topsDeviceSynchronize", DOM_RUNTIME, CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsStreamSynchronize", DOM_RUNTIME, CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N },
	{ "topsStreamQuery", DOM_RUNTIME, CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N },
	{ "topsStreamWaitEvent", DOM_RUNTIME, CAT_SYNC, 0, N, N, 0, N, N, N, TX_NONE, N, N },
	{ "topsEventSynchronize", DOM_RUNTIME, CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsEventQuery", DOM_RUNTIME, CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N },
	/* runtime: memory */
	{ "topsMalloc", DOM_RUNTIME, CAT_ALLOC, 0, 1, N, N, N, N, N, TX_NONE, N, N },
	{ "topsFree", DOM_RUNTIME, CAT_ALLOC, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsHostMalloc", DOM_RUNTIME, CAT_ALLOC, 0, 1, N, N, N, N, N, TX_NONE, N, N },
	{ "topsHostFree", DOM_RUNTIME, CAT_ALLOC, 0, N, N, N, N, N, N, TX_NONE, N, N },
	/* runtime: streams, events, devices, errors */
	{ "topsStreamCreate", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsStreamCreateWithFlags", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsStreamDestroy", DOM_RUNTIME, CAT_OTHER, 0, N, N, 0, N, N, N, TX_NONE, N, N },
	{ "topsEventCreate", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsEventCreateWithFlags", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsEventRecord", DOM_RUNTIME, CAT_OTHER, 0, N, N, 1, N, N, N, TX_NONE, N, N },
	{ "topsEventElapsedTime", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsEventDestroy", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsSetDevice", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, 0, N, TX_NONE, N, N },
	{ "topsGetDevice", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsGetDeviceCount", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsGetDeviceProperties", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, 1, N, TX_NONE, N, N },
	{ "topsGetLastError", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsPeekAtLastError", DOM_RUNTIME, CAT_OTHER, 0, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsGetErrorName", DOM_RUNTIME, CAT_OTHER, W, N, N, N, N, N, N, TX_NONE, N, N },
	{ "topsGetErrorString", DOM_RUNTIME, CAT_OTHER, W, N, N, N, N, N, N, TX_NONE, N, N },
	/* topstx: the default domain */
	{ "topstxRangePush", DOM_TOPSTX, CAT_OTHER, TX | ATTR(0), N, N, N, N, N, N, TX_PUSH, N, N },
	{ "topstxRangePushA", DOM_TOPSTX, CAT_OTHER, TX | STR(0), N, N, N, N, N, N, TX_PUSH, N, N },
	{ "topstxRangePop", DOM_TOPSTX, CAT_OTHER, TX, N, N, N, N, N, N, TX_POP, N, N },
	{ "topstxRangeStart", DOM_TOPSTX, CAT_OTHER, TX | ATTR(0) | W, N, N, N, N, N, N, TX_START,
	  N, N },
	{ "topstxRangeEnd", DOM_TOPSTX, CAT_OTHER, TX, N, N, N, N, N, N, TX_END, N, 0 },
	{ "topstxMark", DOM_TOPSTX, CAT_OTHER, TX | ATTR(0), N, N, N, N, N, N, TX_MARK, N, N },
	/* topstx: custom domains */
	{ "topstxDomainCreate", DOM_TOPSTX, CAT_OTHER, TX | STR(0) | W, N, N, N, N, N, N,
	  TX_DOMAIN_NEW, N, N },
	{ "topstxDomainDestroy", DOM_TOPSTX, CAT_OTHER, TX, N, N, N, N, N, N, TX_DOMAIN_DEL, 0, N },
	{ "topstxDomainNameCategory", DOM_TOPSTX, CAT_OTHER, TX | STR(2), N, N, N, N, N, N,
	  TX_DOMAIN_CAT, 0, N },
	{ "topstxDomainRangePush", DOM_TOPSTX, CAT_OTHER, TX | ATTR(1), N, N, N, N, N, N, TX_PUSH,
	  0, N },
	{ "topstxDomainRangePop", DOM_TOPSTX, CAT_OTHER, TX, N, N, N, N, N, N, TX_POP, 0, N },
	{ "topstxDomainRangeStart", DOM_TOPSTX, CAT_OTHER, TX | ATTR(1) | W, N, N, N, N, N, N,
	  TX_START, 0, N },
	{ "topstxDomainRangeEnd", DOM_TOPSTX, CAT_OTHER, TX, N, N, N, N, N, N, TX_END, 0, 1 },
	{ "topstxDomainMark", DOM_TOPSTX, CAT_OTHER, TX | ATTR(1), N, N, N, N, N, N, TX_MARK, 0,
	  N },
};
const unsigned api_table_len = sizeof(api_table) / sizeof(api_table[0]);

const char *api_category_name(enum api_category c)
{
	static const char *const names[] = {
		"launch", "memcpy", "memset", "sync", "alloc", "other"
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

int api_find(const char *name)
{
	for (unsigned i = 0; i < api_table_len; i++)
		if (!strcmp(api_table[i].name, name))
			return (int)i;
	return -1;
}
