// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A second runtime, for the tests only: two functions, as a vendor's library would export them. */
#include <stddef.h>

static volatile unsigned long work;

__attribute__((visibility("default"), noinline)) int testrtLaunch(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		work += i;
	return 0;
}

__attribute__((visibility("default"), noinline)) int testrtSync(void)
{
	return work == (unsigned long)-1;
}
