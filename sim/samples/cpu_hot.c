// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A CPU-bound GCU application with known hot spots, for CPU call stack sampling: a worker
 * thread and the main thread spin in hot_loop (4 parts of the time) and warm_loop (1 part),
 * between a few GCU calls. usage: cpu_hot [milliseconds] (default 1000)
 * cpu_hot -n ROUNDS: a fixed amount of work instead (the benchmark's), reporting the CPU time the
 * process took for it
 * cpu_hot -s MS: for MS milliseconds, one short-lived thread after another, each busy 5 ms
 * cpu_hot -p PRE MS: busy PRE milliseconds on one thread before its first GCU call, idle a
 * second after it, then as cpu_hot MS
 * cpu_hot -c MS: as cpu_hot MS, but by each thread's own CPU time, not by the clock: the same
 * CPU time, in the same shares, however busy the machine is (it takes longer when the CPUs are
 * shared); and the two loops in turns of 30 to 70 ms of CPU, so that their shares hold over the
 * whole run
 * Each reports the CPU time it took (cpu_ms) and how long it ran (wall_ms); all but -s also
 * report, on a line of their own, each loop's CPU time summed over both threads (hot_ms,
 * warm_ms), each thread's (main_ms, worker_ms), all of the same span as cpu_ms, when that span
 * began and ended (start_s, end_s: CLOCK_REALTIME, seconds), and the CPU time of the whole process
 * up to its end (proc_ms: its start, exec and loading too). */
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

static long rounds;   /* -n: fixed work; else timed */
static int cpu_bound; /* -c: timed by the thread's CPU clock */

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double thread_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the clock the timed loops run by */
static inline __attribute__((always_inline)) double loop_clock(void)
{
	return cpu_bound ? thread_ms() : now_ms();
}

/* inlined: the samples land in the caller itself. ms of time, or parts of the fixed rounds */
static inline __attribute__((always_inline)) void spin_for(double ms)
{
	double end = loop_clock() + ms;
	long n = (long)((double)rounds * ms);
	/* -c: its clock is a system call, read a few times less often */
	int inner = cpu_bound ? 800000 : 200000;

	while (rounds ? n-- > 0 : loop_clock() < end)
		for (int i = 0; i < inner; i++)
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

/* a thread's own account: the CPU time of each loop and of the thread */
struct account {
	double hot, warm, thread;
};

static struct account main_acct, worker_acct;

/* one thread's loops, each timed by the thread's CPU clock; inlined, so that the loops are called
 * from main and worker themselves (their stacks stay main;hot_loop and worker;hot_loop).
 * -c: in turns of 30 to 70 ms of CPU (pseudo-random lengths: no period that could beat with a
 * sampler's; each many samples long at ~100 Hz), until the thread's clock says ms: a sampler
 * whose view of the app drifts over the run (other work on the CPUs) sees both loops alike */
static inline __attribute__((always_inline)) void run_loops(double ms, struct account *a,
							    unsigned int seed)
{
	double t0 = thread_ms(), t1, t2, left = ms;

	if (!cpu_bound) {
		hot_loop(ms * 0.8);
		t1 = thread_ms();
		warm_loop(ms * 0.2);
		a->hot = t1 - t0;
		a->warm = thread_ms() - t1;
		return;
	}
	while (left > 0) {
		double turn;

		seed = seed * 1103515245u + 12345u;
		turn = 30 + (double)((seed >> 16) % 4001) / 100;
		if (turn > left)
			turn = left;
		hot_loop(turn * 0.8);
		t1 = thread_ms();
		warm_loop(turn * 0.2);
		t2 = thread_ms();
		a->hot += t1 - t0;
		a->warm += t2 - t1;
		left -= t2 - t0;
		t0 = t2;
	}
}

static void *worker(void *arg)
{
	double ms = *(double *)arg;

	run_loops(ms, &worker_acct, 2);
	worker_acct.thread = thread_ms();
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
	double main0 = thread_ms(), start_s = realtime_s(), cpu1, t1;
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
		main0 = thread_ms();
		start_s = realtime_s();
	}
	if (argc > 2 && !strcmp(argv[1], "-c")) {
		cpu_bound = 1;
		ms = atof(argv[2]);
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
	run_loops(ms, &main_acct, 1);
	pthread_join(t, NULL);
	CHECK(topsFree(d));
	/* the span ends here for every figure */
	main_acct.thread = thread_ms() - main0;
	cpu1 = cpu_ms();
	t1 = now_ms();
	printf("cpu_hot: hot_ms=%.1f warm_ms=%.1f main_ms=%.1f worker_ms=%.1f start_s=%.6f "
	       "end_s=%.6f proc_ms=%.1f\n",
	       main_acct.hot + worker_acct.hot, main_acct.warm + worker_acct.warm, main_acct.thread,
	       worker_acct.thread, start_s, realtime_s(), cpu1);
	if (rounds)
		printf("cpu_hot: %ld rounds on 2 threads, cpu_ms=%.1f, PASSED\n", rounds,
		       cpu1 - cpu0);
	else
		printf("cpu_hot: %.0f ms on 2 threads, cpu_ms=%.1f wall_ms=%.1f, PASSED\n", ms,
		       cpu1 - cpu0, t1 - t0);
	return 0;
}
