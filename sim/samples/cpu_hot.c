// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A CPU-bound GCU application with known hot spots, for CPU call stack sampling: a worker
 * thread and the main thread spin in hot_loop (4 parts of the time) and warm_loop (1 part),
 * between a few GCU calls. usage: cpu_hot [milliseconds] (default 1000)
 * cpu_hot -n ROUNDS: a fixed amount of work instead (the benchmark's), reporting the CPU time the
 * process took for it
 * cpu_hot -s MS: for MS milliseconds, one short-lived thread after another, each busy 5 ms
 * cpu_hot -p PRE MS: busy PRE milliseconds on one thread before its first GCU call, idle a
 * second after it, then as cpu_hot MS
 * Each reports the CPU time it took (cpu_ms) and how long it ran (wall_ms). */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "common.h"

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long rounds; /* -n: fixed work; else timed */

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* inlined: the samples land in the caller itself. ms of time, or parts of the fixed rounds */
static inline __attribute__((always_inline)) void spin_for(double ms)
{
	double end = now_ms() + ms;
	long n = (long)((double)rounds * ms);

	while (rounds ? n-- > 0 : now_ms() < end)
		for (int i = 0; i < 200000; i++)
			sink += (unsigned long)i * 2654435761u;
}

__attribute__((noinline)) void hot_loop(double ms)
{
	spin_for(ms);
}

__attribute__((noinline)) void warm_loop(double ms)
{
	spin_for(ms);
}

static void *worker(void *arg)
{
	double ms = *(double *)arg;

	hot_loop(ms * 0.8);
	warm_loop(ms * 0.2);
	return NULL;
}

static void *short_worker(void *arg)
{
	(void)arg;
	warm_loop(5);
	return NULL;
}

/* threads that begin and end between two samples of a utilization sampler */
static int short_threads(double ms)
{
	double t0 = now_ms(), cpu0 = cpu_ms();
	int n = 0;

	while (now_ms() - t0 < ms) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_worker, NULL)) {
			fprintf(stderr, "cpu_hot: pthread_create failed\n");
			return 1;
		}
		pthread_join(t, NULL);
		n++;
	}
	printf("cpu_hot: %d short threads, cpu_ms=%.1f wall_ms=%.1f, PASSED\n", n, cpu_ms() - cpu0,
	       now_ms() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000, cpu0 = cpu_ms(), t0 = now_ms(), idle = 0;
	pthread_t t;
	void *d;

	if (argc > 2 && !strcmp(argv[1], "-s"))
		return short_threads(atof(argv[2]));
	if (argc > 3 && !strcmp(argv[1], "-p")) {
		/* busy before its first GCU call, idle a second after it, then as usual: what it
		 * reports is of the time from its first call */
		warm_loop(atof(argv[2]));
		ms = atof(argv[3]);
		idle = 1000;
		cpu0 = cpu_ms();
		t0 = now_ms();
	}
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		rounds = atol(argv[2]);
		ms = 1; /* the whole of the rounds */
	}
	CHECK(topsMalloc(&d, 4096));
	if (idle) {
		struct timespec ts = { (time_t)(idle / 1000), (long)((long)idle % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	if (pthread_create(&t, NULL, worker, &ms)) {
		fprintf(stderr, "cpu_hot: pthread_create failed\n");
		return 1;
	}
	hot_loop(ms * 0.8);
	warm_loop(ms * 0.2);
	pthread_join(t, NULL);
	CHECK(topsFree(d));
	if (rounds)
		printf("cpu_hot: %ld rounds on 2 threads, cpu_ms=%.1f, PASSED\n", rounds,
		       cpu_ms() - cpu0);
	else
		printf("cpu_hot: %.0f ms on 2 threads, cpu_ms=%.1f wall_ms=%.1f, PASSED\n", ms,
		       cpu_ms() - cpu0, now_ms() - t0);
	return 0;
}
