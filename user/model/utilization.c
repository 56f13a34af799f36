// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/utilization.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct util_series *util_series_get(struct util_profile *u, uint32_t pid, const char *comm)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->s[i].pid == pid)
			return &u->s[i];
	return util_series_add(u, pid, comm);
}

struct util_series *util_series_add(struct util_profile *u, uint32_t pid, const char *comm)
{
	struct util_series *s;

	if (!grow_array((void **)&u->s, &u->cap, u->n, sizeof(*u->s)))
		return NULL;
	s = &u->s[u->n++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	snprintf(s->comm, sizeof(s->comm), "%s", comm ? comm : "");
	return s;
}

int util_add(struct util_series *s, const struct util_point *p)
{
	if (!grow_array((void **)&s->v, &s->cap, s->n, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n++] = *p;
	return 0;
}

void util_summarize(const struct util_series *s, struct util_summary *out)
{
	double cpu = 0, rss = 0, vsz = 0;

	memset(out, 0, sizeof(*out));
	out->samples = s->n;
	if (!s->n)
		return;
	out->first_ns = s->v[0].t_ns;
	out->last_ns = s->v[s->n - 1].t_ns;
	for (size_t i = 0; i < s->n; i++) {
		const struct util_point *p = &s->v[i];

		cpu += p->cpu;
		rss += (double)p->rss;
		vsz += (double)p->vsz;
		if (p->cpu > out->cpu_max)
			out->cpu_max = p->cpu;
		if (p->rss > out->rss_max)
			out->rss_max = p->rss;
		if (p->vsz > out->vsz_max)
			out->vsz_max = p->vsz;
	}
	out->cpu_avg = cpu / (double)s->n;
	out->rss_avg = rss / (double)s->n;
	out->vsz_avg = vsz / (double)s->n;
}

void util_profile_clear(struct util_profile *u)
{
	for (size_t i = 0; i < u->n; i++)
		u->s[i].n = 0;
	u->missed = 0;
}

void util_profile_free(struct util_profile *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->s[i].v);
	free(u->s);
	u->s = NULL;
	u->n = u->cap = 0;
}
