// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A topstx message in memory whose page fault blocks for as long as the application wants (a
 * userfaultfd region, as a FUSE or NFS file could): the probe, faulting it in, sleeps until the
 * fault is resolved, DELAY_MS after it began. Meanwhile another thread marks "busy mark" once a
 * millisecond: its events must reach topsprof as they come (the sleeping probe holds no ring
 * buffer record), none lost to a ring that a held record keeps from being read.
 * With "ro", the region is made read-only after it is registered: without sleepable uprobes the
 * probe cannot fault it in, and topsprof reads it again from a private read-only mapping, as it
 * would a file's; the fault that read makes blocks for DELAY_MS, and must hold up none of the
 * events meanwhile.
 * Prints what it passed, how many busy marks it made and how long the blocked mark took.
 * usage: topstx_uffd DELAY_MS [ro]; exit 2 when userfaultfd is not available here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "topstx/topstx.h"

#define PAGE 4096

static const char uffd_msg[] = "uffd message";
static int uffd, delay_ms;
static char *region;
static atomic_int done, busy_done;
static atomic_long busy_marks;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static topstxEventAttributes_t attr(const char *msg)
{
	topstxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = TOPSTX_VERSION;
	a.size = sizeof(a);
	a.messageType = TOPSTX_MESSAGE_TYPE_ASCII;
	a.message.str = msg;
	return a;
}

/* resolves the region's fault DELAY_MS after it is reported */
static void *resolver(void *arg)
{
	static char page[PAGE] __attribute__((aligned(PAGE)));

	(void)arg;
	memcpy(page, uffd_msg, sizeof(uffd_msg));
	while (!atomic_load(&done)) {
		struct pollfd p = { .fd = uffd, .events = POLLIN };
		struct uffd_msg m;
		struct uffdio_copy c;

		if (poll(&p, 1, 20) <= 0 || read(uffd, &m, sizeof(m)) != sizeof(m) ||
		    m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		usleep((useconds_t)delay_ms * 1000);
		c.dst = m.arg.pagefault.address & ~(uint64_t)(PAGE - 1);
		c.src = (uint64_t)(uintptr_t)page;
		c.len = PAGE;
		c.mode = 0;
		c.copy = 0;
		if (ioctl(uffd, UFFDIO_COPY, &c) && errno != EEXIST)
			perror("UFFDIO_COPY");
	}
	return NULL;
}

static void *busy(void *arg)
{
	topstxEventAttributes_t a = attr("busy mark");

	(void)arg;
	while (!atomic_load(&busy_done)) {
		topstxMark(&a);
		atomic_fetch_add(&busy_marks, 1);
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	topstxEventAttributes_t a;
	pthread_t rt, bt;
	long t0, took;
	int ro = argc > 2 && !strcmp(argv[2], "ro");

	delay_ms = argc > 1 ? atoi(argv[1]) : 2000;
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		return 2;
	}
	region = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	reg.range.start = (uint64_t)(uintptr_t)region;
	reg.range.len = PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return 2;
	}
	if (ro && mprotect(region, PAGE, PROT_READ)) {
		perror("mprotect");
		return 1;
	}
	if (pthread_create(&rt, NULL, resolver, NULL) || pthread_create(&bt, NULL, busy, NULL))
		return 1;
	usleep(100 * 1000); /* the busy marks flow */
	/* the region is not touched before the call: its first fault is the probe's */
	a = attr(region);
	t0 = now_ms();
	topstxMark(&a);
	took = now_ms() - t0;
	/* with "ro", topsprof's read of it faults meanwhile: the busy marks go on past its delay */
	usleep((useconds_t)(ro ? delay_ms + 500 : 200) * 1000);
	atomic_store(&busy_done, 1);
	pthread_join(bt, NULL);
	atomic_store(&done, 1);
	pthread_join(rt, NULL);

	printf("passed: mark '%s' at %p\n", uffd_msg, (void *)region);
	printf("busy marks: %ld\n", atomic_load(&busy_marks));
	printf("the uffd mark took %ld ms\n", took);
	printf("topstx_uffd: PASSED\n");
	return 0;
}
