// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/rawdata.h"
#include "lib/infile.h"
#include "lib/outfile.h"
#include "lib/varint.h"
#include "output/store.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum raw_type {
	RAW_MAGIC = 1,	/* "TOPSRAW" u32 version */
	RAW_NOTE = 2,	/* key NUL value */
	RAW_EVENT = 3,	/* a ring buffer event */
	RAW_GCU = 4,	/* struct gcu_record, then the kernel's name (may be empty) */
	RAW_SYNC = 5,	/* u32 device, u64 host ns, u64 ticks */
	RAW_DEV = 6,	/* u32 device, u64 tick_hz, u64 overflow */
	RAW_STAT = 7,	/* u32 pid, struct api_stat, function name */
	RAW_LOSSES = 8, /* u64 x6: calls, strings, depth, stats, proc events, pids */
	RAW_END = 9,
	RAW_SAMPLES = 10, /* version 2: a piece of the samplers' sections (store_encode_samples) */
	RAW_FN = 11,	  /* version 3: u32 index, function name: what an event's fn means */
	RAW_CALLS = 12,	  /* version 4: API call events, packed (pack_call) */
};

/* the calls are packed in records of this size at most (each one whole) */
#define CALLS_BATCH (64u << 10)
#define PACKED_MAX  (12 * VARINT_MAX + 1 + API_ATTR_SIZE)

#define MAX_RECORD  (1u << 20)
#define MAX_SAMPLES (1u << 30) /* the samplers' sections, all pieces together, at most */
#define NAME_LEN    1023       /* a kernel name, at most */

struct raw_writer {
	struct outfile o;
	gzFile gz;
	unsigned char batch[CALLS_BATCH]; /* calls packed, not yet written */
	size_t nbatch;
	struct tp_api_event prev; /* the last call packed in batch (zero at its start) */
	bool failed;
	int write_errno; /* the first write that failed, for the message */
};

/* a gz call failed: why, while errno still says it */
static void gz_failed(struct raw_writer *w)
{
	int zerr = Z_OK;

	if (!w->failed) {
		gzerror(w->gz, &zerr);
		w->write_errno = zerr == Z_ERRNO && errno ? errno
				 : zerr == Z_MEM_ERROR	  ? ENOMEM
							  : EIO;
	}
	w->failed = true;
}

static void put(struct raw_writer *w, uint32_t type, const void *a, size_t alen, const void *b,
		size_t blen)
{
	uint32_t hdr[2] = { type, (uint32_t)(alen + blen) };

	if (w->failed)
		return;
	if (gzwrite(w->gz, hdr, sizeof(hdr)) != (int)sizeof(hdr) ||
	    (alen && gzwrite(w->gz, a, (unsigned)alen) != (int)alen) ||
	    (blen && gzwrite(w->gz, b, (unsigned)blen) != (int)blen))
		gz_failed(w);
}

/* An API call (struct tp_api_event, 168 bytes) packed in about 28: LEB128 numbers, the ids and
 * times as zigzag deltas to the call before it in the record, only the arguments that are not
 * 0 (a mask says which), the topstx attributes only when not all 0:
 *   fn | cpu | pid delta | tid delta | call_id delta | start delta | end - start | flags | ret
 *   | argument mask (bit i: args[i], bits 6..9: stack[0..3]) | the arguments in the mask
 *   | u8 attributes follow | [API_ATTR_SIZE bytes]
 * A sixth of the bytes to compress and to inflate again: 10 million calls are read back in
 * about 1.5 s, not 5 (summary only, our loaded 2-core VM). */
static size_t pack_call(unsigned char *p, const struct tp_api_event *e,
			const struct tp_api_event *prev)
{
	static const unsigned char zero[API_ATTR_SIZE];
	uint64_t mask = 0, arg[API_REG_ARGS + API_STACK_ARGS];
	size_t n = 0;

	memcpy(arg, e->args, sizeof(e->args));
	memcpy(arg + API_REG_ARGS, e->stack, sizeof(e->stack));
	n += varint_put(p + n, e->fn);
	n += varint_put(p + n, e->hdr.cpu);
	n += varint_put(p + n, zigzag((int64_t)e->hdr.pid - (int64_t)prev->hdr.pid));
	n += varint_put(p + n, zigzag((int64_t)e->hdr.tid - (int64_t)prev->hdr.tid));
	n += varint_put(p + n, zigzag((int64_t)(e->call_id - prev->call_id)));
	n += varint_put(p + n, zigzag((int64_t)(e->start_ns - prev->start_ns)));
	n += varint_put(p + n, zigzag((int64_t)(e->hdr.ts_ns - e->start_ns)));
	n += varint_put(p + n, e->flags);
	n += varint_put(p + n, zigzag(e->ret));
	for (int a = 0; a < API_REG_ARGS + API_STACK_ARGS; a++)
		if (arg[a])
			mask |= 1u << a;
	n += varint_put(p + n, mask);
	for (int a = 0; a < API_REG_ARGS + API_STACK_ARGS; a++)
		if (arg[a])
			n += varint_put(p + n, arg[a]);
	p[n++] = memcmp(e->attr, zero, sizeof(zero)) != 0;
	if (p[n - 1]) {
		memcpy(p + n, e->attr, sizeof(e->attr));
		n += sizeof(e->attr);
	}
	return n;
}

/* the packed calls so far as one record: before any other record, so the order stays */
static void flush_calls(struct raw_writer *w)
{
	size_t n = w->nbatch;

	if (!n)
		return;
	w->nbatch = 0;
	memset(&w->prev, 0, sizeof(w->prev));
	put(w, RAW_CALLS, w->batch, n, NULL, 0);
}

int raw_open(struct raw_writer **out, const struct outtarget *t, char *err, size_t errlen)
{
	struct raw_writer *w = calloc(1, sizeof(*w));
	char magic[12] = "TOPSRAW";
	uint32_t v = RAW_VERSION;

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (outfile_create(&w->o, t, NULL, err, errlen)) {
		free(w);
		return -1;
	}
	{
		int fd = dup(w->o.fd);

		w->gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
		if (!w->gz && fd >= 0)
			close(fd);
	}
	if (!w->gz) {
		named_errf(err, errlen, t->path, ": cannot compress");
		outfile_abort(&w->o);
		free(w);
		return -1;
	}
	memcpy(magic + 8, &v, sizeof(v));
	put(w, RAW_MAGIC, magic, sizeof(magic), NULL, 0);
	/* the events name functions by index into this topsprof's table: its names, so that
	 * another build (other runtimes, another order) reads them right */
	for (uint32_t f = 0; f < api_table_len; f++)
		put(w, RAW_FN, &f, sizeof(f), api_table[f].name, strlen(api_table[f].name));
	*out = w;
	return 0;
}

void raw_event(struct raw_writer *w, const void *data, size_t size)
{
	const struct tp_event_hdr *h = data;

	if (!w || size > MAX_RECORD)
		return;
	if (size == sizeof(struct tp_api_event) && h->type == EV_API_CALL) {
		const struct tp_api_event *e = data;

		if (w->nbatch + PACKED_MAX > sizeof(w->batch))
			flush_calls(w);
		w->nbatch += pack_call(w->batch + w->nbatch, e, &w->prev);
		w->prev = *e;
		return;
	}
	flush_calls(w);
	put(w, RAW_EVENT, data, size, NULL, 0);
}

void raw_note(struct raw_writer *w, const char *key, const char *value)
{
	if (!w)
		return;
	flush_calls(w);
	put(w, RAW_NOTE, key, strlen(key) + 1, value, strlen(value));
}

/* what the samplers collected, in pieces of a record's size at most */
static void put_samples(struct raw_writer *w, const struct model *m)
{
	unsigned char *p;
	size_t len;

	if (store_encode_samples(m, &p, &len)) {
		if (!w->failed)
			w->write_errno = ENOMEM;
		w->failed = true;
		return;
	}
	for (size_t off = 0; off < len; off += MAX_RECORD)
		put(w, RAW_SAMPLES, p + off, len - off < MAX_RECORD ? len - off : MAX_RECORD, NULL,
		    0);
	free(p);
}

int raw_finish(struct raw_writer *w, const struct model *m, const struct raw_settings *s, char *err,
	       size_t errlen)
{
	uint64_t losses[6] = { m->lost_calls, m->lost_strings,	   m->lost_depth,
			       m->lost_stats, m->lost_proc_events, m->lost_pids };
	char num[64];

	flush_calls(w);
	raw_note(w, "stats_mode", s->stats_mode ? "1" : "0");
	if (s->has_include)
		raw_note(w, "topstx_domain_include", s->include_domains);
	snprintf(num, sizeof(num), "%u", m->root_pid);
	raw_note(w, "root_pid", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)m->span_start_ns);
	raw_note(w, "span_start_ns", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)m->span_end_ns);
	raw_note(w, "span_end_ns", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)m->buffer_size);
	raw_note(w, "buffer_size", num);
	snprintf(num, sizeof(num), "%u", m->gcu_activities);
	raw_note(w, "gcu_activities", num);
	if (m->header)
		raw_note(w, "header", m->header);
	for (uint32_t d = 0; d < GCU_RO_MAX_DEVICES; d++) {
		const struct gcu_dev *g = &m->dev[d];
		unsigned char b[20];

		if (!g->present)
			continue;
		memcpy(b, &d, 4);
		memcpy(b + 4, &g->tick_hz, 8);
		memcpy(b + 12, &g->overflow, 8);
		put(w, RAW_DEV, b, sizeof(b), NULL, 0);
		for (size_t i = 0; i < g->npairs; i++) {
			memcpy(b + 4, &g->pairs[i].host_ns, 8);
			memcpy(b + 12, &g->pairs[i].ticks, 8);
			put(w, RAW_SYNC, b, sizeof(b), NULL, 0);
		}
	}
	for (size_t i = 0; i < m->nops; i++) {
		const char *name = m->ops[i].name ? m->ops[i].name : "";
		struct gcu_record r = gcu_op_record(&m->ops[i]);

		put(w, RAW_GCU, &r, sizeof(r), name, strlen(name));
	}
	/* statistics mode: what the kernel aggregated */
	for (unsigned f = 0; s->stats_mode && f < api_table_len; f++) {
		const struct fn_stat *st = &m->stats[f];
		unsigned char b[4 + sizeof(struct api_stat)];
		struct api_stat as = { st->count, st->total_ns, st->min_ns, st->max_ns };
		uint32_t pid = m->root_pid;

		if (!st->count)
			continue;
		memcpy(b, &pid, 4);
		memcpy(b + 4, &as, sizeof(as));
		put(w, RAW_STAT, b, sizeof(b), api_table[f].name, strlen(api_table[f].name));
	}
	put(w, RAW_LOSSES, losses, sizeof(losses), NULL, 0);
	put_samples(w, m);
	put(w, RAW_END, NULL, 0, NULL, 0);
	{
		int zrc;

		errno = 0;
		zrc = gzclose(w->gz);
		if (zrc != Z_OK && !w->failed)
			w->write_errno = zrc == Z_ERRNO && errno ? errno : EIO;
		w->failed |= zrc != Z_OK;
	}
	w->gz = NULL;
	if (w->failed) {
		named_errf(err, errlen, w->o.path, ": %s", strerror(w->write_errno));
		outfile_abort(&w->o);
		free(w);
		return -1;
	}
	if (outfile_commit(&w->o, err, errlen)) {
		free(w);
		return -1;
	}
	free(w);
	return 0;
}

void raw_abort(struct raw_writer *w)
{
	if (!w)
		return;
	if (w->gz)
		gzclose(w->gz);
	outfile_abort(&w->o);
	free(w);
}

/* --- reading ------------------------------------------------------------------------------- */

static uint64_t num(const char *v)
{
	return strtoull(v, NULL, 10);
}

static int note(const char *p, uint32_t len, struct model *m, struct raw_settings *s)
{
	const char *key = p, *val = memchr(p, 0, len);
	char value[4000];
	size_t vl;

	if (!val)
		return -1;
	val++;
	vl = len - (size_t)(val - p);
	if (vl >= sizeof(value))
		vl = sizeof(value) - 1;
	memcpy(value, val, vl);
	value[vl] = '\0';
	if (!strcmp(key, "stats_mode"))
		s->stats_mode = value[0] == '1';
	else if (!strcmp(key, "topstx_domain_include")) {
		snprintf(s->include_domains, sizeof(s->include_domains), "%s", value);
		s->has_include = true;
	} else if (!strcmp(key, "root_pid"))
		m->root_pid = (uint32_t)num(value);
	else if (!strcmp(key, "span_start_ns"))
		m->span_start_ns = num(value);
	else if (!strcmp(key, "span_end_ns"))
		m->span_end_ns = num(value);
	else if (!strcmp(key, "buffer_size"))
		m->buffer_size = num(value);
	else if (!strcmp(key, "gcu_activities"))
		m->gcu_activities = (unsigned)num(value);
	else if (!strcmp(key, "header")) {
		free(m->header);
		m->header = strdup(value);
	}
	return 0;
}

/* the functions of the file's events (version 3) as this topsprof's: fn[i] + 1; 0 for none,
 * FN_UNKNOWN for one this build does not trace (another build, with other runtimes, wrote it) */
#define FN_UNKNOWN 0xffffu
struct fn_map {
	bool named;
	uint16_t fn[API_MAX_FNS];
};

/* a call with the file's function index: 0, -1 bad, -2 a function this build does not trace */
static int add_call(struct tp_api_event *e, struct model *m, const struct fn_map *map)
{
	if (map->named && e->fn < API_MAX_FNS && map->fn[e->fn] == FN_UNKNOWN)
		return -2;
	if (map->named)
		e->fn = e->fn < API_MAX_FNS && map->fn[e->fn] ? map->fn[e->fn] - 1u : API_MAX_FNS;
	if (e->fn >= api_table_len)
		return -1;
	model_add_call(m, e);
	return 0;
}

/* a RAW_CALLS record (pack_call): every call whole, or the record is bad */
static int packed_calls(const unsigned char *p, uint32_t len, struct model *m,
			const struct fn_map *map)
{
	const unsigned char *end = p + len;
	struct tp_api_event prev, e;

	memset(&prev, 0, sizeof(prev));
	while (p < end) {
		uint64_t v[10], mask, arg[API_REG_ARGS + API_STACK_ARGS] = { 0 };
		int rc;

		for (int i = 0; i < 10; i++)
			if (!varint_get(&p, end, &v[i]))
				return -1;
		mask = v[9];
		if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[7] > UINT32_MAX ||
		    mask >> (API_REG_ARGS + API_STACK_ARGS))
			return -1;
		memset(&e, 0, sizeof(e));
		e.hdr.type = EV_API_CALL;
		e.fn = (uint32_t)v[0];
		e.hdr.cpu = (uint32_t)v[1];
		e.hdr.pid = (uint32_t)((int64_t)prev.hdr.pid + unzigzag(v[2]));
		e.hdr.tid = (uint32_t)((int64_t)prev.hdr.tid + unzigzag(v[3]));
		e.call_id = prev.call_id + (uint64_t)unzigzag(v[4]);
		e.start_ns = prev.start_ns + (uint64_t)unzigzag(v[5]);
		e.hdr.ts_ns = e.start_ns + (uint64_t)unzigzag(v[6]);
		e.flags = (uint32_t)v[7];
		e.ret = unzigzag(v[8]);
		for (int a = 0; a < API_REG_ARGS + API_STACK_ARGS; a++)
			if ((mask & (1u << a)) && !varint_get(&p, end, &arg[a]))
				return -1;
		memcpy(e.args, arg, sizeof(e.args));
		memcpy(e.stack, arg + API_REG_ARGS, sizeof(e.stack));
		if (p >= end || *p > 1 || (*p && (size_t)(end - p) < 1 + sizeof(e.attr)))
			return -1;
		if (*p++) {
			memcpy(e.attr, p, sizeof(e.attr));
			p += sizeof(e.attr);
		}
		prev = e;
		rc = add_call(&e, m, map);
		if (rc)
			return rc;
	}
	return 0;
}

static int event(const unsigned char *p, uint32_t len, struct model *m, const struct fn_map *map)
{
	struct tp_event_hdr h;

	if (len < sizeof(h))
		return -1;
	memcpy(&h, p, sizeof(h));
	switch (h.type) {
	case EV_PROC_FORK:
	case EV_PROC_EXEC:
	case EV_PROC_EXIT: {
		struct tp_proc_event e;

		if (len != sizeof(e))
			return -1;
		memcpy(&e, p, sizeof(e));
		model_add_proc_event(m, &e);
		return 0;
	}
	case EV_API_CALL: {
		struct tp_api_event e;

		if (len != sizeof(e))
			return -1;
		memcpy(&e, p, sizeof(e));
		return add_call(&e, m, map);
	}
	case EV_API_STR: {
		struct tp_str_event *e;

		if (len != sizeof(*e))
			return -1;
		e = malloc(sizeof(*e));
		if (!e)
			return -1;
		memcpy(e, p, sizeof(*e));
		model_add_str(m, e);
		free(e);
		return 0;
	}
	default:
		return -1;
	}
}

static int record(uint32_t type, const unsigned char *p, uint32_t len, struct model *m,
		  struct raw_settings *s, const struct fn_map *map, uint32_t version)
{
	uint32_t d;

	switch (type) {
	case RAW_NOTE:
		return note((const char *)p, len, m, s);
	case RAW_EVENT:
		return event(p, len, m, map);
	case RAW_CALLS:
		return version >= 4 ? packed_calls(p, len, m, map) : -1;
	case RAW_DEV:
	case RAW_SYNC: {
		uint64_t a, b;

		if (len != 20)
			return -1;
		memcpy(&d, p, 4);
		memcpy(&a, p + 4, 8);
		memcpy(&b, p + 12, 8);
		if (d >= GCU_RO_MAX_DEVICES)
			return -1;
		if (type == RAW_SYNC) {
			model_add_sync(m, (int)d, a, b);
		} else {
			m->dev[d].present = true;
			m->dev[d].tick_hz = a;
			m->dev[d].overflow = b;
		}
		return 0;
	}
	case RAW_GCU: {
		struct gcu_record r;
		char name[NAME_LEN + 1];
		uint32_t nl;

		if (len < sizeof(r) || len - sizeof(r) > NAME_LEN)
			return -1;
		memcpy(&r, p, sizeof(r));
		nl = len - (uint32_t)sizeof(r);
		memcpy(name, p + sizeof(r), nl);
		name[nl] = '\0';
		if (r.device >= GCU_RO_MAX_DEVICES || r.name_id >= GCU_RO_MAX_NAME_ID)
			return -1;
		model_add_gcu(m, &r, nl ? name : NULL);
		return 0;
	}
	case RAW_STAT: {
		struct api_stat st;
		char name[128];
		uint32_t nl;
		int fn;

		if (len < 4 + sizeof(st) || len - 4 - sizeof(st) >= sizeof(name))
			return -1;
		memcpy(&st, p + 4, sizeof(st));
		nl = len - 4 - (uint32_t)sizeof(st);
		memcpy(name, p + 4 + sizeof(st), nl);
		name[nl] = '\0';
		fn = api_find(name);
		if (fn < 0)
			return -1;
		model_add_stat(m, (uint32_t)fn, &st);
		return 0;
	}
	case RAW_LOSSES: {
		uint64_t l[6];

		if (len != sizeof(l))
			return -1;
		memcpy(l, p, sizeof(l));
		m->lost_calls = l[0];
		m->lost_strings = l[1];
		m->lost_depth = l[2];
		m->lost_stats = l[3];
		m->lost_proc_events = l[4];
		m->lost_pids = l[5];
		return 0;
	}
	default:
		return -1;
	}
}

int raw_import(const char *path, struct model *m, struct raw_settings *s, char *err, size_t errlen)
{
	unsigned char *buf = malloc(MAX_RECORD), *samples = NULL;
	struct fn_map *map = calloc(1, sizeof(*map));
	size_t nsamples = 0;
	uint32_t hdr[2], version = 0;
	bool started = false, ended = false;
	gzFile gz = NULL;
	int rc = -1, n, fd;

	memset(s, 0, sizeof(*s));
	if (!buf || !map) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* a regular file only, opened without waiting; gzip reads that descriptor */
	fd = infile_open(path, NULL, err, errlen);
	if (fd < 0)
		goto out;
	gz = gzdopen(fd, "rb");
	if (!gz) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		goto out;
	}
	while (!ended && (n = gzread(gz, hdr, sizeof(hdr))) == (int)sizeof(hdr)) {
		if (hdr[1] > MAX_RECORD || gzread(gz, buf, hdr[1]) != (int)hdr[1]) {
			snprintf(err, errlen, "truncated or corrupt");
			goto out;
		}
		if (!started) {
			uint32_t v;

			if (hdr[0] != RAW_MAGIC || hdr[1] != 12 || memcmp(buf, "TOPSRAW", 8)) {
				snprintf(err, errlen,
					 "not topsprof raw data (from --export-rawdata)");
				goto out;
			}
			memcpy(&v, buf + 8, 4);
			version = v;
			if (v < 1 || v > RAW_VERSION) {
				snprintf(err, errlen, "raw data version %u, this topsprof reads %d",
					 v, RAW_VERSION);
				goto out;
			}
			started = true;
			continue;
		}
		if (hdr[0] == RAW_END) {
			ended = true;
			break;
		}
		if (hdr[0] == RAW_SAMPLES && version >= 2) {
			unsigned char *more = nsamples + hdr[1] <= MAX_SAMPLES
						      ? realloc(samples, nsamples + hdr[1] + 1)
						      : NULL;

			if (!more) {
				snprintf(err, errlen,
					 "corrupt: the sampled sections are too large");
				goto out;
			}
			samples = more;
			memcpy(samples + nsamples, buf, hdr[1]);
			nsamples += hdr[1];
			continue;
		}
		if (hdr[0] == RAW_FN && version >= 3) {
			uint32_t f;
			int mine;

			if (hdr[1] <= sizeof(f) || hdr[1] - sizeof(f) > NAME_LEN) {
				snprintf(err, errlen, "corrupt: a bad function name");
				goto out;
			}
			memcpy(&f, buf, sizeof(f));
			buf[hdr[1]] = '\0';
			mine = api_find((const char *)buf + sizeof(f));
			if (f >= API_MAX_FNS) {
				snprintf(err, errlen, "corrupt: a bad function index");
				goto out;
			}
			map->named = true;
			map->fn[f] = mine < 0 ? FN_UNKNOWN : (uint16_t)(mine + 1);
			continue;
		}
		n = record(hdr[0], buf, hdr[1], m, s, map, version);
		if (n == -2) {
			snprintf(err, errlen,
				 "calls of a function this topsprof does not trace: a build with "
				 "another runtime wrote it");
			goto out;
		}
		if (n) {
			snprintf(err, errlen, "corrupt: a bad record of type %u", hdr[0]);
			goto out;
		}
	}
	if (ended) {
		/* reading past the end makes gzip check the CRC32 of everything read */
		unsigned char extra;
		int zerr;

		if (gzread(gz, &extra, 1) != 0 ||
		    (gzerror(gz, &zerr), zerr != Z_OK && zerr != Z_BUF_ERROR)) {
			snprintf(err, errlen, "corrupt: %s", gzerror(gz, &zerr));
			goto out;
		}
	} else {
		int zerr;
		const char *why = gzerror(gz, &zerr);

		/* a file cut short ends in a header or in gzip's stream, wherever the cut fell:
		 * said the same way as one that ends in a record */
		if (!started)
			snprintf(err, errlen, "not topsprof raw data (from --export-rawdata)");
		else if (zerr && zerr != Z_STREAM_END)
			snprintf(err, errlen, "truncated or corrupt: %s", why);
		else
			snprintf(err, errlen, "truncated or corrupt");
		goto out;
	}
	if (nsamples) {
		char why[256];

		if (store_decode_samples(samples, nsamples, m, why, sizeof(why))) {
			snprintf(err, errlen, "the sampled sections: %s", why);
			goto out;
		}
	}
	rc = 0;
out:
	if (gz)
		gzclose(gz);
	free(buf);
	free(samples);
	free(map);
	return rc;
}
