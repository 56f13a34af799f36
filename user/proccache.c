// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "proccache.h"

#include "cpustacks.h"
#include "grow.h"
#include "monotime.h"
#include "procfs.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REFRESH_EVERY_NS 1000000000ull /* a live process's mappings again (dlopen) */
#define YOUNG_NS	 1000000000ull /* read at every poll until this old */
#define WALK_EVERY_NS	 50000000ull   /* the map of processes, for those not announced */

static size_t slot_of(const struct proccache *pc, uint32_t tgid)
{
	size_t i = (size_t)(tgid * 2654435761u) & (pc->nslots - 1);

	while (pc->slots[i] && pc->v[pc->slots[i] - 1].tgid != tgid)
		i = (i + 1) & (pc->nslots - 1);
	return i;
}

const struct cached_proc *proccache_find(const struct proccache *pc, uint32_t tgid)
{
	size_t i;

	if (!pc->nslots)
		return NULL;
	i = slot_of(pc, tgid);
	return pc->slots[i] ? &pc->v[pc->slots[i] - 1] : NULL;
}

/* room for one more process in the index; false when out of memory */
static bool index_room(struct proccache *pc)
{
	size_t n = pc->nslots ? pc->nslots : 64;
	uint32_t *slots;

	if ((pc->n + 1) * 2 <= pc->nslots)
		return true;
	while ((pc->n + 1) * 2 > n)
		n *= 2;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return false;
	free(pc->slots);
	pc->slots = slots;
	pc->nslots = n;
	for (size_t i = 0; i < pc->n; i++)
		pc->slots[slot_of(pc, pc->v[i].tgid)] = (uint32_t)i + 1;
	return true;
}

#define MAX_HELD 1024 /* files of other mount namespaces held open, at most */

static uint64_t mnt_ns(const char *pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* the mappings of a process in another mount namespace: each file opened through the process's
 * root, held (one descriptor per file), and named by its descriptor */
static void reach_files(struct proccache *pc, uint32_t tgid, struct procmaps *m)
{
	char pid[16];
	uint64_t ns;

	snprintf(pid, sizeof(pid), "%u", tgid);
	if (!pc->self_mnt_ns)
		pc->self_mnt_ns = mnt_ns("self");
	ns = mnt_ns(pid);
	if (!ns || ns == pc->self_mnt_ns)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct procmap *p = &m->v[i];
		char path[PATH_MAX + 32];
		struct held_file *h = NULL;
		struct stat st;
		int fd;

		if (!p->path || p->path[0] != '/')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/root%s", tgid, p->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* deleted since, or gone */
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		for (size_t k = 0; k < pc->nheld && !h; k++)
			if (pc->held[k].dev == (uint64_t)st.st_dev &&
			    pc->held[k].ino == (uint64_t)st.st_ino)
				h = &pc->held[k];
		if (h) {
			close(fd);
		} else if (pc->nheld < MAX_HELD && grow_array((void **)&pc->held, &pc->capheld,
							      pc->nheld, sizeof(*pc->held))) {
			h = &pc->held[pc->nheld++];
			*h = (struct held_file){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, fd };
		} else {
			close(fd); /* too many: reachable while the process lives */
		}
		if (h)
			snprintf(path, sizeof(path), "/proc/self/fd/%d", h->fd);
		p->open_path = strdup(path);
	}
}

void proccache_capture(struct proccache *pc, uint32_t tgid, uint64_t now)
{
	struct cached_proc *p = (struct cached_proc *)proccache_find(pc, tgid);
	struct procmaps fresh;
	int err;

	if (!p) {
		if (!index_room(pc) ||
		    !grow_array((void **)&pc->v, &pc->cap, pc->n, sizeof(*pc->v)))
			return;
		p = &pc->v[pc->n++];
		memset(p, 0, sizeof(*p));
		p->tgid = tgid;
		p->first_ns = now;
		pc->slots[slot_of(pc, tgid)] = (uint32_t)pc->n;
	} else if (p->gone ||
		   (now - p->first_ns >= YOUNG_NS && now - p->read_ns < REFRESH_EVERY_NS)) {
		return;
	}
	p->read_ns = now;
	err = procmaps_read(&fresh, (int)tgid);
	if (err) {
		p->gone = err == -ENOENT || err == -ESRCH;
		if (!p->comm[0])
			snprintf(p->comm, sizeof(p->comm), "%u", tgid);
		return;
	}
	/* again each time: an exec renames it (an exiting process keeps the name it had) */
	if (fresh.n || !p->comm[0]) {
		procfs_comm(tgid, p->comm, sizeof(p->comm));
		cpu_frame_sanitize(p->comm);
	}
	if (!fresh.n) { /* exiting, or a kernel thread */
		procmaps_free(&fresh);
		return;
	}
	reach_files(pc, tgid, &fresh);
	procmaps_free(&p->maps);
	p->maps = fresh;
}

void proccache_capture_map(struct proccache *pc, int map_fd, uint64_t now)
{
	uint32_t k, *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &k)) {
		proccache_capture(pc, k, now);
		prev = &k;
	}
}

void proccache_free(struct proccache *pc)
{
	for (size_t i = 0; i < pc->n; i++)
		procmaps_free(&pc->v[i].maps);
	free(pc->v);
	free(pc->slots);
	for (size_t i = 0; i < pc->nheld; i++)
		close(pc->held[i].fd);
	free(pc->held);
	memset(pc, 0, sizeof(*pc));
}

void proccache_renew(struct proccache *pc, uint32_t tgid, uint64_t now)
{
	struct cached_proc *p = (struct cached_proc *)proccache_find(pc, tgid);

	if (p && p->gone) {
		p->gone = p->pruned = false;
		p->first_ns = now; /* young again */
		p->comm[0] = 0;
	}
	proccache_capture(pc, tgid, now);
}

static int on_announced(void *ctx, void *data, size_t size)
{
	struct proc_watch *w = ctx;

	if (size >= sizeof(uint32_t))
		proccache_renew(&w->cache, *(const uint32_t *)data, mono_ns());
	return 0;
}

int proc_watch_init(struct proc_watch *w, int ring_fd, int seen_fd)
{
	memset(w, 0, sizeof(*w));
	w->seen_fd = seen_fd;
	w->rb = ring_buffer__new(ring_fd, on_announced, w, NULL);
	return w->rb ? 0 : -errno;
}

void proc_watch_poll(struct proc_watch *w, bool all)
{
	uint64_t now = mono_ns();

	ring_buffer__consume(w->rb);
	if (!all && now - w->walked_ns < WALK_EVERY_NS)
		return;
	w->walked_ns = now;
	proccache_capture_map(&w->cache, w->seen_fd, now);
	for (size_t i = 0; i < w->cache.n; i++) {
		struct cached_proc *p = &w->cache.v[i];

		if (p->gone && !p->pruned) {
			bpf_map_delete_elem(w->seen_fd, &p->tgid);
			p->pruned = true;
		}
	}
}

int proc_watch_epoll_fd(const struct proc_watch *w)
{
	return ring_buffer__epoll_fd(w->rb);
}

void proc_watch_free(struct proc_watch *w)
{
	ring_buffer__free(w->rb);
	proccache_free(&w->cache);
	w->rb = NULL;
}
