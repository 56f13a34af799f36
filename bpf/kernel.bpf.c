// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Kernel callstacks through tracepoints, which every kernel here has: the system calls of the
 * followed threads (raw_syscalls sys_enter/sys_exit: calls and time per call, and whether the
 * call entered the driver: a file of the driver's, memory the driver mapped, or a file whose
 * operations the KMD module owns), and their waits in the kernel (sched_switch: the kernel and
 * user stacks a thread leaves the CPU with, and how long it stays off). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "kc_common.h"
#include "sysnr.h"

/* TOPSPROF_TASK_STORAGE=1: the answer to "followed?" kept in task storage, not per CPU (Linux
 * 5.11+; else kc_follow_task is not made) */
const volatile bool follow_by_task;
/* sched_switch has prev_state as an argument (Linux 5.18+; topsprof reads the kernel's BTF) */
const volatile bool switch_state_arg = true;

/* the KMD module, whose files are the driver's (--kmd-module) */
const volatile char kmd_module[KC_MODULE_LEN] = "enflame";
/* --kernel-callstack-filter f1,f2,...: the functions' address ranges, from kallsyms */
const volatile __u64 func_start[KC_MAX_FUNCS];
const volatile __u64 func_end[KC_MAX_FUNCS];
const volatile __u32 nfuncs;

/* the driver's files (device nodes, and the simulated driver's regions), found by topsprof */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct kc_file);
	__type(value, __u8);
} driver_files SEC(".maps");

/* a stack to look through, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[CPU_STACK_DEPTH]);
} kc_scratch SEC(".maps");

#define TASK_RUNNING 0
#define TASK_DEAD    0x80

/* Whether a thread is followed, decided first: every system call and context switch of the host
 * runs these programs. The answer is kept per CPU in a small direct-mapped cache (a slot by
 * tid), for the thread it was found for and the generation of the followed set it was found
 * in (tracked_gen); the set itself is looked up only when the slot holds another thread or an
 * older generation. With follow_by_task, kept in the thread's task storage instead. */
#define KC_FOLLOW_SLOTS 64

struct kc_follow {
	__u64 pid_tgid; /* the thread the answer is for */
	__u64 gen;	/* tracked_gen when it was found */
	__u64 followed;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KC_FOLLOW_SLOTS);
	__type(key, __u32);
	__type(value, struct kc_follow);
} kc_follow_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kc_follow);
} kc_follow_task SEC(".maps");

/* whether the filter takes the thread pt (its pid_tgid), task (NULL: the current one) */
static __always_inline bool kc_takes_thread(struct task_struct *task, __u64 pt)
{
	__u32 zero = 0, slot = (__u32)pt % KC_FOLLOW_SLOTS;
	struct kc_follow *c;
	__u64 *genp, gen;

	if (filter != KC_FILTER_CURRENT) /* no set to look up */
		return kc_takes(pt >> 32);
	genp = bpf_map_lookup_elem(&tracked_gen, &zero);
	if (follow_by_task)
		c = bpf_task_storage_get(&kc_follow_task, task ? task : bpf_get_current_task_btf(),
					 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	else
		c = bpf_map_lookup_elem(&kc_follow_cpu, &slot);
	if (!genp || !c)
		return kc_takes(pt >> 32);
	gen = READ_ONCE(*genp);
	if (c->pid_tgid == pt && c->gen == gen)
		return c->followed;
		/* A full barrier (an exchange) between reading the generation and reading the set: the
	 * answer kept under gen has seen every change made before gen was reached (on arm64 the
	 * two loads could pass each other; x86 keeps them in order, and has a store, so that the
	 * object loads where the kernel has no exchange: BPF_ATOMIC, Linux 5.12+, which the
	 * verifier refuses even in code it would never run) */
#if defined(__TARGET_ARCH_arm64)
	__sync_lock_test_and_set(&c->pid_tgid, pt);
#else
	c->pid_tgid = pt;
#endif
	c->followed = kc_takes(pt >> 32);
	c->gen = gen;
	return c->followed;
}

static __always_inline bool module_is_kmd(struct module *owner)
{
	char name[KC_MODULE_LEN];

	if (!owner || bpf_probe_read_kernel_str(name, sizeof(name), &owner->name) <= 0)
		return false;
	for (int i = 0; i < KC_MODULE_LEN; i++) {
		if (name[i] != kmd_module[i])
			return false;
		if (!name[i])
			return true;
	}
	return false;
}

static __always_inline bool driver_file(struct file *f)
{
	struct kc_file k = {};

	if (!f)
		return false;
	k.ino = BPF_CORE_READ(f, f_inode, i_ino);
	k.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	if (bpf_map_lookup_elem(&driver_files, &k))
		return true;
	return module_is_kmd(BPF_CORE_READ(f, f_op, owner));
}

static __always_inline struct file *fd_file(unsigned long fd)
{
	struct task_struct *t = task_current();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

struct vma_ctx {
	bool hit;
};

static long vma_is_driver(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;

	c->hit = driver_file(BPF_CORE_READ(vma, vm_file));
	return 0;
}

/* Before bpf_find_vma (Linux 5.17), the kernel kept a process's mappings in a red-black tree
 * (mm_rb, until 6.1's maple tree): the walk find_vma makes there, read without the mmap lock
 * (which the helper only tries to take, and gives up on when it is held). 1: addr is in a
 * driver's mapping, 0: not (or no such tree), -1: the tree could not be read (it changed
 * meanwhile), or is deeper than VMA_TREE_DEPTH. */
struct mm_struct___rb {
	struct rb_root mm_rb;
} __attribute__((preserve_access_index));

struct vm_area_struct___rb {
	struct rb_node vm_rb;
} __attribute__((preserve_access_index));

#define VMA_TREE_DEPTH 48

static __always_inline int vma_tree_is_driver(unsigned long addr)
{
	struct mm_struct___rb *mm = (void *)BPF_CORE_READ(task_current(), mm);
	unsigned long off = bpf_core_field_offset(struct vm_area_struct___rb, vm_rb);
	struct rb_node *node;

	if (!bpf_core_field_exists(mm->mm_rb) || !mm)
		return 0;
	node = BPF_CORE_READ(mm, mm_rb.rb_node);
	for (int i = 0; i < VMA_TREE_DEPTH && node; i++) {
		struct vm_area_struct *vma = (void *)((unsigned long)node - off);
		unsigned long start, end;

		if (bpf_probe_read_kernel(&start, sizeof(start), &vma->vm_start) ||
		    bpf_probe_read_kernel(&end, sizeof(end), &vma->vm_end))
			return -1;
		if (end <= addr)
			node = BPF_CORE_READ(node, rb_right);
		else if (start > addr)
			node = BPF_CORE_READ(node, rb_left);
		else
			return driver_file(BPF_CORE_READ(vma, vm_file));
	}
	return node ? -1 : 0;
}

/* calls on a file descriptor (their first argument), and futex (its address: with
 * bpf_find_vma, Linux 5.17+, which a program that names it does not load before; else through
 * the tree of mappings, where the kernel has one) */
static __always_inline bool enters_driver(struct pt_regs *regs, long id, bool find_vma)
{
	struct vma_ctx c = { false };
	long err;

	switch (id) {
	case SYSNR_READ:
	case SYSNR_WRITE:
	case SYSNR_CLOSE:
	case SYSNR_LSEEK:
	case SYSNR_IOCTL:
	case SYSNR_PREAD64:
	case SYSNR_PWRITE64:
	case SYSNR_READV:
	case SYSNR_WRITEV:
	case SYSNR_FCNTL:
	case SYSNR_FLOCK:
	case SYSNR_FSYNC:
	case SYSNR_FDATASYNC:
		return driver_file(fd_file(PT_REGS_PARM1_CORE_SYSCALL(regs)));
	case SYSNR_MMAP: /* the fifth argument */
		return driver_file(fd_file(PT_REGS_PARM5_CORE_SYSCALL(regs)));
	case SYSNR_FUTEX: /* a wait on the driver's memory */
		if (!find_vma) {
			err = vma_tree_is_driver(PT_REGS_PARM1_CORE_SYSCALL(regs));
			if (err < 0)
				kc_count_drop(KC_DROP_UNTOLD);
			return err > 0;
		}
		err = bpf_find_vma(bpf_get_current_task_btf(), PT_REGS_PARM1_CORE_SYSCALL(regs),
				   vma_is_driver, &c, 0);
		if (err < 0 && err != -2 /* -ENOENT: nothing mapped there */)
			kc_count_drop(KC_DROP_UNTOLD);
		return c.hit;
	default:
		return false;
	}
}

static __always_inline int sys_enter(struct pt_regs *regs, long id, bool find_vma)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt, zero = 0;
	struct kc_thread th = {};

	if (!kc_takes_thread(NULL, pt) || !collecting)
		return 0;
#ifdef SYSNR_URETPROBE
	if (id == SYSNR_URETPROBE) /* topsprof's own return probes, not the application */
		return 0;
#endif
	th.flags = enters_driver(regs, id, find_vma) ? KC_IN_DRIVER : 0;
	if (filter == KC_FILTER_KMD && !th.flags) {
		/* not the driver's file: kept for the driver's functions, should it enter them */
		struct kc_cpu_syscall *c = bpf_map_lookup_elem(&kc_cpu_syscall, &zero);

		if (c) {
			c->pid_tgid = pt;
			c->enter_ns = bpf_ktime_get_ns();
			c->id = (__u64)id;
			c->switches = kc_switches(task_current());
		}
		return 0;
	}
	th.enter_ns = bpf_ktime_get_ns();
	th.id = (__u64)id;
	th.kind = KC_ENTRY_SYSCALL;
	if (bpf_map_update_elem(&kc_threads, &tid, &th, BPF_ANY))
		kc_count_drop(KC_DROP_THREAD);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(kc_sys_enter, struct pt_regs *regs, long id)
{
	return sys_enter(regs, id, true);
}

/* the same without bpf_find_vma; topsprof loads one of the two */
SEC("tp_btf/sys_enter")
int BPF_PROG(kc_sys_enter_novma, struct pt_regs *regs, long id)
{
	return sys_enter(regs, id, false);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(kc_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt, zero = 0;
	struct kc_entry_key k = {};
	struct kc_thread *th;

	if (!kc_takes_thread(NULL, pt))
		return 0;
	if (filter == KC_FILTER_KMD) {
		struct kc_cpu_syscall *c = bpf_map_lookup_elem(&kc_cpu_syscall, &zero);

		if (c && c->pid_tgid == pt)
			c->pid_tgid = 0;
	}
	th = bpf_map_lookup_elem(&kc_threads, &tid);
	if (!th || th->kind != KC_ENTRY_SYSCALL)
		return 0;
	if (collecting && (filter != KC_FILTER_FUNCS || (th->flags & KC_MATCHED))) {
		k.kind = KC_ENTRY_SYSCALL;
		k.id = th->id;
		k.driver = th->flags & KC_IN_DRIVER;
		kc_add_entry(&k, bpf_ktime_get_ns() - th->enter_ns);
	}
	bpf_map_delete_elem(&kc_threads, &tid);
	return 0;
}

/* whether the kernel stack the thread leaves the CPU with goes through a function of the filter */
static __always_inline bool through_funcs(void *ctx)
{
	__u32 zero = 0;
	__u64 *ips = bpf_map_lookup_elem(&kc_scratch, &zero);
	long n;

	if (!ips)
		return false;
	n = bpf_get_stack(ctx, ips, CPU_STACK_DEPTH * sizeof(__u64), 0);
	if (n <= 0)
		return false;
	n /= sizeof(__u64);
	for (int i = 0; i < CPU_STACK_DEPTH; i++) {
		if (i >= n)
			break;
		for (int j = 0; j < KC_MAX_FUNCS; j++) {
			if (j >= nfuncs)
				break;
			if (ips[i] >= func_start[j] && ips[i] < func_end[j])
				return true;
		}
	}
	return false;
}

/* the state of a task (before Linux 5.14: state, a long) */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (unsigned int)BPF_CORE_READ((struct task_struct___old *)t, state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(kc_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	/* the state prev leaves in: the fourth argument from Linux 5.18 on (which the verifier
	 * refuses to read before, even in code it would never run: hence not in BPF_PROG's list) */
	unsigned int prev_state = switch_state_arg ? (unsigned int)ctx[3] : task_state(prev);
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = next->pid, tgid = pt >> 32;
	struct kc_thread *th, fresh = {};

	/* the thread coming back: the wait it ends (not counted when collection stopped meanwhile) */
	if (kc_takes_thread(next, (__u64)next->tgid << 32 | tid)) {
		th = bpf_map_lookup_elem(&kc_threads, &tid);
		if (th && th->off_ns) {
			if (collecting)
				kc_add_stack(&th->wait, bpf_ktime_get_ns() - th->off_ns);
			th->off_ns = 0;
			if (th->kind == KC_ENTRY_NONE)
				bpf_map_delete_elem(&kc_threads, &tid);
		}
	}
	/* the thread leaving: a wait, unless it was only preempted, or ends */
	if (preempt || prev_state == TASK_RUNNING || (prev_state & TASK_DEAD) ||
	    !kc_takes_thread(NULL, pt) || !collecting)
		return 0;
	tid = (__u32)pt;
	th = bpf_map_lookup_elem(&kc_threads, &tid);
	if (!th) {
		if (filter == KC_FILTER_KMD)
			return 0; /* not in a call into the driver */
		if (bpf_map_update_elem(&kc_threads, &tid, &fresh, BPF_ANY)) {
			kc_count_drop(KC_DROP_THREAD);
			return 0;
		}
		th = bpf_map_lookup_elem(&kc_threads, &tid);
		if (!th)
			return 0;
	}
	if (filter == KC_FILTER_FUNCS) {
		if (!through_funcs(ctx)) {
			if (th->kind == KC_ENTRY_NONE)
				bpf_map_delete_elem(&kc_threads, &tid);
			return 0;
		}
		th->flags |= KC_MATCHED;
	}
	th->wait.tgid = tgid;
	th->wait.kstack = bpf_get_stackid(ctx, &kc_stacks, 0);
	th->wait.ustack = bpf_get_stackid(ctx, &kc_stacks, BPF_F_USER_STACK);
	kc_user_returns(&th->wait.uret);
	th->wait.kind = th->kind;
	th->wait.id = th->id;
	th->wait.driver = th->flags & KC_IN_DRIVER;
	th->wait.offcpu = 1;
	th->wait.kmore[0] = th->wait.kmore[1] = 0;
	kc_nest_more(tid, &th->wait);
	th->off_ns = bpf_ktime_get_ns();
	kc_announce(tgid);
	return 0;
}

/* A thread's end: its entry goes, whatever it was in. exit and exit_group never return (no
 * sys_exit), and the process may have left the followed set already: unconditionally. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(kc_thread_exit, struct task_struct *task)
{
	__u32 tid = task->pid;

	bpf_map_delete_elem(&kc_threads, &tid);
	if (kc_stitch)
		bpf_map_delete_elem(&kc_nests, &tid);
	return 0;
}
