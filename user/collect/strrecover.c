// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/strrecover.h"
#include "lib/log.h"
#include "collect/usampler.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Private and not writable: a writable mapping may have changed since the call; a shared one
 * (even read-only here) may be written through another mapping of the same memory or file. */
bool strrecover_allowed(const char *perms)
{
	return perms && strlen(perms) >= 4 && perms[0] == 'r' && perms[1] != 'w' && perms[3] == 'p';
}

uint64_t strrecover_span(const char *maps, uint64_t addr, uint64_t max, bool *writable)
{
	uint64_t span = 0, at = addr;

	if (writable)
		*writable = false;
	for (const char *line = maps; line && *line && span < max;) {
		uint64_t start, end;
		char perms[5];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &start, &end, perms) == 3 &&
		    start <= at && at < end) {
			if (!strrecover_allowed(perms)) {
				if (writable)
					*writable = perms[1] == 'w';
				break;
			}
			span += end - at;
			at = end; /* the next must begin right here */
		} else if (span) {
			break; /* a gap: the string cannot go on past it */
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return span < max ? span : max;
}

/* the whole of a file under a /proc/PID directory, NUL-terminated; NULL when it cannot be read
 * (the process that directory stood for is gone) */
static char *read_at(int dirfd, const char *name)
{
	char *text = NULL;
	size_t cap = 0, n = 0;
	ssize_t got;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	do {
		if (cap - n < 4096) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *t = realloc(text, ncap);

			if (!t)
				goto fail;
			text = t;
			cap = ncap;
		}
		got = read(fd, text + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto fail;
		n += (size_t)got;
	} while (got);
	close(fd);
	text[n] = '\0';
	return text;
fail:
	close(fd);
	free(text);
	return NULL;
}

/* when the process the directory stands for started (clock ticks after boot): false when it
 * is gone */
static bool start_at(int dirfd, uint64_t *start)
{
	char *stat = read_at(dirfd, "stat");
	uint32_t threads;
	bool ok = stat && !usampler_parse_pidstat(stat, start, &threads);

	free(stat);
	return ok;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* whether a process that started at start (clock ticks after boot) started after mono_ns
 * (CLOCK_MONOTONIC, the probe's clock): then it is not the one that made the call */
static bool started_after(uint64_t start, uint64_t mono_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	/* the start is kept in CLOCK_BOOTTIME, which also counts time suspended; read second, so
	 * that the difference is not below 0 */
	uint64_t mono_now = clock_ns(CLOCK_MONOTONIC), boot_now = clock_ns(CLOCK_BOOTTIME);
	uint64_t boot_off = boot_now > mono_now ? boot_now - mono_now : 0;
	uint64_t start_ns = start * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));

	return mono_ns && start_ns > boot_off && start_ns - boot_off > mono_ns;
}

/* Processes topsprof read strings of lately, held by their /proc/PID directory: a pid reused by
 * another process gets a new directory, and files opened through the old one fail, so what is
 * read through it, then checked through it, is the right process's. Their maps are kept for
 * MAPS_TTL_NS (faulted strings come in bursts, each would read the whole maps again); read again
 * at once when a string lies in none of the kept ones. */
#define CACHED	    4
#define MAPS_TTL_NS 100000000ull

struct proc_ref {
	int pid; /* 0: a free slot */
	int dirfd;
	uint64_t start; /* clock ticks after boot */
	char *maps;
	uint64_t maps_ns; /* when maps was read, CLOCK_MONOTONIC */
	uint64_t used_ns;
};

static struct proc_ref procs[CACHED];

static void proc_drop(struct proc_ref *p)
{
	if (!p->pid)
		return;
	close(p->dirfd);
	free(p->maps);
	memset(p, 0, sizeof(*p));
}

/* the maps of p read again; false when the process is gone */
static bool proc_read_maps(struct proc_ref *p, uint64_t now)
{
	free(p->maps);
	p->maps = read_at(p->dirfd, "maps");
	p->maps_ns = now;
	return p->maps != NULL;
}

/* whether p is still the process it was when opened: its directory still open-able, the same
 * start time. After a read of its memory by pid, this says the read was of this process. */
static bool proc_same(struct proc_ref *p)
{
	uint64_t start;

	return start_at(p->dirfd, &start) && start == p->start;
}

/* process pid, as held (or now opened); NULL when it is gone */
static struct proc_ref *proc_get(int pid, uint64_t now)
{
	struct proc_ref *p = NULL;
	char path[32];

	for (int i = 0; i < CACHED; i++) {
		if (procs[i].pid == pid) {
			p = &procs[i];
			/* gone since (the pid may be another process's now): opened afresh */
			if (!proc_same(p) ||
			    (now - p->maps_ns > MAPS_TTL_NS && !proc_read_maps(p, now))) {
				proc_drop(p);
				break;
			}
			p->used_ns = now;
			return p;
		}
		if (!p || !procs[i].pid || (p->pid && procs[i].used_ns < p->used_ns))
			p = &procs[i]; /* a free slot, else the least lately used */
	}
	proc_drop(p);
	snprintf(path, sizeof(path), "/proc/%d", pid);
	p->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0)
		return NULL;
	p->pid = pid;
	p->used_ns = now;
	if (!start_at(p->dirfd, &p->start) || !proc_read_maps(p, now)) {
		proc_drop(p);
		return NULL;
	}
	return p;
}

/* The reads of another process's memory are made by one worker thread, never by the thread that
 * reads the events: a page of the string may fault in a way that never completes (a file on a
 * FUSE mount whose daemon does not answer, a userfaultfd region, an NFS server gone), and
 * process_vm_readv would wait for it. The caller waits READ_DEADLINE_NS at most; after that the
 * string counts as unreadable and the request is abandoned: the worker reads into a buffer of
 * its own (rd.buf), which the caller copies from only once the read is done. While an abandoned
 * read still waits, no other is attempted (each counts as unreadable at once); once it returns,
 * the worker takes requests again. Everything the worker touches is static (rd, and rd.buf,
 * freed only while no read is under way): a worker blocked when topsprof exits is ended with the
 * process, and what it holds stays reachable. (Under LeakSanitizer alone, the check at exit stops
 * every thread first, and a thread in such a fault stops only once the fault completes.) */
#define READ_DEADLINE_NS 50000000ull

enum rd_state {
	RD_IDLE,    /* no request: the caller may set one */
	RD_QUEUED,  /* set, not taken yet */
	RD_READING, /* the worker reads: rd.buf is its own */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t queued; /* RD_QUEUED */
	pthread_cond_t done;   /* back to RD_IDLE; CLOCK_MONOTONIC for the deadline */
	bool started, failed;
	enum rd_state state;
	int pid;
	uint64_t addr;
	size_t len, got;
	char *buf;
	size_t cap;
} rd = { .lock = PTHREAD_MUTEX_INITIALIZER, .queued = PTHREAD_COND_INITIALIZER };

static void *rd_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rd.lock);
	for (;;) {
		struct iovec local, remote;
		ssize_t got;

		while (rd.state != RD_QUEUED)
			pthread_cond_wait(&rd.queued, &rd.lock);
		rd.state = RD_READING;
		local = (struct iovec){ rd.buf, rd.len };
		remote = (struct iovec){ (void *)(uintptr_t)rd.addr, rd.len };
		pthread_mutex_unlock(&rd.lock);
		got = process_vm_readv(rd.pid, &local, 1, &remote, 1, 0);
		pthread_mutex_lock(&rd.lock);
		rd.got = got > 0 ? (size_t)got : 0;
		rd.state = RD_IDLE;
		pthread_cond_signal(&rd.done);
	}
	return NULL;
}

/* the worker, started the first time; false when it cannot be */
static bool rd_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	pthread_t t;
	int err;

	if (rd.started || rd.failed)
		return rd.started;
	rd.failed = true;
	if (pthread_condattr_init(&ca))
		return false;
	err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) || pthread_cond_init(&rd.done, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return false;
	/* the signals topsprof handles go to the thread that reads the events, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, NULL, rd_worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_debug("strings are not read again: no thread to read them (%s)", strerror(err));
		pthread_cond_destroy(&rd.done);
		return false;
	}
	pthread_detach(t);
	rd.failed = false;
	rd.started = true;
	return true;
}

/* The bytes at addr of process pid, len of them at most, into buf: how many could be read within
 * the deadline; 0 also when a read abandoned before still waits. */
static size_t read_mem(int pid, uint64_t addr, char *buf, size_t len)
{
	struct timespec until;
	uint64_t t;
	size_t got = 0;

	if (!rd_start())
		return 0;
	pthread_mutex_lock(&rd.lock);
	if (rd.state != RD_IDLE) {
		pthread_mutex_unlock(&rd.lock);
		pr_debug("string at 0x%" PRIx64 " of process %d not read again: an earlier read"
			 " (of process %d) still waits for its page",
			 addr, pid, rd.pid);
		return 0;
	}
	if (rd.cap < len) {
		char *b = realloc(rd.buf, len);

		if (!b) {
			pthread_mutex_unlock(&rd.lock);
			return 0;
		}
		rd.buf = b;
		rd.cap = len;
	}
	rd.pid = pid;
	rd.addr = addr;
	rd.len = len;
	rd.state = RD_QUEUED;
	pthread_cond_signal(&rd.queued);
	t = clock_ns(CLOCK_MONOTONIC) + READ_DEADLINE_NS;
	until.tv_sec = (time_t)(t / 1000000000ull);
	until.tv_nsec = (long)(t % 1000000000ull);
	while (rd.state != RD_IDLE)
		if (pthread_cond_timedwait(&rd.done, &rd.lock, &until) == ETIMEDOUT)
			break;
	if (rd.state == RD_IDLE) {
		got = rd.got;
		memcpy(buf, rd.buf, got);
	} else {
		if (rd.state == RD_QUEUED)
			rd.state = RD_IDLE; /* not taken yet (a busy host): withdrawn */
		pr_debug("string at 0x%" PRIx64 " of process %d not read again: its page did not"
			 " come within %llu ms",
			 addr, pid, READ_DEADLINE_NS / 1000000ull);
	}
	pthread_mutex_unlock(&rd.lock);
	return got;
}

size_t strrecover_pieces(const struct tp_str_event *e, struct tp_str_event **out)
{
	const struct tp_str_fault *f = &e->fault;
	const uint32_t chunk = API_STR_CHUNK - 1;
	int pid = (int)e->hdr.pid;
	/* a string that fills the limit is cut if it goes on: one byte more tells */
	uint64_t max = f->bytes ? f->want : (uint64_t)f->want + 1, span, len,
		 now = clock_ns(CLOCK_MONOTONIC);
	struct tp_str_event *p;
	struct proc_ref *proc;
	bool writable, cut;
	char *buf;
	size_t got, n;

	*out = NULL;
	/* the attributes themselves: their message pointer would have to be trusted too */
	if ((e->last & API_STR_ATTR) || !f->want || f->want > (1u << 20) || pid <= 0)
		return 0;
	proc = proc_get(pid, now);
	if (!proc) {
		pr_debug("string at 0x%" PRIx64
			 " of process %d not read again: the process is gone",
			 (uint64_t)f->addr, pid);
		return 0;
	}
	/* a process under this pid that started after the call is another one */
	if (started_after(proc->start, e->hdr.ts_ns)) {
		pr_debug("string at 0x%" PRIx64
			 " of process %d not read again: the process is gone (its pid reused)",
			 (uint64_t)f->addr, pid);
		proc_drop(proc);
		return 0;
	}
	span = strrecover_span(proc->maps, f->addr, max, &writable);
	if (!span && proc->maps_ns != now) {
		/* the kept maps may be out of date: once more, read now */
		if (!proc_read_maps(proc, now)) {
			proc_drop(proc);
			return 0;
		}
		span = strrecover_span(proc->maps, f->addr, max, &writable);
	}
	if (!span) {
		pr_debug("string at 0x%" PRIx64 " of process %d not read again: %s",
			 (uint64_t)f->addr, pid,
			 writable ? "writable memory" : "not in a private read-only mapping");
		return 0;
	}
	buf = malloc(span);
	if (!buf)
		return 0;
	got = read_mem(pid, f->addr, buf, span);
	if (got && !proc_same(proc)) {
		/* the pid was another process's when read: what was read is not the string */
		pr_debug("string at 0x%" PRIx64
			 " of process %d not read again: the process is gone (its pid reused)",
			 (uint64_t)f->addr, pid);
		proc_drop(proc);
		free(buf);
		return 0;
	}
	if (f->bytes) {
		len = f->want;
		cut = f->bytes > e->offset + f->want;
		if (got < len)
			goto fail; /* the payload has a hole */
	} else {
		char *nul = memchr(buf, '\0', got);

		len = nul ? (uint64_t)(nul - buf) : f->want;
		cut = !nul;
		if (!nul && got <= f->want)
			goto fail; /* it goes on where it cannot be read, or safely */
	}
	n = len ? (size_t)((len + chunk - 1) / chunk) : 1;
	p = calloc(n, sizeof(*p));
	if (!p)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = (uint64_t)i * chunk;

		p[i].hdr = e->hdr;
		p[i].hdr.ts_ns = 0; /* as a piece the probe read */
		p[i].call_id = e->call_id;
		p[i].offset = e->offset + (uint32_t)off;
		p[i].len = (uint16_t)(len - off < chunk ? len - off : chunk);
		p[i].index = e->index;
		p[i].last = API_STR_RECOVERED;
		if (i == n - 1)
			p[i].last |= cut ? API_STR_CUT : API_STR_END;
		memcpy(p[i].data, buf + off, p[i].len);
	}
	free(buf);
	*out = p;
	return n;
fail:
	pr_debug("string at 0x%" PRIx64 " of process %d could not be read again", (uint64_t)f->addr,
		 pid);
	free(buf);
	return 0;
}

void strrecover_forget(void)
{
	for (int i = 0; i < CACHED; i++)
		proc_drop(&procs[i]);
	/* the worker's buffer, unless a read still waits with it (the worker itself stays) */
	pthread_mutex_lock(&rd.lock);
	if (rd.state == RD_IDLE) {
		free(rd.buf);
		rd.buf = NULL;
		rd.cap = 0;
	}
	pthread_mutex_unlock(&rd.lock);
}
