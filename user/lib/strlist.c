// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/strlist.h"

#include <string.h>

bool strlist_next(struct strlist_iter *it, const char **item, size_t *len)
{
	const char *comma;

	if (!it->next)
		return false;
	comma = strchr(it->next, ',');
	*item = it->next;
	if (comma) {
		*len = (size_t)(comma - it->next);
		it->next = comma + 1;
	} else {
		*len = strlen(it->next);
		it->next = NULL;
	}
	return true;
}
