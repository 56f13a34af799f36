// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/collection.h"
#include "collect/bpfmaps.h"
#include "collect/proctree.h"
#include "collect/umulti.h"
#include "lib/log.h"
#include "lib/monotime.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* the order they open and are polled in; a new collector is a row here */
static const struct collector *const collectors[] = {
	&proc_collector,   &api_collector,  &cpu_collector,
	&kernel_collector, &util_collector, &gcu_collector,
};
#define NCOLLECTORS (sizeof(collectors) / sizeof(collectors[0]))
_Static_assert(NCOLLECTORS <= COLLECTORS_MAX, "COLLECTORS_MAX is too small");

/* op (with its arguments after the state) on every open collector that has it, once all of them
 * opened: after a failed open a collector may be half-made, and only collection_close (its own
 * loop) reaches it */
#define FOR_EACH_OPEN(c, op, ...)                              \
	for (size_t i = 0; (c)->ready && i < NCOLLECTORS; i++) \
		if ((c)->open[i] && collectors[i]->op)         \
	collectors[i]->op(&(c)->st[i], ##__VA_ARGS__)

struct opener {
	pthread_t th;
	bool started;
	const struct collector *col;
	struct collector_state *st;
	int err;
};

static void *open_one(void *arg)
{
	struct opener *o = arg;
	uint64_t t0 = mono_ns();

	o->err = o->col->open(o->st);
	if (!o->err)
		pr_debug("collecting %s (opened in %.1f ms)", o->col->name,
			 (double)(mono_ns() - t0) / 1e6);
	return NULL;
}

/*
 * The collectors open at once, each on a thread: most of a start-up is libbpf loading the kernel's
 * BTF for an object and the verifier checking its programs, and the objects do not wait for each
 * other. The one thing they share, the map of the processes followed, is made first.
 */
static int follow_all(struct collect_env *env, pid_t pid)
{
	struct collection *c =
		(struct collection *)((char *)env - offsetof(struct collection, env));
	int err = 0;

	for (size_t i = 0; c->ready && i < NCOLLECTORS && !err; i++)
		if (c->open[i] && collectors[i]->follow)
			err = collectors[i]->follow(&c->st[i], pid);
	/* after every probe is in: from now on its exec is not held */
	if (!err && env->scoped)
		err = proctree_set_probed(env->pt, pid);
	return err;
}

static void unfollow_all(struct collect_env *env, pid_t pid)
{
	struct collection *c =
		(struct collection *)((char *)env - offsetof(struct collection, env));

	FOR_EACH_OPEN(c, unfollow, pid);
}

/* scoped API probes: the kernel has uprobe_multi links (or attach cookies, for single uprobes
 * scoped to the first process), and the run is not --system-wide; TOPSPROF_NO_SCOPE=1 puts the
 * probes on the files here (for tests and comparisons) */
static bool scope_wanted(const struct collect_settings *s)
{
	return !s->system_wide && !getenv("TOPSPROF_NO_SCOPE") &&
	       (umulti_supported() || ucookies_supported());
}

int collection_open(struct collection *c, const struct collect_settings *s, struct model *m,
		    void (*tap)(void *ctx, const void *event, size_t size), void *tap_ctx)
{
	struct opener op[NCOLLECTORS] = { { 0 } };
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->env = (struct collect_env){ .set = s,
				       .m = m,
				       .collecting = s->collecting,
				       .tap = tap,
				       .tap_ctx = tap_ctx,
				       .pid_map_fd = -1,
				       .gen_map_fd = -1,
				       .scoped = scope_wanted(s),
				       .follow = follow_all,
				       .unfollow = unfollow_all };
	err = proctree_maps_new(&c->env.pid_map_fd, &c->env.gen_map_fd);
	if (err) {
		pr_error("creating the maps of the processes followed: %s%s", strerror(-err),
			 err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		return 1;
	}
	/* the releaser of the followed processes' links (uprobe_multi: single uprobes make none of
	 * a process's own) is forked now, before the collectors' threads run (a child of a single
	 * thread inherits no lock held), while topsprof is small */
	if (c->env.scoped && umulti_supported() && (err = bpf_releaser_open(&c->env.releaser)))
		pr_debug("no releaser process (%s): an ended process's links are released in the "
			 "event loop",
			 strerror(-err));
	err = 0;
	for (size_t i = 0; i < NCOLLECTORS; i++) {
		if (!collectors[i]->wanted(s))
			continue;
		c->st[i].env = &c->env;
		c->open[i] = true; /* closed by collection_close, even half-opened */
		op[i] = (struct opener){ .col = collectors[i], .st = &c->st[i] };
		op[i].started = !pthread_create(&op[i].th, NULL, open_one, &op[i]);
		if (!op[i].started)
			open_one(&op[i]);
	}
	for (size_t i = 0; i < NCOLLECTORS; i++) {
		if (op[i].started)
			pthread_join(op[i].th, NULL);
		err |= op[i].err;
	}
	c->ready = !err;
	/* new processes cannot be held here: the probes go on the files, at the first follow */
	if (c->env.scoped && c->env.pt && !proctree_holds(c->env.pt))
		c->env.scoped = false;
	pr_debug(
		"API probes: %s",
		!c->env.scoped ? "on the probed files, trapping in every process that calls them"
		: umulti_supported()
			? "scoped to the followed processes (uprobe_multi links each; a new process "
			  "that could call the runtime first held, stopped, until its own are in)"
			: "scoped to the first process followed (single uprobes with its pid: no "
			  "uprobe_multi here), on the probed files from a second on (held, stopped, "
			  "until they are in)");
	return err ? 1 : 0;
}

int collection_follow(struct collection *c, pid_t pid)
{
	return follow_all(&c->env, pid);
}

void collection_begin(struct collection *c)
{
	FOR_EACH_OPEN(c, begin);
}

void collection_set_collecting(struct collection *c, bool on)
{
	c->env.collecting = on;
	FOR_EACH_OPEN(c, set_collecting, on);
}

void collection_clear(struct collection *c)
{
	FOR_EACH_OPEN(c, clear);
}

void collection_watch(const struct collection *c, int ep, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	for (size_t i = 0; i < NCOLLECTORS; i++) {
		int fd = c->open[i] && collectors[i]->fd ? collectors[i]->fd(&c->st[i]) : -1;

		if (fd >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
}

void collection_poll(struct collection *c)
{
	FOR_EACH_OPEN(c, poll);
}

void collection_finish(struct collection *c)
{
	FOR_EACH_OPEN(c, finish);
}

void collection_report(struct collection *c)
{
	FOR_EACH_OPEN(c, report);
}

/* in the reverse order of the table: the process collector goes last, then the map */
void collection_close(struct collection *c)
{
	pid_t pid;

	for (size_t i = NCOLLECTORS; i-- > 0;)
		if (c->open[i]) {
			collectors[i]->close(&c->st[i]);
			c->open[i] = false;
		}
	pid = bpf_releaser_close(c->env.releaser);
	c->env.releaser = NULL;
	if (pid > 0)
		pr_debug(
			"detach: the probes of the followed processes are released by process %d, in "
			"the background",
			(int)pid);
	if (c->env.pid_map_fd > 0)
		close(c->env.pid_map_fd);
	if (c->env.gen_map_fd > 0)
		close(c->env.gen_map_fd);
	c->env.pid_map_fd = c->env.gen_map_fd = -1;
}
