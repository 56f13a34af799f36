/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The system calls bpf/kernel.bpf.c tells apart, by architecture: raw_syscalls' id is the
 * architecture's own number. Literals, not <asm/unistd.h>: a BPF build finds the host's asm/
 * headers whatever the target. */
#ifndef TOPSPROF_BPF_SYSNR_H
#define TOPSPROF_BPF_SYSNR_H

#if defined(__TARGET_ARCH_x86)
/* arch/x86/entry/syscalls/syscall_64.tbl */
#define SYSNR_READ	0
#define SYSNR_WRITE	1
#define SYSNR_CLOSE	3
#define SYSNR_LSEEK	8
#define SYSNR_MMAP	9
#define SYSNR_IOCTL	16
#define SYSNR_PREAD64	17
#define SYSNR_PWRITE64	18
#define SYSNR_READV	19
#define SYSNR_WRITEV	20
#define SYSNR_FCNTL	72
#define SYSNR_FLOCK	73
#define SYSNR_FSYNC	74
#define SYSNR_FDATASYNC 75
#define SYSNR_FUTEX	202
/* uretprobe (Linux 6.11+): topsprof's own return probes return through it */
#define SYSNR_URETPROBE 335
#elif defined(__TARGET_ARCH_arm64)
/* the generic table, include/uapi/asm-generic/unistd.h; no uretprobe call (a return probe
 * traps) */
#define SYSNR_READ	63
#define SYSNR_WRITE	64
#define SYSNR_CLOSE	57
#define SYSNR_LSEEK	62
#define SYSNR_MMAP	222
#define SYSNR_IOCTL	29
#define SYSNR_PREAD64	67
#define SYSNR_PWRITE64	68
#define SYSNR_READV	65
#define SYSNR_WRITEV	66
#define SYSNR_FCNTL	25
#define SYSNR_FLOCK	32
#define SYSNR_FSYNC	82
#define SYSNR_FDATASYNC 83
#define SYSNR_FUTEX	98
#else
#error "topsprof: this architecture's system call numbers are not known"
#endif

#endif
