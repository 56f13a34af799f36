// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The compact call store: every call read back as it was added, across chunks, with the fields
 * that do not fit their packed record (escapes), strings interned, and the bytes it holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/calls.h"

/* call i of a series: fields from i, so that any mix-up shows */
static void make(struct api_call *c, size_t i)
{
	memset(c, 0, sizeof(*c));
	c->call_id = i + 1;
	c->fn = (uint32_t)(i % 7);
	c->pid = 1000 + (uint32_t)(i % 3);
	c->tid = 2000 + (uint32_t)(i % 5);
	c->flags = (uint32_t)(i % 2);
	c->start_ns = 1000000000ull + i * 1000;
	c->end_ns = c->start_ns + 100 + i % 50;
	c->ret = (int64_t)(i % 4) - 1;
	if (i % 3 == 0) {
		c->args[0] = 0x7f0000001000ull + i;
		c->args[1] = 4096;
	}
	if (i % 11 == 0)
		c->args[API_REG_ARGS + API_STACK_ARGS - 1] =
			UINT64_MAX; /* the last stack argument */
	if (i % 13 == 0)
		c->attr[API_ATTR_SIZE - 1] = 0xab;
}

static void same(const struct api_call *a, const struct api_call *b)
{
	assert_int_equal(a->call_id, b->call_id);
	assert_int_equal(a->fn, b->fn);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->end_ns, b->end_ns);
	assert_int_equal(a->ret, b->ret);
	assert_memory_equal(a->args, b->args, sizeof(a->args));
	assert_memory_equal(a->attr, b->attr, sizeof(a->attr));
	for (int k = 0; k < 2; k++) {
		if (a->str[k])
			assert_string_equal(a->str[k], b->str[k]);
		else
			assert_null(b->str[k]);
		assert_int_equal(a->str_len[k], b->str_len[k]);
		assert_int_equal(a->truncated[k], b->truncated[k]);
	}
}

/* one chunk and one call more: the records go on in the next, in the order added */
static void test_chunks(void **state)
{
	struct call_store s;
	struct api_call c, got;
	const size_t n = CALLS_CHUNK + 1;

	(void)state;
	calls_init(&s);
	for (size_t i = 0; i < n; i++) {
		make(&c, i);
		assert_true(calls_add(&s, &c));
	}
	assert_int_equal(s.n, n);
	assert_int_equal(s.nchunks, 2);
	assert_int_equal(s.nthreads, 15); /* 3 pids x 5 tids, each once */
	for (size_t i = 0; i < n; i++) {
		make(&c, i);
		calls_get(&s, i, &got);
		same(&c, &got);
		assert_int_equal(calls_start_ns(&s, i), c.start_ns);
		assert_int_equal(calls_fn(&s, i), c.fn);
	}
	/* 32-byte records (whole chunks of them), their extras and the tables: well under 64
	 * bytes a call of the chunks' room */
	assert_true(calls_bytes(&s) < s.nchunks * CALLS_CHUNK * 48);
	assert_true(calls_bytes(&s) >= n * 32);
	calls_free(&s);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.nchunks, 0);
	/* empty again, it takes calls again */
	make(&c, 5);
	assert_true(calls_add(&s, &c));
	calls_get(&s, 0, &got);
	same(&c, &got);
	calls_free(&s);
}

/* every packed field at its limit and just past it (the escape to the pool) */
static void test_limits(void **state)
{
	static const uint64_t durs[] = { 0, UINT32_MAX - 1, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
					 UINT64_MAX };
	static const int64_t rets[] = { 0,
					-1,
					INT32_MAX,
					(int64_t)INT32_MAX + 1,
					INT32_MIN + 1,
					INT32_MIN,
					(int64_t)INT32_MIN - 1,
					INT64_MIN,
					INT64_MAX };
	static const uint32_t flags[] = { 0, UINT16_MAX - 1, UINT16_MAX, UINT16_MAX + 1,
					  UINT32_MAX };
	static const uint64_t ids[] = { 0, UINT32_MAX, (uint64_t)UINT32_MAX + 1, UINT64_MAX };
	static const uint32_t tids[] = { 0, 1, UINT32_MAX };
	struct api_call want[64], got;
	struct call_store s;
	size_t n = 0;

	(void)state;
	calls_init(&s);
	for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
		make(&want[n], n);
		want[n].start_ns = UINT64_MAX - 5;
		want[n].end_ns = want[n].start_ns + durs[i]; /* wraps, as end - start does */
		n++;
	}
	for (size_t i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
		make(&want[n], n);
		want[n++].ret = rets[i];
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		make(&want[n], n);
		want[n++].flags = flags[i];
	}
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		make(&want[n], n);
		want[n++].call_id = ids[i];
	}
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++) {
		make(&want[n], n);
		want[n].pid = tids[i];
		want[n++].tid = tids[i];
	}
	make(&want[n], n);
	want[n].fn = UINT16_MAX - 1;
	for (int a = 0; a < API_REG_ARGS + API_STACK_ARGS; a++)
		want[n].args[a] = UINT64_MAX - (uint64_t)a;
	memset(want[n].attr, 0xff, sizeof(want[n].attr));
	n++;
	for (size_t i = 0; i < n; i++)
		assert_true(calls_add(&s, &want[i]));
	make(&got, 0);
	got.fn = UINT16_MAX + 1; /* refused, not cut */
	assert_false(calls_add(&s, &got));
	assert_int_equal(s.n, n);
	for (size_t i = 0; i < n; i++) {
		calls_get(&s, i, &got);
		same(&want[i], &got);
	}
	calls_free(&s);
}

/* strings: stored once however often they come, with their length and truncation as given */
static void test_strings(void **state)
{
	char bin[8] = { 'a', 0, 'b', 'c', 0, 0, 0, 0 };
	char *name = strdup("kernel_name"), *other = strdup("kernel_name");
	struct api_call c, got;
	struct call_store s;

	(void)state;
	calls_init(&s);
	for (int i = 0; i < 1000; i++) {
		make(&c, (size_t)i);
		c.str[0] = i % 2 ? name : other; /* two copies of one string */
		c.str_len[0] = 11;
		c.truncated[0] = i % 3 == 0;
		assert_true(calls_add(&s, &c));
	}
	assert_int_equal(s.nstrs, 1);
	free(name); /* the store keeps its own */
	free(other);
	calls_get(&s, 998, &got);
	assert_string_equal(got.str[0], "kernel_name");
	assert_int_equal(got.str_len[0], 11);
	assert_false(got.truncated[0]);
	assert_null(got.str[1]);
	calls_get(&s, 0, &got);
	assert_true(got.truncated[0]);

	/* a payload with NULs in it; a length 0 with text (as a vpd import gives); none, but cut */
	make(&c, 1000);
	c.str[1] = bin;
	c.str_len[1] = 4;
	c.str[0] = "abc";
	c.str_len[0] = 0;
	assert_true(calls_add(&s, &c));
	make(&c, 1001);
	c.str[0] = "abc"; /* another string than "abc" of length 0 */
	c.str_len[0] = 3;
	c.truncated[1] = true;
	assert_true(calls_add(&s, &c));
	assert_int_equal(s.nstrs, 4);
	calls_get(&s, 1000, &got);
	assert_memory_equal(got.str[1], bin, 4);
	assert_int_equal(got.str_len[1], 4);
	assert_string_equal(got.str[0], "abc");
	assert_int_equal(got.str_len[0], 0);
	calls_get(&s, 1001, &got);
	assert_int_equal(got.str_len[0], 3);
	assert_null(got.str[1]);
	assert_true(got.truncated[1]);
	calls_free(&s);
}

/* many threads and many strings: the interning tables grow and still find each */
static void test_interning_grows(void **state)
{
	struct api_call c, got;
	struct call_store s;
	char buf[32];

	(void)state;
	calls_init(&s);
	for (uint32_t i = 0; i < 20000; i++) {
		make(&c, i);
		c.pid = i / 100;
		c.tid = i % 1000;
		snprintf(buf, sizeof(buf), "s%u", i % 3000);
		c.str[0] = buf;
		c.str_len[0] = (uint32_t)strlen(buf);
		assert_true(calls_add(&s, &c));
	}
	assert_int_equal(s.nstrs, 3000);
	for (uint32_t i = 0; i < 20000; i += 7) {
		calls_get(&s, i, &got);
		assert_int_equal(got.pid, i / 100);
		assert_int_equal(got.tid, i % 1000);
		snprintf(buf, sizeof(buf), "s%u", i % 3000);
		assert_string_equal(got.str[0], buf);
	}
	calls_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_interning_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
