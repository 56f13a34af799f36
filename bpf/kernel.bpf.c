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
	struct task_struct *t = bpf_get_current_task_btf();
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

/* calls on a file descriptor (their first argument), and futex (its address) */
static __always_inline bool enters_driver(struct pt_regs *regs, long id)
{
	struct vma_ctx c = { false };

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
		bpf_find_vma(bpf_get_current_task_btf(), PT_REGS_PARM1_CORE_SYSCALL(regs),
			     vma_is_driver, &c, 0);
		return c.hit;
	default:
		return false;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(kc_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct kc_thread th = {};

#ifdef SYSNR_URETPROBE
	if (id == SYSNR_URETPROBE) /* topsprof's own return probes, not the application */
		return 0;
#endif
	if (!kc_followed(pt >> 32))
		return 0;
	th.flags = enters_driver(regs, id) ? KC_IN_DRIVER : 0;
	if (filter == KC_FILTER_KMD && !th.flags)
		return 0;
	th.enter_ns = bpf_ktime_get_ns();
	th.id = (__u64)id;
	th.kind = KC_ENTRY_SYSCALL;
	if (bpf_map_update_elem(&kc_threads, &tid, &th, BPF_ANY))
		kc_count_drop(KC_DROP_THREAD);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(kc_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct kc_thread *th = bpf_map_lookup_elem(&kc_threads, &tid);
	struct kc_entry_key k = {};

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

SEC("tp_btf/sched_switch")
int BPF_PROG(kc_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns(), pt = bpf_get_current_pid_tgid();
	__u32 tid = next->pid, tgid = pt >> 32;
	struct kc_thread *th = bpf_map_lookup_elem(&kc_threads, &tid), fresh = {};

	/* the thread coming back: the wait it ends (not counted when collection stopped meanwhile) */
	if (th && th->off_ns) {
		if (collecting)
			kc_add_stack(&th->wait, now - th->off_ns);
		th->off_ns = 0;
		if (th->kind == KC_ENTRY_NONE)
			bpf_map_delete_elem(&kc_threads, &tid);
	}
	/* the thread leaving: a wait, unless it was only preempted, or ends */
	if (preempt || prev_state == TASK_RUNNING || (prev_state & TASK_DEAD) || !kc_followed(tgid))
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
	th->wait.kind = th->kind;
	th->wait.id = th->id;
	th->wait.driver = th->flags & KC_IN_DRIVER;
	th->wait.offcpu = 1;
	th->off_ns = now;
	kc_announce(tgid);
	return 0;
}
