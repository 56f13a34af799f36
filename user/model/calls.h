/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The calls kept when an output needs every call (issue 14): 32-byte fixed records in chunks of
 * CALLS_CHUNK (allocated as needed: no huge array reallocated, nothing copied), the rare or wide
 * parts (arguments, attributes, strings, values too large for their field) packed in a byte
 * pool per chunk, (pid, tid) pairs and strings interned (each stored once). A call is read back
 * whole into a struct api_call; its strings point into the store (valid until calls_free). */
#ifndef TOPSPROF_CALLS_H
#define TOPSPROF_CALLS_H

#include "lib/hash.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/runtime/apitable.h"

#define CALLS_CHUNK 65536

struct api_call {
	uint64_t call_id;
	uint32_t fn, pid, tid, flags;
	uint64_t start_ns, end_ns;
	int64_t ret;
	uint64_t args[API_REG_ARGS + API_STACK_ARGS]; /* registers, then stack */
	uint8_t attr[API_ATTR_SIZE];
	char *str[2]; /* message or name; payload */
	uint32_t str_len[2];
	bool truncated[2];
};

struct calls_chunk;
struct calls_string;

struct call_store {
	struct calls_chunk **chunks;
	size_t nchunks, chunks_cap;
	size_t n; /* calls kept */
	/* interned (pid, tid) pairs: index -> pair, and an index of them by hash */
	struct {
		uint32_t pid, tid;
	} * threads;
	uint32_t nthreads, threads_cap;
	struct idindex thread_index;
	/* interned strings: id -> string, and an index of them by hash */
	struct calls_string *strs;
	uint32_t nstrs, strs_cap;
	struct idindex str_index;
	size_t str_bytes;
};

void calls_init(struct call_store *s);
void calls_free(struct call_store *s); /* also empties it, ready for use */

/* keep a copy of c (its strings interned, the caller keeps its own); false when out of memory
 * (or c->fn does not fit 16 bits: no API table is that long) */
bool calls_add(struct call_store *s, const struct api_call *c);

/* call i (< s->n) into *c */
void calls_get(const struct call_store *s, size_t i, struct api_call *c);

/* parts of call i, read without unpacking the rest (for sorting and scanning) */
uint64_t calls_start_ns(const struct call_store *s, size_t i);
uint64_t calls_duration(const struct call_store *s, size_t i); /* end_ns - start_ns */
uint32_t calls_fn(const struct call_store *s, size_t i);
void calls_thread(const struct call_store *s, size_t i, uint32_t *pid, uint32_t *tid);

/* the bytes the store holds (records, pools, tables, strings) */
size_t calls_bytes(const struct call_store *s);

#endif
