// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/bpfmaps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>

int percpu_u64_sum(int map_fd, uint32_t key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u64 *vals;

	*sum = 0;
	if (ncpu < 0)
		return ncpu;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals))
		err = -errno;
	for (int c = 0; !err && c < ncpu; c++)
		*sum += vals[c];
	free(vals);
	return err;
}

int percpu_u64_zero(int map_fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u64 *zero;

	if (ncpu < 0)
		return ncpu;
	zero = calloc((size_t)ncpu, sizeof(*zero));
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(map_fd, &key, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

int bpf_map_clear(int map_fd, size_t key_size)
{
	void *key = malloc(key_size);

	if (!key)
		return -ENOMEM;
	while (!bpf_map_get_next_key(map_fd, NULL, key))
		if (bpf_map_delete_elem(map_fd, key))
			break;
	free(key);
	return 0;
}
