/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What libbpf 1.1's bpf_tracing.h lacks for a uprobe's arguments, by architecture: the sixth
 * register argument, and the arguments after it, in order. x86-64 passes those on the stack, past
 * the return address; arm64 passes the seventh and eighth in x6 and x7 and the rest on the stack
 * from its pointer (the return address is in a register). */
#ifndef TOPSPROF_BPF_REGS_H
#define TOPSPROF_BPF_REGS_H

#include <bpf/bpf_tracing.h>

#if defined(__TARGET_ARCH_arm64)
/* volatile as in libbpf's later versions: each register read stays one load of the context */
#define ARM64_REGS(ctx) ((const volatile struct user_pt_regs *)(ctx))
#endif

#if defined(PT_REGS_PARM6)
#define ARG6(ctx) PT_REGS_PARM6(ctx)
#elif defined(__TARGET_ARCH_x86)
#define ARG6(ctx) ((ctx)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define ARG6(ctx) (ARM64_REGS(ctx)->regs[5])
#else
#error "topsprof: the sixth argument's register of this architecture is not known"
#endif

/* n arguments from the seventh into dst; a stack that cannot be read gives zeros */
#if defined(__TARGET_ARCH_x86)
static __always_inline void args_from7(struct pt_regs *ctx, __u64 *dst, __u32 n)
{
	bpf_probe_read_user(dst, n * sizeof(__u64), (void *)(PT_REGS_SP(ctx) + 8));
}
#elif defined(__TARGET_ARCH_arm64)
/* n: 3 at least */
static __always_inline void args_from7(struct pt_regs *ctx, __u64 *dst, __u32 n)
{
	dst[0] = ARM64_REGS(ctx)->regs[6];
	dst[1] = ARM64_REGS(ctx)->regs[7];
	bpf_probe_read_user(dst + 2, (n - 2) * sizeof(__u64), (void *)PT_REGS_SP(ctx));
}
#else
#error "topsprof: where this architecture's arguments past the sixth are is not known"
#endif

#endif
