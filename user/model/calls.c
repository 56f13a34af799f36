// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/calls.h"
#include "lib/varint.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* one call: 32 bytes. A field that does not fit holds its escape value and the whole value is in
 * the chunk's pool, at extra (NO_EXTRA: nothing there) */
struct call_rec {
	uint64_t start_ns;
	uint32_t dur;	  /* end_ns - start_ns; DUR_ESC: in the pool */
	uint32_t thread;  /* index into the (pid, tid) table */
	int32_t ret;	  /* RET_ESC: in the pool */
	uint32_t extra;	  /* offset of the packed extras in the chunk's pool, or NO_EXTRA */
	uint32_t call_id; /* low half; the high half in the pool when not 0 */
	uint16_t fn;
	uint16_t flags; /* FLAGS_ESC: in the pool */
};

_Static_assert(sizeof(struct call_rec) == 32, "a call record is 32 bytes");

#define DUR_ESC	  UINT32_MAX
#define RET_ESC	  INT32_MIN
#define FLAGS_ESC UINT16_MAX
#define NO_EXTRA  UINT32_MAX

/* the pool's header byte: what follows, in this order */
enum {
	X_DUR = 1 << 0,	    /* varint duration */
	X_RET = 1 << 1,	    /* zigzag varint return value */
	X_FLAGS = 1 << 2,   /* varint flags */
	X_CALL_HI = 1 << 3, /* varint call_id >> 32 */
	X_ARGS = 1 << 4,    /* varint mask of the non-zero arguments, then each as a varint */
	X_ATTR = 1 << 5,    /* the attribute bytes */
	X_STR0 = 1 << 6,    /* string 0: varint id + 1 (0: none), varint len, truncated byte */
	X_STR1 = 1 << 7,
};

#define NARGS (API_REG_ARGS + API_STACK_ARGS)
/* the header, the numbers and the attributes, at most (strings: 2 varints and a byte each) */
#define EXTRA_MAX \
	(1 + 5 * VARINT_MAX + NARGS * VARINT_MAX + API_ATTR_SIZE + 2 * (2 * VARINT_MAX + 1))

struct calls_chunk {
	struct call_rec rec[CALLS_CHUNK];
	unsigned char *pool;
	size_t pool_len, pool_cap;
};

struct calls_string {
	char *s;	    /* size + 1 bytes, NUL-terminated */
	uint32_t len, size; /* the length as given; the bytes kept (len, or more to its NUL) */
	uint64_t hash;
};

void calls_init(struct call_store *s)
{
	memset(s, 0, sizeof(*s));
}

void calls_free(struct call_store *s)
{
	for (size_t i = 0; i < s->nchunks; i++) {
		free(s->chunks[i]->pool);
		munmap(s->chunks[i], sizeof(*s->chunks[i]));
	}
	for (uint32_t i = 0; i < s->nstrs; i++)
		free(s->strs[i].s);
	free(s->chunks);
	free(s->threads);
	idindex_free(&s->thread_index);
	free(s->strs);
	idindex_free(&s->str_index);
	calls_init(s);
}

static uint64_t bytes_hash(const char *p, size_t n, uint32_t len)
{
	return hash_mix64(hash_fnv1a(HASH_FNV_BASIS ^ len, p, n));
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return hash_mix64(((uint64_t)pid << 32 | tid) + 1);
}

static uint64_t thread_key_of(const void *ctx, uint32_t i)
{
	const struct call_store *s = ctx;

	return thread_key(s->threads[i].pid, s->threads[i].tid);
}

static uint64_t str_key_of(const void *ctx, uint32_t i)
{
	return ((const struct call_store *)ctx)->strs[i].hash;
}

/* the index of (pid, tid), added when new; -1 when out of memory */
static int64_t thread_id(struct call_store *s, uint32_t pid, uint32_t tid)
{
	uint32_t j;

	if (!idindex_room(&s->thread_index, s->nthreads, thread_key_of, s))
		return -1;
	for (j = idindex_first(&s->thread_index, thread_key(pid, tid)); s->thread_index.slot[j];
	     j = idindex_next(&s->thread_index, j)) {
		uint32_t i = s->thread_index.slot[j] - 1;

		if (s->threads[i].pid == pid && s->threads[i].tid == tid)
			return i;
	}
	if (s->nthreads == s->threads_cap) {
		uint32_t ncap = s->threads_cap ? s->threads_cap * 2 : 64;
		void *p = realloc(s->threads, ncap * sizeof(*s->threads));

		if (!p)
			return -1;
		s->threads = p;
		s->threads_cap = ncap;
	}
	s->threads[s->nthreads].pid = pid;
	s->threads[s->nthreads].tid = tid;
	s->thread_index.slot[j] = s->nthreads + 1;
	return s->nthreads++;
}

/* the id of the string (str, len), added when new; -1 when out of memory */
static int64_t str_id(struct call_store *s, const char *str, uint32_t len)
{
	size_t size;
	uint64_t h;
	uint32_t j;

	/* the bytes to the first NUL at or after len: what a reader of str[] or of str_len sees */
	size = len + strlen(str + len);
	h = bytes_hash(str, size, len);
	if (!idindex_room(&s->str_index, s->nstrs, str_key_of, s))
		return -1;
	for (j = idindex_first(&s->str_index, h); s->str_index.slot[j];
	     j = idindex_next(&s->str_index, j)) {
		const struct calls_string *e = &s->strs[s->str_index.slot[j] - 1];

		if (e->hash == h && e->len == len && e->size == size && !memcmp(e->s, str, size))
			return s->str_index.slot[j] - 1;
	}
	if (s->nstrs == s->strs_cap) {
		uint32_t ncap = s->strs_cap ? s->strs_cap * 2 : 64;
		void *p = realloc(s->strs, ncap * sizeof(*s->strs));

		if (!p)
			return -1;
		s->strs = p;
		s->strs_cap = ncap;
	}
	{
		struct calls_string *e = &s->strs[s->nstrs];

		e->s = malloc(size + 1);
		if (!e->s)
			return -1;
		memcpy(e->s, str, size);
		e->s[size] = '\0';
		e->len = len;
		e->size = (uint32_t)size;
		e->hash = h;
		s->str_bytes += size + 1;
	}
	s->str_index.slot[j] = s->nstrs + 1;
	return s->nstrs++;
}

static struct calls_chunk *chunk_for_next(struct call_store *s)
{
	struct calls_chunk *c, *last = s->nchunks ? s->chunks[s->nchunks - 1] : NULL;
	size_t pool_cap = 0;

	if (s->n < s->nchunks * CALLS_CHUNK)
		return last;
	if (last && last->pool_len < last->pool_cap) { /* full: its pool takes no more */
		unsigned char *p = realloc(last->pool, last->pool_len);

		if (p) {
			last->pool = p;
			last->pool_cap = last->pool_len;
		}
	}
	if (s->nchunks == s->chunks_cap) {
		size_t ncap = s->chunks_cap ? s->chunks_cap * 2 : 16;
		void *p = realloc(s->chunks, ncap * sizeof(*s->chunks));

		if (!p)
			return NULL;
		s->chunks = p;
		s->chunks_cap = ncap;
	}
	/* the records' pages at once (one call, not a fault a page: a fault costs microseconds
	 * in a PVM guest) */
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	/* a pool the size of the last one's, so that it seldom grows */
	if (last && last->pool_len)
		pool_cap = last->pool_len + last->pool_len / 16;
	c->pool = pool_cap ? malloc(pool_cap) : NULL;
	c->pool_len = 0;
	c->pool_cap = c->pool ? pool_cap : 0;
	s->chunks[s->nchunks++] = c;
	return c;
}

static bool pool_room(struct calls_chunk *c, size_t more)
{
	size_t ncap;
	unsigned char *p;

	if (c->pool_len + more <= c->pool_cap)
		return true;
	ncap = c->pool_cap ? c->pool_cap + c->pool_cap / 2 : 4096;
	while (ncap < c->pool_len + more)
		ncap *= 2;
	p = realloc(c->pool, ncap);
	if (!p)
		return false;
	c->pool = p;
	c->pool_cap = ncap;
	return true;
}

bool calls_add(struct call_store *s, const struct api_call *c)
{
	unsigned char x[EXTRA_MAX], *p = x + 1;
	uint64_t dur = c->end_ns - c->start_ns;
	uint32_t mask = 0;
	struct calls_chunk *ch = chunk_for_next(s);
	struct call_rec *r;
	int64_t t = ch ? thread_id(s, c->pid, c->tid) : -1;
	static const uint8_t zero[API_ATTR_SIZE];

	if (t < 0 || c->fn > UINT16_MAX)
		return false;
	x[0] = 0;
	r = &ch->rec[s->n % CALLS_CHUNK];
	r->start_ns = c->start_ns;
	r->thread = (uint32_t)t;
	r->fn = (uint16_t)c->fn;
	r->call_id = (uint32_t)c->call_id;
	if (dur >= DUR_ESC) {
		x[0] |= X_DUR;
		p += varint_put(p, dur);
	}
	r->dur = dur >= DUR_ESC ? DUR_ESC : (uint32_t)dur;
	if (c->ret <= RET_ESC || c->ret > INT32_MAX) {
		x[0] |= X_RET;
		p += varint_put(p, zigzag(c->ret));
	}
	r->ret = c->ret <= RET_ESC || c->ret > INT32_MAX ? RET_ESC : (int32_t)c->ret;
	if (c->flags >= FLAGS_ESC) {
		x[0] |= X_FLAGS;
		p += varint_put(p, c->flags);
	}
	r->flags = c->flags >= FLAGS_ESC ? FLAGS_ESC : (uint16_t)c->flags;
	if (c->call_id >> 32) {
		x[0] |= X_CALL_HI;
		p += varint_put(p, c->call_id >> 32);
	}
	for (int a = 0; a < NARGS; a++)
		mask |= (uint32_t)(c->args[a] != 0) << a;
	if (mask) {
		x[0] |= X_ARGS;
		p += varint_put(p, mask);
		for (int a = 0; a < NARGS; a++)
			if (c->args[a])
				p += varint_put(p, c->args[a]);
	}
	if (memcmp(c->attr, zero, sizeof(zero))) {
		x[0] |= X_ATTR;
		memcpy(p, c->attr, sizeof(zero));
		p += sizeof(zero);
	}
	for (int k = 0; k < 2; k++) {
		int64_t id = -1;

		if (!c->str[k] && !c->str_len[k] && !c->truncated[k])
			continue;
		if (c->str[k] && (id = str_id(s, c->str[k], c->str_len[k])) < 0)
			return false;
		x[0] |= k ? X_STR1 : X_STR0;
		p += varint_put(p, (uint64_t)(id + 1));
		p += varint_put(p, c->str_len[k]);
		*p++ = c->truncated[k];
	}
	if (!x[0]) {
		r->extra = NO_EXTRA;
	} else {
		if (ch->pool_len >= NO_EXTRA || !pool_room(ch, (size_t)(p - x)))
			return false;
		r->extra = (uint32_t)ch->pool_len;
		memcpy(ch->pool + ch->pool_len, x, (size_t)(p - x));
		ch->pool_len += (size_t)(p - x);
	}
	s->n++;
	return true;
}

/* the store wrote it: every number is whole */
static inline uint64_t take(const unsigned char **p)
{
	uint64_t v = 0;

	if (**p < 0x80)
		return *(*p)++;
	varint_get(p, *p + VARINT_MAX, &v);
	return v;
}

void calls_get(const struct call_store *s, size_t i, struct api_call *c)
{
	const struct calls_chunk *ch = s->chunks[i / CALLS_CHUNK];
	const struct call_rec *r = &ch->rec[i % CALLS_CHUNK];
	const unsigned char *p;
	unsigned x;

	memset(c, 0, sizeof(*c));
	c->start_ns = r->start_ns;
	c->end_ns = r->start_ns + r->dur;
	c->pid = s->threads[r->thread].pid;
	c->tid = s->threads[r->thread].tid;
	c->fn = r->fn;
	c->call_id = r->call_id;
	c->ret = r->ret;
	c->flags = r->flags;
	if (r->extra == NO_EXTRA)
		return;
	p = ch->pool + r->extra;
	x = *p++;
	if (x & X_DUR)
		c->end_ns = r->start_ns + take(&p);
	if (x & X_RET)
		c->ret = unzigzag(take(&p));
	if (x & X_FLAGS)
		c->flags = (uint32_t)take(&p);
	if (x & X_CALL_HI)
		c->call_id |= take(&p) << 32;
	if (x & X_ARGS) {
		uint64_t mask = take(&p);

		for (int a = 0; a < NARGS; a++)
			if (mask & (1u << a))
				c->args[a] = take(&p);
	}
	if (x & X_ATTR) {
		memcpy(c->attr, p, sizeof(c->attr));
		p += sizeof(c->attr);
	}
	for (int k = 0; k < 2; k++) {
		uint64_t id;

		if (!(x & (k ? X_STR1 : X_STR0)))
			continue;
		id = take(&p);
		c->str[k] = id ? s->strs[id - 1].s : NULL;
		c->str_len[k] = (uint32_t)take(&p);
		c->truncated[k] = *p++ != 0;
	}
}

static const struct call_rec *rec_of(const struct call_store *s, size_t i)
{
	return &s->chunks[i / CALLS_CHUNK]->rec[i % CALLS_CHUNK];
}

uint64_t calls_start_ns(const struct call_store *s, size_t i)
{
	return rec_of(s, i)->start_ns;
}

uint64_t calls_duration(const struct call_store *s, size_t i)
{
	const struct calls_chunk *ch = s->chunks[i / CALLS_CHUNK];
	const struct call_rec *r = &ch->rec[i % CALLS_CHUNK];
	const unsigned char *p;

	if (r->dur != DUR_ESC)
		return r->dur;
	p = ch->pool + r->extra;
	return *p++ & X_DUR ? take(&p) : r->dur;
}

uint32_t calls_fn(const struct call_store *s, size_t i)
{
	return rec_of(s, i)->fn;
}

void calls_thread(const struct call_store *s, size_t i, uint32_t *pid, uint32_t *tid)
{
	const struct call_rec *r = rec_of(s, i);

	*pid = s->threads[r->thread].pid;
	*tid = s->threads[r->thread].tid;
}

size_t calls_bytes(const struct call_store *s)
{
	size_t b = s->chunks_cap * sizeof(*s->chunks) + s->threads_cap * sizeof(*s->threads) +
		   s->thread_index.cap * sizeof(*s->thread_index.slot) +
		   s->strs_cap * sizeof(*s->strs) + s->str_index.cap * sizeof(*s->str_index.slot) +
		   s->str_bytes;

	/* every chunk's records are held (mapped and populated), written or not */
	for (size_t i = 0; i < s->nchunks; i++)
		b += sizeof(*s->chunks[i]) + s->chunks[i]->pool_cap;
	return b;
}
