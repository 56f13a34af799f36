// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel callstacks at the KMD's own functions (or the functions of the filter), where the kernel
 * lets BPF attach there: kprobe/kretprobe, or fentry/fexit (one object per function, its target
 * set before load). Each call counts its kernel and user stacks at entry, and its time at return;
 * a call of a thread inside a system call marks that call as entering the driver. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "kc_common.h"
#include "stub.h"
#include "uregs.h"

/* false before Linux 5.15 (no bpf_get_func_ip): the kprobes are reached through a stub per
 * function and probe (stub.h, slots 0 and 1), whose value is the function's address; topsprof
 * takes kprobes then, not fentry */
const volatile bool have_func_ip = true;
/* false (TOPSPROF_NO_SYSCALL_SLOT=1, to test the other path): kc_cpu_syscall is not looked at */
const volatile bool use_syscall_slot = true;

/* the function the kprobe is on; false when not known (stub.h) */
static __always_inline bool kprobe_func_ip(void *ctx, __u64 *ip)
{
	if (have_func_ip) {
		*ip = bpf_get_func_ip(ctx);
		return true;
	}
	if (stub_value_get(ip))
		return true;
	kc_count_drop(KC_DROP_ENTRY);
	return false;
}

struct kmd_call_key {
	__u32 tid;
	__u32 reserved;
	__u64 ip;
};

struct kmd_call {
	__u64 enter_ns;
	struct kc_stack_key stack;
};

/* the calls under way (one a thread at a time, per function it is in), one map for every
 * function probed */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kmd_call_key);
	__type(value, struct kmd_call);
} kmd_calls SEC(".maps");

#define KMD_PF_KTHREAD 0x00200000 /* include/linux/sched.h: PF_KTHREAD */

/* the system call of a thread that enters the driver's functions through a file the driver
 * does not own (filter kmd: kernel.bpf.c then kept no entry): from its start when the thread
 * entered it on this CPU and has not left it since (kc_cpu_syscall), else from now;
 * none outside a system call (an exception, a kernel thread). Made an entry in kc_threads, so
 * that its end and its waits from now on count as the driver's. */
static __always_inline struct kc_thread *kmd_syscall(__u64 pt)
{
	struct task_struct *task = task_current();
	struct kc_thread th = { .kind = KC_ENTRY_SYSCALL };
	struct kc_cpu_syscall *c;
	__u32 zero = 0, tid = (__u32)pt;
	long nr = -1;

	c = bpf_map_lookup_elem(&kc_cpu_syscall, &zero);
	if (use_syscall_slot && c && c->pid_tgid == pt && c->switches == kc_switches(task)) {
		th.enter_ns = c->enter_ns;
		nr = (long)c->id;
	} else if (!(BPF_CORE_READ(task, flags) & KMD_PF_KTHREAD)) {
		struct pt_regs *regs = task_user_regs(task);

		if (regs) {
#if defined(__TARGET_ARCH_x86)
			nr = BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
			nr = BPF_CORE_READ(regs, syscallno);
#endif
		}
		th.enter_ns = bpf_ktime_get_ns();
	}
	if (nr < 0)
		return NULL;
	th.id = (__u64)nr;
	if (bpf_map_update_elem(&kc_threads, &tid, &th, BPF_NOEXIST)) {
		kc_count_drop(KC_DROP_THREAD);
		return NULL;
	}
	return bpf_map_lookup_elem(&kc_threads, &tid);
}

static __always_inline void kmd_enter(void *ctx, __u64 ip)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct kmd_call_key k = { .tid = (__u32)pt, .ip = ip };
	struct kmd_call c = {};
	struct kc_thread *th;
	__u32 tid = (__u32)pt, driver;

	if (!kc_followed(pt >> 32))
		return;
	/* the KMD's functions: the call is in the driver; the filter's: it went through them */
	driver = filter == KC_FILTER_FUNCS ? 0 : KC_IN_DRIVER;
	th = bpf_map_lookup_elem(&kc_threads, &tid);
	if (!th && filter == KC_FILTER_KMD)
		th = kmd_syscall(pt);
	if (th)
		th->flags |= driver | KC_MATCHED;
	c.enter_ns = bpf_ktime_get_ns();
	c.stack.tgid = pt >> 32;
	c.stack.kstack = bpf_get_stackid(ctx, &kc_stacks, 0);
	c.stack.ustack = bpf_get_stackid(ctx, &kc_stacks, BPF_F_USER_STACK);
	kc_user_returns(&c.stack.uret);
	c.stack.kind = KC_ENTRY_KMD;
	c.stack.id = ip;
	c.stack.driver = driver;
	kc_nest_more(tid, &c.stack);
	kc_add_stack(&c.stack, 0);
	if (bpf_map_update_elem(&kmd_calls, &k, &c, BPF_ANY))
		kc_count_drop(KC_DROP_THREAD);
	kc_nest_push(tid, ip, &c.stack);
	kc_announce(pt >> 32);
}

static __always_inline void kmd_exit(__u64 ip)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct kmd_call_key k = { .tid = (__u32)pt, .ip = ip };
	struct kmd_call *c = bpf_map_lookup_elem(&kmd_calls, &k);
	struct kc_entry_key e = {};
	struct kc_totals *v;
	__u64 d;

	kc_nest_pop(k.tid, ip);
	if (!c)
		return;
	if (!collecting) { /* stopped meanwhile */
		bpf_map_delete_elem(&kmd_calls, &k);
		return;
	}
	d = bpf_ktime_get_ns() - c->enter_ns;
	e.kind = KC_ENTRY_KMD;
	e.id = ip;
	e.driver = c->stack.driver;
	kc_add_entry(&e, d);
	/* the call's time, on the stack it was counted with at entry */
	v = bpf_map_lookup_elem(&kc_stack_counts, &c->stack);
	if (v) {
		__sync_fetch_and_add(&v->total_ns, d);
		if (d > v->max_ns)
			v->max_ns = d;
	}
	bpf_map_delete_elem(&kmd_calls, &k);
}

SEC("kprobe")
int kc_kmd_kprobe(struct pt_regs *ctx)
{
	__u64 ip;

	if (kprobe_func_ip(ctx, &ip))
		kmd_enter(ctx, ip);
	return 0;
}

SEC("kretprobe")
int kc_kmd_kretprobe(struct pt_regs *ctx)
{
	__u64 ip;

	if (kprobe_func_ip(ctx, &ip))
		kmd_exit(ip);
	return 0;
}

/* the same, for many functions in one link (Linux 5.18+) */
SEC("kprobe.multi")
int kc_kmd_kmulti(struct pt_regs *ctx)
{
	kmd_enter(ctx, bpf_get_func_ip(ctx));
	return 0;
}

SEC("kretprobe.multi")
int kc_kmd_kretmulti(struct pt_regs *ctx)
{
	kmd_exit(bpf_get_func_ip(ctx));
	return 0;
}

SEC("fentry")
int BPF_PROG(kc_kmd_fentry)
{
	kmd_enter(ctx, bpf_get_func_ip(ctx));
	return 0;
}

SEC("fexit")
int BPF_PROG(kc_kmd_fexit)
{
	kmd_exit(bpf_get_func_ip(ctx));
	return 0;
}
