// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/activity.h"
#include "gcu_readout.h"
#include <cJSON.h>
#include "lib/infile.h"
#include "lib/strlist.h"

#include <stdlib.h>
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
			char *name = strndup(item, len);

			snprintf(err, errlen, "unknown activity ");
			if (strlen(err) + 1 < errlen)
				quoted_errf(
					err + strlen(err), errlen - strlen(err), name ? name : list,
					" (known: Operator, Memcpy, Memcpy_cdte, Memcpy_sdte, all)");
			free(name);
			return -1;
		}
		m |= a->bit;
	}
	*mask = m;
	return 0;
}

unsigned activity_to_gcu(unsigned mask)
{
	return (mask & ACT_OPERATOR ? GCU_ACT_OPERATOR : 0) |
	       (mask & ACT_MEMCPY ? GCU_ACT_MEMCPY : 0) |
	       (mask & ACT_MEMCPY_CDTE ? GCU_ACT_CDTE : 0) |
	       (mask & ACT_MEMCPY_SDTE ? GCU_ACT_SDTE : 0);
}

/* {"type": "root", "children": [{"type": "category", "name": "User Activities", "children":
 *  [{"type": "activity", "name": "Memcpy", "isCheck": true, "description": "..."}, ...]}]} */
char *activity_export_json(unsigned mask)
{
	cJSON *root = cJSON_CreateObject(), *cat = cJSON_CreateObject(), *kids, *leaves;
	char *text = NULL;

	if (!root || !cat)
		goto out;
	cJSON_AddStringToObject(root, "type", "root");
	cJSON_AddStringToObject(root, "name", "topsprof activities");
	cJSON_AddNumberToObject(root, "version", 1);
	kids = cJSON_AddArrayToObject(root, "children");
	cJSON_AddStringToObject(cat, "type", "category");
	cJSON_AddStringToObject(cat, "name", "User Activities");
	leaves = cJSON_AddArrayToObject(cat, "children");
	cJSON_AddItemToArray(kids, cat);
	cat = NULL;
	for (size_t i = 0; leaves && i < activities_count; i++) {
		cJSON *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "type", "activity");
		cJSON_AddStringToObject(a, "name", activities[i].name);
		cJSON_AddBoolToObject(a, "isCheck", (mask & activities[i].bit) != 0);
		cJSON_AddStringToObject(a, "description", activities[i].what);
		cJSON_AddItemToArray(leaves, a);
	}
	text = cJSON_Print(root);
out:
	cJSON_Delete(cat);
	cJSON_Delete(root);
	return text;
}

static int walk(const cJSON *node, char *path, size_t plen, unsigned *mask, char *err,
		size_t errlen)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(node, "type");
	const cJSON *kids;
	size_t used = strlen(path);
	int i = 0;

	if (!cJSON_IsObject(node) || !cJSON_IsString(type)) {
		named_errf(err, errlen, path, ": a node needs a \"type\"");
		return -1;
	}
	if (!strcmp(type->valuestring, "activity")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(node, "name");
		const cJSON *check = cJSON_GetObjectItemCaseSensitive(node, "isCheck");
		const struct activity *a;

		if (!cJSON_IsString(name)) {
			named_errf(err, errlen, path, ".name: missing, or not a string");
			return -1;
		}
		a = activity_find(name->valuestring, strlen(name->valuestring));
		if (!a) {
			named_errf(err, errlen, path,
				   ".name: unknown activity '%.64s' (known: Operator, Memcpy, "
				   "Memcpy_cdte, Memcpy_sdte)",
				   name->valuestring);
			return -1;
		}
		if (!cJSON_IsBool(check)) {
			named_errf(err, errlen, path, ".isCheck: missing, or not true or false");
			return -1;
		}
		if (cJSON_IsTrue(check))
			*mask |= a->bit;
		return 0;
	}
	kids = cJSON_GetObjectItemCaseSensitive(node, "children");
	if (!kids)
		return 0;
	if (!cJSON_IsArray(kids)) {
		named_errf(err, errlen, path, ".children: not an array");
		return -1;
	}
	for (const cJSON *k = kids->child; k; k = k->next, i++) {
		snprintf(path + used, plen - used, ".children[%d]", i);
		if (walk(k, path, plen, mask, err, errlen))
			return -1;
	}
	path[used] = '\0';
	return 0;
}

int activity_import_json(const char *text, unsigned *mask, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
	char path[512] = "$";
	unsigned m = 0;
	int rc;

	if (!root) {
		int line = 1, col = 1;

		for (const char *p = text; end && p < end; p++, col++)
			if (*p == '\n')
				line++, col = 0;
		snprintf(err, errlen, "not valid JSON at line %d, column %d", line, col);
		return -1;
	}
	rc = walk(root, path, sizeof(path), &m, err, errlen);
	cJSON_Delete(root);
	if (!rc)
		*mask = m;
	return rc;
}

void activity_print_query(FILE *out)
{
	fputs("==== User Activities:\n    ", out);
	for (size_t i = 0; i < activities_count; i++)
		fprintf(out, "%s%s", i ? "," : "", activities[i].name);
	fputc('\n', out);
}
