/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What a run probes: the program and, for every registered runtime (runtime/), its libraries as
 * the profiled program will load them; for an attached process, the ones it has mapped or would
 * load; for the whole host, the ones running processes have mapped or the loader would find. */
#ifndef TOPSPROF_DISCOVER_H
#define TOPSPROF_DISCOVER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "target/findlib.h"
#include "target/runtime/runtime.h"

#define DISCOVER_MAX_LIBS 32

enum discover_mode {
	DISCOVER_LAUNCH, /* the program that argv0 runs */
	DISCOVER_ATTACH, /* a running process */
	DISCOVER_HOST,	 /* every process */
};

struct discover_req {
	enum discover_mode mode;
	const char *argv0;	 /* DISCOVER_LAUNCH */
	pid_t pid;		 /* DISCOVER_ATTACH */
	const char *runtime_lib; /* --runtime-lib: this file is the runtime, or NULL */
	bool want_runtime;	 /* --trace runtime: its calls are to be traced */
	bool runtime_optional;	 /* a sampler runs too: no runtime found is said, not an error */
};

struct found_lib {
	const struct runtime *rt;
	const struct runtime_lib *lib;
	struct findlib_target t; /* t.path[0] == '\0': not found */
};

struct discovery {
	char exe[PATH_MAX];
	unsigned n;
	struct found_lib libs[DISCOVER_MAX_LIBS]; /* every runtime's libraries, in table order */
};

/* 0, or 1 after one error line */
int discover(struct discovery *d, const struct discover_req *q);

#endif
