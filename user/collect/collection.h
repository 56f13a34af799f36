/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The collectors of a run (collector.h), driven together: those the settings want are opened in
 * the order of the table in collection.c (the process collector first: the others follow its
 * processes), and every operation goes to each open one. */
#ifndef TOPSPROF_COLLECTION_H
#define TOPSPROF_COLLECTION_H

#include "collect/collector.h"

#define COLLECTORS_MAX 8

struct collection {
	struct collect_env env;
	struct collector_state st[COLLECTORS_MAX];
	bool open[COLLECTORS_MAX];
	bool ready; /* every collector opened: the operations below reach them (not before) */
};

/* 0, or 1 after one error line (collection_close then releases what was opened) */
int collection_open(struct collection *c, const struct collect_settings *s, struct model *m,
		    void (*tap)(void *ctx, const void *event, size_t size), void *tap_ctx);
void collection_begin(struct collection *c);
/* the application (launched and held, or attached to) is followed: its scoped probes go in; 0 or
 * -errno */
int collection_follow(struct collection *c, pid_t pid);
void collection_set_collecting(struct collection *c, bool on);
void collection_clear(struct collection *c);
/* add every collector's descriptor to the epoll set ep, with data.u32 = tag */
void collection_watch(const struct collection *c, int ep, uint32_t tag);
void collection_poll(struct collection *c);
void collection_finish(struct collection *c);
void collection_report(struct collection *c);
void collection_close(struct collection *c);

#endif
