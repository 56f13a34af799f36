/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Records that BPF programs send to topsprof through ring buffers. One header for both sides:
 * BPF code includes vmlinux.h first, user code gets the __u32/__u64 types from linux/types.h.
 * Every record starts with struct tp_event_hdr, whose type says what follows. */
#ifndef TOPSPROF_EVENTS_H
#define TOPSPROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TASK_COMM_LEN 16

enum tp_event_type {
	EV_PROC_FORK = 1, /* a tracked process created a child process */
	EV_PROC_EXEC = 2, /* a tracked process exec'd a new image */
	EV_PROC_EXIT = 3, /* the last thread of a tracked process exited */
};

struct tp_event_hdr {
	__u32 type; /* enum tp_event_type */
	__u32 cpu;
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

struct tp_proc_event {
	struct tp_event_hdr hdr;
	__u32 ppid;	 /* EV_PROC_FORK: the parent; hdr.pid is the child */
	__s32 exit_code; /* EV_PROC_EXIT: as wait(2) reports it (status << 8 | signal) */
	char comm[TASK_COMM_LEN];
};

#endif
