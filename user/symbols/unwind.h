/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Native user stacks unwound without frame pointers: from a thread's registers and a copy of its
 * stack, frame by frame by the call frame information (.eh_frame, else .debug_frame) of the file
 * each address is in, read through elfutils' libdw; frame pointers where a file has none (JIT
 * code, a binary without CFI). Each address's rules are worked out once, then kept (per file, by
 * address), so that a profile's many samples of the same code cost a lookup a frame. Never reads
 * the process: what the copy lacks ends the stack, with the reason. */
#ifndef TOPSPROF_UNWIND_H
#define TOPSPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "model/cpustacks.h"
#include "symbols/procmaps.h"

/* frames a stack unwound here keeps, leaf first: an interpreter's stacks run deeper than the
 * kernel's 127 (CPU_STACK_DEPTH), a Python import's to about 200 */
#define UNWIND_MAX_FRAMES 512

/* what is known of a thread at a sample */
struct unwind_input {
	const uint64_t *regs; /* UREG_N, by DWARF number (events.h) */
	const uint8_t *stack; /* a copy of its stack from regs[UREG_SP] up */
	size_t stack_len;
	const struct kc_user_returns *uret; /* NULL: no uretprobe returns to put back */
};

struct unwinder;

/* 0 or -ENOMEM */
int unwinder_new(struct unwinder **out);
void unwinder_free(struct unwinder *u);

/* The frames of a stack, leaf first (the sampled address, then return addresses), at most max,
 * through the mappings maps; the number of frames, and why it ends in *end. */
size_t unwind_user(struct unwinder *u, const struct procmaps *maps, const struct unwind_input *in,
		   uint64_t *ips, size_t max, enum stack_end *end);

/* what the rule cache holds: files read, addresses with rules, bytes */
struct unwind_stats {
	size_t files, rules, bytes;
};
void unwinder_stats(const struct unwinder *u, struct unwind_stats *st);

#endif
