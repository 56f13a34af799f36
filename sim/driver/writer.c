// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The simulated device's side of the driver's region (user/gcu/region.h): it appends records to
 * the ring and names to the name table; profilers read them with user/gcu/readout.c. */
#include "writer.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define PUSH_TRIES 100000 /* writers racing for a slot: far more than any real contention */

/* the position of the slowest reader still reading, or head when nobody reads */
static uint64_t min_tail(const struct gcu_region_hdr *h, uint64_t head)
{
	uint64_t t = head, now = gcu_host_ns();

	for (int i = 0; i < GCU_MAX_READERS; i++) {
		const struct gcu_reader_slot *s = &h->readers[i];

		if (__atomic_load_n(&s->pid, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&s->enabled, __ATOMIC_ACQUIRE) &&
		    now - __atomic_load_n(&s->alive_ns, __ATOMIC_RELAXED) < READER_QUIET_NS) {
			uint64_t st = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);

			if (st < t)
				t = st;
		}
	}
	return t;
}

static void count_for_readers(struct gcu_region_hdr *h, size_t field)
{
	for (int i = 0; i < GCU_MAX_READERS; i++) {
		struct gcu_reader_slot *s = &h->readers[i];

		if (__atomic_load_n(&s->pid, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&s->enabled, __ATOMIC_RELAXED))
			__atomic_fetch_add((uint64_t *)((char *)s + field), 1, __ATOMIC_RELAXED);
	}
}

int gcu_ring_push(struct gcu_region *r, const struct gcu_record *rec)
{
	struct gcu_region_hdr *h = r->hdr;
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	struct gcu_record *slot;
	unsigned tries = 0;

	/* (a bounded number of tries: head is in memory every user maps, and the kernel driver
	 * runs this too) */
	do {
		if (head - min_tail(h, head) >= r->ring_capacity || ++tries > PUSH_TRIES) {
			count_for_readers(h, offsetof(struct gcu_reader_slot, overflow));
			return -ENOSPC;
		}
	} while (!__atomic_compare_exchange_n(&h->head, &head, head + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	slot = &r->ring[head % r->ring_capacity];
	memcpy((char *)slot + sizeof(slot->seq), (const char *)rec + sizeof(rec->seq),
	       sizeof(*rec) - sizeof(rec->seq));
	__atomic_store_n(&slot->seq, head + 1, __ATOMIC_RELEASE);
	count_for_readers(h, offsetof(struct gcu_reader_slot, written));
	return 0;
}

static uint32_t hash_name(const char *s, size_t len)
{
	uint32_t x = 2166136261u;

	for (size_t i = 0; i < len; i++)
		x = (x ^ (unsigned char)s[i]) * 16777619u;
	return x;
}

static uint32_t names_find(const struct gcu_region *r, const char *name, size_t len, uint32_t hash)
{
	const struct gcu_region_hdr *h = r->hdr;
	uint32_t n = __atomic_load_n(&h->names_next, __ATOMIC_ACQUIRE);

	if (n > r->names_capacity)
		n = r->names_capacity;
	for (uint32_t i = 0; i < n; i++) {
		const struct gcu_name_entry *e = &r->names[i];

		uint32_t off = __atomic_load_n(&e->offset, __ATOMIC_RELAXED);

		if (!__atomic_load_n(&e->committed, __ATOMIC_ACQUIRE) || e->hash != hash ||
		    e->len != len)
			continue;
		/* the table is in memory every user maps (and the kernel driver runs this too):
		 * an entry is looked at only where it lies in the heap */
		if (off > r->heap_size || len > r->heap_size - off)
			continue;
		if (!memcmp(r->heap + off, name, len))
			return i + 1;
	}
	return 0;
}

uint32_t gcu_names_add(struct gcu_region *r, const char *name)
{
	struct gcu_region_hdr *h = r->hdr;
	size_t len = strnlen(name, GCU_NAME_MAX);
	uint32_t hash = hash_name(name, len), idx, off, id;
	struct gcu_name_entry *e;

	id = names_find(r, name, len, hash);
	if (id)
		return id;
	idx = __atomic_fetch_add(&h->names_next, 1, __ATOMIC_ACQ_REL);
	if (idx >= r->names_capacity)
		return 0;
	off = __atomic_fetch_add(&h->heap_next, (uint32_t)len + 1, __ATOMIC_ACQ_REL);
	if ((uint64_t)off + len + 1 > r->heap_size)
		return 0;
	memcpy(r->heap + off, name, len);
	r->heap[off + len] = '\0';
	e = &r->names[idx];
	e->offset = off;
	e->len = (uint32_t)len;
	e->hash = hash;
	__atomic_store_n(&e->committed, 1, __ATOMIC_RELEASE);
	return idx + 1;
}
