// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/collection.h"
#include "lib/log.h"
#include "lib/monotime.h"

#include <string.h>
#include <sys/epoll.h>

/* the order they open and are polled in; a new collector is a row here */
static const struct collector *const collectors[] = {
	&proc_collector,   &api_collector,  &cpu_collector,
	&kernel_collector, &util_collector, &gcu_collector,
};
#define NCOLLECTORS (sizeof(collectors) / sizeof(collectors[0]))
_Static_assert(NCOLLECTORS <= COLLECTORS_MAX, "COLLECTORS_MAX is too small");

/* op (with its arguments after the state) on every open collector that has it */
#define FOR_EACH_OPEN(c, op, ...)                      \
	for (size_t i = 0; i < NCOLLECTORS; i++)       \
		if ((c)->open[i] && collectors[i]->op) \
	collectors[i]->op(&(c)->st[i], ##__VA_ARGS__)

int collection_open(struct collection *c, const struct collect_settings *s, struct model *m,
		    void (*tap)(void *ctx, const void *event, size_t size), void *tap_ctx)
{
	memset(c, 0, sizeof(*c));
	c->env = (struct collect_env){ .set = s,
				       .m = m,
				       .collecting = s->collecting,
				       .tap = tap,
				       .tap_ctx = tap_ctx,
				       .pid_map_fd = -1 };
	for (size_t i = 0; i < NCOLLECTORS; i++) {
		uint64_t t0;

		if (!collectors[i]->wanted(s))
			continue;
		t0 = mono_ns();
		c->st[i].env = &c->env;
		c->open[i] = true; /* closed by collection_close, even half-opened */
		if (collectors[i]->open(&c->st[i]))
			return 1;
		pr_debug("collecting %s (opened in %.1f ms)", collectors[i]->name,
			 (double)(mono_ns() - t0) / 1e6);
	}
	return 0;
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

/* in the reverse order of opening: the process collector's map goes last */
void collection_close(struct collection *c)
{
	for (size_t i = NCOLLECTORS; i-- > 0;)
		if (c->open[i]) {
			collectors[i]->close(&c->st[i]);
			c->open[i] = false;
		}
}
