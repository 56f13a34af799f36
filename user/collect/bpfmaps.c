// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/bpfmaps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

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

struct release {
	struct bpf_link **links;
	const int *fds;
	size_t nlinks, nfds, next;
};

static void *release_some(void *p)
{
	struct release *r = p;
	size_t i;

	while ((i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->nlinks + r->nfds) {
		if (i < r->nlinks)
			bpf_link__destroy(r->links[i]);
		else
			close(r->fds[i - r->nlinks]);
	}
	return NULL;
}

/* more would not help: the kernel serializes much of a single uprobe's release */
#define RELEASE_THREADS 32

void bpf_release_links(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	struct release r = { links, fds, nlinks, nfds, 0 };
	size_t want = nlinks + nfds, n = 0;
	pthread_t th[RELEASE_THREADS];
	pthread_attr_t attr;

	if (want > RELEASE_THREADS + 1)
		want = RELEASE_THREADS + 1;
	/* they only wait in close(): a small stack each */
	if (want > 1 && !pthread_attr_init(&attr)) {
		pthread_attr_setstacksize(&attr, 64 * 1024);
		while (n + 1 < want && !pthread_create(&th[n], &attr, release_some, &r))
			n++;
		pthread_attr_destroy(&attr);
	}
	release_some(&r); /* this thread too; all of them when no thread could start */
	while (n)
		pthread_join(th[--n], NULL);
}
