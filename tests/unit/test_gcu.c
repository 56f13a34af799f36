// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* GCU records on the host clock (the fit of sync pairs) and joined to their calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gcu/clock.h"
#include "gcu/correlate.h"
#include "model/model.h"

/* a device clock: 1.5 GHz, 50 ppm fast, from its own origin */
static uint64_t true_ticks(uint64_t host_ns)
{
	return 123456789012ull + (uint64_t)((double)host_ns * 1.5 * (1 + 50e-6));
}

static void test_fit_long_run_with_drift(void **state)
{
	struct sync_pair *p = calloc(6000, sizeof(*p));
	struct clock_fit fit, nominal;
	uint64_t base = 5000000000000ull, worst = 0, worst_nominal = 0;
	uint32_t rnd = 12345;

	(void)state;
	/* ten minutes of pairs every 100 ms, each read with up to +-100 ns of jitter */
	for (int i = 0; i < 6000; i++) {
		uint64_t h = base + (uint64_t)i * 100000000ull;
		int jitter;

		rnd = rnd * 1103515245u + 12345u;
		jitter = (int)(rnd >> 16) % 201 - 100;
		p[i] = (struct sync_pair){ h + (uint64_t)jitter, true_ticks(h) };
	}
	assert_int_equal(clock_fit(p, 6000, 1500000000ull, &fit), 0);
	assert_int_equal(clock_fit(p, 1, 1500000000ull, &nominal), 0);
	for (uint64_t h = base; h < base + 600000000000ull; h += 7777777777ull) {
		uint64_t t = true_ticks(h), got = clock_to_host(&fit, t);
		uint64_t off = got > h ? got - h : h - got;
		uint64_t gn = clock_to_host(&nominal, t), offn = gn > h ? gn - h : h - gn;

		worst = off > worst ? off : worst;
		worst_nominal = offn > worst_nominal ? offn : worst_nominal;
	}
	/* under 1 us all along; without the drift taken out, tens of ms off */
	assert_true(worst < 1000);
	assert_true(worst_nominal > 10000000);
	free(p);
}

static void test_fit_edges(void **state)
{
	struct sync_pair p[2] = { { 1000, 5000 }, { 1500, 5750 } };
	struct clock_fit f;

	(void)state;
	assert_int_equal(clock_fit(p, 0, 1500000000ull, &f), -1);
	/* one pair: the nominal rate through it */
	assert_int_equal(clock_fit(p, 1, 1500000000ull, &f), 0);
	assert_int_equal(clock_to_host(&f, 5000), 1000);
	assert_int_equal(clock_to_host(&f, 5000 + 1500), 2000);
	/* two pairs 500 ns apart: too short to tell drift from jitter, nominal slope */
	assert_int_equal(clock_fit(p, 2, 1500000000ull, &f), 0);
	assert_int_equal(clock_to_host(&f, 5375 + 1500000), 1250 + 1000000);
}

/* --- joins ------------------------------------------------------------------------------------ */

static struct model m;

/* a call with a7, the first stack argument, too */
static size_t add_call7(const char *fn, uint32_t tid, uint64_t start, uint64_t a0, uint64_t a2,
			uint64_t a3, uint64_t a4, int64_t ret, uint64_t a7)
{
	struct api_call call, *c = &call;

	memset(c, 0, sizeof(*c));
	c->fn = (uint32_t)api_find(fn);
	c->pid = 100;
	c->tid = tid;
	c->start_ns = start;
	c->end_ns = start + 50;
	c->ret = ret;
	c->args[0] = a0;
	c->args[2] = a2;
	c->args[3] = a3;
	c->args[4] = a4;
	c->args[7] = a7;
	assert_true(calls_add(&m.calls, c));
	return m.ncalls++;
}

static size_t add_call(const char *fn, uint32_t tid, uint64_t start, uint64_t a0, uint64_t a2,
		       uint64_t a3, uint64_t a4, int64_t ret)
{
	return add_call7(fn, tid, start, a0, a2, a3, a4, ret, 0);
}

static size_t add_op(enum gcu_record_kind kind, uint32_t tid, uint64_t launch, uint32_t stream,
		     uint64_t bytes, uint8_t copy, uint64_t start, const char *name)
{
	struct gcu_op *op;

	m.ops = realloc(m.ops, (m.nops + 1) * sizeof(*m.ops));
	op = &m.ops[m.nops];
	memset(op, 0, sizeof(*op));
	op->rec.kind = (uint16_t)kind;
	op->rec.engine = kind == GCU_REC_KERNEL ? GCU_ENGINE_COMPUTE : GCU_ENGINE_ODTE;
	op->rec.pid = 100;
	op->rec.tid = tid;
	op->rec.launch_id = launch;
	op->rec.stream_id = stream;
	op->rec.bytes = bytes;
	op->rec.copy_kind = copy;
	op->start_ns = start;
	op->end_ns = start + 10;
	op->name = name;
	op->call = -1;
	return m.nops++;
}

static void test_join(void **state)
{
	size_t c_copy1, c_launch1, c_copy2, c_lost, c_launch2, c_other, c_failed, c_late;
	size_t o_copy1, o_launch1, o_copy2, o_launch2, o_other, o_early, o_dte;
	struct gcu_op *dte;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.gcu_activities = GCU_ACT_OPERATOR | GCU_ACT_MEMCPY;
	/* thread 1, stream handle 0xa (device stream 3): copy in, kernel, copy out */
	c_copy1 = add_call("topsMemcpyAsync", 1, 1000, 0, 4096, 1, 0xa, 0);
	/* the stream, on the stack */
	c_launch1 = add_call7("topsLaunchKernel", 1, 2000, 0xf00, 0, 0, 0, 0, 0xa);
	c_copy2 = add_call("topsMemcpyAsync", 1, 3000, 0, 4096, 2, 0xa, 0);
	/* its record was lost (the device ring overflowed) */
	c_lost = add_call("topsMemcpyAsync", 1, 4000, 0, 999, 2, 0xa, 0);
	c_launch2 = add_call7("topsLaunchKernel", 1, 5000, 0xf00, 0, 0, 0, 0, 0xa);
	/* a failed call submits nothing */
	c_failed = add_call("topsMemcpyAsync", 1, 6000, 0, 8, 1, 0xa, 1);
	/* thread 2, the default stream: a blocking copy */
	c_other = add_call("topsMemcpy", 2, 1500, 0, 64, 3, 0, 0);
	/* thread 2: a call whose record claims to start before it */
	c_late = add_call("topsMemcpy", 2, 9000, 0, 64, 3, 0, 0);

	o_copy1 = add_op(GCU_REC_MEMCPY, 1, 10, 3, 4096, 1, 1100, NULL);
	o_launch1 = add_op(GCU_REC_KERNEL, 1, 12, 3, 0, GCU_COPY_NONE, 2100, "k(int*)");
	o_copy2 = add_op(GCU_REC_MEMCPY, 1, 13, 3, 4096, 2, 3100, NULL);
	o_launch2 = add_op(GCU_REC_KERNEL, 1, 15, 3, 0, GCU_COPY_NONE, 5100, "k(int*)");
	o_other = add_op(GCU_REC_MEMCPY, 2, 11, 0, 64, 3, 1600, NULL);
	o_early = add_op(GCU_REC_MEMCPY, 2, 20, 0, 64, 3, 5000, NULL);
	o_dte = add_op(GCU_REC_DTE, 1, 12, 3, 80, GCU_COPY_NONE, 2100, "k(int*)");

	gcu_join(&m);
	assert_true(m.gcu_joined);
	assert_int_equal(m.ops[o_copy1].call, (int64_t)c_copy1);
	assert_int_equal(m.ops[o_launch1].call, (int64_t)c_launch1);
	assert_int_equal(m.ops[o_copy2].call, (int64_t)c_copy2);
	assert_int_equal(m.ops[o_launch2].call, (int64_t)c_launch2); /* past the lost one */
	assert_int_equal(m.ops[o_other].call, (int64_t)c_other);
	assert_int_equal(m.ops[o_early].call, -1); /* never mis-joined */
	dte = &m.ops[o_dte];
	assert_int_equal(dte->call, (int64_t)c_launch1); /* with its kernel */
	assert_int_equal(m.joined, 6);
	assert_int_equal(m.unjoined_records, 1);
	/* the lost record's call and the late one; the failed call expected nothing */
	assert_int_equal(m.unjoined_calls, 2);
	(void)c_lost;
	(void)c_failed;
	(void)c_late;
	calls_free(&m.calls);
	free(m.ops);
	memset(&m, 0, sizeof(m));
}

/* the same stream handle cannot be two device streams, nor a kernel two names */
static void test_join_identity(void **state)
{
	size_t a, b;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.gcu_activities = GCU_ACT_OPERATOR | GCU_ACT_MEMCPY;
	a = add_call("topsMemcpyAsync", 1, 1000, 0, 16, 1, 0xa, 0);
	b = add_call("topsMemcpyAsync", 1, 2000, 0, 16, 1, 0xa, 0);
	add_op(GCU_REC_MEMCPY, 1, 1, 3, 16, 1, 1100, NULL);
	add_op(GCU_REC_MEMCPY, 1, 2, 4, 16, 1, 2100, NULL); /* handle 0xa was stream 3 */
	gcu_join(&m);
	assert_int_equal(m.ops[0].call, (int64_t)a);
	assert_int_equal(m.ops[1].call, -1);
	assert_int_equal(m.unjoined_records, 1);
	assert_int_equal(m.unjoined_calls, 1);
	(void)b;
	calls_free(&m.calls);
	free(m.ops);
	memset(&m, 0, sizeof(m));
}

/* a destroyed stream's handle, handed out again for another stream, is that other stream */
static void test_join_handle_reuse(void **state)
{
	size_t a, d, b;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.gcu_activities = GCU_ACT_MEMCPY;
	a = add_call("topsMemcpyAsync", 1, 1000, 0, 16, 1, 0xa, 0);
	d = add_call("topsStreamDestroy", 1, 2000, 0xa, 0, 0, 0, 0);
	b = add_call("topsMemcpyAsync", 2, 3000, 0, 16, 1, 0xa, 0);
	add_op(GCU_REC_MEMCPY, 1, 1, 3, 16, 1, 1100, NULL);
	add_op(GCU_REC_MEMCPY, 2, 2, 5, 16, 1, 3100, NULL);
	gcu_join(&m);
	assert_int_equal(m.ops[0].call, (int64_t)a);
	assert_int_equal(m.ops[1].call, (int64_t)b);
	assert_int_equal(m.unjoined_records, 0);
	(void)d;
	calls_free(&m.calls);
	free(m.ops);
	memset(&m, 0, sizeof(m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_long_run_with_drift),
		cmocka_unit_test(test_fit_edges),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_identity),
		cmocka_unit_test(test_join_handle_reuse),
	};

	return cmocka_run_group_tests_name("gcu", tests, NULL, NULL);
}
