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

/* A program of type that puts value in the per-CPU array value_fd (key 0) and tail-calls slot
 * of the program array progs_fd: its descriptor, or -errno. */
int bpf_stub_load(enum bpf_prog_type type, int value_fd, int progs_fd, uint32_t slot,
		  uint64_t value);

/* A uprobe (path and file offset) or kprobe (function name, offset 0) perf event with prog_fd
 * attached and enabled, for the processes of pid (-1: every one): the event's descriptor, whose
 * close detaches the program, or -errno. */
int perf_probe_attach(int prog_fd, bool uprobe, bool retprobe, const char *target, uint64_t off,
		      pid_t pid);

/* Kernel features a fallback is taken for; env, when set in the environment, says no (so that
 * the fallback is tested on kernels that have the feature). */
bool bpf_have_helper(enum bpf_prog_type type, enum bpf_func_id helper, const char *env);

/* the arguments of the kernel's raw tracepoint tp (by its BTF: btf_trace_<tp>), or -errno */
int kernel_tp_nargs(const char *tp);
/* whether the kernel's struct type has a member named member (by its BTF): 1, 0, or -errno */
int kernel_has_member(const char *type, const char *member);

#endif
