/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* BPF instructions written by hand, for the few-instruction programs topsprof loads itself (the
 * older kernels' stubs, the probes of what a kernel offers). */
#ifndef TOPSPROF_BPFINSN_H
#define TOPSPROF_BPFINSN_H

#include <linux/bpf.h>
#include <stdint.h>

#define INSN(c, d, s, o, i)                                                         \
	{                                                                           \
		.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) \
	}
/* the two halves of a 64-bit immediate load; src BPF_PSEUDO_MAP_FD: v is a map's descriptor */
#define LD_IMM64(d, s, v)                                                 \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, (int32_t)(uint32_t)(v)), \
		INSN(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))

#endif
