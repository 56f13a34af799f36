// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libinterpose.so: the baseline that eBPF tracing replaces, an LD_PRELOAD interposer of the
 * runtime call apibench makes (topsPeekAtLastError). Like an interposing tracer it resolves the
 * real function once, takes a CLOCK_MONOTONIC timestamp before and after each call and stores the
 * pair in a buffer of the calling thread's own (a ring: a tracer would flush it, this keeps the
 * last ones). At exit it says on stderr how many calls it timestamped, so that the benchmark can
 * tell it was in the way of every call.
 * usage: LD_PRELOAD=libinterpose.so app ... */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "tops/tops_runtime_api.h"

#define RING 4096 /* records per thread */

struct call_record {
	uint64_t start_ns, end_ns;
	int ret;
};

static __thread struct call_record ring[RING];
static __thread unsigned long next; /* the thread's calls */
static atomic_ulong calls;	    /* of the threads that ended */
static pthread_key_t thread_end;
static topsError_t (*real_peek)(void);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a thread's count is added up as it ends, not at each call: no shared cache line per call */
static void count_thread(void *unused)
{
	(void)unused;
	atomic_fetch_add(&calls, next);
	next = 0;
}

__attribute__((constructor)) static void interpose_init(void)
{
	real_peek = (topsError_t(*)(void))dlsym(RTLD_NEXT, "topsPeekAtLastError");
	pthread_key_create(&thread_end, count_thread);
}

__attribute__((destructor)) static void interpose_fini(void)
{
	count_thread(NULL); /* the thread that exits the process */
	fprintf(stderr, "interpose: %lu calls timestamped\n", atomic_load(&calls));
}

__attribute__((visibility("default"))) topsError_t topsPeekAtLastError(void)
{
	struct call_record *r = &ring[next % RING];
	topsError_t ret;

	if (!real_peek)
		return topsErrorUnknown;
	if (next == 0)
		pthread_setspecific(thread_end, ring); /* count_thread runs as the thread ends */
	r->start_ns = now_ns();
	ret = real_peek();
	r->end_ns = now_ns();
	r->ret = (int)ret;
	next++;
	return ret;
}
