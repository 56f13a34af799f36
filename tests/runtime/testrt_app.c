// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* testrt_app LAUNCHES SYNCS: calls the test runtime as many times, and says how many it made. */
#include <stdio.h>
#include <stdlib.h>

int testrtLaunch(unsigned long n);
int testrtSync(void);

int main(int argc, char **argv)
{
	long launches = argc > 1 ? atol(argv[1]) : 1000, syncs = argc > 2 ? atol(argv[2]) : 7;

	for (long i = 0; i < launches; i++)
		testrtLaunch((unsigned long)i % 64);
	for (long i = 0; i < syncs; i++)
		testrtSync();
	printf("testrt_app: %ld launches, %ld syncs\n", launches, syncs);
	return 0;
}
