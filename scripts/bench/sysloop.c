// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sysloop: the cheapest system call in a loop, for what the tracepoints on every system call
 * cost it (scripts/bench/kcalls.sh). getppid through syscall(2): the C library caches nothing
 * of it, and the kernel does next to nothing. Prints ns_per_call=X from the thread's own CPU
 * time (the time it ran, whatever else the machine ran meanwhile), and wall_ns_per_call=X.
 * usage: sysloop [-n CALLS] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = 1000000;
	double t0, t1, c0, c1;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n' || (n = strtol(optarg, NULL, 10)) <= 0) {
			fprintf(stderr, "usage: sysloop [-n CALLS]\n");
			return 2;
		}
	}
	for (long i = 0; i < n / 100; i++) /* warm up */
		syscall(SYS_getppid);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("calls=%ld ns_per_call=%.1f wall_ns_per_call=%.1f\n", n, (c1 - c0) / n,
	       (t1 - t0) / n);
	return 0;
}
