/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Growing arrays: room for one more element. */
#ifndef TOPSPROF_GROW_H
#define TOPSPROF_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* make *arr (of *cap elements of elem bytes) hold want; false when out of memory */
static inline bool grow_array_to(void **arr, size_t *cap, size_t want, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (want <= *cap)
		return true;
	while (ncap < want)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

/* make *arr (of *cap elements of elem bytes, n used) hold n + 1; false when out of memory */
static inline bool grow_array(void **arr, size_t *cap, size_t n, size_t elem)
{
	return grow_array_to(arr, cap, n + 1, elem);
}

#endif
