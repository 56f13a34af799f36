// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/store.h"
#include "lib/grow.h"
#include "lib/infile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER_SIZE 32
#define MAX_PAYLOAD (1ull << 32) /* 4 GiB uncompressed at most */
#define NO_STRING   0xffffffffu

#define TAG(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
enum {
	SEC_META = TAG('M', 'E', 'T', 'A'),
	SEC_STAT = TAG('S', 'T', 'A', 'T'),
	SEC_CALL = TAG('C', 'A', 'L', 'L'),
	SEC_RNGE = TAG('R', 'N', 'G', 'E'),
	SEC_MARK = TAG('M', 'A', 'R', 'K'),
	SEC_PROC = TAG('P', 'R', 'O', 'C'),
	SEC_DEVS = TAG('D', 'E', 'V', 'S'),
	SEC_GOPS = TAG('G', 'O', 'P', 'S'),
	SEC_CPUS = TAG('C', 'P', 'U', 'S'), /* 1.1: CPU call stacks */
	SEC_UTIL = TAG('U', 'T', 'I', 'L'), /* 1.1: utilization series */
	SEC_KERN = TAG('K', 'E', 'R', 'N'), /* 1.1: kernel callstacks */
	SEC_STRS = TAG('S', 'T', 'R', 'S'), /* 1.2: topstx strings the probe could not read */
	SEC_KCNT = TAG('K', 'C', 'N', 'T'), /* 2.0: kernel callstacks' later counters */
	SEC_CEND = TAG('C', 'E', 'N', 'D'), /* 2.1: where the unwound CPU stacks end */
	SEC_END = TAG('E', 'N', 'D', ' '),  /* 2.0: the last block */
};

#define BLOCK_HEADER	  24
#define CALLS_PER_SECTION 65536
/* GCU records a GOPS block (about 6 MB): a reader holds one block's bytes at a time, not the
 * whole section's (3.75M records: 357 MB). A reader appends each block's records to the last's */
#define OPS_PER_SECTION 65536

/* --- writing --------------------------------------------------------------------------------- */

struct wbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
	FILE *out; /* format 2: each section compressed into its own block as it ends */
	bool failed;
};

static void flush_block(struct wbuf *b);

static void put(struct wbuf *b, const void *data, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		unsigned char *p;

		while (ncap < b->n + len)
			ncap *= 2;
		p = realloc(b->p, ncap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = ncap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void put_u8(struct wbuf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct wbuf *b, uint32_t v)
{
	unsigned char x[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 24) };

	put(b, x, 4);
}

static void put_u64(struct wbuf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

/* a string; NULL is kept apart from "" */
static void put_str(struct wbuf *b, const char *s, size_t len)
{
	if (!s) {
		put_u32(b, NO_STRING);
		return;
	}
	put_u32(b, (uint32_t)len);
	put(b, s, len);
}

static void put_cstr(struct wbuf *b, const char *s)
{
	put_str(b, s, s ? strlen(s) : 0);
}

static size_t begin(struct wbuf *b, uint32_t tag)
{
	size_t at;

	put_u32(b, tag);
	put_u32(b, 0);
	at = b->n;
	put_u64(b, 0);
	return at;
}

static void end(struct wbuf *b, size_t at)
{
	uint64_t len = b->n - at - 8;

	if (b->oom)
		return;
	for (int i = 0; i < 8; i++)
		b->p[at + (size_t)i] = (unsigned char)(len >> (8 * i));
	if (b->out)
		flush_block(b);
}

static void put_record(struct wbuf *b, const struct gcu_oprec *r)
{
	put_u32(b, r->kind);
	put_u8(b, r->engine);
	put_u8(b, r->copy_kind);
	put_u32(b, r->device);
	put_u32(b, r->pid);
	put_u32(b, r->tid);
	put_u32(b, r->stream_id);
	put_u64(b, r->launch_id);
	put_u32(b, r->name_id);
	put_u64(b, r->start_ticks);
	put_u64(b, r->end_ticks);
	put_u64(b, r->bytes);
}

static void put_double(struct wbuf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_u64(b, bits);
}

static void encode_cpu(struct wbuf *b, const struct cpu_profile *p)
{
	size_t s = begin(b, SEC_CPUS);

	put_u32(b, p->hz);
	put_u64(b, p->samples);
	put_u64(b, p->truncated_samples);
	put_u64(b, p->lost_samples);
	put_u64(b, p->lost_stacks);
	for (size_t i = 0; i < p->n; i++) {
		put_u32(b, p->v[i].pid);
		put_cstr(b, p->v[i].comm);
		put_cstr(b, p->v[i].frames);
		put_u64(b, p->v[i].count);
		put_u8(b, p->v[i].truncated);
	}
	end(b, s);
}

static void encode_util(struct wbuf *b, const struct util_profile *u)
{
	size_t s = begin(b, SEC_UTIL);

	put_u8(b, u->cpu);
	put_u8(b, u->mem);
	put_u32(b, u->hz);
	put_u32(b, u->ncpus);
	put_u64(b, u->mem_total);
	put_u64(b, u->missed);
	for (size_t i = 0; i < u->n; i++) {
		const struct util_series *ser = &u->s[i];

		put_u32(b, ser->pid);
		put_cstr(b, ser->comm);
		put_u64(b, ser->n);
		for (size_t k = 0; k < ser->n; k++) {
			put_u64(b, ser->v[k].t_ns);
			put_double(b, ser->v[k].cpu);
			put_u64(b, ser->v[k].rss);
			put_u64(b, ser->v[k].vsz);
		}
	}
	end(b, s);
}

static void encode_kernel(struct wbuf *b, const struct kernel_profile *p)
{
	size_t s = begin(b, SEC_KERN);

	put_cstr(b, p->mechanism);
	put_cstr(b, p->filter);
	put_u64(b, p->lost_entries);
	put_u64(b, p->lost_stacks);
	put_u64(b, p->lost_threads);
	put_u64(b, p->ne);
	for (size_t i = 0; i < p->ne; i++) {
		put_cstr(b, p->e[i].name);
		put_u8(b, p->e[i].driver);
		put_u64(b, p->e[i].calls);
		put_u64(b, p->e[i].total_ns);
		put_u64(b, p->e[i].max_ns);
	}
	for (size_t i = 0; i < p->ns; i++) {
		const struct kernel_stack *k = &p->s[i];

		put_u32(b, k->pid);
		put_cstr(b, k->comm);
		put_cstr(b, k->entry);
		put_u8(b, k->driver);
		put_u8(b, k->offcpu);
		put_cstr(b, k->frames);
		put_u64(b, k->count);
		put_u64(b, k->total_ns);
		put_u64(b, k->max_ns);
	}
	end(b, s);
}

/* what the samplers collected: CPU stacks, utilization, kernel callstacks */
static void encode_samples(struct wbuf *b, const struct model *m)
{
	if (m->cpu.sampled)
		encode_cpu(b, &m->cpu);
	if (m->cpu.sampled && m->cpu.unwound) {
		size_t s = begin(b, SEC_CEND);

		put_u32(b, STACK_END__COUNT);
		for (size_t i = 0; i < STACK_END__COUNT; i++)
			put_u64(b, m->cpu.ends[i]);
		end(b, s);
	}
	if (m->util.cpu || m->util.mem)
		encode_util(b, &m->util);
	if (m->kernel.collected) {
		size_t s;

		encode_kernel(b, &m->kernel);
		/* KERN's stacks run to its end: what came later goes in a section of its own,
		 * which readers from before skip */
		s = begin(b, SEC_KCNT);
		put_u64(b, m->kernel.untold);
		end(b, s);
	}
}

static void encode(struct wbuf *b, const struct model *m)
{
	uint64_t ps;
	size_t s;

	s = begin(b, SEC_META);
	put_u32(b, m->root_pid);
	put_u64(b, m->span_start_ns);
	put_u64(b, m->span_end_ns);
	put_u32(b, m->gcu_activities);
	put_u32(b, m->gcu_joined);
	put_u64(b, m->joined);
	put_u64(b, m->unjoined_records);
	put_u64(b, m->unjoined_calls);
	put_u64(b, m->tx_open);
	put_u64(b, m->lost_calls);
	put_u64(b, m->lost_strings);
	put_u64(b, m->lost_depth);
	put_u64(b, m->lost_stats);
	put_u64(b, m->lost_proc_events);
	put_u64(b, m->lost_pids);
	put_u64(b, m->buffer_size);
	put_u64(b, m->first_ns);
	put_u64(b, m->last_ns);
	memcpy(&ps, &m->process_s, sizeof(ps));
	put_u64(b, ps);
	put_cstr(b, m->header);
	end(b, s);

	/* apart from META, which older readers want to the byte: they skip this */
	s = begin(b, SEC_STRS);
	put_u64(b, m->lost_unreadable);
	put_u64(b, m->str_recovered);
	put_u64(b, m->str_faulted_in);
	end(b, s);

	s = begin(b, SEC_STAT);
	for (unsigned f = 0; f < api_table_len; f++) {
		const struct fn_stat *st = &m->stats[f];

		if (!st->count)
			continue;
		put_cstr(b, api_table[f].name);
		put_u64(b, st->count);
		put_u64(b, st->total_ns);
		put_u64(b, st->min_ns);
		put_u64(b, st->max_ns);
	}
	end(b, s);

	s = begin(b, SEC_CALL);
	for (size_t i = 0; i < m->ncalls; i++) {
		struct api_call call, *c = &call;

		calls_get(&m->calls, i, c);
		if (i && !(i % CALLS_PER_SECTION)) { /* a block a piece (format 2) */
			end(b, s);
			s = begin(b, SEC_CALL);
		}

		put_cstr(b, api_table[c->fn].name);
		put_u64(b, c->call_id);
		put_u32(b, c->pid);
		put_u32(b, c->tid);
		put_u32(b, c->flags);
		put_u64(b, c->start_ns);
		put_u64(b, c->end_ns);
		put_u64(b, (uint64_t)c->ret);
		for (int a = 0; a < API_REG_ARGS + API_STACK_ARGS; a++)
			put_u64(b, c->args[a]);
		put(b, c->attr, sizeof(c->attr));
		for (int k = 0; k < 2; k++) {
			put_str(b, c->str[k], c->str_len[k]);
			put_u8(b, c->truncated[k]);
		}
	}
	end(b, s);

	s = begin(b, SEC_RNGE);
	for (size_t i = 0; i < m->nranges; i++) {
		const struct tx_range *r = &m->ranges[i];

		put_cstr(b, r->domain);
		put_cstr(b, r->name);
		put_u32(b, r->pid);
		put_u32(b, r->tid);
		put_u64(b, r->start_ns);
		put_u64(b, r->end_ns);
		put_u8(b, r->truncated);
	}
	end(b, s);

	s = begin(b, SEC_MARK);
	for (size_t i = 0; i < m->nmarks; i++) {
		put_cstr(b, m->marks[i].domain);
		put_cstr(b, m->marks[i].name);
		put_u64(b, m->marks[i].count);
	}
	end(b, s);

	s = begin(b, SEC_PROC);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct proc_info *p = &m->procs[i];

		put_u32(b, p->pid);
		put_u32(b, p->ppid);
		put_cstr(b, p->comm);
		put_u8(b, p->exited);
		put_u32(b, (uint32_t)p->exit_code);
	}
	end(b, s);

	s = begin(b, SEC_DEVS);
	for (uint32_t d = 0; d < GCU_RO_MAX_DEVICES; d++) {
		const struct gcu_dev *g = &m->dev[d];

		if (!g->present)
			continue;
		put_u32(b, d);
		put_u64(b, g->tick_hz);
		put_u64(b, g->overflow);
		put_u64(b, g->npairs);
		for (size_t i = 0; i < g->npairs; i++) {
			put_u64(b, g->pairs[i].host_ns);
			put_u64(b, g->pairs[i].ticks);
		}
	}
	end(b, s);

	s = begin(b, SEC_GOPS);
	for (size_t i = 0; i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[i];

		if (i && !(i % OPS_PER_SECTION)) { /* a block a piece, as the calls */
			end(b, s);
			s = begin(b, SEC_GOPS);
		}
		put_record(b, &op->rec);
		put_u64(b, op->start_ns);
		put_u64(b, op->end_ns);
		put_u64(b, (uint64_t)op->call);
		put_cstr(b, op->name);
	}
	end(b, s);

	encode_samples(b, m);
}

/* format 2: the section in b (its 16-byte header first) as a block: { u32 tag | u32 0 |
 * u64 bytes | u64 compressed bytes } and the section's bytes as a zlib stream (its adler32
 * guards them). The calls are compressed fast: they are most of a large profile */
static void flush_block(struct wbuf *b)
{
	unsigned char hdr[BLOCK_HEADER];
	uint32_t tag;
	uLong raw = (uLong)(b->n - 16);
	uLongf zlen = compressBound(raw);
	Bytef *z = malloc(zlen);

	memcpy(&tag, b->p, 4);
	if (tag == SEC_END) /* nothing: the file ends with its header */
		zlen = 0;
	if (!z || (zlen && compress2(z, &zlen, b->p + 16, raw, tag == SEC_CALL ? 1 : 6) != Z_OK)) {
		b->failed = true;
	} else {
		memset(hdr, 0, sizeof(hdr));
		memcpy(hdr, b->p, 4);
		for (int i = 0; i < 8; i++) {
			hdr[8 + i] = (unsigned char)((uint64_t)raw >> (8 * i));
			hdr[16 + i] = (unsigned char)((uint64_t)zlen >> (8 * i));
		}
		if (fwrite(hdr, 1, sizeof(hdr), b->out) != sizeof(hdr) ||
		    fwrite(z, 1, zlen, b->out) != zlen)
			b->failed = true;
	}
	free(z);
	b->n = 0;
}

int store_write_profile(FILE *f, const struct model *m)
{
	struct wbuf b = { .out = f };
	unsigned char hdr[HEADER_SIZE];
	size_t s;

	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, STORE_MAGIC, 8);
	hdr[8] = STORE_MAJOR;
	hdr[10] = STORE_MINOR;
	if (fwrite(hdr, 1, sizeof(hdr), f) != sizeof(hdr))
		return -1;
	encode(&b, m);
	s = begin(&b, SEC_END);
	end(&b, s);
	free(b.p);
	return b.oom || b.failed ? -1 : 0;
}

int store_write_profile_v1(FILE *f, const struct model *m)
{
	struct wbuf b = { 0 };
	unsigned char hdr[HEADER_SIZE];
	uLongf zlen;
	Bytef *z;
	uint32_t crc;
	int rc = -1;

	encode(&b, m);
	if (b.oom)
		goto out;
	zlen = compressBound((uLong)b.n);
	z = malloc(zlen);
	if (!z || compress2(z, &zlen, b.p, (uLong)b.n, 6) != Z_OK) {
		free(z);
		goto out;
	}
	crc = (uint32_t)crc32(0, b.p, (uInt)b.n);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, STORE_MAGIC, 8);
	hdr[8] = 1;
	hdr[10] = 2;
	for (int i = 0; i < 8; i++)
		hdr[16 + i] = (unsigned char)((uint64_t)b.n >> (8 * i));
	for (int i = 0; i < 4; i++) {
		hdr[24 + i] = (unsigned char)(crc >> (8 * i));
		hdr[28 + i] = (unsigned char)((uint32_t)zlen >> (8 * i));
	}
	if (fwrite(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && fwrite(z, 1, zlen, f) == zlen)
		rc = 0;
	free(z);
out:
	free(b.p);
	return rc;
}

/* --- reading --------------------------------------------------------------------------------- */

#define FN_CACHE    61
#define FN_NAME_MAX 255
struct rbuf {
	const unsigned char *p;
	size_t n, off;
	bool bad;
	uint16_t fn_cache[FN_CACHE]; /* get_fn: function + 1 by a hash of its name, 0 empty */
};

static const unsigned char *take(struct rbuf *r, size_t len)
{
	const unsigned char *p;

	if (r->bad || len > r->n - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += len;
	return p;
}

static uint8_t get_u8(struct rbuf *r)
{
	const unsigned char *p = take(r, 1);

	return p ? *p : 0;
}

static uint32_t get_u32(struct rbuf *r)
{
	const unsigned char *p = take(r, 4);

	return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			       (uint32_t)p[3] << 24
		 : 0;
}

static uint64_t get_u64(struct rbuf *r)
{
	uint64_t lo = get_u32(r);

	return lo | (uint64_t)get_u32(r) << 32;
}

/* a string of the file, as a new NUL-terminated copy (NULL for a NULL string or an error) */
static char *get_str(struct rbuf *r, uint32_t *len_out)
{
	uint32_t len = get_u32(r);
	const unsigned char *p;
	char *s;

	if (len_out)
		*len_out = 0;
	if (r->bad || len == NO_STRING)
		return NULL;
	p = take(r, len);
	if (!p)
		return NULL;
	s = malloc((size_t)len + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	memcpy(s, p, len);
	s[len] = '\0';
	if (len_out)
		*len_out = len;
	return s;
}

static int decode_meta(struct rbuf *r, struct model *m)
{
	uint64_t ps;

	m->root_pid = get_u32(r);
	m->span_start_ns = get_u64(r);
	m->span_end_ns = get_u64(r);
	m->gcu_activities = get_u32(r);
	m->gcu_joined = get_u32(r) != 0;
	m->joined = get_u64(r);
	m->unjoined_records = get_u64(r);
	m->unjoined_calls = get_u64(r);
	m->tx_open = get_u64(r);
	m->lost_calls = get_u64(r);
	m->lost_strings = get_u64(r);
	m->lost_depth = get_u64(r);
	m->lost_stats = get_u64(r);
	m->lost_proc_events = get_u64(r);
	m->lost_pids = get_u64(r);
	m->buffer_size = get_u64(r);
	m->first_ns = get_u64(r);
	m->last_ns = get_u64(r);
	ps = get_u64(r);
	memcpy(&m->process_s, &ps, sizeof(ps));
	if (!(m->process_s >= 0 && m->process_s < 1e9))
		m->process_s = 0;
	free(m->header);
	m->header = get_str(r, NULL);
	return r->bad ? -1 : 0;
}

/* a file from before has none: the count stays 0. More at its end (a later minor version) is
 * skipped. */
static int decode_kcnt(struct rbuf *r, struct model *m)
{
	m->kernel.untold = get_u64(r);
	return r->bad ? -1 : 0;
}

/* a file before 2.1 has none: its stacks were not unwound by topsprof. Reasons a later version
 * adds are skipped. */
static int decode_cend(struct rbuf *r, struct model *m)
{
	uint32_t n = get_u32(r);

	m->cpu.unwound = true;
	for (uint32_t i = 0; i < n && !r->bad; i++) {
		uint64_t v = get_u64(r);

		if (i < STACK_END__COUNT)
			m->cpu.ends[i] = v;
	}
	return r->bad ? -1 : 0;
}

/* a file before 1.2 has none: the counts stay 0. More at its end (a later minor version) is
 * skipped. */
static int decode_strs(struct rbuf *r, struct model *m)
{
	m->lost_unreadable = get_u64(r);
	m->str_recovered = get_u64(r);
	m->str_faulted_in = get_u64(r);
	return r->bad ? -1 : 0;
}

/* the API function named in the file; -1 when topsprof does not know it. A call names its
 * function: the names already seen are found by a small hash of their length and bytes, so
 * that 10 million calls cost no allocation and no scan of the table each */
static int get_fn(struct rbuf *r)
{
	uint32_t len = get_u32(r);
	const unsigned char *p;
	char name[FN_NAME_MAX + 1];
	unsigned h;
	int fn;

	if (r->bad || len == NO_STRING || len > FN_NAME_MAX) {
		r->bad = true;
		return -1;
	}
	p = take(r, len);
	if (!p)
		return -1;
	h = (len * 31u + (len ? p[len - 1] * 7u + p[len / 2] : 0u)) % FN_CACHE;
	fn = r->fn_cache[h] - 1;
	if (fn >= 0 && !strncmp(api_table[fn].name, (const char *)p, len) &&
	    !api_table[fn].name[len])
		return fn;
	memcpy(name, p, len);
	name[len] = '\0';
	fn = api_find(name);
	if (fn < 0)
		r->bad = true;
	else
		r->fn_cache[h] = (uint16_t)(fn + 1);
	return fn;
}

static int decode_stats(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		int fn = get_fn(r);
		struct api_stat s;

		s.count = get_u64(r);
		s.total_ns = get_u64(r);
		s.min_ns = get_u64(r);
		s.max_ns = get_u64(r);
		if (!r->bad)
			model_add_stat(m, (uint32_t)fn, &s);
	}
	return r->bad ? -1 : 0;
}

/* one call: 0, 1 when the record is bad or does not end in r (nothing was added then), -1 out
 * of memory */
static int decode_call(struct rbuf *r, struct model *m)
{
	struct tp_api_event e;
	char *str[2];
	uint32_t len[2];
	uint8_t trunc[2];
	bool truncated[2];
	int fn = get_fn(r), rc;

	memset(&e, 0, sizeof(e));
	e.call_id = get_u64(r);
	e.hdr.pid = get_u32(r);
	e.hdr.tid = get_u32(r);
	e.flags = get_u32(r);
	e.start_ns = get_u64(r);
	e.hdr.ts_ns = get_u64(r);
	e.ret = (int64_t)get_u64(r);
	for (int a = 0; a < API_REG_ARGS; a++)
		e.args[a] = get_u64(r);
	for (int a = 0; a < API_STACK_ARGS; a++)
		e.stack[a] = get_u64(r);
	if (take(r, sizeof(e.attr)))
		memcpy(e.attr, r->p + r->off - sizeof(e.attr), sizeof(e.attr));
	for (int k = 0; k < 2; k++) {
		str[k] = get_str(r, &len[k]);
		trunc[k] = get_u8(r);
	}
	if (r->bad) {
		free(str[0]);
		free(str[1]);
		return 1;
	}
	e.fn = (uint32_t)fn;
	for (int k = 0; k < 2; k++)
		truncated[k] = trunc[k] != 0;
	rc = model_add_call_strs(m, &e, str, len, truncated);
	free(str[0]);
	free(str[1]);
	/* not kept (only a summary is asked for): fine; out of memory: an error */
	return rc < 0 ? -1 : 0;
}

static int decode_calls(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n)
		if (decode_call(r, m))
			return -1;
	return r->bad ? -1 : 0;
}

static int decode_ranges(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		struct tx_range x;

		x.domain = get_str(r, NULL);
		x.name = get_str(r, NULL);
		x.pid = get_u32(r);
		x.tid = get_u32(r);
		x.start_ns = get_u64(r);
		x.end_ns = get_u64(r);
		x.truncated = get_u8(r) != 0;
		if (r->bad || !x.name ||
		    !grow_array((void **)&m->ranges, &m->ranges_cap, m->nranges, sizeof(x))) {
			free(x.domain);
			free(x.name);
			r->bad = true;
			break;
		}
		m->ranges[m->nranges++] = x;
	}
	return r->bad ? -1 : 0;
}

static int decode_marks(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		char *domain = get_str(r, NULL), *name = get_str(r, NULL);
		uint64_t count = get_u64(r);

		if (r->bad || !name ||
		    !grow_array((void **)&m->marks, &m->marks_cap, m->nmarks, sizeof(*m->marks))) {
			free(domain);
			free(name);
			r->bad = true;
			break;
		}
		m->marks[m->nmarks].domain = domain;
		m->marks[m->nmarks].name = name;
		m->marks[m->nmarks].count = count;
		m->nmarks++;
	}
	return r->bad ? -1 : 0;
}

static int decode_procs(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		struct proc_info p;
		char *comm;

		memset(&p, 0, sizeof(p));
		p.pid = get_u32(r);
		p.ppid = get_u32(r);
		comm = get_str(r, NULL);
		p.exited = get_u8(r) != 0;
		p.exit_code = (int)get_u32(r);
		if (comm)
			snprintf(p.comm, sizeof(p.comm), "%s", comm);
		free(comm);
		if (r->bad ||
		    !grow_array((void **)&m->procs, &m->procs_cap, m->nprocs, sizeof(p))) {
			r->bad = true;
			break;
		}
		m->procs[m->nprocs++] = p;
	}
	return r->bad ? -1 : 0;
}

static int decode_devs(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		uint32_t d = get_u32(r);
		uint64_t npairs;
		struct gcu_dev *g;

		if (d >= GCU_RO_MAX_DEVICES || m->dev[d].present) {
			r->bad = true;
			break;
		}
		g = &m->dev[d];
		g->present = true;
		g->tick_hz = get_u64(r);
		g->overflow = get_u64(r);
		npairs = get_u64(r);
		if (npairs > (r->n - r->off) / 16) {
			r->bad = true;
			break;
		}
		for (uint64_t i = 0; i < npairs; i++) {
			uint64_t h = get_u64(r);

			model_add_sync(m, (int)d, h, get_u64(r));
		}
	}
	return r->bad ? -1 : 0;
}

static int decode_ops(struct rbuf *r, struct model *m)
{
	while (!r->bad && r->off < r->n) {
		struct gcu_record rec;
		uint64_t start, end, call;
		size_t n_before;
		char *name;

		memset(&rec, 0, sizeof(rec));
		rec.kind = (uint16_t)get_u32(r);
		rec.engine = get_u8(r);
		rec.copy_kind = get_u8(r);
		rec.device = get_u32(r);
		rec.pid = get_u32(r);
		rec.tid = get_u32(r);
		rec.stream_id = get_u32(r);
		rec.launch_id = get_u64(r);
		rec.name_id = get_u32(r);
		rec.start_ticks = get_u64(r);
		rec.end_ticks = get_u64(r);
		rec.bytes = get_u64(r);
		start = get_u64(r);
		end = get_u64(r);
		call = get_u64(r);
		name = get_str(r, NULL);
		if (r->bad || rec.device >= GCU_RO_MAX_DEVICES ||
		    rec.name_id >= GCU_RO_MAX_NAME_ID ||
		    ((int64_t)call >= 0 && call >= m->ncalls && !m->summary_only) ||
		    ((int64_t)call >= 0 && call > INT32_MAX) || (int64_t)call < -1 ||
		    (name && !rec.name_id)) {
			free(name);
			r->bad = true;
			break;
		}
		n_before = m->nops;
		model_add_gcu(m, &rec, name);
		free(name);
		if (m->nops == n_before) { /* out of memory */
			r->bad = true;
			break;
		}
		m->ops[m->nops - 1].start_ns = start;
		m->ops[m->nops - 1].end_ns = end;
		/* only a summary: the calls were not read, and a summary shows no join */
		m->ops[m->nops - 1].call = m->summary_only ? -1 : (int64_t)call;
	}
	return r->bad ? -1 : 0;
}

static int decode_cpu(struct rbuf *r, struct model *m)
{
	struct cpu_profile *p = &m->cpu;

	uint64_t samples, truncated;

	p->sampled = true;
	p->hz = get_u32(r);
	samples = get_u64(r);
	truncated = get_u64(r);
	p->lost_samples = get_u64(r);
	p->lost_stacks = get_u64(r);
	if (!p->hz || p->hz > 1000)
		r->bad = true;
	while (!r->bad && r->off < r->n) {
		uint32_t pid = get_u32(r);
		char *comm = get_str(r, NULL), *frames = get_str(r, NULL);
		uint64_t count = get_u64(r);
		bool truncated = get_u8(r) != 0;

		if (r->bad || !comm || !frames ||
		    cpu_profile_add(p, pid, comm, frames, count, truncated))
			r->bad = true;
		free(comm);
		free(frames);
	}
	cpu_profile_finish(p);
	/* as counted: the stacks' own sums may differ (a stack lost to a full map) */
	p->samples = samples;
	p->truncated_samples = truncated;
	return r->bad ? -1 : 0;
}

static int decode_util(struct rbuf *r, struct model *m)
{
	struct util_profile *u = &m->util;

	u->cpu = get_u8(r) != 0;
	u->mem = get_u8(r) != 0;
	u->hz = get_u32(r);
	u->ncpus = get_u32(r);
	u->mem_total = get_u64(r);
	u->missed = get_u64(r);
	if (!u->hz || u->hz > 1000 || !u->ncpus)
		r->bad = true;
	while (!r->bad && r->off < r->n) {
		uint32_t pid = get_u32(r);
		char *comm = get_str(r, NULL);
		uint64_t n = get_u64(r);
		struct util_series *ser;

		/* each point is 32 bytes */
		if (r->bad || n > (r->n - r->off) / 32 ||
		    !(ser = util_series_add(u, pid, comm ? comm : ""))) {
			free(comm);
			r->bad = true;
			break;
		}
		free(comm);
		for (uint64_t k = 0; k < n && !r->bad; k++) {
			struct util_point pt;
			uint64_t bits;

			pt.t_ns = get_u64(r);
			bits = get_u64(r);
			memcpy(&pt.cpu, &bits, sizeof(pt.cpu));
			pt.rss = get_u64(r);
			pt.vsz = get_u64(r);
			if (!(pt.cpu >= 0 && pt.cpu <= 1e7) || util_add(ser, &pt))
				r->bad = true;
		}
	}
	return r->bad ? -1 : 0;
}

static int decode_kernel(struct rbuf *r, struct model *m)
{
	struct kernel_profile *p = &m->kernel;
	uint64_t ne;

	p->collected = true;
	free(p->mechanism);
	free(p->filter);
	p->mechanism = get_str(r, NULL);
	p->filter = get_str(r, NULL);
	p->lost_entries = get_u64(r);
	p->lost_stacks = get_u64(r);
	p->lost_threads = get_u64(r);
	ne = get_u64(r);
	/* an entry is at least 29 bytes */
	if (ne > (r->n - r->off) / 29)
		r->bad = true;
	for (uint64_t i = 0; i < ne && !r->bad; i++) {
		char *name = get_str(r, NULL);
		bool driver = get_u8(r) != 0;
		uint64_t calls = get_u64(r), total = get_u64(r), max = get_u64(r);

		if (r->bad || !name || kernel_add_entry(p, name, driver, calls, total, max))
			r->bad = true;
		free(name);
	}
	while (!r->bad && r->off < r->n) {
		struct kernel_stack k = { 0 };

		k.pid = get_u32(r);
		k.comm = get_str(r, NULL);
		k.entry = get_str(r, NULL);
		k.driver = get_u8(r) != 0;
		k.offcpu = get_u8(r) != 0;
		k.frames = get_str(r, NULL);
		k.count = get_u64(r);
		k.total_ns = get_u64(r);
		k.max_ns = get_u64(r);
		if (r->bad || !k.frames || kernel_add_stack(p, &k))
			r->bad = true;
		free(k.comm);
		free(k.entry);
		free(k.frames);
	}
	kernel_profile_finish(p);
	return r->bad ? -1 : 0;
}

static const struct {
	uint32_t tag;
	const char *what;
	int (*decode)(struct rbuf *, struct model *);
} sections[] = {
	{ SEC_META, "META", decode_meta },   { SEC_STAT, "STAT", decode_stats },
	{ SEC_CALL, "CALL", decode_calls },  { SEC_RNGE, "RNGE", decode_ranges },
	{ SEC_MARK, "MARK", decode_marks },  { SEC_PROC, "PROC", decode_procs },
	{ SEC_DEVS, "DEVS", decode_devs },   { SEC_GOPS, "GOPS", decode_ops },
	{ SEC_CPUS, "CPUS", decode_cpu },    { SEC_UTIL, "UTIL", decode_util },
	{ SEC_KERN, "KERN", decode_kernel }, { SEC_STRS, "STRS", decode_strs },
	{ SEC_KCNT, "KCNT", decode_kcnt },   { SEC_CEND, "CEND", decode_cend },
};

#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* the row of a section's tag, or NSECTIONS: a section of a newer minor version (skipped) */
static size_t find_section(uint32_t tag)
{
	size_t i = 0;

	while (i < NSECTIONS && sections[i].tag != tag)
		i++;
	return i;
}

/* one section's payload (n bytes at p) into the model, by its row; meta: whether META came yet.
 * 0, or -1 with err */
static int decode_one(size_t i, const unsigned char *p, size_t n, struct model *m, bool *meta,
		      char *err, size_t errlen)
{
	struct rbuf r = { .p = p, .n = n };
	bool is_meta = sections[i].tag == SEC_META;

	if ((is_meta && *meta) || sections[i].decode(&r, m) || (is_meta && r.off != r.n)) {
		snprintf(err, errlen, "corrupt: bad %s section", sections[i].what);
		return -1;
	}
	*meta |= is_meta;
	return 0;
}

/* whole: a whole profile (META first of all); else only the samplers' sections are taken */
static int decode_sections(const unsigned char *p, size_t n, struct model *m, bool whole, char *err,
			   size_t errlen)
{
	struct rbuf r = { .p = p, .n = n };
	bool meta = false;

	while (r.off < r.n) {
		uint32_t tag = get_u32(&r);
		uint64_t len;
		size_t i;

		get_u32(&r);
		len = get_u64(&r);
		if (r.bad || len > r.n - r.off) {
			snprintf(err, errlen, "corrupt: a section runs past the end");
			return -1;
		}
		i = find_section(tag);
		if (i < NSECTIONS) {
			if (!whole && tag != SEC_CPUS && tag != SEC_UTIL && tag != SEC_KERN &&
			    tag != SEC_KCNT && tag != SEC_CEND) {
				snprintf(err, errlen, "corrupt: a %s section among the samplers'",
					 sections[i].what);
				return -1;
			}
			if (decode_one(i, r.p + r.off, (size_t)len, m, &meta, err, errlen))
				return -1;
		}
		r.off += (size_t)len; /* sections of newer minor versions are skipped */
	}
	if (whole && !meta) {
		snprintf(err, errlen, "corrupt: no META section");
		return -1;
	}
	return 0;
}

int store_decode_payload(const unsigned char *p, size_t n, struct model *m, char *err,
			 size_t errlen)
{
	return decode_sections(p, n, m, true, err, errlen);
}

int store_encode_samples(const struct model *m, unsigned char **out, size_t *len)
{
	struct wbuf b = { 0 };

	encode_samples(&b, m);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	*len = b.n;
	return 0;
}

int store_decode_samples(const unsigned char *p, size_t n, struct model *m, char *err,
			 size_t errlen)
{
	return decode_sections(p, n, m, false, err, errlen);
}

/* --- reading a file, streaming ------------------------------------------------------------
 * The payload is inflated as it is decoded, a section at a time, and the calls a piece at a
 * time: what is held is the model, not the file nor its payload. The checksum is checked at the
 * end (a bad file is refused then, the model partly filled: the caller frees it). */

#define ZIN_CHUNK (1u << 17)
#define CALL_CHUNK \
	(1u << 22) /* the calls are decoded in pieces of this size (more for a
				* call larger than that) */
#define DISCARD_MAX (1u << 20)

struct zin {
	int fd;			  /* the file, or -1: mem */
	const unsigned char *mem; /* the compressed bytes, when from memory */
	uint64_t zleft;		  /* compressed bytes not yet given to inflate */
	uint64_t left;		  /* payload bytes not yet read */
	z_stream z;
	uint32_t crc;
	bool ended, failed;
	unsigned char in[ZIN_CHUNK];
};

/* more compressed input: 0, or -1 (failed set) */
static int zin_refill(struct zin *s)
{
	if (s->fd < 0) {
		uInt give = s->zleft > (1u << 30) ? 1u << 30 : (uInt)s->zleft;

		s->z.next_in = (Bytef *)s->mem;
		s->z.avail_in = give;
		s->mem += give;
		s->zleft -= give;
	} else {
		ssize_t got =
			read(s->fd, s->in, s->zleft < ZIN_CHUNK ? (size_t)s->zleft : ZIN_CHUNK);

		if (got <= 0) {
			s->failed = true;
			return -1;
		}
		s->z.next_in = s->in;
		s->z.avail_in = (uInt)got;
		s->zleft -= (uint64_t)got;
	}
	return 0;
}

/* exactly n bytes of the payload into dst: 0, or -1 (failed set) */
static int zin_read(struct zin *s, unsigned char *dst, size_t n)
{
	if (s->failed || n > s->left) {
		s->failed = true;
		return -1;
	}
	while (n) {
		uInt want = n > (1u << 30) ? 1u << 30 : (uInt)n;
		int rc;

		if (!s->z.avail_in && s->zleft && zin_refill(s))
			return -1;
		s->z.next_out = dst;
		s->z.avail_out = want;
		rc = inflate(&s->z, Z_NO_FLUSH);
		want -= s->z.avail_out;
		s->crc = (uint32_t)crc32(s->crc, dst, want);
		dst += want;
		n -= want;
		s->left -= want;
		if (rc == Z_STREAM_END)
			s->ended = true;
		if ((rc != Z_OK && rc != Z_STREAM_END) || (s->ended && n) ||
		    (!want && !s->z.avail_in && !s->zleft)) {
			s->failed = true;
			return -1;
		}
	}
	return 0;
}

/* after the whole payload: the stream must end there (its adler32 checked by inflate) */
static void zin_finish(struct zin *s)
{
	while (!s->failed && !s->ended) {
		unsigned char extra;
		int rc;

		if (!s->z.avail_in && s->zleft && zin_refill(s))
			return;
		s->z.next_out = &extra;
		s->z.avail_out = 1;
		rc = inflate(&s->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END && s->z.avail_out)
			s->ended = true;
		else if (rc != Z_OK || !s->z.avail_out || (!s->z.avail_in && !s->zleft))
			s->failed = true;
	}
}

/* n bytes of the payload read and dropped (a section not wanted, or unknown) */
static int zin_skip(struct zin *s, uint64_t n)
{
	unsigned char *tmp = malloc(n < DISCARD_MAX ? (size_t)n + 1 : DISCARD_MAX);
	int rc = tmp ? 0 : -1;

	while (!rc && n) {
		size_t k = n < DISCARD_MAX ? (size_t)n : DISCARD_MAX;

		rc = zin_read(s, tmp, k);
		n -= k;
	}
	free(tmp);
	return rc;
}

/* the CALL section of len bytes, a piece at a time; 0, -1 corrupt, -2 out of memory */
static int stream_calls(struct zin *s, uint64_t len, struct model *m)
{
	size_t cap = len < CALL_CHUNK ? (size_t)len + 1 : CALL_CHUNK, have = 0;
	unsigned char *buf = malloc(cap);
	struct rbuf r;
	int rc = 0;

	if (!buf)
		return -2;
	memset(&r, 0, sizeof(r));
	while (!rc && (len || have)) {
		size_t want = cap - have < len ? cap - have : (size_t)len, ok = 0;

		if (zin_read(s, buf + have, want)) {
			rc = -1;
			break;
		}
		have += want;
		len -= want;
		r.p = buf;
		r.n = have;
		r.off = 0;
		r.bad = false;
		while (r.off < r.n) {
			int one = decode_call(&r, m);

			if (one < 0)
				rc = -2;
			if (one)
				break;
			ok = r.off;
		}
		if (rc)
			break;
		if (ok < have && !len) {
			rc = -1; /* the last call is bad, or cut */
			break;
		}
		memmove(buf, buf + ok, have - ok);
		have -= ok;
		if (have == cap) { /* one call larger than the piece: a larger piece */
			unsigned char *more = realloc(buf, cap * 2);

			if (!more) {
				rc = -2;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	free(buf);
	return rc;
}

static int stream_sections(struct zin *s, struct model *m, char *err, size_t errlen)
{
	bool meta = false;

	while (s->left) {
		unsigned char h[16];
		struct rbuf hr;
		uint32_t tag;
		uint64_t len;
		size_t i;

		memset(&hr, 0, sizeof(hr));
		hr.p = h;
		hr.n = sizeof(h);
		if (s->left < sizeof(h)) {
			snprintf(err, errlen, "corrupt: a section runs past the end");
			return -1;
		}
		if (zin_read(s, h, sizeof(h)))
			return -1;
		tag = get_u32(&hr);
		get_u32(&hr);
		len = get_u64(&hr);
		if (len > s->left) {
			snprintf(err, errlen, "corrupt: a section runs past the end");
			return -1;
		}
		i = find_section(tag);
		if (i == NSECTIONS || (tag == SEC_CALL && m->summary_only)) {
			/* sections of newer minor versions are skipped; the calls too when only a
			 * summary is asked for (the statistics are in STAT) */
			if (zin_skip(s, len))
				return -1;
			continue;
		}
		if (tag == SEC_CALL) {
			int rc = stream_calls(s, len, m);

			if (rc == -2)
				snprintf(err, errlen, "out of memory");
			else if (rc && !s->failed)
				snprintf(err, errlen, "corrupt: bad CALL section");
			if (rc)
				return -1;
			continue;
		}
		{
			unsigned char *p = malloc(len ? (size_t)len : 1);
			int bad;

			if (!p) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			bad = zin_read(s, p, (size_t)len) ||
			      decode_one(i, p, (size_t)len, m, &meta, err, errlen);
			free(p);
			if (bad)
				return -1;
		}
	}
	if (!meta) {
		snprintf(err, errlen, "corrupt: no META section");
		return -1;
	}
	return 0;
}

/* --- format 2: blocks -------------------------------------------------------------------- */

struct bsrc {
	int fd;			  /* or -1: mem */
	const unsigned char *mem; /* the blocks, when from memory */
	uint64_t left;		  /* bytes of the file after the point read */
};

static int bsrc_read(struct bsrc *s, void *dst, uint64_t n)
{
	if (n > s->left)
		return -1;
	s->left -= n;
	if (s->fd < 0) {
		memcpy(dst, s->mem, (size_t)n);
		s->mem += n;
		return 0;
	}
	for (unsigned char *p = dst; n;) {
		ssize_t got = read(s->fd, p, n < (1u << 30) ? (size_t)n : 1u << 30);

		if (got <= 0)
			return -1;
		p += got;
		n -= (uint64_t)got;
	}
	return 0;
}

static int bsrc_skip(struct bsrc *s, uint64_t n)
{
	if (n > s->left)
		return -1;
	s->left -= n;
	if (s->fd < 0)
		s->mem += n;
	else if (lseek(s->fd, (off_t)n, SEEK_CUR) < 0)
		return -1;
	return 0;
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* the blocks to the END block: a section not wanted (the calls when only a summary is asked
 * for, one of a newer minor version) is passed over unread */
static int read_blocks(struct bsrc *s, struct model *m, char *err, size_t errlen)
{
	bool meta = false;

	for (;;) {
		unsigned char h[BLOCK_HEADER], *z = NULL, *raw = NULL;
		uint64_t len, zlen;
		uint32_t tag;
		uLongf got;
		size_t i;
		int bad;

		if (bsrc_read(s, h, sizeof(h))) {
			snprintf(err, errlen, "truncated: the file ends before its last block");
			return -1;
		}
		memcpy(&tag, h, 4);
		len = le64(h + 8);
		zlen = le64(h + 16);
		if (tag == SEC_END) {
			if (len || zlen || s->left) {
				snprintf(err, errlen, "corrupt: data after the last block");
				return -1;
			}
			break;
		}
		if (zlen > s->left) {
			snprintf(err, errlen, "truncated: a block runs past the end of the file");
			return -1;
		}
		if (len > MAX_PAYLOAD || len > zlen * 1032 + 64) {
			snprintf(err, errlen, "corrupt: implausible size %llu",
				 (unsigned long long)len);
			return -1;
		}
		i = find_section(tag);
		if (i == NSECTIONS || (tag == SEC_CALL && m->summary_only)) {
			if (bsrc_skip(s, zlen)) {
				snprintf(err, errlen, "truncated");
				return -1;
			}
			continue;
		}
		z = malloc(zlen ? (size_t)zlen : 1);
		raw = malloc(len ? (size_t)len : 1);
		if (!z || !raw) {
			free(z);
			free(raw);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		got = (uLongf)len;
		if (bsrc_read(s, z, zlen) || uncompress(raw, &got, z, (uLong)zlen) != Z_OK ||
		    got != len) {
			free(z);
			free(raw);
			snprintf(err, errlen, "corrupt: the %s block does not decompress",
				 sections[i].what);
			return -1;
		}
		free(z);
		bad = decode_one(i, raw, (size_t)len, m, &meta, err, errlen);
		free(raw);
		if (bad)
			return -1;
	}
	if (!meta) {
		snprintf(err, errlen, "corrupt: no META section");
		return -1;
	}
	return 0;
}

/* a profile from its header (already read) and compressed bytes (fd, or mem); total: the file's
 * size */
static int read_profile(const unsigned char *head, uint64_t total, int fd, const unsigned char *mem,
			struct model *m, char *err, size_t errlen)
{
	uint64_t plen = 0;
	uint32_t crc = 0, zlen = 0;
	struct zin *s;
	int rc;

	if (total < HEADER_SIZE || memcmp(head, STORE_MAGIC, 8)) {
		snprintf(err, errlen, "not a topsprof profile (from --export-profile)");
		return -1;
	}
	if (head[8] == STORE_MAJOR && !head[9]) {
		struct bsrc b = { fd, mem, total - HEADER_SIZE };

		return read_blocks(&b, m, err, errlen);
	}
	/* 1.x: one zlib stream of every section, read as it is inflated */
	if (head[8] != 1 || head[9]) {
		snprintf(err, errlen,
			 "profile format version %u.%u, this topsprof reads 1.x and %d.x",
			 head[8] | head[9] << 8, head[10] | head[11] << 8, STORE_MAJOR);
		return -1;
	}
	for (int i = 0; i < 8; i++)
		plen |= (uint64_t)head[16 + i] << (8 * i);
	for (int i = 0; i < 4; i++) {
		crc |= (uint32_t)head[24 + i] << (8 * i);
		zlen |= (uint32_t)head[28 + i] << (8 * i);
	}
	if (zlen != total - HEADER_SIZE) {
		snprintf(err, errlen, "truncated: %llu of %u compressed bytes",
			 (unsigned long long)(total - HEADER_SIZE), zlen);
		return -1;
	}
	/* deflate expands at most ~1032:1; anything claiming more is not ours */
	if (plen > MAX_PAYLOAD || plen > (uint64_t)zlen * 1032 + 64) {
		snprintf(err, errlen, "corrupt: implausible size %llu", (unsigned long long)plen);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s || inflateInit(&s->z) != Z_OK) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->fd = fd;
	s->mem = mem;
	s->zleft = zlen;
	s->left = plen;
	s->crc = (uint32_t)crc32(0, NULL, 0);
	err[0] = '\0';
	rc = stream_sections(s, m, err, errlen);
	if (!rc || s->failed) {
		/* the stream must end where the payload does, with the checksum of it all */
		zin_finish(s);
		if (s->failed) {
			snprintf(err, errlen, "corrupt: the compressed data does not decompress");
			rc = -1;
		} else if (s->crc != crc) {
			snprintf(err, errlen, "corrupt: checksum mismatch");
			rc = -1;
		}
	}
	inflateEnd(&s->z);
	free(s);
	return rc;
}

int store_parse_profile(const unsigned char *data, size_t len, struct model *m, char *err,
			size_t errlen)
{
	unsigned char head[HEADER_SIZE] = { 0 };

	memcpy(head, data, len < HEADER_SIZE ? len : HEADER_SIZE);
	return read_profile(head, len, -1, data + (len < HEADER_SIZE ? len : HEADER_SIZE), m, err,
			    errlen);
}

int store_read_profile_fd(int fd, struct model *m, char *err, size_t errlen)
{
	unsigned char head[HEADER_SIZE] = { 0 };
	struct stat st;
	ssize_t got;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET)) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size > STORE_MAX_FILE) {
		snprintf(err, errlen, "larger than %llu bytes", (unsigned long long)STORE_MAX_FILE);
		return -1;
	}
	got = read(fd, head, sizeof(head));
	if (got < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	return read_profile(head, (uint64_t)st.st_size, fd, NULL, m, err, errlen);
}

int store_read_profile(const char *path, struct model *m, char *err, size_t errlen)
{
	/* a regular file only, opened without waiting and read through that one descriptor */
	int fd = infile_open(path, NULL, err, errlen), rc;

	if (fd < 0)
		return -1;
	rc = store_read_profile_fd(fd, m, err, errlen);
	close(fd);
	return rc;
}
