// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The set of processes topsprof profiles: seeded with the launched or attached process, grown
 * on fork, shrunk when a process's last thread exits. Other programs look pids up in
 * tracked_pids; topsprof hears of every change through the proc_events ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"
#include "events.h"
#include "tracked.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} proc_events SEC(".maps");

/* [0]: records lost to a full ring buffer; [1]: processes lost to a full tracked_pids */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} proc_drops SEC(".maps");

static __always_inline void count_drop(__u32 which)
{
	count_in(&proc_drops, which);
}

static __always_inline void emit(enum tp_event_type type, struct task_struct *task, __u32 ppid,
				 __s32 exit_code)
{
	struct tp_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		count_drop(0);
		return;
	}
	e->hdr.type = type;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.pid = BPF_CORE_READ(task, tgid);
	e->hdr.tid = BPF_CORE_READ(task, pid);
	e->hdr.ts_ns = bpf_ktime_get_ns();
	e->ppid = ppid;
	e->exit_code = exit_code;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = BPF_CORE_READ(parent, tgid);
	__u32 pid = BPF_CORE_READ(child, tgid);
	__u32 *root;

	if (pid == ppid) /* a new thread of the same process */
		return 0;
	if (filter_pids) {
		root = bpf_map_lookup_elem(&tracked_pids, &ppid);
		if (!root)
			return 0;
		if (bpf_map_update_elem(&tracked_pids, &pid, root, BPF_ANY))
			count_drop(1);
		else
			tracked_changed();
	}
	emit(EV_PROC_FORK, child, ppid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *task)
{
	if (is_tracked(BPF_CORE_READ(task, tgid)))
		emit(EV_PROC_EXEC, task, 0, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (!is_tracked(tgid))
		return 0;
	/* do_exit() has dropped this thread from signal->live: zero means the process is gone */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	emit(EV_PROC_EXIT, task, 0, BPF_CORE_READ(task, exit_code));
	if (filter_pids && !bpf_map_delete_elem(&tracked_pids, &tgid))
		tracked_changed();
	return 0;
}

/* Signals generated for the launched application (app_tgid, set once it is forked), by signal:
 * when the last one came and who sent it. topsprof forwards a signal it was sent only when the
 * application did not get the same one too (a process group's, a terminal's, a job's). It runs
 * for every signal on the host: a rare event, and one compare when it is not the application's.
 * Pids are global ones: topsprof runs in the initial pid namespace (proctree_open), where its
 * own pids (fork's return, si_pid) are these. Helpers of Linux 5.8 at most (the ring buffer):
 * no bpf_get_current_task_btf() (5.11). */
__u32 app_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TP_SIG_MAX);
	__type(key, __u32);
	__type(value, struct tp_sig_seen);
} app_signals SEC(".maps");

SEC("tp_btf/signal_generate")
int BPF_PROG(proc_signal, int sig, struct kernel_siginfo *info, struct task_struct *task, int group,
	     int result)
{
	__u32 key = (__u32)sig;
	struct tp_sig_seen *s;

	if (!app_tgid || BPF_CORE_READ(task, tgid) != app_tgid)
		return 0;
	s = bpf_map_lookup_elem(&app_signals, &key);
	if (!s)
		return 0;
	s->ts_ns = bpf_ktime_get_ns();
	s->sender = (__u32)(bpf_get_current_pid_tgid() >> 32);
	__sync_fetch_and_add(&s->count, 1);
	return 0;
}
