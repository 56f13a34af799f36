// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The GCU collector: the devices' profiler records (gcu/source.c on the driver's readout), from
 * every device, of the activities asked for. With collection off at the start, the devices
 * start recording at 'topsprof start'. Its handle is NULL until then. */
#include "collect/collector.h"
#include "gcu/source.h"
#include "lib/log.h"

#include <stdlib.h>
#include <string.h>

static void start(struct collector_state *st)
{
	unsigned act = st->env->set->gcu_activities;
	const char *meta = getenv("ENFLAME_GENERATE_PROFILE_META");
	struct gcu_source *src;

	if ((act & (GCU_ACT_CDTE | GCU_ACT_SDTE)) && (!meta || strcmp(meta, "true")))
		pr_warn("Memcpy_cdte/Memcpy_sdte need profile meta, which this run will not have: "
			"export ENFLAME_GENERATE_PROFILE_META=true (factor programs) or compile with "
			"topscc -fgcu-generate-profile-meta");
	/* a run without its devices' records is still a run: the source said why */
	if (!gcu_source_open(&src, &gcu_backend_readout, act, st->env->m))
		st->h = src;
}

static bool gcu_wanted(const struct collect_settings *s)
{
	return s->gcu_activities != 0;
}

static int gcu_open(struct collector_state *st)
{
	if (st->env->collecting)
		start(st);
	return 0;
}

static void gcu_set_collecting(struct collector_state *st, bool on)
{
	if (on && !st->h)
		start(st);
	else if (st->h)
		gcu_source_pause(st->h, !on);
}

/* a clock-sync pair: as the application starts, and at every wake */
static void gcu_sync(struct collector_state *st)
{
	if (st->h)
		gcu_source_sync(st->h, st->env->m);
}

static void gcu_drain(struct collector_state *st)
{
	if (st->h)
		gcu_source_poll(st->h, st->env->m);
}

static void gcu_poll(struct collector_state *st)
{
	gcu_drain(st);
	gcu_sync(st);
}

static void gcu_finish(struct collector_state *st)
{
	if (st->h)
		gcu_source_finish(st->h, st->env->m);
}

static void gcu_close(struct collector_state *st)
{
	gcu_source_close(st->h);
}

/* no fd: the driver has no descriptor to wait on, the records are read at every wake */
const struct collector gcu_collector = {
	.name = "GCU records",
	.wanted = gcu_wanted,
	.open = gcu_open,
	.begin = gcu_sync,
	.set_collecting = gcu_set_collecting,
	.clear = gcu_drain,
	.poll = gcu_poll,
	.finish = gcu_finish,
	.close = gcu_close,
};
