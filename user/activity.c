// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "activity.h"
#include "strlist.h"

#include <string.h>
#include <strings.h>

/* alphabetical: --query-activities lists them in this order, as the manual does */
const struct activity activities[] = {
	{ "Memcpy", ACT_MEMCPY, "ODTE copies (host to device, device to host, device to device)" },
	{ "Memcpy_cdte", ACT_MEMCPY_CDTE, "CDTE data moves inside kernels (needs profile meta)" },
	{ "Memcpy_sdte", ACT_MEMCPY_SDTE, "SDTE data moves inside kernels (needs profile meta)" },
	{ "Operator", ACT_OPERATOR, "GCU kernel executions" },
};
const size_t activities_count = sizeof(activities) / sizeof(activities[0]);

static const struct activity *activity_find(const char *name, size_t len)
{
	for (size_t i = 0; i < activities_count; i++)
		if (strlen(activities[i].name) == len &&
		    !strncasecmp(activities[i].name, name, len))
			return &activities[i];
	return NULL;
}

int activity_parse_list(const char *list, unsigned *mask, char *err, size_t errlen)
{
	struct strlist_iter it;
	const char *item;
	size_t len;
	unsigned m = 0;

	strlist_init(&it, list);
	while (strlist_next(&it, &item, &len)) {
		const struct activity *a;

		if (!len) {
			snprintf(err, errlen, "empty activity name in '%s'", list);
			return -1;
		}
		if (len == 3 && !strncasecmp(item, "all", 3)) {
			m |= ACT_ALL;
			continue;
		}
		a = activity_find(item, len);
		if (!a) {
			snprintf(err, errlen,
				 "unknown activity '%.*s' (known: Operator, Memcpy, Memcpy_cdte, "
				 "Memcpy_sdte, all)",
				 (int)len, item);
			return -1;
		}
		m |= a->bit;
	}
	*mask = m;
	return 0;
}

void activity_print_query(FILE *out)
{
	fputs("==== User Activities:\n    ", out);
	for (size_t i = 0; i < activities_count; i++)
		fprintf(out, "%s%s", i ? "," : "", activities[i].name);
	fputc('\n', out);
}
