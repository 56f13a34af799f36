// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/domain.h"
#include "lib/strlist.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct trace_domain_def trace_domains[] = {
	{ "runtime", TRACE_RUNTIME, "TopsRT API calls (libtopsrt.so)" },
	{ "topstx", TRACE_TOPSTX, "topstx ranges, marks and domains (libtopstx.so)" },
	{ "topsprofiler", TRACE_TOPSPROFILER, "the profiler's own activity" },
};
const size_t trace_domains_count = sizeof(trace_domains) / sizeof(trace_domains[0]);

int trace_domain_parse_list(const char *list, unsigned *mask, char *unknown, size_t unknown_len,
			    char *err, size_t errlen)
{
	struct strlist_iter it;
	const char *item;
	size_t len, used = 0;
	unsigned m = 0;

	if (unknown_len)
		unknown[0] = '\0';
	strlist_init(&it, list);
	while (strlist_next(&it, &item, &len)) {
		size_t i;

		if (!len) {
			snprintf(err, errlen, "empty domain name in '%s'", list);
			return -1;
		}
		for (i = 0; i < trace_domains_count; i++)
			if (strlen(trace_domains[i].name) == len &&
			    !strncasecmp(trace_domains[i].name, item, len))
				break;
		if (i < trace_domains_count) {
			m |= trace_domains[i].bit;
		} else if (used < unknown_len) {
			int n = snprintf(unknown + used, unknown_len - used, "%s%.*s",
					 used ? "," : "", (int)len, item);
			used += n > 0 ? (size_t)n : 0;
		}
	}
	*mask = m;
	return 0;
}

void trace_domain_print_query(FILE *out, const char *const *custom, size_t ncustom)
{
	fputs("==== Trace Domains:\n    ", out);
	for (size_t i = 0; i < trace_domains_count; i++)
		fprintf(out, "%s%s", i ? "," : "", trace_domains[i].name);
	fputc('\n', out);
	if (!custom)
		return;
	fputs("==== Custom topstx Domains:\n    ", out);
	for (size_t i = 0; i < ncustom; i++)
		fprintf(out, "%s%s", i ? "," : "", custom[i]);
	fputs(ncustom ? "\n" : "(none)\n", out);
}
