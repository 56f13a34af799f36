// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/bpfmaps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

static void release_now(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
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

static bool background;
static pid_t background_pid;

void bpf_release_in_background(void)
{
	background = true;
}

int bpf_release_background_pid(void)
{
	return background_pid;
}

/* a descriptor of a BPF object (program, map, link, BTF) or of a perf event */
static bool bpf_or_perf_fd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strncmp(target, "anon_inode:bpf", 14) || !strcmp(target, "anon_inode:btf") ||
	       !strcmp(target, "anon_inode:[perf_event]");
}

/* in the releaser: nothing of the run's but its BPF objects and perf events, so that no reader
 * of topsprof's output waits for it, and no file, lock or socket outlives topsprof */
static void keep_bpf_only(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3; fd++)
		if (null >= 0)
			dup2(null, fd);
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d) && !bpf_or_perf_fd(fd))
			close(fd);
	}
	if (d)
		closedir(d);
}

/* the links left to a child that releases them: topsprof's own copies then go at once, the
 * kernel's objects living on in the child (when no child can start, they go as before) */
static void release_forked(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_NAME, "topsprof-detach");
		keep_bpf_only();
		release_now(links, nlinks, fds, nfds);
		_exit(0);
	}
	if (pid > 0)
		background_pid = pid;
}

void bpf_release_links(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	if (background && nlinks + nfds > RELEASE_FOREGROUND_MAX)
		release_forked(links, nlinks, fds, nfds);
	release_now(links, nlinks, fds, nfds);
}
