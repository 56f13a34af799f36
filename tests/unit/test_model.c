// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The profile model from synthetic events: strings in pieces (lost ones marked), runtime
 * statistics, topstx ranges paired per thread, per id and per domain, marks, open ranges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static uint64_t next_id = 1;

static struct tp_api_event call(const char *fn, uint32_t pid, uint32_t tid, uint64_t start,
				uint64_t end, int64_t ret)
{
	struct tp_api_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = EV_API_CALL;
	e.hdr.pid = pid;
	e.hdr.tid = tid;
	e.hdr.ts_ns = end;
	e.start_ns = start;
	e.call_id = next_id++;
	e.fn = (uint32_t)api_find(fn);
	e.ret = ret;
	assert_true(api_find(fn) >= 0);
	return e;
}

static void piece(struct model *m, uint64_t call_id, uint8_t index, uint32_t off, const char *data,
		  uint8_t last)
{
	struct tp_str_event *s = calloc(1, sizeof(*s));

	s->hdr.type = EV_API_STR;
	s->call_id = call_id;
	s->index = index;
	s->offset = off;
	s->len = (uint16_t)strlen(data);
	s->last = last;
	memcpy(s->data, data, strlen(data));
	model_add_str(m, s);
	free(s);
}

/* a call with its message string, given in one piece */
static void named(struct model *m, struct tp_api_event e, const char *msg)
{
	if (msg)
		piece(m, e.call_id, 0, 0, msg, 1);
	model_add_call(m, &e);
}

static void test_strings(void **state)
{
	struct model m;
	struct tp_api_event e;

	(void)state;
	model_init(&m);
	/* pieces out of order, two strings of one call */
	e = call("topstxMark", 1, 1, 10, 20, 0);
	piece(&m, e.call_id, 0, 5, "world", 1);
	piece(&m, e.call_id, 1, 0, "payload", 1);
	piece(&m, e.call_id, 0, 0, "hello", 0);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 0).str[0], "helloworld");
	assert_int_equal(model_call(&m, 0).str_len[0], 10);
	assert_false(model_call(&m, 0).truncated[0]);
	assert_string_equal(model_call(&m, 0).str[1], "payload");
	/* cut by the limit */
	e = call("topstxMark", 1, 1, 30, 40, 0);
	piece(&m, e.call_id, 0, 0, "abc", 2);
	model_add_call(&m, &e);
	assert_true(model_call(&m, 1).truncated[0]);
	/* a lost piece in the middle: what came before it, marked */
	e = call("topstxMark", 1, 1, 50, 60, 0);
	piece(&m, e.call_id, 0, 0, "abc", 0);
	piece(&m, e.call_id, 0, 6, "ghi", 1);
	model_add_call(&m, &e);
	assert_true(model_call(&m, 2).truncated[0]);
	assert_string_equal(model_call(&m, 2).str[0], "abc");
	/* the last piece lost */
	e = call("topstxMark", 1, 1, 70, 80, 0);
	piece(&m, e.call_id, 0, 0, "abc", 0);
	model_add_call(&m, &e);
	assert_true(model_call(&m, 3).truncated[0]);
	/* no string at all */
	e = call("topstxRangePop", 1, 1, 90, 95, 0);
	model_add_call(&m, &e);
	assert_null(model_call(&m, 4).str[0]);
	assert_int_equal(m.npending, 0);
	assert_int_equal(m.first_ns, 10);
	assert_int_equal(m.last_ns, 95);
	model_free(&m);
}

static void test_runtime_stats(void **state)
{
	struct model m;
	struct tp_api_event e;
	struct api_stat cpu0 = { 2, 30, 10, 20 }, cpu1 = { 1, 5, 5, 5 }, idle = { 0, 0, 0, 0 };
	int fn = api_find("topsMalloc");

	(void)state;
	model_init(&m);
	/* statistics mode: per-CPU values merge; CPUs that never ran it count nothing */
	model_add_stat(&m, (uint32_t)fn, &cpu0);
	model_add_stat(&m, (uint32_t)fn, &idle);
	model_add_stat(&m, (uint32_t)fn, &cpu1);
	assert_int_equal(m.stats[fn].count, 3);
	assert_int_equal(m.stats[fn].total_ns, 35);
	assert_int_equal(m.stats[fn].min_ns, 5);
	assert_int_equal(m.stats[fn].max_ns, 20);
	/* trace mode: from the calls; topstx calls are not runtime statistics */
	e = call("topsFree", 7, 7, 100, 150, 0);
	model_add_call(&m, &e);
	e = call("topsFree", 7, 8, 200, 210, 0);
	model_add_call(&m, &e);
	e = call("topstxRangePop", 7, 8, 300, 301, 0);
	model_add_call(&m, &e);
	model_finish(&m, true, NULL);
	fn = api_find("topsFree");
	assert_int_equal(m.stats[fn].count, 2);
	assert_int_equal(m.stats[fn].min_ns, 10);
	assert_int_equal(m.stats[fn].max_ns, 50);
	assert_int_equal(m.stats[api_find("topstxRangePop")].count, 0);
	model_free(&m);
}

static const struct tx_range *range(const struct model *m, const char *domain, const char *name)
{
	for (size_t i = 0; i < m->nranges; i++)
		if (!strcmp(m->ranges[i].name, name) &&
		    ((!domain && !m->ranges[i].domain) ||
		     (domain && m->ranges[i].domain && !strcmp(domain, m->ranges[i].domain))))
			return &m->ranges[i];
	return NULL;
}

static void test_topstx_pairing(void **state)
{
	struct model m;
	const struct tx_range *r;
	struct tp_api_event e;

	(void)state;
	model_init(&m);
	/* domain D (handle 0xd0) in process 1 */
	named(&m, call("topstxDomainCreate", 1, 1, 1, 2, 0xd0), "D");
	/* thread 1: outer { inner } on the default domain; thread 2 interleaves its own range */
	named(&m, call("topstxRangePushA", 1, 1, 10, 11, 0), "outer");
	named(&m, call("topstxRangePushA", 1, 2, 12, 13, 0), "other thread");
	named(&m, call("topstxRangePushA", 1, 1, 20, 21, 1), "inner");
	model_add_call(&m, (e = call("topstxRangePop", 1, 2, 25, 26, 0), &e));
	model_add_call(&m, (e = call("topstxRangePop", 1, 1, 30, 31, 1), &e));
	model_add_call(&m, (e = call("topstxRangePop", 1, 1, 40, 41, 0), &e));
	/* start/end: ended by another thread, matched by id */
	named(&m, call("topstxRangeStart", 1, 1, 50, 51, 77), "async");
	e = call("topstxRangeEnd", 1, 3, 90, 91, 0);
	e.args[0] = 77;
	model_add_call(&m, &e);
	/* the custom domain: a push and a start/end */
	e = call("topstxDomainRangePush", 1, 1, 100, 101, 0);
	e.args[0] = 0xd0;
	named(&m, e, "in D");
	e = call("topstxDomainRangePop", 1, 1, 110, 111, 0);
	e.args[0] = 0xd0;
	model_add_call(&m, &e);
	e = call("topstxDomainMark", 1, 1, 112, 113, 0);
	e.args[0] = 0xd0;
	named(&m, e, "m");
	named(&m, call("topstxMark", 1, 1, 114, 115, 0), "m");
	named(&m, call("topstxMark", 1, 2, 116, 117, 0), "m");
	/* refused by the library (returns -1): no range */
	named(&m, call("topstxRangePushA", 1, 1, 120, 121, -1), "refused");
	/* never closed */
	named(&m, call("topstxRangePushA", 1, 1, 130, 131, 0), "left open");

	model_finish(&m, true, "D");
	r = range(&m, NULL, "outer");
	assert_non_null(r);
	assert_int_equal(r->start_ns, 10);
	assert_int_equal(r->end_ns, 41);
	r = range(&m, NULL, "inner");
	assert_int_equal(r->start_ns, 20);
	assert_int_equal(r->end_ns, 31);
	r = range(&m, NULL, "other thread");
	assert_int_equal(r->end_ns, 26);
	r = range(&m, NULL, "async");
	assert_int_equal(r->start_ns, 50);
	assert_int_equal(r->end_ns, 91);
	r = range(&m, "D", "in D");
	assert_non_null(r);
	assert_int_equal(r->end_ns, 111);
	assert_null(range(&m, NULL, "refused"));
	assert_int_equal(m.tx_open, 1);
	assert_int_equal(m.nranges, 5);
	assert_int_equal(m.nmarks, 2); /* "m" in D, "m" twice in the default domain */
	for (size_t i = 0; i < m.nmarks; i++)
		assert_int_equal(m.marks[i].count, m.marks[i].domain ? 1 : 2);
	model_free(&m);

	/* the same without D included: its range and mark are left out */
	model_init(&m);
	named(&m, call("topstxDomainCreate", 1, 1, 1, 2, 0xd0), "D");
	e = call("topstxDomainRangePush", 1, 1, 100, 101, 0);
	e.args[0] = 0xd0;
	named(&m, e, "in D");
	e = call("topstxDomainRangePop", 1, 1, 110, 111, 0);
	e.args[0] = 0xd0;
	model_add_call(&m, &e);
	model_finish(&m, true, "Other,Names");
	assert_int_equal(m.nranges, 0);
	model_free(&m);
}

/* only a summary asked for: the runtime calls are not kept but counted, their statistics the
 * same as from kept calls (trace mode) or none of theirs (statistics mode: the kernel's); the
 * topstx calls are kept and make ranges; a dropped call's strings are freed (ASan checks) */
static void test_summary_only(void **state)
{
	struct model keep, sum, stats;
	struct model *all[] = { &keep, &sum, &stats };
	int fn = api_find("topsMalloc");

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct tp_api_event e;

		model_init(all[k]);
		all[k]->summary_only = k > 0;
		next_id = 1;
		for (uint64_t i = 0; i < 1000; i++) {
			e = call("topsMalloc", 7, 7, 1000 * i, 1000 * i + 10 + i % 97, 0);
			model_add_call(all[k], &e);
		}
		e = call("topsModuleLoad", 7, 7, 2000000, 2000050, 0);
		named(all[k], e, "a string of a call not kept");
		e = call("topstxRangePushA", 7, 7, 2000100, 2000101, 0);
		named(all[k], e, "kept");
		e = call("topstxRangePop", 7, 7, 2000200, 2000201, 0);
		model_add_call(all[k], &e);
		model_finish(all[k], k < 2, NULL);
	}
	assert_int_equal(keep.ncalls, 1003);
	assert_int_equal(keep.calls_not_kept, 0);
	assert_int_equal(sum.ncalls, 2);
	assert_int_equal(sum.calls_not_kept, 1001);
	assert_int_equal(sum.npending, 0);
	assert_memory_equal(sum.stats, keep.stats, sizeof(keep.stats));
	assert_int_equal(sum.stats[fn].count, 1000);
	assert_int_equal(sum.stats[fn].min_ns, 10);
	assert_int_equal(sum.stats[fn].max_ns, 106);
	assert_int_equal(sum.first_ns, keep.first_ns);
	assert_int_equal(sum.last_ns, keep.last_ns);
	assert_int_equal(sum.nranges, 1);
	assert_string_equal(sum.ranges[0].name, "kept");
	/* statistics mode: the kernel's statistics alone */
	assert_int_equal(stats.stats[fn].count, 0);
	assert_int_equal(stats.calls_not_kept, 1001);
	/* topsprof cancel forgets them too */
	model_clear_collected(&sum);
	assert_int_equal(sum.calls_not_kept, 0);
	assert_int_equal(sum.streamed[fn].count, 0);
	for (int k = 0; k < 3; k++)
		model_free(all[k]);
}

/* a GCU record kept in the model's 80 bytes gives back the readout's record it came from (the
 * raw data write it so); a kind that does not fit the byte is no record's kind */
static void test_gcu_record(void **state)
{
	struct gcu_record r = { .kind = GCU_REC_MEMCPY,
				.engine = GCU_ENGINE_ODTE,
				.copy_kind = 1,
				.device = 15,
				.pid = 4242,
				.stream_id = 7,
				.launch_id = 1ull << 40,
				.name_id = 0,
				.tid = 4243,
				.start_ticks = 1ull << 50,
				.end_ticks = (1ull << 50) + 123,
				.bytes = 1ull << 33 },
			  back;
	struct model m;

	(void)state;
	assert_int_equal(sizeof(struct gcu_op), 80);
	model_init(&m);
	model_add_gcu(&m, &r, NULL);
	assert_int_equal(m.nops, 1);
	assert_int_equal(m.ops[0].call, -1);
	back = gcu_op_record(&m.ops[0]);
	assert_memory_equal(&back, &r, sizeof(r));
	r.kind = 256 + GCU_REC_KERNEL;
	model_add_gcu(&m, &r, NULL);
	assert_int_equal(m.ops[1].rec.kind, UINT8_MAX);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),	       cmocka_unit_test(test_runtime_stats),
		cmocka_unit_test(test_topstx_pairing), cmocka_unit_test(test_summary_only),
		cmocka_unit_test(test_gcu_record),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
