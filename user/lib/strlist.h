/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Walk a comma-separated list in place, without copying: "a,b,,c" yields a, b, "", c. */
#ifndef TOPSPROF_STRLIST_H
#define TOPSPROF_STRLIST_H

#include <stdbool.h>
#include <stddef.h>

struct strlist_iter {
	const char *next;
};

static inline void strlist_init(struct strlist_iter *it, const char *list)
{
	it->next = list;
}

/* the next item (not NUL-terminated) and its length; false at the end */
bool strlist_next(struct strlist_iter *it, const char **item, size_t *len);

#endif
