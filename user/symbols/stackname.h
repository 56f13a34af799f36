/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A stack pair kept in a BPF stack map (a user side and a kernel side, by id) named as one
 * folded-format string: the user frames outermost first, then the kernel frames marked "_[k]". */
#ifndef TOPSPROF_STACKNAME_H
#define TOPSPROF_STACKNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/procmaps.h"
#include "symbols/symbolize.h"

struct stackname {
	char *buf; /* "" when neither side has frames */
	size_t len, cap;
};

struct kc_user_returns;

/* put back in a user stack (n frames, leaf first) the addresses the kernel's uretprobe
 * trampoline stands for (events.h: kc_user_returns); the number put back */
size_t stack_put_back_returns(uint64_t *ips, size_t n, const struct kc_user_returns *u);

/* Where a kernel stack goes on past a kretprobe's trampoline, at which the kernel's unwinder
 * stopped (events.h: kc_stack_key.kmore): the trampoline's address, and 1 + the stack map ids of
 * the stacks taken at the entries of the calls it is inside, innermost first (0: none). */
struct kstack_more {
	uint64_t tramp;
	uint32_t more[2];
};

/* Put end to end: where the kernel stack ips (n frames at most, leaf first, 0 ends it) has the
 * trampoline, the frames of more[0] after its first (the function whose return the trampoline
 * took), and so on while the result has the trampoline again and there are more (nmore). The
 * frames past n are lost; the number of frames. */
size_t stack_stitch_kernel(uint64_t *ips, size_t n, uint64_t tramp, const uint64_t *const *more,
			   size_t nmore);

/* append a kernel stack (ips: leaf first, 0 ends it) to out, named as stack_name names one:
 * BPF's own frames at its leaf left out when from_tracepoint, the fentry/fexit trampolines left
 * out anywhere (with the second frame of the function a trampoline called; a trampoline being
 * released may bear a program's name); 0 or -ENOMEM */
int stack_name_kernel(struct symbolizer *sym, const uint64_t *ips, bool from_tracepoint,
		      struct stackname *out);

/* name the stacks ustack and kstack (negative: that side is absent) of a process whose mappings
 * are maps (NULL: none known) into out, which is reused from call to call and freed with free().
 * from_tracepoint: the kernel side was taken by a program at a tracepoint, whose own frames
 * (the program, the tracepoint's caller) are left out. *user_complete: the user side reaches a
 * thread's entry (true without a user side). uret (NULL: none): the trampoline's returns, put back
 * in the user side. kmore (NULL: none): the stacks the kernel side goes on in. 0 or -ENOMEM. */
int stack_name(struct symbolizer *sym, int stack_map_fd, const struct procmaps *maps,
	       int32_t ustack, int32_t kstack, bool from_tracepoint,
	       const struct kc_user_returns *uret, const struct kstack_more *kmore,
	       struct stackname *out, bool *user_complete);

/* the same with the user side's frames given (nu of them, leaf first), as topsprof unwound
 * them (the unwinder tells where they end), and a kernel side kept in a stack map */
int stack_name_unwound(struct symbolizer *sym, int stack_map_fd, const struct procmaps *maps,
		       const uint64_t *uips, size_t nu, int32_t kstack, struct stackname *out);

#endif
