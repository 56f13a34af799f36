// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/proccache.h"

#include "model/cpustacks.h"
#include "lib/grow.h"
#include "lib/monotime.h"
#include "lib/log.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* the most files of other mount namespaces held open: a share of what the descriptor limit
 * allows (not raised: the application inherits topsprof's limits), 1024 at most */
static size_t held_budget(void)
{
	struct rlimit rl;
	size_t n = 1024;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur > 512 ? (size_t)(rl.rlim_cur - 256) / 4 : 64;
	return n < 1024 ? n : 1024;
}

/* a file of another mount namespace's process, held: the one it mapped at [start, end), through
 * /proc/PID/map_files (no path is resolved: no symlink, FIFO or device a process may put at a
 * path is ever opened), one descriptor per file; NULL when it cannot be held */
static const struct held_file *hold(struct proccache *pc, int dirfd, const struct procmap *p)
{
	char name[64];
	struct held_file *h;
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "map_files/%" PRIx64 "-%" PRIx64, p->start, p->end);
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	for (size_t k = 0; k < pc->nheld; k++)
		if (pc->held[k].dev == (uint64_t)st.st_dev &&
		    pc->held[k].ino == (uint64_t)st.st_ino) {
			close(fd);
			return &pc->held[k];
		}
	if (!pc->held_max)
		pc->held_max = held_budget();
	if (pc->nheld >= pc->held_max ||
	    !grow_array((void **)&pc->held, &pc->capheld, pc->nheld, sizeof(*pc->held))) {
		close(fd);
		if (!pc->held_full)
			pr_warn("holding %zu files of processes in other mount namespaces, the most "
				"allowed: frames in further files of theirs stay unnamed",
				pc->nheld);
		pc->held_full = true;
		return NULL;
	}
	h = &pc->held[pc->nheld++];
	*h = (struct held_file){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, fd };
	return h;
}

/* another mount namespace's mappings: each file held, and read through its descriptor */
static void reach_files(struct proccache *pc, int dirfd, struct procmaps *m,
			const struct procmaps *before)
{
	for (size_t i = 0; i < m->n; i++) {
		struct procmap *p = &m->v[i];
		const struct procmap *b = procmaps_find(before, p->start, NULL);
		const struct held_file *h;
		char path[64];

		if (!p->path || p->path[0] != '/')
			continue;
		p->foreign = true;
		/* the same mapping as at the last read: the file held for it already */
		if (b && b->open_path && b->start == p->start && b->end == p->end &&
		    b->pgoff == p->pgoff && !strcmp(b->path, p->path)) {
			p->open_path = strdup(b->open_path);
			continue;
		}
		h = hold(pc, dirfd, p);
		if (!h)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", h->fd);
		p->open_path = strdup(path);
	}
}

/* whether the process of dirfd lives in another mount namespace (also when it cannot be told) */
static bool foreign_ns(struct proccache *pc, int dirfd)
{
	struct stat st;

	if (!pc->self_mnt_ns)
		pc->self_mnt_ns = stat("/proc/self/ns/mnt", &st) ? 1 : (uint64_t)st.st_ino;
	return fstatat(dirfd, "ns/mnt", &st, 0) || (uint64_t)st.st_ino != pc->self_mnt_ns;
}

static void read_comm_at(int dirfd, char *comm, size_t len)
{
	int fd = openat(dirfd, "comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, comm, len - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return; /* kept as it was */
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
	cpu_frame_sanitize(comm);
}

void proccache_capture(struct proccache *pc, uint32_t tgid, uint64_t now)
{
	struct cached_proc *p = (struct cached_proc *)proccache_find(pc, tgid);
	struct procmaps fresh;
	char dir[32];
	int dirfd, fd, err;
	bool foreign;

	if (!p) {
		if (!index_room(pc) ||
		    !grow_array((void **)&pc->v, &pc->cap, pc->n, sizeof(*pc->v)))
			return;
		p = &pc->v[pc->n++];
		memset(p, 0, sizeof(*p));
		p->tgid = tgid;
		p->first_ns = now;
		pc->slots[slot_of(pc, tgid)] = (uint32_t)pc->n;
		snprintf(p->comm, sizeof(p->comm), "%u", tgid);
	} else if (p->gone ||
		   (now - p->first_ns >= YOUNG_NS && now - p->read_ns < REFRESH_EVERY_NS)) {
		return;
	}
	p->read_ns = now;
	/* one look at the process: its namespace, mappings and files all of the same one, not of
	 * a successor with its pid */
	snprintf(dir, sizeof(dir), "/proc/%u", tgid);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		p->gone = errno == ENOENT || errno == ESRCH;
		return;
	}
	foreign = foreign_ns(pc, dirfd);
	fd = openat(dirfd, "maps", O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : procmaps_read_fd(&fresh, fd);
	if (err) {
		p->gone = err == -ENOENT || err == -ESRCH;
		close(dirfd);
		return;
	}
	/* again each time: an exec renames it (an exiting process keeps the name it had) */
	if (fresh.n || !p->read_once)
		read_comm_at(dirfd, p->comm, sizeof(p->comm));
	p->read_once = true;
	if (!fresh.n) { /* exiting, or a kernel thread */
		procmaps_free(&fresh);
		close(dirfd);
		return;
	}
	if (foreign)
		reach_files(pc, dirfd, &fresh, &p->maps);
	close(dirfd);
	procmaps_free(&p->maps);
	p->maps = fresh;
}

void proccache_capture_map(struct proccache *pc, int map_fd, uint64_t now)
{
	uint32_t k, *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &k)) {
		const struct cached_proc *p = proccache_find(pc, k);

		/* a process taken out of the map as gone, in it again: a new one with its pid,
		 * whose announcement was lost */
		if (p && p->pruned)
			proccache_renew(pc, k, now);
		else
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

	/* a new image (an exec) or a new process with the pid: read now, and young again (read at
	 * every poll while it maps its libraries) */
	if (p) {
		p->gone = p->pruned = false;
		p->first_ns = now;
		p->read_ns = 0;
		p->read_once = false;
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
