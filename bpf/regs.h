/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What libbpf 1.1's bpf_tracing.h lacks for a uprobe's arguments, by architecture: the sixth
 * register argument, and where the arguments passed on the stack begin (past the return address
 * on x86-64; at the stack pointer on arm64, whose return address is in a register). */
#ifndef TOPSPROF_BPF_REGS_H
#define TOPSPROF_BPF_REGS_H

#include <bpf/bpf_tracing.h>

#if defined(PT_REGS_PARM6)
#define ARG6(ctx) PT_REGS_PARM6(ctx)
#elif defined(__TARGET_ARCH_x86)
#define ARG6(ctx) ((ctx)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define ARG6(ctx) (((const volatile struct user_pt_regs *)(ctx))->regs[5])
#else
#error "topsprof: the sixth argument's register of this architecture is not known"
#endif

#if defined(__TARGET_ARCH_x86)
#define STACK_ARGS_OFF 8
#elif defined(__TARGET_ARCH_arm64)
#define STACK_ARGS_OFF 0
#else
#error "topsprof: where this architecture's stack arguments begin is not known"
#endif

#endif
