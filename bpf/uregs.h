/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The current thread's user mode registers, wherever a program runs (a sample that hit the kernel,
 * a kprobe); needs vmlinux.h. */
#ifndef TOPSPROF_BPF_UREGS_H
#define TOPSPROF_BPF_UREGS_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "events.h"

/* task_pt_regs() where the kernel has no bpf_task_pt_regs (before Linux 5.15): the user mode
 * registers at the top of the task's kernel stack (THREAD_SIZE, 16 KB on x86-64 and arm64
 * without KASAN); NULL unless they are user mode's (the stack is another size) */
#define UREGS_THREAD_SIZE 16384

static __always_inline struct pt_regs *task_regs_on_stack(struct task_struct *t)
{
	struct pt_regs *regs = (void *)((unsigned long)BPF_CORE_READ(t, stack) + UREGS_THREAD_SIZE -
					bpf_core_type_size(struct pt_regs));

#if defined(__TARGET_ARCH_x86)
	/* __USER_CS (or __USER32_CS, a 32-bit process) and __USER_DS, as user mode's only */
	unsigned long cs = BPF_CORE_READ(regs, cs), ss = BPF_CORE_READ(regs, ss);

	if ((cs != 0x33 && cs != 0x23) || ss != 0x2b)
		return NULL;
#elif defined(__TARGET_ARCH_arm64)
	if (BPF_CORE_READ(regs, pstate) & 0xf) /* not EL0 */
		return NULL;
#endif
	return regs;
}

/* the current task's user mode registers (the kernel's copy); NULL when there are none */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *t)
{
	/* with bpf_task_pt_regs (Linux 5.15+), bpf_get_current_task_btf (5.11) is there */
	return bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)
		       ? (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf())
		       : task_regs_on_stack(t);
}

/* The current thread's user registers by their DWARF numbers (events.h: UREG_*) into r; false
 * when it has none (a kernel thread) or they could not be read. */
static __always_inline bool user_regs_dwarf(struct task_struct *t, __u64 *r)
{
	struct pt_regs *src = task_user_regs(t);
	struct pt_regs p;

	if (!src || bpf_probe_read_kernel(&p, sizeof(p), src))
		return false;
#if defined(__TARGET_ARCH_x86)
	if ((p.cs & 0xffff) != 0x33) /* a 32-bit process: other registers, other CFI */
		return false;
	r[0] = p.ax;
	r[1] = p.dx;
	r[2] = p.cx;
	r[3] = p.bx;
	r[4] = p.si;
	r[5] = p.di;
	r[6] = p.bp;
	r[7] = p.sp;
	r[8] = p.r8;
	r[9] = p.r9;
	r[10] = p.r10;
	r[11] = p.r11;
	r[12] = p.r12;
	r[13] = p.r13;
	r[14] = p.r14;
	r[15] = p.r15;
	r[16] = p.ip;
#elif defined(__TARGET_ARCH_arm64)
	if (p.pstate & 0x10) /* PSR_MODE32_BIT: a 32-bit process */
		return false;
	for (int i = 0; i < 31; i++)
		r[i] = p.regs[i];
	r[31] = p.sp;
	r[32] = p.pc;
#else
#error "topsprof: this architecture's user registers are not known"
#endif
	return r[UREG_SP] != 0;
}

#endif
