// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Live handles, so that a stale or made-up handle is an error return and never a crash. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

struct set {
	const void **slot; /* open addressing; NULL empty, TOMB deleted */
	size_t cap, used;
};

static const char tomb_mark;
#define TOMB ((const void *)&tomb_mark)

static struct set sets[H__COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t hash_ptr(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static size_t find_slot(const struct set *s, const void *p)
{
	size_t i = hash_ptr(p, s->cap);

	while (s->slot[i] && s->slot[i] != p)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int grow(struct set *s)
{
	struct set n = { .cap = s->cap ? s->cap * 2 : 64 };

	n.slot = calloc(n.cap, sizeof(*n.slot));
	if (!n.slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (s->slot[i] && s->slot[i] != TOMB) {
			n.slot[find_slot(&n, s->slot[i])] = s->slot[i];
			n.used++;
		}
	}
	free(s->slot);
	*s = n;
	return 0;
}

int handle_add(enum handle_kind k, const void *p)
{
	struct set *s = &sets[k];
	int err = 0;

	pthread_mutex_lock(&lock);
	if ((s->used + 1) * 2 > s->cap)
		err = grow(s);
	if (!err && s->slot[find_slot(s, p)] != p) {
		size_t i = hash_ptr(p, s->cap);

		while (s->slot[i] && s->slot[i] != TOMB)
			i = (i + 1) & (s->cap - 1);
		if (!s->slot[i])
			s->used++;
		s->slot[i] = p;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

bool handle_del(enum handle_kind k, const void *p)
{
	struct set *s = &sets[k];
	bool found = false;

	pthread_mutex_lock(&lock);
	if (s->cap) {
		size_t i = find_slot(s, p);

		if (s->slot[i] == p) {
			s->slot[i] = TOMB;
			found = true;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

bool handle_has(enum handle_kind k, const void *p)
{
	struct set *s = &sets[k];
	bool found = false;

	pthread_mutex_lock(&lock);
	if (s->cap && p)
		found = s->slot[find_slot(s, p)] == p;
	pthread_mutex_unlock(&lock);
	return found;
}
