// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/usampler.h"

#include "collect/collector.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "lib/monotime.h"
#include "lib/procfs.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define MORE_PIDS 256 /* processes from more_pids, at most */

struct uproc {
	uint32_t pid;
	bool seen; /* in this sample's walk of the tracked processes */
	bool primed;
	bool late; /* first seen already running (not forked by a tracked one): its earlier time is
		    * not of the interval it was seen in */
	uint64_t start;	  /* when it started (/proc/PID/stat), to tell a pid taken again */
	uint64_t last_ns; /* its CPU time at the previous sample */
	double carry_ns;  /* time beyond what every CPU could give in a period, for the next */
	size_t series;	  /* its series: index into the profile's */
	bool has_series;
};

struct usampler {
	struct util_profile *u;
	bool cpu, mem, collecting, primed;
	int tfd, pid_map_fd;
	struct itimerspec its; /* its sampling period */
	uint64_t page;
	uint64_t last_t;		/* the previous sample */
	uint64_t host_busy, host_total; /* /proc/stat at the previous host sample */
	uint32_t host_every, host_tick;
	struct uproc *procs;
	size_t nprocs, capprocs;
	uint32_t *keys; /* the tracked processes, as read for one sample */
	size_t capkeys;
	size_t (*more_pids)(void *ctx, uint32_t *out, size_t max);
	void *ctx;
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

int usampler_parse_pidstat(const char *text, uint64_t *start, uint32_t *threads)
{
	/* after the name, which may hold anything, up to its last ')' */
	const char *p = strrchr(text, ')');
	unsigned long long st;
	unsigned long th;

	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice num_threads itrealvalue starttime */
	if (!p ||
	    sscanf(p + 1,
		   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %lu %*d "
		   "%llu",
		   &th, &st) != 2 ||
	    !th)
		return -EINVAL;
	*threads = (uint32_t)th;
	*start = st;
	return 0;
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

/* the process's CPU time so far, every thread's, those ended too: its CPU-time clock.
 * -errno when the process is gone */
static int proc_run_ns(uint32_t pid, uint64_t *out)
{
	struct timespec ts;
	clockid_t clk;
	int err = clock_getcpuclockid((pid_t)pid, &clk);

	if (err)
		return -err;
	if (clock_gettime(clk, &ts))
		return -errno;
	*out = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
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
	s->procs[i] = s->procs[--s->nprocs];
}

static void sample_proc(struct usampler *s, struct uproc *p, uint64_t t, double dt)
{
	struct util_point pt = { .t_ns = t };
	struct util_series *ser;
	char path[64], buf[1024], comm[sizeof(((struct util_series *)0)->comm)];
	uint64_t ns = 0, start;
	uint32_t threads;
	double most;

	/* the process with this pid now: another one than before when it started at another time
	 * (the pid was taken again): a series of its own, from when it was seen */
	snprintf(path, sizeof(path), "/proc/%u/stat", p->pid);
	if (procfs_read(path, buf, sizeof(buf)) <= 0 ||
	    usampler_parse_pidstat(buf, &start, &threads))
		return; /* gone */
	procfs_stat_comm(buf, comm, sizeof(comm));
	if (p->start && start != p->start) {
		p->primed = p->has_series = false;
		p->late = true;
		p->carry_ns = 0;
	}
	p->start = start;
	if (s->cpu && proc_run_ns(p->pid, &ns))
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
		/* a process that was there when sampling began, or seen late: its earlier time is
		 * not of this interval; one forked later started within it */
		if (!s->primed || p->late)
			return;
		p->last_ns = 0;
	}
	/* another process's CPU clock brings a running thread's time up to date only at its
	 * scheduler ticks: a period can show some of the next one's time. More than its threads
	 * (or every CPU) could give is carried over to the next period: the total stays exact */
	most = dt * (threads < s->u->ncpus ? threads : s->u->ncpus);
	if (ns >= p->last_ns && dt > 0) {
		double run = (double)(ns - p->last_ns) + p->carry_ns;

		p->carry_ns = run > most ? run - most : 0;
		pt.cpu = 100.0 * (run > most ? most : run) / dt;
	}
	p->last_ns = ns;
	if (!p->has_series) {
		ser = util_series_add(s->u, p->pid, "");
		if (!ser)
			return;
		p->series = (size_t)(ser - s->u->s);
		p->has_series = true;
	}
	ser = &s->u->s[p->series];
	/* the name it has now, from its stat: the one a launched application had before its exec
	 * was topsprof's (it is forked by topsprof) */
	memcpy(ser->comm, comm, sizeof(comm));
	util_add(ser, &pt);
}

static void sample_host(struct usampler *s, uint64_t t)
{
	struct util_point pt = { .t_ns = t };
	struct util_series *ser;
	char buf[4096];
	uint64_t busy, total, mtotal, avail;
	bool prev = s->primed;

	/* /proc/stat counts in 10 ms ticks: shorter periods would read 0, 50 or 100%. Every
	 * host_every-th sample: at 10 Hz or less */
	if (prev && ++s->host_tick < s->host_every)
		return;
	s->host_tick = 0;

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
	ser = util_series_get(s->u, UTIL_HOST_PID, "host"); /* the first series */
	if (ser)
		util_add(ser, &pt);
}

static void sample(struct usampler *s)
{
	uint64_t t = mono_ns();
	double dt = s->primed ? (double)(t - s->last_t) : 0;
	uint32_t key, *prev = NULL;
	size_t n = 0;

	sample_host(s, t);
	for (size_t i = 0; i < s->nprocs; i++)
		s->procs[i].seen = false;
	/* the keys first: a process leaving the map during the walk restarts it from the start */
	while (s->pid_map_fd >= 0 && !bpf_map_get_next_key(s->pid_map_fd, prev, &key)) {
		if (!grow_array((void **)&s->keys, &s->capkeys, n, sizeof(*s->keys)))
			break;
		s->keys[n++] = key;
		prev = &s->keys[n - 1];
	}
	if (s->more_pids && s->capkeys < n + MORE_PIDS) {
		uint32_t *k = realloc(s->keys, (n + MORE_PIDS) * sizeof(*k));

		if (k) {
			s->keys = k;
			s->capkeys = n + MORE_PIDS;
		}
	}
	if (s->more_pids && s->capkeys >= n + MORE_PIDS) {
		size_t from = n, more = s->more_pids(s->ctx, s->keys + n, MORE_PIDS);

		n += more < MORE_PIDS ? more : MORE_PIDS;
		for (size_t i = from; i < n; i++) {
			struct uproc *p = find_or_add(s, s->keys[i]);

			if (p && !p->primed)
				p->late = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct uproc *p = find_or_add(s, s->keys[i]);

		if (!p || p->seen)
			continue;
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
/* the baseline sample, the timer counting its periods from it (what it counted before, while
 * the application was held or collection was off, is not a missed period) */
static void prime(struct usampler *s)
{
	timerfd_settime(s->tfd, 0, &s->its, NULL);
	s->primed = false;
	for (size_t i = 0; i < s->nprocs; i++) {
		s->procs[i].primed = false;
		s->procs[i].carry_ns = 0; /* of the time before the stop */
	}
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
	s->its = its;
	s->u = u;
	s->cpu = o->cpu;
	s->mem = o->mem;
	s->collecting = o->collecting;
	s->pid_map_fd = o->pid_map_fd;
	s->host_every = (o->hz + 9) / 10;
	s->more_pids = o->more_pids;
	s->ctx = o->ctx;
	s->page = page > 0 ? (uint64_t)page : 4096;
	u->cpu = o->cpu;
	u->mem = o->mem;
	u->hz = o->hz;
	u->ncpus = cpus > 0 ? (uint32_t)cpus : 1;
	/* the host's series first, as the report has it */
	if (!util_series_get(u, UTIL_HOST_PID, "host")) {
		usampler_close(s);
		return -ENOMEM;
	}
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
	free(s->procs);
	free(s->keys);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s);
}

int usampler_fd(const struct usampler *s)
{
	return s ? s->tfd : -1;
}

void usampler_poll(struct usampler *s)
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

/* -- the utilization collector: the followed processes; system-wide, the host's and the
 * processes seen using a GCU ------------------------------------------------------------------ */

struct util_collect {
	struct usampler *s;
	const struct model *m;
	/* system-wide: the processes seen using a GCU, and how far the model was read */
	uint32_t pids[256];
	size_t n;
	size_t calls, ops;
	bool full; /* said */
};

static void gcu_user_add(struct util_collect *u, uint32_t pid)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->pids[i] == pid)
			return;
	if (pid && u->n < sizeof(u->pids) / sizeof(u->pids[0]))
		u->pids[u->n++] = pid;
	else if (pid && !u->full) {
		u->full = true;
		pr_warn("utilization: %zu processes seen using a GCU, the most followed: further ones "
			"are not sampled",
			u->n);
	}
}

/* their calls, their GCU records, gathered from what was collected since the last time */
static size_t gcu_pids(void *ctx, uint32_t *out, size_t max)
{
	struct util_collect *u = ctx;
	const struct model *m = u->m;

	if (u->calls > m->ncalls || u->ops > m->nops) /* topsprof cancel emptied them */
		u->calls = u->ops = 0;
	for (; u->calls < m->ncalls; u->calls++) {
		uint32_t pid, tid;

		calls_thread(&m->calls, u->calls, &pid, &tid);
		gcu_user_add(u, pid);
	}
	for (; u->ops < m->nops; u->ops++)
		gcu_user_add(u, m->ops[u->ops].rec.pid);
	memcpy(out, u->pids, (u->n < max ? u->n : max) * sizeof(*out));
	return u->n < max ? u->n : max;
}

static bool util_wanted(const struct collect_settings *s)
{
	return s->cpu_util || s->mem_util;
}

static int util_open(struct collector_state *st)
{
	const struct collect_settings *s = st->env->set;
	struct util_collect *u = calloc(1, sizeof(*u));
	/* sampling starts at begin, once the application is followed: its first sample is
	 * the baseline */
	struct usampler_opts o = { .cpu = s->cpu_util,
				   .mem = s->mem_util,
				   .hz = s->util_hz,
				   .pid_map_fd = s->system_wide ? -1 : st->env->pid_map_fd,
				   .more_pids = s->system_wide ? gcu_pids : NULL,
				   .ctx = u };

	st->h = u;
	if (!u) {
		pr_error("out of memory");
		return 1;
	}
	u->m = st->env->m;
	return usampler_open(&u->s, &o, &st->env->m->util) ? 1 : 0;
}

static void util_set_collecting(struct collector_state *st, bool on)
{
	usampler_set_collecting(((struct util_collect *)st->h)->s, on);
}

static void util_begin(struct collector_state *st)
{
	util_set_collecting(st, st->env->collecting);
}

static int util_fd(const struct collector_state *st)
{
	return usampler_fd(((const struct util_collect *)st->h)->s);
}

static void util_poll(struct collector_state *st)
{
	usampler_poll(((struct util_collect *)st->h)->s);
}

static void util_close(struct collector_state *st)
{
	struct util_collect *u = st->h;

	if (!u)
		return;
	usampler_close(u->s);
	free(u);
}

const struct collector util_collector = {
	.name = "utilization",
	.wanted = util_wanted,
	.open = util_open,
	.begin = util_begin,
	.set_collecting = util_set_collecting,
	.fd = util_fd,
	.poll = util_poll,
	.close = util_close,
};
