// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* apibench: how long one cheap runtime call takes, traced or not.
 * usage: apibench [-n calls-per-thread] [-t threads]
 * Prints: ns_per_call=... calls=... threads=... calls_per_s=... */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tops/tops_runtime_api.h"

static long calls = 200000;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *work(void *arg)
{
	double *ns = arg, t0 = now();

	for (long i = 0; i < calls; i++)
		if (topsPeekAtLastError() != topsSuccess)
			exit(1);
	*ns = (now() - t0) / (double)calls;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, c;
	pthread_t th[64];
	double ns[64], sum = 0, t0;

	while ((c = getopt(argc, argv, "n:t:")) != -1) {
		if (c == 'n')
			calls = atol(optarg);
		else if (c == 't')
			threads = atoi(optarg);
		else
			return 2;
	}
	if (threads < 1 || threads > 64 || calls < 1)
		return 2;
	topsPeekAtLastError(); /* start the runtime outside the measurement */
	t0 = now();
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work, &ns[i]);
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		sum += ns[i];
	}
	printf("ns_per_call=%.1f calls=%ld threads=%d calls_per_s=%.0f\n", sum / threads,
	       calls * threads, threads, (double)calls * threads / ((now() - t0) / 1e9));
	return 0;
}
