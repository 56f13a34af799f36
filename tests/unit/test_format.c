// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/format.h"

static void test_time(void **state)
{
	static const struct {
		double ns;
		const char *want;
	} cases[] = {
		{ 0, "0.00ns" },	  { 461, "461.00ns" },	     { 999.99, "999.99ns" },
		{ 999.996, "1.00us" },	  { 13440, "13.44us" },	     { 999994, "999.99us" },
		{ 56610000, "56.61ms" },  { 171850000, "171.85ms" }, { 1.2e9, "1.20s" },
		{ 636.73e6, "636.73ms" }, { 3600e9, "3600.00s" },    { -5, "0.00ns" },
	};
	char buf[FMT_TIME_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(fmt_time(buf, cases[i].ns), cases[i].want);
}

static void test_bytes(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(fmt_bytes(buf, sizeof(buf), 4000000), "4.00MB");
	assert_string_equal(fmt_bytes(buf, sizeof(buf), 4u << 20), "4.19MB");
	assert_string_equal(fmt_bytes(buf, sizeof(buf), 16384), "16.38KB");
	assert_string_equal(fmt_bytes(buf, sizeof(buf), 999), "999B");
	assert_string_equal(fmt_bytes(buf, sizeof(buf), 3000000000ull), "3.00GB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_bytes),
	};

	return cmocka_run_group_tests_name("format", tests, NULL, NULL);
}
