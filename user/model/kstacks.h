/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The kernel callstack profile: the entry points (system calls, KMD functions) with their calls
 * and time, and the kernel stacks taken (off CPU: waits with their time; at KMD functions: calls
 * with their time), named, with the process and the entry point they were taken in. */
#ifndef TOPSPROF_KSTACKS_H
#define TOPSPROF_KSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kernel_entry {
	char *name;  /* "futex", or a KMD function "gcu_ioctl [enflame]" */
	bool driver; /* the calls entered the driver */
	uint64_t calls, total_ns, max_ns;
};

struct kernel_stack {
	uint32_t pid;
	char *comm;
	char *entry;  /* the entry point the thread was in, or NULL */
	bool driver;  /* ... and it entered the driver */
	bool offcpu;  /* a wait (time off CPU), else a call of a KMD function */
	char *frames; /* folded: user frames outermost first, then kernel frames marked "_[k]" */
	uint64_t count, total_ns, max_ns;
};

struct kernel_profile {
	bool collected;	 /* --kernel-callstack was on */
	char *mechanism; /* what the kernel offered, as the report says it */
	char *filter;	 /* --kernel-callstack-filter, as given */
	struct kernel_entry *e;
	size_t ne, cape;
	struct kernel_stack *s;
	size_t ns, caps;
	uint64_t lost_entries, lost_stacks, lost_threads;
	uint64_t untold; /* futex waits not told to be on the driver's memory (events.h) */
};

/* add to the profile (equal ones are merged by kernel_profile_finish); 0 or -ENOMEM */
int kernel_add_entry(struct kernel_profile *p, const char *name, bool driver, uint64_t calls,
		     uint64_t total_ns, uint64_t max_ns);
int kernel_add_stack(struct kernel_profile *p, const struct kernel_stack *s);
/* equal entries (name, driver) and stacks (process, entry, kind, frames) merged; entries and
 * stacks sorted by time, most first */
void kernel_profile_finish(struct kernel_profile *p);
/* topsprof cancel: the counts go, the settings stay */
void kernel_profile_clear(struct kernel_profile *p);
void kernel_profile_free(struct kernel_profile *p);

#endif
