// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/stackname.h"

#include "model/cpustacks.h"
#include "symbols/unwind.h"
#include "events.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct stackname *out, size_t more)
{
	while (out->len + more + 1 > out->cap) {
		size_t ncap = out->cap ? out->cap * 2 : 4096;
		char *nb = realloc(out->buf, ncap);

		if (!nb)
			return -ENOMEM;
		out->buf = nb;
		out->cap = ncap;
	}
	return 0;
}

/* frames of BPF's own, not the program's: what runs a program, and the trampoline fentry/fexit
 * go through */
static bool bpf_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "bpf_trampoline_", 15);
}

/* one side, outermost frame first */
static int append(struct symbolizer *sym, const struct procmaps *maps, const uint64_t *ips,
		  size_t max, bool kernel, bool from_tracepoint, struct stackname *out,
		  bool *complete)
{
	static const struct procmaps none;
	char last[512] = "";
	bool through_trampoline = false;
	int n = 0, leaf = 0;

	while ((size_t)n < max && ips[n])
		n++;
	/* a stack taken by a tracepoint's (or fentry's) program begins in the program and what
	 * ran it */
	while (kernel && from_tracepoint && leaf < n) {
		char name[512];

		symbolize_kernel(sym, ips[leaf], name, sizeof(name));
		if (!bpf_frame(name))
			break;
		leaf++;
	}
	for (int i = n - 1; i >= leaf; i--) {
		char name[512];
		size_t l;

		/* a return address points after its call: name the call, except at the leaf */
		if (kernel)
			symbolize_kernel(sym, ips[i] - (i > leaf), name, sizeof(name));
		else
			symbolize_user(sym, maps ? maps : &none, ips[i] - (i > 0), name,
				       sizeof(name));
		/* a function under fexit is called by its trampoline, which its first instruction
		 * called: "f; bpf_trampoline_N; f" is one call of f. A trampoline being released
		 * (another run's, or another tool's) has lost its name and takes that of a program
		 * near it: "f; bpf_prog_X; f" is the same */
		if (kernel && (!strncmp(name, "bpf_trampoline_", 15) ||
			       (i > leaf && !strncmp(name, "bpf_prog_", 9)))) {
			through_trampoline = true;
			continue;
		}
		if (through_trampoline && !strcmp(name, last)) {
			through_trampoline = false;
			continue;
		}
		through_trampoline = false;
		snprintf(last, sizeof(last), "%s", name);
		cpu_frame_sanitize(name);
		if (!kernel && i == n - 1) {
			const struct procmap *mp = maps ? procmaps_find(maps, ips[i], NULL) : NULL;

			*complete = cpu_stack_looks_complete(name, mp ? mp->path : NULL);
		}
		l = strlen(name);
		if (reserve(out, l + 5))
			return -ENOMEM;
		out->len += (size_t)sprintf(out->buf + out->len, "%s%s%s", out->len ? ";" : "",
					    name, kernel ? "_[k]" : "");
	}
	return 0;
}

size_t stack_put_back_returns(uint64_t *ips, size_t n, const struct kc_user_returns *u)
{
	size_t put = 0;

	for (size_t i = 0; u->tramp && i < n && ips[i] && put < KC_URET_MAX && u->ret[put]; i++)
		if (ips[i] == u->tramp)
			ips[i] = u->ret[put++];
	return put;
}

int stack_name_kernel(struct symbolizer *sym, const uint64_t *ips, bool from_tracepoint,
		      struct stackname *out)
{
	bool complete;

	return reserve(out, 0)
		       ?: append(sym, NULL, ips, CPU_STACK_DEPTH, true, from_tracepoint, out,
				 &complete);
}

_Static_assert(sizeof(((struct kstack_more *)0)->more) == sizeof(((struct kc_stack_key *)0)->kmore),
	       "kstack_more mirrors kc_stack_key.kmore");

size_t stack_stitch_kernel(uint64_t *ips, size_t n, uint64_t tramp, const uint64_t *const *more,
			   size_t nmore)
{
	size_t len = 0;

	while (len < n && ips[len])
		len++;
	for (size_t k = 0; tramp && k < nmore && more[k]; k++) {
		size_t at = 0;

		while (at < len && ips[at] != tramp)
			at++;
		if (at == len)
			break;
		len = at;
		for (size_t j = 1; j < CPU_STACK_DEPTH && more[k][j] && len < n; j++)
			ips[len++] = more[k][j];
		if (len < n)
			ips[len] = 0;
	}
	return len;
}

/* the user frames uips (NULL: none; 0 ends them, or unmax), then the kernel stack kstack */
static int name_pair(struct symbolizer *sym, int stack_map_fd, const struct procmaps *maps,
		     const uint64_t *uips, size_t umax, int32_t kstack, bool from_tracepoint,
		     const struct kstack_more *kmore, struct stackname *out, bool *user_complete)
{
	uint64_t ips[CPU_STACK_DEPTH], more[2][CPU_STACK_DEPTH];
	const uint64_t *mp[2] = { NULL, NULL };
	int err = 0;

	*user_complete = true;
	out->len = 0;
	if (reserve(out, 0))
		return -ENOMEM;
	out->buf[0] = 0;
	if (uips)
		err = append(sym, maps, uips, umax, false, false, out, user_complete);
	if (!err && kstack >= 0 && !bpf_map_lookup_elem(stack_map_fd, &kstack, ips)) {
		for (size_t k = 0; kmore && kmore->tramp && k < 2 && kmore->more[k]; k++) {
			uint32_t id = kmore->more[k] - 1;

			if (bpf_map_lookup_elem(stack_map_fd, &id, more[k]))
				break;
			mp[k] = more[k];
		}
		if (mp[0])
			stack_stitch_kernel(ips, CPU_STACK_DEPTH, kmore->tramp, mp, 2);
		err = append(sym, NULL, ips, CPU_STACK_DEPTH, true, from_tracepoint, out,
			     user_complete);
	}
	return err;
}

int stack_name(struct symbolizer *sym, int stack_map_fd, const struct procmaps *maps,
	       int32_t ustack, int32_t kstack, bool from_tracepoint,
	       const struct kc_user_returns *uret, const struct kstack_more *kmore,
	       struct stackname *out, bool *user_complete)
{
	uint64_t ips[CPU_STACK_DEPTH];
	bool have = ustack >= 0 && !bpf_map_lookup_elem(stack_map_fd, &ustack, ips);

	if (have && uret)
		stack_put_back_returns(ips, CPU_STACK_DEPTH, uret);
	return name_pair(sym, stack_map_fd, maps, have ? ips : NULL, CPU_STACK_DEPTH, kstack,
			 from_tracepoint, kmore, out, user_complete);
}

int stack_name_unwound(struct symbolizer *sym, int stack_map_fd, const struct procmaps *maps,
		       const uint64_t *uips, size_t nu, int32_t kstack, struct stackname *out)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	bool complete; /* the unwinder told where the stack ends */

	if (nu > UNWIND_MAX_FRAMES)
		nu = UNWIND_MAX_FRAMES;
	if (nu)
		memcpy(ips, uips, nu * sizeof(*ips));
	if (nu < UNWIND_MAX_FRAMES)
		ips[nu] = 0;
	return name_pair(sym, stack_map_fd, maps, nu ? ips : NULL, nu, kstack, false, NULL, out,
			 &complete);
}
