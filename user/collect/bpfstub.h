/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What older kernels lack, made up for: a stub program per probe that hands its value to the real
 * program (bpf/stub.h; for attach cookies and bpf_get_func_ip, Linux 5.15), perf-event uprobes
 * and kprobes made and attached by hand for such a program (libbpf attaches only its own), and
 * the probes of which kernel features topsprof takes the fallback for. */
#ifndef TOPSPROF_BPFSTUB_H
#define TOPSPROF_BPFSTUB_H

#include <bpf/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A program of type that puts value and the current thread (its pid_tgid) in the per-CPU array
 * value_fd (key 0; bpf/stub.h: struct stub_slot) and tail-calls slot of the program array
 * progs_fd: its descriptor, or -errno. */
int bpf_stub_load(enum bpf_prog_type type, int value_fd, int progs_fd, uint32_t slot,
		  uint64_t value);

/* A uprobe (target a path, off a file offset) or kprobe (target NULL, off the function's
 * address) perf event with prog_fd attached (-1: none, the breakpoint alone) and enabled, for the
 * processes of pid (-1: every one): the event's descriptor, whose close detaches the program, or
 * -errno. */
int perf_probe_attach(int prog_fd, bool uprobe, bool retprobe, const char *target, uint64_t off,
		      pid_t pid);

/* Whether the kernel has helper for type; env, when set in the environment (whatever its value),
 * says no, so that the fallback is tested on kernels that have it. */
bool bpf_have_helper(enum bpf_prog_type type, enum bpf_func_id helper, const char *env);

/* The kernel's BTF (vmlinux: btf__load_vmlinux_btf) asked: the arguments of the raw tracepoint
 * tp (btf_trace_<tp>: typedef void (*)(void *, args...)), or -ENOENT; whether the struct type has
 * a member named member, there or in one of its nameless members (as C reads them): 1, 0, or
 * -ENOENT without such a struct. */
struct btf;
int btf_tp_nargs(const struct btf *vmlinux, const char *tp);
int btf_struct_has(const struct btf *vmlinux, const char *type, const char *member);
/* whether the running kernel's BTF has a type, function or member of this name (a kfunc, a
 * struct that a feature brought): a scan, without parsing it */
bool kernel_btf_has_name(const char *name);

#endif
