// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/bpfmaps.h"
#include "lib/grow.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

void bpf_release_now(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
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

/* the threads of this process the kernel counts (0: unknown) */
static long thread_count(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	const char *p;
	long threads = 0;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* after the command's closing parenthesis: the state (field 3) ... num_threads (20) */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	if (p)
		threads = strtol(p + 1, NULL, 10);
	return threads;
}

/* whether this is the process's only thread. A child forked while another thread runs may
 * inherit a lock that thread held (the allocator's, under ASan) and wait for it forever: the
 * children below, which allocate and start threads, are forked only from a single thread. A
 * thread just joined is counted a moment longer, while the kernel ends it (it runs no code of
 * the process's by then): up to 10 ms for the count to come down. */
static bool single_threaded(void)
{
	for (int i = 0; i < 100; i++) {
		long n = thread_count();

		if (n == 1)
			return true;
		if (n <= 0)
			return false;
		usleep(100);
	}
	return false;
}

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

/* in a releaser: nothing of the run's but its BPF objects and perf events (bpf), or nothing but
 * the descriptor keep, so that no reader of topsprof's output waits for it, and no file, lock or
 * socket outlives topsprof */
static void keep_only(bool bpf, int keep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3; fd++)
		if (null >= 0)
			dup2(null, fd);
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d) && fd != keep &&
		    !(bpf && bpf_or_perf_fd(fd)))
			close(fd);
	}
	if (d)
		closedir(d);
}

/* the links left to a child that releases them: topsprof's own copies then go at once, the
 * kernel's objects living on in the child (when no child can start, they go as before) */
static void release_forked(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	pid_t pid = single_threaded() ? fork() : -1;

	if (pid == 0) {
		prctl(PR_SET_NAME, "topsprof-detach");
		keep_only(true, -1);
		bpf_release_now(links, nlinks, fds, nfds);
		_exit(0);
	}
	if (pid > 0)
		background_pid = pid;
}

void bpf_release_links(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	if (background && nlinks + nfds > RELEASE_FOREGROUND_MAX)
		release_forked(links, nlinks, fds, nfds);
	bpf_release_now(links, nlinks, fds, nfds);
}

/* -- the releaser of links let go while the run goes on ------------------------------------------ */

struct bpf_releaser {
	int sock; /* to the child; -1 once it is gone */
	pid_t pid;
	int *pending; /* descriptors not handed over yet: the socket was full */
	size_t npending, cap;
};

/* SCM_MAX_FD, the most descriptors one message takes */
#define FDS_PER_MSG 253

/* the child: takes every descriptor that came, releases them at once (bpf_release_now: their
 * grace periods overlap), and again, until topsprof closed its end and nothing is left */
static void releaser_loop(int sock)
{
	union {
		char buf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
		struct cmsghdr align;
	} u;
	int *fds = NULL;
	size_t n = 0, cap = 0;
	bool eof = false;

	while (!eof || n) {
		char byte;
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf) };
		ssize_t got =
			eof ? 0 : recvmsg(sock, &m, MSG_CMSG_CLOEXEC | (n ? MSG_DONTWAIT : 0));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			eof = eof || got == 0 || errno != EAGAIN;
			bpf_release_now(NULL, 0, fds, n);
			n = 0;
			continue;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			if (!grow_array_to((void **)&fds, &cap, n + k, sizeof(*fds))) {
				bpf_release_now(NULL, 0, (const int *)CMSG_DATA(c), k);
				continue;
			}
			memcpy(fds + n, CMSG_DATA(c), k * sizeof(int));
			n += k;
		}
	}
	_exit(0);
}

/* 0 once size bytes are read; -1 else */
static int read_full(int fd, void *buf, size_t size)
{
	ssize_t n;

	while ((n = read(fd, buf, size)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)size ? 0 : -1;
}

static int releaser_start(struct bpf_releaser *r)
{
	int sv[2], status, err = 0;
	sigset_t all;
	pid_t mid;

	if (!single_threaded())
		return -EDEADLK;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	mid = fork();
	if (mid == 0) {
		/* a grandchild, in a session of its own: not the application's sibling among
		 * topsprof's children, no signal to topsprof's group or terminal reaches it; it
		 * ends when topsprof closed its end and every link is released */
		setsid();
		if (fork() != 0)
			_exit(0);
		prctl(PR_SET_NAME, "topsprof-detach");
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		keep_only(false, sv[1]);
		r->pid = getpid();
		if (write(sv[1], &r->pid, sizeof(r->pid)) != sizeof(r->pid))
			_exit(1);
		releaser_loop(sv[1]);
	}
	close(sv[1]);
	while (mid > 0 && waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (mid < 0)
		err = -errno;
	/* its pid, once it runs (none: it could not start) */
	else if (read_full(sv[0], &r->pid, sizeof(r->pid)))
		err = -ECHILD;
	if (err) {
		close(sv[0]);
		return err;
	}
	r->sock = sv[0];
	return 0;
}

/* what is pending, to the child, as much as the socket takes (all, when wait); topsprof's copies
 * closed as they go. 0, or -errno when the child is gone or failed */
static int releaser_flush(struct bpf_releaser *r, bool wait)
{
	while (r->npending) {
		size_t k = r->npending < FDS_PER_MSG ? r->npending : FDS_PER_MSG;
		union {
			char buf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
			struct cmsghdr align;
		} u;
		char byte = 0;
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = CMSG_SPACE(k * sizeof(int)) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(k * sizeof(int));
		memcpy(CMSG_DATA(c), r->pending, k * sizeof(int));
		if (sendmsg(r->sock, &m, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT)) < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN && !wait ? 0 : -errno;
		}
		for (size_t i = 0; i < k; i++)
			close(r->pending[i]);
		r->npending -= k;
		memmove(r->pending, r->pending + k, r->npending * sizeof(int));
	}
	return 0;
}

/* the child is gone, or let go: what is still pending is released here and now */
static void releaser_lost(struct bpf_releaser *r)
{
	if (r->sock >= 0)
		close(r->sock);
	r->sock = -1;
	bpf_release_now(NULL, 0, r->pending, r->npending);
	r->npending = 0;
}

int bpf_releaser_open(struct bpf_releaser **out)
{
	struct bpf_releaser *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	err = releaser_start(r);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void bpf_release_later(struct bpf_releaser *r, const int *fds, size_t n)
{
	if (!n) /* a run that probed nothing (no runtime found) */
		return;
	if (!r || r->sock < 0 ||
	    !grow_array_to((void **)&r->pending, &r->cap, r->npending + n, sizeof(int))) {
		bpf_release_now(NULL, 0, fds, n);
		return;
	}
	memcpy(r->pending + r->npending, fds, n * sizeof(int));
	r->npending += n;
	if (releaser_flush(r, false))
		releaser_lost(r);
}

int bpf_releaser_close(struct bpf_releaser *r)
{
	pid_t pid;

	if (!r)
		return 0;
	/* all to the child; closing the socket lets it end when it is done (what it did not
	 * take, the child gone, is released here) */
	if (r->sock >= 0)
		releaser_flush(r, true);
	releaser_lost(r);
	pid = r->pid;
	free(r->pending);
	free(r);
	return pid;
}
