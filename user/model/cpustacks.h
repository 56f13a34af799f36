/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The CPU callstack profile: sampled stacks, named, with their counts; the functions by samples
 * (self: at the top of the stack; total: anywhere in it); the folded text that flamegraph.pl and
 * speedscope read. */
#ifndef TOPSPROF_CPUSTACKS_H
#define TOPSPROF_CPUSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* why a user stack ends where it does (CPU samples unwound by topsprof) */
enum stack_end {
	STACK_END_ENTRY = 0, /* at a thread's entry (its CFI says the caller is undefined) */
	STACK_END_STACK,     /* its caller's frame is past the copied stack */
	STACK_END_NOCFI,     /* no CFI for a frame, and its frame pointer led nowhere */
	STACK_END_UNMAPPED,  /* a return address in no executable mapping */
	STACK_END_BAD,	     /* rules that do not give a caller (a corrupt frame or table) */
	STACK_END_DEPTH,     /* deeper than the frames kept */
	STACK_END_NOREGS,    /* no user registers (a kernel thread, or unreadable) */
	STACK_END__COUNT
};

/* a few words on why a stack ended so ("the stack copy was too short") */
const char *stack_end_name(enum stack_end e);

struct cpu_stack {
	uint32_t pid;
	char *comm;
	char *frames; /* outermost first, ';' between; kernel frames last, marked "_[k]" */
	uint64_t count;
	bool truncated; /* its user part does not reach a thread's entry point */
};

struct cpu_profile {
	bool sampled; /* --cpu-profiling-callstack was on */
	uint32_t hz;
	struct cpu_stack *v;
	size_t n, cap;
	uint64_t samples;	    /* all counted, truncated or not */
	uint64_t truncated_samples; /* of which in stacks that look truncated */
	uint64_t lost_samples;	    /* not counted: a count map, stack table or ring was full */
	uint64_t lost_stacks;	    /* counted, with a stack lost to a full stack map */
	bool unwound; /* user stacks unwound by topsprof: ends[] says where they end */
	uint64_t ends[STACK_END__COUNT]; /* samples by why their user stack ends */
};

struct cpu_fn {
	char *name;
	uint64_t self, total;
};

/* add count samples of one stack; 0 or -ENOMEM */
int cpu_profile_add(struct cpu_profile *p, uint32_t pid, const char *comm, const char *frames,
		    uint64_t count, bool truncated);
/* after the last add: equal stacks of a process merged, sorted by process and stack */
void cpu_profile_finish(struct cpu_profile *p);
void cpu_profile_free(struct cpu_profile *p);

/* the functions, most self samples first, freed with cpu_fns_free. 0 or -ENOMEM */
int cpu_profile_functions(const struct cpu_profile *p, struct cpu_fn **out, size_t *n);
void cpu_fns_free(struct cpu_fn *fns, size_t n);

/* "comm;frame;...;frame count" per stack; 0, or -errno on a write error */
int cpu_profile_write_folded(FILE *f, const struct cpu_profile *p);

/* a frame name made safe for the folded format: ';' and line breaks replaced, in place */
void cpu_frame_sanitize(char *name);

/* the outermost function of a process or thread: _start, clone, clone3 */
bool cpu_frame_is_entry(const char *name);

/* A user stack looks complete when its outermost frame is a thread's entry point, or is in the C
 * library or dynamic loader, which start every process and thread (and whose own frames a
 * frame-pointer walk cannot always pass). file: the frame's file, or NULL. */
bool cpu_stack_looks_complete(const char *outermost, const char *file);

#endif
