/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Lookups in arrays sorted by a 64-bit address. */
#ifndef TOPSPROF_BSEARCH_H
#define TOPSPROF_BSEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many of the n elements (elem bytes each, sorted by the uint64_t at offset key_off) have a
 * key at or below key: the one holding key, if any, is the one before that index. */
static inline size_t count_at_or_below(const void *base, size_t n, size_t elem, size_t key_off,
				       uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * elem + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
