// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* api_table: the rows of every registered runtime (runtime.h), one index space, built before
 * main() runs. */
#include "target/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the linker gathers every RUNTIME_REGISTER into this section, in link order (weak: a program
 * that links no runtime has none) */
extern const struct runtime *const __start_topsprof_runtimes[] __attribute__((weak));
extern const struct runtime *const __stop_topsprof_runtimes[] __attribute__((weak));

static struct api_fn table[API_MAX_FNS];
const struct api_fn *const api_table = table;
unsigned api_table_len;

unsigned runtime_count(void)
{
	return (unsigned)(__stop_topsprof_runtimes - __start_topsprof_runtimes);
}

const struct runtime *runtime_get(unsigned i)
{
	return i < runtime_count() ? __start_topsprof_runtimes[i] : NULL;
}

static bool listed(const char *const *names, const char *name)
{
	for (; names && *names; names++)
		if (!strcmp(*names, name))
			return true;
	return false;
}

__attribute__((constructor)) static void api_table_build(void)
{
	for (unsigned r = 0; r < runtime_count(); r++) {
		const struct runtime *rt = runtime_get(r);

		for (unsigned l = 0; l < rt->nlibs; l++) {
			const struct runtime_lib *lib = &rt->libs[l];

			for (unsigned f = 0; f < lib->nfns; f++) {
				struct api_fn *row = &table[api_table_len];

				if (api_table_len == API_MAX_FNS ||
				    api_find(lib->fns[f].name) >= 0) {
					/* a build error, not a user's: say it and stop */
					fprintf(stderr, "topsprof: runtime %s: %s %s\n", rt->name,
						lib->fns[f].name,
						api_table_len == API_MAX_FNS ? "is past API_MAX_FNS"
									     : "is defined twice");
					abort();
				}
				*row = lib->fns[f];
				row->domain = lib->domain;
				row->lib = lib;
				row->destroys_stream = listed(rt->stream_destroy, row->name);
				api_table_len++;
			}
		}
	}
}

const char *api_category_name(enum api_category c)
{
	static const char *const names[] = {
		"launch", "memcpy", "memset", "sync", "alloc", "other"
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *api_domain_name(enum api_domain d)
{
	return d == DOM_TOPSTX ? "topstx" : "runtime";
}

int api_find(const char *name)
{
	for (unsigned i = 0; i < api_table_len; i++)
		if (!strcmp(api_table[i].name, name))
			return (int)i;
	return -1;
}
