/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A runtime a program reaches its accelerator through: its libraries, the functions of each that
 * are traced (apitable.h rows), where a vendor installs them, and what the join must know of
 * its calls. Adding a runtime is adding one file here that defines a struct runtime and names it
 * with RUNTIME_REGISTER: discovery, the probes, the reports and the files take it from there. */
#ifndef TOPSPROF_RUNTIME_H
#define TOPSPROF_RUNTIME_H

#include "target/runtime/apitable.h"

struct runtime_lib {
	const char *soname;	  /* "libtopsrt.so.1": the name the dynamic loader looks for */
	const char *probe_symbol; /* a function that tells a copy linked into an executable */
	enum api_domain domain;	  /* what --trace calls its calls */
	const struct api_fn *fns;
	unsigned nfns;
};

struct runtime {
	const char *name; /* "tops" */
	const char *what; /* for messages: "the GCU runtime" */
	const char *dirs; /* where the vendor installs the libraries: "/opt/tops/lib:..." */
	/* the runtime proper first (a program that uses the runtime maps it), then its companions */
	const struct runtime_lib *libs;
	unsigned nlibs;
	/* calls after which a stream's handle may be given to a new stream; NULL-terminated */
	const char *const *stream_destroy;
};

#define RUNTIME_REGISTER(r)                                                                    \
	static const struct runtime *const runtime_entry_##r                                   \
		__attribute__((used, section("topsprof_runtimes"), aligned(sizeof(void *)))) = \
			&(r)

/* the registered runtimes, in link order */
unsigned runtime_count(void);
const struct runtime *runtime_get(unsigned i);

#endif
