// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/proctree.h"
#include "collect/bpfmaps.h"
#include "collect/bpfstub.h"
#include "collect/collector.h"
#include "lib/log.h"
#include "proc.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct proctree {
	struct proc_bpf *skel;
	struct ring_buffer *rb;
	uint64_t *gen; /* tracked_gen, mapped */
	size_t gen_len;
	proctree_event_fn on_event;
	void *ctx;
	bool holds;
	bool closing; /* collection over, or the programs detached: the ring's held processes are
		       * only released */
};

static int handle(void *ctx, void *data, size_t size)
{
	struct proctree *pt = ctx;

	if (size < sizeof(struct tp_proc_event))
		return 0;
	if (pt->closing) {
		const struct tp_proc_event *e = data;

		if (e->hdr.type == EV_PROC_HELD && !e->exit_code)
			proctree_release(pt, (pid_t)e->hdr.pid);
		return 0;
	}
	if (pt->on_event)
		pt->on_event(pt->ctx, data);
	return 0;
}

#define PROC_PID_INIT_INO 0xEFFFFFFCU /* the initial pid namespace's (include/linux/proc_ns.h) */

/* Whether topsprof runs in a pid namespace other than the initial one (a container's, unshare
 * --pid): its /proc/self/ns/pid is not the initial namespace's, or NSpid lists more than one pid
 * (that one shows only the namespaces from /proc's down: one pid in a container with a /proc of
 * its own, so the inode is the test that counts). No /proc/self/ns (no pid namespaces): no. */
static bool nested_pidns(void)
{
	struct stat st;
	char line[256];
	bool nested = false;
	FILE *f;
	int inner;

	if (!stat("/proc/self/ns/pid", &st) && st.st_ino != PROC_PID_INIT_INO)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			nested = sscanf(line + 6, "%*d %d", &inner) == 1;
			break;
		}
	fclose(f);
	return nested;
}

int proctree_open(struct proctree **out, const struct proctree_opts *opts)
{
	struct proctree *pt = calloc(1, sizeof(*pt));
	struct proctree_opts o;
	bool remote;
	int err;

	if (!pt)
		return -ENOMEM;
	/* the BPF programs see global pids (tracked_pids, the process and API events, the
	 * signals' senders): topsprof's own would be another namespace's */
	if (nested_pidns()) {
		pr_error("topsprof runs in a pid namespace other than the host's: profiles must be "
			 "taken from the host's pid namespace (a container's processes too)");
		err = -EPERM;
		goto fail;
	}
	pt->on_event = opts->on_event;
	pt->ctx = opts->ctx;
	pt->skel = proc_bpf__open();
	if (!pt->skel) {
		err = -errno;
		pr_error("opening the process tracker BPF object: %s", strerror(-err));
		goto fail;
	}
	pt->skel->rodata->filter_pids = !opts->system_wide;
	pt->holds = opts->hold_new && !opts->system_wide;
	pt->skel->rodata->hold_new = pt->holds;
	/* a new process held from its parent's fork (Linux 6.13), else from its own start */
	remote = pt->holds && kernel_btf_has_name("bpf_send_signal_task") &&
		 !getenv("TOPSPROF_NO_SIGNAL_TASK");
	bpf_program__set_autoload(pt->skel->progs.proc_fork_hold, remote);
	bpf_program__set_autoload(pt->skel->progs.proc_fork, !remote);
	bpf_program__set_autoload(pt->skel->progs.proc_hold_new, pt->holds && !remote);
	if (pt->holds)
		pr_debug("new processes held from %s",
			 remote ? "their parent's fork (bpf_send_signal_task)"
				: "their start (fexit/schedule_tail)");
	err = 0;
	if (opts->pid_map_fd)
		err = bpf_map__reuse_fd(pt->skel->maps.tracked_pids, opts->pid_map_fd)
			      ?: bpf_map__reuse_fd(pt->skel->maps.tracked_gen, opts->gen_map_fd);
	if (!err)
		err = proc_bpf__load(pt->skel);
	if (err && pt->holds)
		goto no_hold;
	if (err) {
		pr_error("loading the process tracker BPF programs: %s%s", strerror(-err),
			 err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		goto fail;
	}
	pt->gen_len = (size_t)sysconf(_SC_PAGESIZE);
	pt->gen = mmap(NULL, pt->gen_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(pt->skel->maps.tracked_gen), 0);
	if (pt->gen == MAP_FAILED) {
		err = -errno;
		pt->gen = NULL;
		pr_error("mapping the process tracker's generation: %s", strerror(-err));
		goto fail;
	}
	err = proc_bpf__attach(pt->skel);
	if (err && pt->holds)
		goto no_hold;
	if (err) {
		pr_error("attaching to the process and signal tracepoints: %s", strerror(-err));
		goto fail;
	}
	pt->rb = ring_buffer__new(bpf_map__fd(pt->skel->maps.proc_events), handle, pt, NULL);
	if (!pt->rb) {
		err = -errno;
		pr_error("opening the process event ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = pt;
	return 0;
no_hold:
	/* no fexit on schedule_tail here: new processes cannot be held, the rest can be had */
	pr_debug("holding new processes: %s", strerror(-err));
	proctree_close(pt);
	o = *opts;
	o.hold_new = false;
	return proctree_open(out, &o);
fail:
	proctree_close(pt);
	return err;
}

void proctree_close(struct proctree *pt)
{
	if (!pt)
		return;
	/* no process may stay held: with the programs gone, none is held from now on, and those
	 * whose records came meanwhile run on, unprobed (whoever listened has closed) */
	if (pt->holds && pt->rb) {
		proc_bpf__detach(pt->skel);
		proctree_let_go(pt);
	}
	ring_buffer__free(pt->rb);
	if (pt->gen)
		munmap(pt->gen, pt->gen_len);
	proc_bpf__destroy(pt->skel);
	free(pt);
}

int proctree_add(struct proctree *pt, pid_t tgid)
{
	__u32 key = (__u32)tgid, root = (__u32)tgid;

	if (bpf_map_update_elem(proctree_map_fd(pt), &key, &root, BPF_ANY))
		return -errno;
	/* after the change (bpf/tracked.h): answers kept from before are stale now. Atomic: the
	 * BPF programs bump it on fork and exit meanwhile */
	__atomic_fetch_add(pt->gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

bool proctree_has(const struct proctree *pt, pid_t tgid)
{
	__u32 key = (__u32)tgid, root;

	if (!pt->skel->rodata->filter_pids)
		return true;
	return bpf_map_lookup_elem(proctree_map_fd(pt), &key, &root) == 0;
}

bool proctree_holds(const struct proctree *pt)
{
	return pt->holds;
}

int proctree_set_probed(struct proctree *pt, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (!pt->holds)
		return 0;
	return bpf_map_update_elem(bpf_map__fd(pt->skel->maps.probed_pids), &key, &one, BPF_ANY)
		       ? -errno
		       : 0;
}

int proctree_release(struct proctree *pt, pid_t pid)
{
	(void)pt;
	return kill(pid, SIGCONT) ? -errno : 0;
}

void proctree_let_go(struct proctree *pt)
{
	if (!pt || !pt->rb)
		return;
	pt->closing = true;
	ring_buffer__consume(pt->rb);
}

int proctree_epoll_fd(const struct proctree *pt)
{
	return ring_buffer__epoll_fd(pt->rb);
}

int proctree_poll(struct proctree *pt, int timeout_ms)
{
	return ring_buffer__poll(pt->rb, timeout_ms);
}

int proctree_map_fd(const struct proctree *pt)
{
	return bpf_map__fd(pt->skel->maps.tracked_pids);
}

int proctree_gen_fd(const struct proctree *pt)
{
	return bpf_map__fd(pt->skel->maps.tracked_gen);
}

uint64_t proctree_gen(const struct proctree *pt)
{
	return __atomic_load_n(pt->gen, __ATOMIC_SEQ_CST);
}

/* a map as bpf/tracked.h defines it, on an fd above 2; -errno */
static int map_new(enum bpf_map_type type, const char *name, uint32_t value_size, uint32_t max,
		   uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(type, name, sizeof(__u32), value_size, max, &o), high;

	if (fd < 0)
		return -errno;
	if (fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return high < 0 ? -errno : high;
}

int proctree_maps_new(int *pid_map_fd, int *gen_map_fd)
{
	*gen_map_fd = -1;
	*pid_map_fd =
		map_new(BPF_MAP_TYPE_HASH, "tracked_pids", sizeof(__u32), TRACKED_PIDS_MAX, 0);
	if (*pid_map_fd < 0)
		return *pid_map_fd;
	*gen_map_fd = map_new(BPF_MAP_TYPE_ARRAY, "tracked_gen", sizeof(__u64), 1, BPF_F_MMAPABLE);
	if (*gen_map_fd < 0) {
		int err = *gen_map_fd;

		close(*pid_map_fd);
		*pid_map_fd = -1;
		return err;
	}
	return 0;
}

void proctree_watch_signals(struct proctree *pt, pid_t app)
{
	pt->skel->bss->app_tgid = (__u32)app;
}

bool proctree_app_signaled(const struct proctree *pt, int sig, uint64_t since_ns, pid_t exclude,
			   pid_t *sender)
{
	__u32 key = (__u32)sig;
	struct tp_sig_seen s;

	if (bpf_map_lookup_elem(bpf_map__fd(pt->skel->maps.app_signals), &key, &s) || !s.count ||
	    s.ts_ns < since_ns || s.sender == (__u32)exclude)
		return false;
	*sender = (pid_t)s.sender;
	return true;
}

int proctree_drops(const struct proctree *pt, struct proctree_drops *d)
{
	int fd = bpf_map__fd(pt->skel->maps.proc_drops), err;

	err = percpu_u64_sum(fd, 0, &d->events);
	return err ? err : percpu_u64_sum(fd, 1, &d->pids);
}

/* -- the process collector: the followed processes, for every other collector ----------------- */

/* a process of the set gets what is scoped to processes (its API probes); one that cannot is
 * warned about and counted */
static void follow(struct collect_env *env, const struct tp_proc_event *e)
{
	int err = env->follow(env, (pid_t)e->hdr.pid);

	if (err == -ESRCH) /* gone already, and reaped: it called nothing more */
		return;
	if (err) {
		pr_warn("process %d (%.16s): its API probes could not go in (%s): its calls are "
			"not traced",
			(int)e->hdr.pid, e->comm, strerror(-err));
		env->m->lost_pids++;
	}
}

/* a process held (bpf/proc.bpf.c): its probes go in, then it runs on */
static void proc_held(struct collector_state *st, const struct tp_proc_event *e)
{
	struct collect_env *env = st->env;
	pid_t pid = (pid_t)e->hdr.pid;
	int err;

	if (e->ppid == HOLD_THREAD_EXEC) /* the links went with the first thread */
		env->unfollow(env, pid);
	follow(env, e);
	if (e->exit_code) {
		/* it ran on without waiting: calls it made before its probes went in are lost */
		pr_debug("process %d (%.16s) could not be held (%s)", (int)pid, e->comm,
			 strerror(-e->exit_code));
		env->m->lost_pids++;
	} else if ((err = proctree_release(st->h, pid)) && err != -ESRCH) {
		pr_warn("process %d (%.16s) held for its probes could not be released: %s",
			(int)pid, e->comm, strerror(-err));
	}
}

static void on_proc_event(void *ctx, const struct tp_proc_event *e)
{
	struct collector_state *st = ctx;
	struct collect_env *env = st->env;

	if (e->hdr.type == EV_PROC_HELD) {
		proc_held(st, e);
		return;
	}
	/* a new process's probes go in now: by the time it maps the runtime, they are in (one
	 * that has it mapped already is held, and its hold follows this) */
	if (e->hdr.type == EV_PROC_FORK && env->scoped)
		follow(env, e);
	if (e->hdr.type == EV_PROC_EXIT)
		env->unfollow(env, (pid_t)e->hdr.pid);
	if (env->tap)
		env->tap(env->tap_ctx, e, sizeof(*e));
	model_add_proc_event(env->m, e);
}

static bool proc_wanted(const struct collect_settings *s)
{
	(void)s;
	return true;
}

static int proc_open(struct collector_state *st)
{
	struct proctree_opts po = { .on_event = on_proc_event,
				    .ctx = st,
				    .system_wide = st->env->set->system_wide,
				    .hold_new = st->env->scoped,
				    .pid_map_fd = st->env->pid_map_fd,
				    .gen_map_fd = st->env->gen_map_fd };
	struct proctree *pt;

	if (proctree_open(&pt, &po))
		return 1;
	st->h = pt;
	st->env->pt = pt;
	return 0;
}

static int proc_fd(const struct collector_state *st)
{
	return proctree_epoll_fd(st->h);
}

static void proc_poll(struct collector_state *st)
{
	proctree_poll(st->h, 0);
}

static void proc_report(struct collector_state *st)
{
	struct proctree_drops d = { 0, 0 };

	if (!proctree_drops(st->h, &d)) {
		st->env->m->lost_proc_events += d.events;
		st->env->m->lost_pids += d.pids;
	}
}

static void proc_close(struct collector_state *st)
{
	if (st->h && st->env->pt == st->h)
		st->env->pt = NULL;
	proctree_close(st->h);
}

const struct collector proc_collector = {
	.name = "processes",
	.wanted = proc_wanted,
	.open = proc_open,
	.fd = proc_fd,
	.poll = proc_poll,
	.finish = proc_poll,
	.report = proc_report,
	.close = proc_close,
};
