/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The traced API, one row a function: its category, what the probes capture, and what its
 * arguments mean. Each runtime (runtime.h) gives the rows of its libraries; api_table is every
 * registered runtime's, in one index space (the probes' cookies, the events' fn). */
#ifndef TOPSPROF_APITABLE_H
#define TOPSPROF_APITABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"

enum api_domain {
	DOM_RUNTIME,
	DOM_TOPSTX
};

enum api_category {
	CAT_LAUNCH,
	CAT_MEMCPY,
	CAT_MEMSET,
	CAT_SYNC,
	CAT_ALLOC,
	CAT_OTHER
};

/* what a topstx call does to the timeline */
enum tx_op {
	TX_NONE,
	TX_PUSH,       /* push a range; arg: attributes (or the message, for PushA) */
	TX_POP,	       /* pop the innermost range */
	TX_START,      /* start a range; returns its id */
	TX_END,	       /* end the range whose id is an argument */
	TX_MARK,       /* an instant */
	TX_DOMAIN_NEW, /* returns a domain handle; arg 0 its name */
	TX_DOMAIN_DEL, /* arg 0: a domain */
	TX_DOMAIN_CAT, /* arg 0 domain, arg 1 category, arg 2 its name */
};

#define NO_ARG (-1)

struct runtime_lib;

struct api_fn {
	const char *name;
	enum api_category category;
	uint64_t capture;  /* API_CK_* flags beyond the function index */
	int8_t size_arg;   /* bytes (copies, memsets, allocations) */
	int8_t kind_arg;   /* topsMemcpyKind */
	int8_t stream_arg; /* topsStream_t; 6.. are stack arguments */
	int8_t func_arg;   /* kernel: host function or topsFunction_t */
	int8_t dev_arg;	   /* device ordinal */
	int8_t kind_fixed; /* the copy kind the function implies, or NO_ARG */
	enum tx_op tx;
	int8_t domain_arg; /* topstx: the domain handle, or NO_ARG for the default domain */
	int8_t id_arg;	   /* TX_END: the range id */
	/* filled in api_table from the runtime that gives the row */
	enum api_domain domain;
	const struct runtime_lib *lib;
	bool destroys_stream; /* its stream handle may be given to a new stream */
};

/* a runtime's row, in the order of struct api_fn's fields up to id_arg (the rest is filled in
 * api_table) */
#define API_ROW(fn, cat, cap, size, kind, stream, func, dev, fixed, txop, dom, id)                \
	{                                                                                         \
		.name = (fn), .category = (cat), .capture = (cap), .size_arg = (size),            \
		.kind_arg = (kind), .stream_arg = (stream), .func_arg = (func), .dev_arg = (dev), \
		.kind_fixed = (fixed), .tx = (txop), .domain_arg = (dom), .id_arg = (id)          \
	}

/* the most functions every runtime together may have (the model keeps statistics for each) */
#define API_MAX_FNS 256

extern const struct api_fn *const api_table;
extern unsigned api_table_len;

const char *api_category_name(enum api_category c);
/* what --trace and the files call a domain: "runtime", "topstx" */
const char *api_domain_name(enum api_domain d);
/* index of a function by name, or -1 */
int api_find(const char *name);

#endif
