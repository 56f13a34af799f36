/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Hashing for in-memory tables, and an index of ids by hash: a table of ids + 1 (0: empty) of a
 * power of two slots, probed linearly, rebuilt twice as large when it would be half full. The
 * ids are the caller's (indices into its own array); the index only finds them. */
#ifndef TOPSPROF_HASH_H
#define TOPSPROF_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HASH_FNV_BASIS 0xcbf29ce484222325ull

/* FNV-1a over n bytes, from h (HASH_FNV_BASIS to begin) */
static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* a 64-bit value's bits spread over all of the result's (MurmurHash3's finalizer, in part) */
static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

struct idindex {
	uint32_t *slot; /* id + 1; 0: empty */
	uint32_t cap;	/* a power of two, or 0 */
};

/* Room for one id more than the n there are (ids 0 .. n-1, each hashed by key(ctx, id)), the
 * index rebuilt twice as large when it would be half full; false when out of memory. */
static inline bool idindex_room(struct idindex *x, uint32_t n,
				uint64_t (*key)(const void *ctx, uint32_t id), const void *ctx)
{
	uint32_t ncap = x->cap ? x->cap * 2 : 256, *t;

	if ((uint64_t)(n + 1) * 2 <= x->cap)
		return true;
	t = calloc(ncap, sizeof(*t));
	if (!t)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)key(ctx, i) & (ncap - 1);

		while (t[j])
			j = (j + 1) & (ncap - 1);
		t[j] = i + 1;
	}
	free(x->slot);
	x->slot = t;
	x->cap = ncap;
	return true;
}

/* The probe for hash h: for (j = idindex_first(x, h); x->slot[j]; j = idindex_next(x, j)) looks
 * at id x->slot[j] - 1; where it stops, x->slot[j] = id + 1 adds one (after idindex_room). */
static inline uint32_t idindex_first(const struct idindex *x, uint64_t h)
{
	return (uint32_t)h & (x->cap - 1);
}

static inline uint32_t idindex_next(const struct idindex *x, uint32_t j)
{
	return (j + 1) & (x->cap - 1);
}

/* every id gone, the slots kept */
static inline void idindex_clear(struct idindex *x)
{
	if (x->slot)
		memset(x->slot, 0, x->cap * sizeof(*x->slot));
}

static inline void idindex_free(struct idindex *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = 0;
}

#endif
