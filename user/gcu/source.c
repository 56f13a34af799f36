// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "gcu/source.h"
#include "lib/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define READ_BATCH 512

struct gcu_source {
	const struct gcu_backend *b;
	unsigned activities;
	void *dev[GCU_RO_MAX_DEVICES];
	int ndev;
	struct gcu_record buf[READ_BATCH];
};

/* --- the driver readout backend ---------------------------------------------------------------- */

static int ro_open(int dev, void **handle, char *err, size_t errlen)
{
	return gcu_ro_open(dev, (struct gcu_ro_dev **)handle, err, errlen);
}

static int ro_enable(void *h, unsigned activities)
{
	return gcu_ro_enable(h, activities);
}

static int ro_read(void *h, struct gcu_record *out, int max)
{
	return gcu_ro_read(h, out, max);
}

static const char *ro_name(void *h, uint32_t id)
{
	return gcu_ro_name(h, id);
}

static int ro_sync(void *h, uint64_t *host_ns, uint64_t *ticks)
{
	return gcu_ro_sync_pair(h, host_ns, ticks);
}

static uint64_t ro_overflow(const void *h)
{
	return gcu_ro_overflow(h);
}

static uint64_t ro_hz(const void *h)
{
	return gcu_ro_tick_hz(h);
}

static void ro_close(void *h)
{
	gcu_ro_close(h);
}

const struct gcu_backend gcu_backend_readout = {
	.name = "driver readout",
	.device_count = gcu_ro_device_count,
	.open = ro_open,
	.enable = ro_enable,
	.read = ro_read,
	.name_of = ro_name,
	.sync_pair = ro_sync,
	.overflow = ro_overflow,
	.tick_hz = ro_hz,
	.close = ro_close,
};

/* --- the source --------------------------------------------------------------------------------- */

int gcu_source_open(struct gcu_source **out, const struct gcu_backend *b, unsigned activities,
		    struct model *m)
{
	struct gcu_source *s = calloc(1, sizeof(*s));
	int n = b->device_count(), usable = 0;
	char err[512];

	if (!s)
		return -ENOMEM;
	s->b = b;
	if (n < 0) {
		pr_warn("no GCU found (%s): GCU activities are not collected", strerror(-n));
		free(s);
		return -ENODEV;
	}
	s->ndev = n > GCU_RO_MAX_DEVICES ? GCU_RO_MAX_DEVICES : n;
	for (int d = 0; d < s->ndev; d++) {
		int rc = b->open(d, &s->dev[d], err, sizeof(err));

		if (!rc) {
			rc = b->enable(s->dev[d], activities);
			if (rc == -EBUSY)
				snprintf(err, sizeof(err), "another profiler is reading it");
			else if (rc)
				snprintf(err, sizeof(err), "%s", strerror(-rc));
		}
		if (rc) {
			pr_warn("GCU %d: %s; its activities are not collected", d, err);
			if (s->dev[d])
				b->close(s->dev[d]);
			s->dev[d] = NULL;
			continue;
		}
		m->dev[d].present = true;
		m->dev[d].tick_hz = b->tick_hz(s->dev[d]);
		usable++;
	}
	if (!usable) {
		free(s);
		return -ENODEV;
	}
	m->gcu_activities = activities;
	s->activities = activities;
	if (b == &gcu_backend_readout)
		pr_debug("GCU records from %d of %d devices through the %s, in %s%s", usable,
			 s->ndev, b->name, gcu_ro_dir(),
			 strcmp(gcu_ro_dir(), "/dev") ? "" : " (the kernel driver's device nodes)");
	else
		pr_debug("GCU records from %d of %d devices through the %s", usable, s->ndev,
			 b->name);
	*out = s;
	return 0;
}

int gcu_source_poll(struct gcu_source *s, struct model *m)
{
	int total = 0;

	for (int d = 0; d < s->ndev; d++) {
		int n;

		if (!s->dev[d])
			continue;
		while ((n = s->b->read(s->dev[d], s->buf, READ_BATCH)) > 0) {
			for (int i = 0; i < n; i++)
				model_add_gcu(m, &s->buf[i],
					      s->buf[i].name_id
						      ? s->b->name_of(s->dev[d], s->buf[i].name_id)
						      : NULL);
			total += n;
		}
		if (n < 0)
			return n;
	}
	return total;
}

void gcu_source_sync(struct gcu_source *s, struct model *m)
{
	for (int d = 0; d < s->ndev; d++) {
		uint64_t host, ticks;

		if (s->dev[d] && !s->b->sync_pair(s->dev[d], &host, &ticks))
			model_add_sync(m, d, host, ticks);
	}
}

void gcu_source_finish(struct gcu_source *s, struct model *m)
{
	gcu_source_poll(s, m);
	gcu_source_sync(s, m);
	for (int d = 0; d < s->ndev; d++) {
		if (!s->dev[d])
			continue;
		m->dev[d].overflow = s->b->overflow(s->dev[d]);
		s->b->enable(s->dev[d], 0);
	}
}

void gcu_source_close(struct gcu_source *s)
{
	if (!s)
		return;
	for (int d = 0; d < s->ndev; d++)
		if (s->dev[d])
			s->b->close(s->dev[d]);
	free(s);
}

void gcu_source_pause(struct gcu_source *s, bool paused)
{
	for (int d = 0; d < s->ndev; d++)
		if (s->dev[d] && s->b->enable(s->dev[d], paused ? 0 : s->activities))
			pr_warn("GCU %d: every reader slot is taken; its records are not collected",
				d);
}
