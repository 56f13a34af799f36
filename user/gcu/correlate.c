// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "gcu/correlate.h"
#include "gcu/clock.h"
#include "lib/hash.h"
#include "lib/grow.h"

#include <stdlib.h>
#include <string.h>

/* the device may start a command this much before the host saw the call begin: the error of
 * the clock fit */
#define JOIN_SLACK_NS 2000
/* how many of a thread's calls a record may skip to find its own */
#define JOIN_LOOKAHEAD 8

void gcu_align(struct model *m)
{
	struct clock_fit fit[GCU_RO_MAX_DEVICES];
	bool ok[GCU_RO_MAX_DEVICES];

	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		ok[d] = m->dev[d].present &&
			!clock_fit(m->dev[d].pairs, m->dev[d].npairs, m->dev[d].tick_hz, &fit[d]);
	for (size_t i = 0; i < m->nops; i++) {
		struct gcu_op *op = &m->ops[i];
		uint32_t d = op->rec.device;

		if (d >= GCU_RO_MAX_DEVICES || !ok[d])
			continue;
		op->start_ns = clock_to_host(&fit[d], op->rec.start_ticks);
		op->end_ns = clock_to_host(&fit[d], op->rec.end_ticks);
	}
}

static bool primary(const struct gcu_op *op)
{
	return op->rec.kind != GCU_REC_DTE;
}

static enum api_category category_of(const struct gcu_op *op)
{
	return op->rec.kind == GCU_REC_KERNEL	? CAT_LAUNCH
	       : op->rec.kind == GCU_REC_MEMSET ? CAT_MEMSET
						: CAT_MEMCPY;
}

static unsigned activity_of(enum api_category c)
{
	return c == CAT_LAUNCH ? GCU_ACT_OPERATOR : GCU_ACT_MEMCPY;
}

/* the indices sorted here, of records and of calls: 4 bytes each (a join of millions of calls
 * holds several arrays of them); gcu_join joins no more records than UINT32_MAX, nor calls than
 * INT32_MAX (gcu_op.call) */
typedef uint32_t join_idx;

/* sort keys */
static const struct model *cur;

static int by_thread_launch(const void *a, const void *b)
{
	const struct gcu_op *x = &cur->ops[*(const join_idx *)a];
	const struct gcu_op *y = &cur->ops[*(const join_idx *)b];

	if (x->rec.pid != y->rec.pid)
		return x->rec.pid < y->rec.pid ? -1 : 1;
	if (x->rec.tid != y->rec.tid)
		return x->rec.tid < y->rec.tid ? -1 : 1;
	return x->rec.launch_id < y->rec.launch_id ? -1 : x->rec.launch_id > y->rec.launch_id;
}

static int by_thread_start(const void *a, const void *b)
{
	size_t i = *(const join_idx *)a, j = *(const join_idx *)b;
	uint32_t xpid, xtid, ypid, ytid;
	uint64_t xs, ys;

	calls_thread(&cur->calls, i, &xpid, &xtid);
	calls_thread(&cur->calls, j, &ypid, &ytid);
	if (xpid != ypid)
		return xpid < ypid ? -1 : 1;
	if (xtid != ytid)
		return xtid < ytid ? -1 : 1;
	xs = calls_start_ns(&cur->calls, i);
	ys = calls_start_ns(&cur->calls, j);
	return xs < ys ? -1 : xs > ys;
}

/* what a process's stream handles and kernel functions turned out to be */
struct identity {
	uint32_t pid;
	uint64_t key; /* stream handle, or kernel host function */
	uint64_t val; /* stream id, or a hash of the kernel's name */
	bool stream;
};

struct ids {
	struct identity *v;
	size_t n, cap;
};

/* true when key maps to val (learning it when new) */
static bool consistent(struct ids *ids, uint32_t pid, bool stream, uint64_t key, uint64_t val)
{
	for (size_t i = 0; i < ids->n; i++)
		if (ids->v[i].pid == pid && ids->v[i].stream == stream && ids->v[i].key == key)
			return ids->v[i].val == val;
	if (!grow_array((void **)&ids->v, &ids->cap, ids->n, sizeof(*ids->v)))
		return false;
	ids->v[ids->n++] = (struct identity){ pid, key, val, stream };
	return true;
}

static int64_t arg(const struct api_call *c, int8_t i)
{
	return i == NO_ARG ? -1 : (int64_t)c->args[i];
}

/* kernels are named per device: compare the names, not where they are kept */
static uint64_t name_hash(const char *s)
{
	return s ? hash_fnv1a(HASH_FNV_BASIS, s, strlen(s)) : HASH_FNV_BASIS;
}

/* whether call c (whose stream handle had been destroyed gen times before) can have caused
 * op */
static bool matches(struct ids *ids, const struct api_call *c, uint32_t gen,
		    const struct gcu_op *op)
{
	const struct api_fn *f = &api_table[c->fn];
	uint64_t stream = f->stream_arg == NO_ARG ? 0 : c->args[f->stream_arg];

	if (f->category != category_of(op) || c->ret != 0)
		return false;
	if (op->start_ns + JOIN_SLACK_NS < c->start_ns)
		return false;
	if (op->rec.kind != GCU_REC_KERNEL) {
		int64_t kind = f->kind_fixed != NO_ARG ? f->kind_fixed : arg(c, f->kind_arg);

		if ((uint64_t)arg(c, f->size_arg) != op->rec.bytes)
			return false;
		if (op->rec.kind == GCU_REC_MEMCPY && kind != 4 /* Default */ &&
		    kind != op->rec.copy_kind)
			return false;
	} else if (!consistent(ids, c->pid, false, c->args[f->func_arg], name_hash(op->name))) {
		return false;
	}
	/* the synchronous calls use the default stream of the device */
	if (f->stream_arg == NO_ARG)
		return op->rec.stream_id == 0;
	/* a handle freed and handed out again is another stream: the key tells them apart */
	return stream == 0 ? op->rec.stream_id == 0
			   : consistent(ids, c->pid, true, stream | (uint64_t)gen << 48,
					op->rec.stream_id);
}

static int by_start(const void *a, const void *b)
{
	uint64_t x = calls_start_ns(&cur->calls, *(const join_idx *)a);
	uint64_t y = calls_start_ns(&cur->calls, *(const join_idx *)b);

	return x < y ? -1 : x > y;
}

/* for every call, how often its stream handle had been destroyed before it: the runtime may
 * give a new stream the memory, so the handle, of a destroyed one */
static uint32_t *stream_generations(const struct model *m)
{
	uint32_t *gen = calloc(m->ncalls + 1, sizeof(*gen));
	join_idx *order = malloc((m->ncalls + 1) * sizeof(*order));
	struct ids seen = { 0 }; /* (pid, handle) -> destroys so far */

	if (!gen || !order) {
		free(order);
		return gen;
	}
	for (size_t i = 0; i < m->ncalls; i++)
		order[i] = (join_idx)i;
	cur = m;
	qsort(order, m->ncalls, sizeof(*order), by_start);
	for (size_t k = 0; k < m->ncalls; k++) {
		struct api_call call = model_call(m, order[k]), *c = &call;
		const struct api_fn *f = &api_table[c->fn];
		uint64_t h = f->stream_arg == NO_ARG ? 0 : c->args[f->stream_arg];
		size_t j;

		if (!h)
			continue;
		for (j = 0; j < seen.n; j++)
			if (seen.v[j].pid == c->pid && seen.v[j].key == h)
				break;
		if (j == seen.n && !consistent(&seen, c->pid, true, h, 0))
			break; /* out of memory: no generations beyond this point */
		gen[order[k]] = (uint32_t)seen.v[j].val;
		if (f->destroys_stream && c->ret == 0)
			seen.v[j].val++;
	}
	free(order);
	free(seen.v);
	return gen;
}

/* call i's thread sorts before op's */
static bool thread_before(const struct model *m, size_t i, const struct gcu_op *op)
{
	uint32_t pid, tid;

	calls_thread(&m->calls, i, &pid, &tid);
	return pid < op->rec.pid || (pid == op->rec.pid && tid < op->rec.tid);
}

static bool same_thread(const struct model *m, size_t i, const struct gcu_op *op)
{
	uint32_t pid, tid;

	calls_thread(&m->calls, i, &pid, &tid);
	return pid == op->rec.pid && tid == op->rec.tid;
}

void gcu_join(struct model *m)
{
	bool fits = m->nops < UINT32_MAX && m->ncalls < INT32_MAX; /* gcu_op.call is an int32_t */
	join_idx *ops = fits ? malloc((m->nops + 1) * sizeof(*ops)) : NULL;
	join_idx *calls = fits ? malloc((m->ncalls + 1) * sizeof(*calls)) : NULL;
	uint32_t *gen = NULL;
	size_t nops = 0, ncalls = 0, ci = 0;
	struct ids ids = { 0 };

	m->joined = m->unjoined_records = m->unjoined_calls = 0;
	if (!ops || !calls)
		goto out;
	for (size_t i = 0; i < m->nops; i++)
		if (primary(&m->ops[i]))
			ops[nops++] = (join_idx)i;
	/* no record to join (no GCU activity, or raw data of the calls only): every call is
	 * counted below as it is, without sorting them all by start first */
	gen = nops ? stream_generations(m) : calloc(1, sizeof(*gen));
	if (!gen)
		goto out;
	for (size_t i = 0; i < m->ncalls; i++) {
		enum api_category c = api_table[calls_fn(&m->calls, i)].category;

		if ((c == CAT_LAUNCH || c == CAT_MEMCPY || c == CAT_MEMSET) &&
		    (m->gcu_activities & activity_of(c)))
			calls[ncalls++] = (join_idx)i;
	}
	cur = m;
	qsort(ops, nops, sizeof(*ops), by_thread_launch);
	if (nops)
		qsort(calls, ncalls, sizeof(*calls), by_thread_start);

	for (size_t k = 0; k < nops; k++) {
		struct gcu_op *op = &m->ops[ops[k]];
		size_t j, seen = 0;

		/* this thread's calls begin where the last match left off */
		while (ci < ncalls && thread_before(m, calls[ci], op)) {
			m->unjoined_calls += model_call(m, calls[ci]).ret == 0;
			ci++;
		}
		for (j = ci; j < ncalls && seen < JOIN_LOOKAHEAD; j++, seen++) {
			struct api_call call = model_call(m, calls[j]), *c = &call;

			if (c->pid != op->rec.pid || c->tid != op->rec.tid)
				break;
			if (matches(&ids, c, gen[calls[j]], op))
				break;
		}
		if (j < ncalls && seen < JOIN_LOOKAHEAD && same_thread(m, calls[j], op)) {
			/* calls skipped on the way had no record: lost, or failed in the device */
			for (size_t s = ci; s < j; s++)
				m->unjoined_calls += model_call(m, calls[s]).ret == 0;
			op->call = (int64_t)calls[j];
			m->joined++;
			ci = j + 1;
		} else {
			m->unjoined_records++;
		}
	}
	for (; ci < ncalls; ci++)
		m->unjoined_calls += model_call(m, calls[ci]).ret == 0;

	/* a kernel's data moves belong to its call: the primary record of the same command */
	for (size_t i = 0; i < m->nops; i++) {
		struct gcu_op *d = &m->ops[i];
		join_idx key = (join_idx)i, *hit;

		if (primary(d))
			continue;
		hit = bsearch(&key, ops, nops, sizeof(*ops), by_thread_launch);
		d->call = hit ? m->ops[*hit].call : -1;
		if (d->call >= 0)
			m->joined++;
		else
			m->unjoined_records++;
	}
	m->gcu_joined = true;
out:
	free(ops);
	free(calls);
	free(gen);
	free(ids.v);
}
