/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* For the programs that take user stacks (kernel callstacks, CPU samples); needs vmlinux.h. */
#ifndef TOPSPROF_USER_RETURNS_H
#define TOPSPROF_USER_RETURNS_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "events.h"

/* The current task, to read with BPF_CORE_READ: bpf_get_current_task_btf, whose fields a program
 * may load directly, came in Linux 5.11. */
static __always_inline struct task_struct *task_current(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/* the current thread's pending uretprobes (events.h: kc_user_returns), read where the kernel
 * has the fields (CO-RE), for the user stack taken with it */
static __always_inline void kc_user_returns(struct kc_user_returns *u)
{
	struct task_struct *t = task_current();
	struct return_instance *ri = NULL;

	if (!bpf_core_field_exists(t->utask->return_instances) ||
	    !bpf_core_field_exists(t->mm->uprobes_state.xol_area))
		return;
	ri = BPF_CORE_READ(t, utask, return_instances);
	if (!ri)
		return;
	u->tramp = BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);
	for (int i = 0; i < KC_URET_MAX && ri; i++) {
		u->ret[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
}

#endif
