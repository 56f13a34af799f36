/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* uprobe_multi links (Linux 6.6+): one link probes many functions of one file. libbpf 1.1 does
 * not know them, so they are created with the bpf(2) syscall directly. Their worth here:
 * releasing a uprobe costs the kernel a grace period (~0.1 s on our machines), once per link;
 * a hundred single probes would hold topsprof's exit up for seconds, two multi links do not. */
#ifndef TOPSPROF_UMULTI_H
#define TOPSPROF_UMULTI_H

#include <stdbool.h>
#include <stdint.h>

/* the kernel has uprobe_multi links (its BTF knows struct bpf_uprobe_multi_link), and
 * TOPSPROF_NO_UPROBE_MULTI is not set */
bool umulti_supported(void);

/* uprobes take attach cookies (Linux 5.15+; bpf_get_attach_cookie), and TOPSPROF_NO_COOKIE is
 * not set; probed once */
bool ucookies_supported(void);

/* the expected attach type a program must be loaded with to be used with umulti_attach() */
#define UMULTI_ATTACH_TYPE 48 /* BPF_TRACE_UPROBE_MULTI */

/* a link fd probing offsets[i] of path with cookies[i], as return probes if retprobe; -errno.
 * pid 0: in every process that maps path; else only in that process (its breakpoints are written
 * into its address space alone, and follow it through exec, not into its children) */
int umulti_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  uint32_t cnt, bool retprobe, int pid);

#endif
