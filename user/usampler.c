// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "usampler.h"

#include "grow.h"
#include "log.h"
#include "monotime.h"
#include "procfs.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define COMM_EVERY 100 /* samples between re-reads of a process's name (exec renames it) */

struct thread_ns {
	uint32_t tid;
	uint64_t ns;
};

struct uproc {
	uint32_t pid;
	bool seen; /* in this sample's walk of the tracked processes */
	bool primed;
	uint64_t ended_ns;	   /* run time of its threads that ended */
	uint64_t last_ns;	   /* its run time at the previous sample */
	struct thread_ns *threads; /* at the previous sample, by tid */
	size_t nthreads, capthreads;
	uint32_t comm_age;
};

struct usampler {
	struct util_profile *u;
	bool cpu, mem, collecting, primed;
	int tfd, pid_map_fd;
	uint64_t page, ticks_hz;
	uint64_t last_t;		/* the previous sample */
	uint64_t host_busy, host_total; /* /proc/stat at the previous sample */
	struct uproc *procs;
	size_t nprocs, capprocs;
};

int usampler_parse_stat(const char *text, uint64_t *busy, uint64_t *total)
{
	unsigned long long v[10] = { 0 };
	int n;

	/* cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is in user) */
	n = sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	if (n < 4)
		return -EINVAL;
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	*total = *busy + v[3] + v[4];
	return 0;
}

static int meminfo_field(const char *text, const char *key, uint64_t *kb)
{
	size_t klen = strlen(key);
	unsigned long long v;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':' &&
		    sscanf(p + klen + 1, " %llu kB", &v) == 1) {
			*kb = v;
			return 0;
		}
	return -EINVAL;
}

int usampler_parse_meminfo(const char *text, uint64_t *total, uint64_t *available)
{
	uint64_t t, a;

	if (meminfo_field(text, "MemTotal", &t) || meminfo_field(text, "MemAvailable", &a) || a > t)
		return -EINVAL;
	*total = t * 1024;
	*available = a * 1024;
	return 0;
}

int usampler_parse_statm(const char *text, uint64_t page, uint64_t *vsz, uint64_t *rss)
{
	unsigned long long size, resident;

	if (sscanf(text, "%llu %llu", &size, &resident) != 2 || resident > size)
		return -EINVAL;
	*vsz = size * page;
	*rss = resident * page;
	return 0;
}

int usampler_parse_schedstat(const char *text, uint64_t *run_ns)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (end == text || errno || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	*run_ns = v;
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	const struct thread_ns *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* the process's run time now: its threads' (each read; those that ended since the last sample
 * count at their last value); -errno when the process is gone */
static int proc_run_ns(struct uproc *p, uint64_t *out)
{
	char path[96], buf[256];
	struct thread_ns *now = NULL;
	size_t n = 0, cap = 0, j = 0;
	uint64_t sum = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", p->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t ns;
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%lu/schedstat", p->pid, tid);
		if (procfs_read(path, buf, sizeof(buf)) <= 0 || usampler_parse_schedstat(buf, &ns))
			continue; /* ended meanwhile: counted from the last sample below */
		if (!grow_array((void **)&now, &cap, n, sizeof(*now)))
			break;
		now[n++] = (struct thread_ns){ (uint32_t)tid, ns };
		sum += ns;
	}
	closedir(d);
	qsort(now, n, sizeof(*now), by_tid);
	/* threads of the last sample that are gone: their time stays the process's */
	for (size_t i = 0; i < p->nthreads; i++) {
		while (j < n && now[j].tid < p->threads[i].tid)
			j++;
		if (j >= n || now[j].tid != p->threads[i].tid)
			p->ended_ns += p->threads[i].ns;
	}
	free(p->threads);
	p->threads = now;
	p->nthreads = n;
	p->capthreads = cap;
	*out = p->ended_ns + sum;
	return n ? 0 : -ESRCH; /* a zombie: its threads are gone */
}

static struct uproc *find_or_add(struct usampler *s, uint32_t pid)
{
	struct uproc *p;

	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (!grow_array((void **)&s->procs, &s->capprocs, s->nprocs, sizeof(*s->procs)))
		return NULL;
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void drop_proc(struct usampler *s, size_t i)
{
	free(s->procs[i].threads);
	s->procs[i] = s->procs[--s->nprocs];
}

static void sample_proc(struct usampler *s, struct uproc *p, uint64_t t, double dt)
{
	struct util_point pt = { .t_ns = t };
	struct util_series *ser;
	char path[64], buf[256];
	uint64_t ns = 0;

	if (s->cpu && proc_run_ns(p, &ns))
		return;
	if (s->mem) {
		snprintf(path, sizeof(path), "/proc/%u/statm", p->pid);
		if (procfs_read(path, buf, sizeof(buf)) <= 0 ||
		    usampler_parse_statm(buf, s->page, &pt.vsz, &pt.rss) || !pt.vsz)
			return; /* gone, or a zombie */
	}
	if (!p->primed) {
		p->primed = true;
		p->last_ns = ns;
		/* a process that was there when sampling began: its earlier time is not of this
		 * interval; one that came later started within it */
		if (!s->primed)
			return;
		p->last_ns = 0;
	}
	pt.cpu = dt > 0 && ns >= p->last_ns ? 100.0 * (double)(ns - p->last_ns) / dt : 0;
	/* the kernel brings a running thread's time up to date at its ticks: one period may get
	 * some of the next one's, never more than every CPU could give */
	if (pt.cpu > 100.0 * s->u->ncpus)
		pt.cpu = 100.0 * s->u->ncpus;
	p->last_ns = ns;
	ser = util_series_get(s->u, p->pid, NULL);
	if (!ser)
		return;
	if (p->comm_age++ % COMM_EVERY == 0)
		procfs_comm(p->pid, ser->comm, sizeof(ser->comm));
	util_add(ser, &pt);
}

static void sample_host(struct usampler *s, uint64_t t)
{
	struct util_point pt = { .t_ns = t };
	struct util_series *ser;
	char buf[4096];
	uint64_t busy, total, mtotal, avail;
	bool prev = s->primed;

	if (s->cpu) {
		if (procfs_read("/proc/stat", buf, sizeof(buf)) <= 0 ||
		    usampler_parse_stat(buf, &busy, &total))
			return;
		if (total > s->host_total && busy >= s->host_busy)
			pt.cpu = 100.0 * (double)(busy - s->host_busy) /
				 (double)(total - s->host_total);
		s->host_busy = busy;
		s->host_total = total;
	}
	if (s->mem) {
		if (procfs_read("/proc/meminfo", buf, sizeof(buf)) <= 0 ||
		    usampler_parse_meminfo(buf, &mtotal, &avail))
			return;
		s->u->mem_total = mtotal;
		pt.rss = mtotal - avail;
	}
	if (!prev)
		return;
	ser = util_series_get(s->u, UTIL_HOST_PID, "host");
	if (ser)
		util_add(ser, &pt);
}

static void sample(struct usampler *s)
{
	uint64_t t = mono_ns();
	double dt = s->primed ? (double)(t - s->last_t) : 0;
	uint32_t key, next;
	bool first = true;

	sample_host(s, t);
	for (size_t i = 0; i < s->nprocs; i++)
		s->procs[i].seen = false;
	while (s->pid_map_fd >= 0 &&
	       !bpf_map_get_next_key(s->pid_map_fd, first ? NULL : &key, &next)) {
		struct uproc *p = find_or_add(s, next);

		first = false;
		key = next;
		if (!p)
			break;
		p->seen = true;
		sample_proc(s, p, t, dt);
	}
	for (size_t i = s->nprocs; i-- > 0;)
		if (!s->procs[i].seen)
			drop_proc(s, i);
	s->last_t = t;
	s->primed = true;
}

/* sampling (re)starts: the next interval begins now */
static void prime(struct usampler *s)
{
	s->primed = false;
	for (size_t i = 0; i < s->nprocs; i++)
		s->procs[i].primed = false;
	sample(s);
}

int usampler_open(struct usampler **out, const struct usampler_opts *o, struct util_profile *u)
{
	struct usampler *s = calloc(1, sizeof(*s));
	uint64_t period = 1000000000ull / (o->hz ? o->hz : 1);
	struct itimerspec its = { .it_interval = { 0, (long)period },
				  .it_value = { 0, (long)period } };
	long page = sysconf(_SC_PAGESIZE), cpus = sysconf(_SC_NPROCESSORS_ONLN);

	*out = NULL;
	if (!s)
		return -ENOMEM;
	if (period >= 1000000000ull)
		its.it_interval = its.it_value =
			(struct timespec){ (time_t)(period / 1000000000ull),
					   (long)(period % 1000000000ull) };
	s->u = u;
	s->cpu = o->cpu;
	s->mem = o->mem;
	s->collecting = o->collecting;
	s->pid_map_fd = o->pid_map_fd;
	s->page = page > 0 ? (uint64_t)page : 4096;
	u->cpu = o->cpu;
	u->mem = o->mem;
	u->hz = o->hz;
	u->ncpus = cpus > 0 ? (uint32_t)cpus : 1;
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->tfd < 0 || timerfd_settime(s->tfd, 0, &its, NULL)) {
		int err = -errno;

		pr_error("utilization sampling: timer: %s", strerror(-err));
		usampler_close(s);
		return err;
	}
	if (s->collecting)
		prime(s);
	*out = s;
	return 0;
}

void usampler_close(struct usampler *s)
{
	if (!s)
		return;
	while (s->nprocs)
		drop_proc(s, s->nprocs - 1);
	free(s->procs);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s);
}

int usampler_fd(const struct usampler *s)
{
	return s ? s->tfd : -1;
}

void usampler_tick(struct usampler *s)
{
	uint64_t n = 0;

	if (!s || read(s->tfd, &n, sizeof(n)) != sizeof(n) || !s->collecting)
		return;
	if (n > 1)
		s->u->missed += n - 1;
	sample(s);
}

void usampler_set_collecting(struct usampler *s, bool on)
{
	if (!s || s->collecting == on)
		return;
	s->collecting = on;
	if (on)
		prime(s);
}
