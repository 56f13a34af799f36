// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Many threads, streams and devices at once: each thread runs `calls` rounds of copy in,
 * kernel, copy out on its streams, and checks every result.
 * usage: stress [-n calls] [-t threads] [-s streams-per-thread] [-d devices] [-e elements] [-c]
 * -c: every round on the next CPU (sched_setaffinity), so that calls come from every CPU */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

struct opts {
	int calls, threads, streams, devices;
	unsigned long elems;
	bool hop_cpus;
};

struct worker {
	pthread_t th;
	int id;
	const struct opts *o;
	long launches, copies;
	int errors;
};

/* y[i] = x[i] * 2 + 1 */
static void stress_scale(void **args, dim3 grid, dim3 block)
{
	const float *x = *(float **)args[0];
	float *y = *(float **)args[1];
	unsigned long n = *(unsigned long *)args[2];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		y[i] = x[i] * 2.0f + 1.0f;
}

__attribute__((constructor)) static void register_kernels(void)
{
	static const topsKernelInfo k = { "stress_scale(float const*, float*, unsigned long)", 2000,
					  150, 2, 8 };

	CHECK(__topsRegisterKernel(stress_scale, &k));
}

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	size_t bytes = o->elems * sizeof(float);
	topsStream_t *st = calloc((size_t)o->streams, sizeof(*st));
	float **hin = calloc((size_t)o->streams, sizeof(float *));
	float **hout = calloc((size_t)o->streams, sizeof(float *));
	float **din = calloc((size_t)o->streams, sizeof(float *));
	float **dout = calloc((size_t)o->streams, sizeof(float *));
	unsigned long n = o->elems;

	CHECK(topsSetDevice(w->id % o->devices));
	for (int s = 0; s < o->streams; s++) {
		CHECK(topsStreamCreate(&st[s]));
		CHECK(topsHostMalloc((void **)&hin[s], bytes, 0));
		CHECK(topsHostMalloc((void **)&hout[s], bytes, 0));
		CHECK(topsMalloc((void **)&din[s], bytes));
		CHECK(topsMalloc((void **)&dout[s], bytes));
	}
	for (int i = 0; i < o->calls; i++) {
		int s = i % o->streams;
		void *args[] = { &din[s], &dout[s], &n };
		float seed = (float)(w->id * 1000 + i);

		if (o->hop_cpus) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(i % sysconf(_SC_NPROCESSORS_ONLN), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		/* the stream's previous round must be done before its buffers are reused */
		CHECK(topsStreamSynchronize(st[s]));
		if (i >= o->streams) {
			float want = (float)(w->id * 1000 + i - o->streams) * 2.0f + 1.0f;

			for (unsigned long k = 0; k < n; k += 97)
				w->errors += hout[s][k] != want;
		}
		for (unsigned long k = 0; k < n; k++)
			hin[s][k] = seed;
		CHECK(topsMemcpyAsync(din[s], hin[s], bytes, topsMemcpyHostToDevice, st[s]));
		CHECK(topsLaunchKernel((const void *)stress_scale, DIM3(1, 1, 1), DIM3(64, 1, 1),
				       args, 0, st[s]));
		CHECK(topsMemcpyAsync(hout[s], dout[s], bytes, topsMemcpyDeviceToHost, st[s]));
		w->launches++;
		w->copies += 2;
	}
	for (int s = 0; s < o->streams && s < o->calls; s++) {
		int last = s + (o->calls - 1 - s) / o->streams * o->streams;
		float want = (float)(w->id * 1000 + last) * 2.0f + 1.0f;

		CHECK(topsStreamSynchronize(st[s]));
		for (unsigned long k = 0; k < n; k += 97)
			w->errors += hout[s][k] != want;
	}
	for (int s = 0; s < o->streams; s++) {
		CHECK(topsStreamDestroy(st[s]));
		CHECK(topsHostFree(hin[s]));
		CHECK(topsHostFree(hout[s]));
		CHECK(topsFree(din[s]));
		CHECK(topsFree(dout[s]));
	}
	free(st);
	free(hin);
	free(hout);
	free(din);
	free(dout);
	return NULL;
}

int main(int argc, char **argv)
{
	struct opts o = { .calls = 200, .threads = 4, .streams = 2, .devices = 0, .elems = 4096 };
	struct worker *w;
	long launches = 0, copies = 0;
	int errors = 0, ndev, c;

	while ((c = getopt(argc, argv, "n:t:s:d:e:c")) != -1) {
		switch (c) {
		case 'n':
			o.calls = atoi(optarg);
			break;
		case 't':
			o.threads = atoi(optarg);
			break;
		case 's':
			o.streams = atoi(optarg);
			break;
		case 'd':
			o.devices = atoi(optarg);
			break;
		case 'e':
			o.elems = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			o.hop_cpus = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n calls] [-t threads] [-s streams] [-d devices] "
				"[-e elements]\n",
				argv[0]);
			return 2;
		}
	}
	CHECK(topsGetDeviceCount(&ndev));
	if (o.devices <= 0 || o.devices > ndev)
		o.devices = ndev;
	if (o.calls < 1 || o.threads < 1 || o.streams < 1 || o.elems < 1) {
		fprintf(stderr, "stress: counts must be positive\n");
		return 2;
	}
	w = calloc((size_t)o.threads, sizeof(*w));
	for (int i = 0; i < o.threads; i++) {
		w[i].id = i;
		w[i].o = &o;
		if (pthread_create(&w[i].th, NULL, work, &w[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < o.threads; i++) {
		pthread_join(w[i].th, NULL);
		launches += w[i].launches;
		copies += w[i].copies;
		errors += w[i].errors;
	}
	free(w);
	printf("stress: threads=%d streams=%d devices=%d launches=%ld copies=%ld errors=%d\n",
	       o.threads, o.streams, o.devices, launches, copies, errors);
	return errors ? 1 : 0;
}
