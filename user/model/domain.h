/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The trace domains topsprof knows (manual 2.2, 4.3), as one table. */
#ifndef TOPSPROF_DOMAIN_H
#define TOPSPROF_DOMAIN_H

#include <stddef.h>
#include <stdio.h>

/* trace domains known to topsprof (manual 2.2, 4.3) */
enum trace_domain {
	TRACE_RUNTIME = 1u << 0,
	TRACE_TOPSTX = 1u << 1,
	TRACE_TOPSPROFILER = 1u << 2,
};

struct trace_domain_def {
	const char *name;
	enum trace_domain bit;
	const char *what;
};

extern const struct trace_domain_def trace_domains[];
extern const size_t trace_domains_count;

#define TRACE_DEFAULT (TRACE_TOPSTX | TRACE_RUNTIME)

/* Parse "runtime,topstx" (any case). Names topsprof does not know are not an error (users pass
 * framework domains such as torch_gcu): they are listed, comma-separated, in unknown.
 * Returns -1 with the reason in err on an empty name. */
int trace_domain_parse_list(const char *list, unsigned *mask, char *unknown, size_t unknown_len,
			    char *err, size_t errlen);

/* --query-trace: the domains topsprof knows, and the custom topstx domains an application
 * created (custom may be NULL) */
void trace_domain_print_query(FILE *out, const char *const *custom, size_t ncustom);

#endif
