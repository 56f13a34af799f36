// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The GCU collector: the devices' profiler records (gcu/source.c on the driver's readout), from
 * every device, of the activities asked for. With collection off at the start, the devices
 * start recording at 'topsprof start'. */
#include "collect/collector.h"
#include "gcu/source.h"
#include "lib/log.h"

#include <stdlib.h>
#include <string.h>

struct gcu_collect {
	struct collect_env *env;
	struct gcu_source *src;
};

static void start(struct gcu_collect *g)
{
	unsigned act = g->env->set->gcu_activities;
	const char *meta = getenv("ENFLAME_GENERATE_PROFILE_META");

	if ((act & (GCU_ACT_CDTE | GCU_ACT_SDTE)) && (!meta || strcmp(meta, "true")))
		pr_warn("Memcpy_cdte/Memcpy_sdte need profile meta, which this run will not have: "
			"export ENFLAME_GENERATE_PROFILE_META=true (factor programs) or compile with "
			"topscc -fgcu-generate-profile-meta");
	/* a run without its devices' records is still a run: the source said why */
	if (gcu_source_open(&g->src, &gcu_backend_readout, act, g->env->m))
		g->src = NULL;
}

static bool gcu_wanted(const struct collect_settings *s)
{
	return s->gcu_activities != 0;
}

static int gcu_open(void **state, struct collect_env *env)
{
	struct gcu_collect *g = calloc(1, sizeof(*g));

	*state = g;
	if (!g) {
		pr_error("out of memory");
		return 1;
	}
	g->env = env;
	if (env->collecting)
		start(g);
	return 0;
}

static void gcu_set_collecting(void *state, bool on)
{
	struct gcu_collect *g = state;

	if (on && !g->src)
		start(g);
	else if (g->src)
		gcu_source_pause(g->src, !on);
}

/* a clock-sync pair as the application starts */
static void gcu_sync(void *state)
{
	struct gcu_collect *g = state;

	if (g->src)
		gcu_source_sync(g->src, g->env->m);
}

static void gcu_drain(void *state)
{
	struct gcu_collect *g = state;

	if (g->src)
		gcu_source_poll(g->src, g->env->m);
}

static void gcu_poll(void *state)
{
	gcu_drain(state);
	gcu_sync(state);
}

static int gcu_fd(const void *state)
{
	(void)state;
	return -1; /* the driver has no descriptor to wait on: read at every wake */
}

static void gcu_finish(void *state)
{
	struct gcu_collect *g = state;

	if (g->src)
		gcu_source_finish(g->src, g->env->m);
}

static void gcu_close(void *state)
{
	struct gcu_collect *g = state;

	if (!g)
		return;
	gcu_source_close(g->src);
	free(g);
}

const struct collector gcu_collector = {
	.name = "GCU records",
	.wanted = gcu_wanted,
	.open = gcu_open,
	.begin = gcu_sync,
	.set_collecting = gcu_set_collecting,
	.clear = gcu_drain,
	.fd = gcu_fd,
	.poll = gcu_poll,
	.finish = gcu_finish,
	.close = gcu_close,
};
