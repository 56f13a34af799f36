// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A second runtime for the tests (libtestrt.so, tests/runtime/libtestrt.c): linked into a test
 * build of topsprof beside TopsRT, it proves that a runtime is one file of this shape
 * (user/target/runtime/tops.c is the real one). */
#include "target/runtime/runtime.h"

#include <stddef.h>

#define N NO_ARG

/* name, category, capture, size, kind, stream, func, dev, fixed kind, tx, domain, id */
static const struct api_fn testrt_fns[] = {
	API_ROW("testrtLaunch", CAT_LAUNCH, 0, N, N, N, N, N, N, TX_NONE, N, N),
	API_ROW("testrtSync", CAT_SYNC, 0, N, N, N, N, N, N, TX_NONE, N, N),
};

static const struct runtime_lib testrt_libs[] = {
	{ .soname = "libtestrt.so.1",
	  .probe_symbol = "testrtLaunch",
	  .domain = DOM_RUNTIME,
	  .fns = testrt_fns,
	  .nfns = sizeof(testrt_fns) / sizeof(testrt_fns[0]) },
};

static const struct runtime testrt = {
	.name = "testrt",
	.what = "the test runtime",
	.libs = testrt_libs,
	.nlibs = sizeof(testrt_libs) / sizeof(testrt_libs[0]),
};
RUNTIME_REGISTER(testrt);
