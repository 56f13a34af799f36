// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Device memory: every allocation is real, host-addressable memory (so kernels, which run on
 * the host, can use device pointers), recorded so that any pointer can be checked, and counted
 * against the device's size (by the kernel driver, when there is one). */
#include "internal.h"
#include "../kmd/gcusim_ioctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

struct alloc {
	uintptr_t base;
	size_t size;
	struct sim_device *dev;
};

static struct alloc *allocs; /* sorted by base */
static size_t nallocs, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* index of the allocation containing p, or -1 */
static long find_locked(uintptr_t p)
{
	size_t lo = 0, hi = nallocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p < allocs[mid].base)
			hi = mid;
		else if (p >= allocs[mid].base + allocs[mid].size)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* the device's memory: the kernel driver counts it for every process (and takes back what a
 * process held when it ends); the user-space device, for this process */
static bool take(struct sim_device *d, size_t size)
{
	bool ok;

	if (d->region.driver) {
		struct gcusim_mem m = { .bytes = size, .op = GCUSIM_MEM_ALLOC };

		return !ioctl(d->region.fd, GCUSIM_IOC_MEM, &m);
	}
	pthread_mutex_lock(&d->lock);
	ok = size <= d->mem_total - d->mem_used;
	if (ok)
		d->mem_used += size;
	pthread_mutex_unlock(&d->lock);
	return ok;
}

static void give_back(struct sim_device *d, size_t size)
{
	if (d->region.driver) {
		struct gcusim_mem m = { .bytes = size, .op = GCUSIM_MEM_FREE };

		ioctl(d->region.fd, GCUSIM_IOC_MEM, &m);
		return;
	}
	pthread_mutex_lock(&d->lock);
	d->mem_used -= size;
	pthread_mutex_unlock(&d->lock);
}

topsError_t mem_dev_alloc(struct sim_device *d, size_t size, void **out)
{
	void *p;
	size_t i;

	if (!take(d, size))
		return topsErrorOutOfMemory;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	pthread_mutex_lock(&lock);
	if (p != MAP_FAILED && nallocs == cap) {
		size_t ncap = cap ? cap * 2 : 256;
		struct alloc *n = realloc(allocs, ncap * sizeof(*n));

		if (n) {
			allocs = n;
			cap = ncap;
		}
	}
	if (p == MAP_FAILED || nallocs == cap) {
		pthread_mutex_unlock(&lock);
		if (p != MAP_FAILED)
			munmap(p, size);
		give_back(d, size);
		return topsErrorOutOfMemory;
	}
	for (i = nallocs; i > 0 && allocs[i - 1].base > (uintptr_t)p; i--)
		allocs[i] = allocs[i - 1];
	allocs[i] = (struct alloc){ (uintptr_t)p, size, d };
	nallocs++;
	pthread_mutex_unlock(&lock);
	*out = p;
	return topsSuccess;
}

topsError_t mem_dev_free(void *p)
{
	struct alloc a;
	long i;

	pthread_mutex_lock(&lock);
	i = find_locked((uintptr_t)p);
	if (i < 0 || allocs[i].base != (uintptr_t)p) {
		pthread_mutex_unlock(&lock);
		return topsErrorInvalidValue; /* never allocated, freed already, or not its start */
	}
	a = allocs[i];
	memmove(&allocs[i], &allocs[i + 1], (nallocs - (size_t)i - 1) * sizeof(*allocs));
	nallocs--;
	pthread_mutex_unlock(&lock);
	munmap((void *)a.base, a.size);
	give_back(a.dev, a.size);
	return topsSuccess;
}

struct sim_device *mem_dev_find(const void *p, size_t len)
{
	struct sim_device *d = NULL;
	long i;

	pthread_mutex_lock(&lock);
	i = find_locked((uintptr_t)p);
	if (i >= 0 && len <= allocs[i].base + allocs[i].size - (uintptr_t)p)
		d = allocs[i].dev;
	pthread_mutex_unlock(&lock);
	return d;
}

struct sim_device *mem_dev_owner(const void *p)
{
	return mem_dev_find(p, 1);
}
