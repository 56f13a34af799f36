/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Reading BPF maps the way topsprof's counters are kept. */
#ifndef TOPSPROF_BPFMAPS_H
#define TOPSPROF_BPFMAPS_H

#include <stddef.h>
#include <stdint.h>

/* the sum over CPUs of a per-CPU array's __u64 at key; 0 or -errno */
int percpu_u64_sum(int map_fd, uint32_t key, uint64_t *sum);
/* set a per-CPU array's __u64 at key to 0 on every CPU; 0 or -errno */
int percpu_u64_zero(int map_fd, uint32_t key);
/* delete every key of a hash map (keys of key_size bytes); 0 or -ENOMEM */
int bpf_map_clear(int map_fd, size_t key_size);

#endif
