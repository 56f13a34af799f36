// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/strlist.h"
#include "lib/units.h"

static void test_bytes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_bytes("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_bytes("7KiB", &v), 0);
	assert_int_equal(v, 7 * 1024);
	assert_int_equal(parse_bytes("3gb", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(parse_bytes("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	/* overflow, in the digits and in the scaling */
	assert_int_equal(parse_bytes("18446744073709551616", &v), -1);
	assert_int_equal(parse_bytes("18014398509481984KB", &v), -1);
	assert_int_equal(parse_bytes("", &v), -1);
	assert_int_equal(parse_bytes(NULL, &v), -1);
	assert_int_equal(parse_bytes("+5", &v), -1);
	assert_int_equal(parse_bytes("5 B", &v), -1);
	assert_int_equal(parse_bytes("5BB", &v), -1);
}

static void test_hz_and_uint(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_hz("100Hz", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(parse_hz("7HZ", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(parse_hz("7kHz", &v), -1);
	assert_int_equal(parse_uint("42", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_uint("42B", &v), -1);
}

static void test_seconds(void **state)
{
	double s;

	(void)state;
	assert_int_equal(parse_seconds("10", &s), 0);
	assert_true(s == 10.0);
	assert_int_equal(parse_seconds("1.5s", &s), 0);
	assert_true(s == 1.5);
	assert_int_equal(parse_seconds("250ms", &s), 0);
	assert_true(s == 0.25);
	assert_int_equal(parse_seconds("inf", &s), -1);
	assert_int_equal(parse_seconds("nan", &s), -1);
	assert_int_equal(parse_seconds("-1", &s), -1);
	assert_int_equal(parse_seconds("1min", &s), -1);
	assert_int_equal(parse_seconds("1e999", &s), -1);
}

static void test_strlist(void **state)
{
	struct strlist_iter it;
	const char *item;
	size_t len;
	const char *want[] = { "a", "bc", "", "d" };
	int n = 0;

	(void)state;
	strlist_init(&it, "a,bc,,d");
	while (strlist_next(&it, &item, &len)) {
		assert_true(n < 4);
		assert_int_equal(len, strlen(want[n]));
		assert_memory_equal(item, want[n], len);
		n++;
	}
	assert_int_equal(n, 4);
	strlist_init(&it, "");
	assert_true(strlist_next(&it, &item, &len));
	assert_int_equal(len, 0);
	assert_false(strlist_next(&it, &item, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_hz_and_uint),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_strlist),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
