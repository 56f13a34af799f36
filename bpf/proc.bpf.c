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

/* a record of task, reserved, its header and comm filled in; NULL (counted) when the ring is full */
static __always_inline struct tp_proc_event *start(enum tp_event_type type,
						   struct task_struct *task)
{
	struct tp_proc_event *e = bpf_ringbuf_reserve(&proc_events, sizeof(*e), 0);

	if (!e) {
		count_drop(0);
		return NULL;
	}
	e->hdr.type = type;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.pid = BPF_CORE_READ(task, tgid);
	e->hdr.tid = BPF_CORE_READ(task, pid);
	e->hdr.ts_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	return e;
}

static __always_inline void emit(enum tp_event_type type, struct task_struct *task, __u32 ppid,
				 __s32 exit_code)
{
	struct tp_proc_event *e = start(type, task);

	if (!e)
		return;
	e->ppid = ppid;
	e->exit_code = exit_code;
	bpf_ringbuf_submit(e, 0);
}

/* Scoped probes (user/collect/tracer.c): the API probes are links of each followed process, which
 * topsprof makes when it hears of the process (its fork). A new process that could call the
 * runtime before they are in is held: stopped by a SIGSTOP queued before its first instruction,
 * and released (SIGCONT) once they are. That is a child that has the runtime mapped from its
 * parent (its address space has breakpoints: MMF_HAS_UPROBES), held at its fork; and a process
 * that execs a new image before its links are in (probed_pids), held at the exec. A child that
 * must exec or map the runtime first (a shell's, a launcher's) is not held: its links are in by
 * then. A traced process (ptrace) is never held: its tracer would see the stop as a signal of
 * its own. The record is reserved first, so that no process is ever stopped without topsprof
 * hearing of it; the signal is queued before the record is submitted, so that the SIGCONT
 * topsprof sends once it read the record cannot come first. */
const volatile bool hold_new = false;

#define HOLD_SIGSTOP	19 /* the same on x86 and arm64 */
#define MMF_HAS_UPROBES 19 /* the same since Linux 3.5 */

/* the processes whose API probes are in: topsprof adds one once its links are made; it goes at
 * its exit, and at an exec by a thread other than its first */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACKED_PIDS_MAX);
	__type(key, __u32);  /* tgid */
	__type(value, __u8); /* 1 */
} probed_pids SEC(".maps");

/* Linux 6.13: a signal to another task. Loaded only where the kernel has it */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;

/* mm_struct's flags: an unsigned long, a bitmap in a struct since Linux 6.18 */
struct mm_struct___ul {
	unsigned long flags;
} __attribute__((preserve_access_index));
struct mm_flags___bits {
	unsigned long __mm_flags[1];
} __attribute__((preserve_access_index));
struct mm_struct___bits {
	struct mm_flags___bits flags;
} __attribute__((preserve_access_index));

/* the address space of task has breakpoints of uprobes (ours, where it maps a probed file) */
static __always_inline bool has_uprobes(struct task_struct *task)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	unsigned long flags;

	if (!mm)
		return false;
	if (bpf_core_field_exists(((struct mm_struct___ul *)mm)->flags))
		flags = BPF_CORE_READ((struct mm_struct___ul *)mm, flags);
	else
		flags = BPF_CORE_READ((struct mm_struct___bits *)mm, flags.__mm_flags[0]);
	return flags & (1UL << MMF_HAS_UPROBES);
}

static __always_inline bool traced(struct task_struct *task)
{
	return BPF_CORE_READ(task, ptrace) != 0;
}

/* task is current, or (remote) a new task that has not run yet */
static __always_inline void hold(struct task_struct *task, bool remote, enum tp_hold_why why)
{
	struct tp_proc_event *e = start(EV_PROC_HELD, task);

	if (!e)
		return;
	e->ppid = why;
	/* interrupts are on in both places: the signal is queued before this returns */
	e->exit_code = remote ? bpf_send_signal_task(task, HOLD_SIGSTOP, PIDTYPE_TGID, 0)
			      : bpf_send_signal(HOLD_SIGSTOP);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child,
				   bool hold_child)
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
	/* the child has not run yet: a signal queued now stops it before its first instruction */
	if (hold_child && filter_pids && has_uprobes(child) && !traced(child))
		hold(child, true, HOLD_FORK);
	return 0;
}

/* one of the two is loaded: proc_fork_hold where new processes are held with
 * bpf_send_signal_task, proc_fork (with proc_hold_new before Linux 6.13) else */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child, false);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork_hold, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child, true);
}

/* without bpf_send_signal_task: a new task's first instructions in the kernel, in its own
 * context, with interrupts on; a process's first thread (not a new thread of one) that proc_fork
 * made tracked sends itself the signal */
SEC("fexit/schedule_tail")
int BPF_PROG(proc_hold_new, struct task_struct *prev)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();

	if (hold_new && (__u32)id == (__u32)(id >> 32) && is_tracked((__u32)(id >> 32)) &&
	    has_uprobes(task) && !traced(task))
		hold(task, false, HOLD_FORK);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *task, pid_t old_pid)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	bool thread = (__u32)old_pid != tgid;

	if (!is_tracked(tgid))
		return 0;
	emit(EV_PROC_EXEC, task, 0, 0);
	if (!hold_new)
		return 0;
	/* a thread other than the first exec'd: it took the process's pid, and the links made for
	 * the first thread went with that thread (its task is what a link holds) */
	if (thread)
		bpf_map_delete_elem(&probed_pids, &tgid);
	else if (bpf_map_lookup_elem(&probed_pids, &tgid))
		return 0;
	if (!traced(task))
		hold(task, false, thread ? HOLD_THREAD_EXEC : HOLD_EXEC);
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
	if (hold_new)
		bpf_map_delete_elem(&probed_pids, &tgid);
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
