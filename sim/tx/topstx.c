// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libtopstx.so: the calls keep per-thread nesting and hand out range ids; the timeline itself is
 * what a profiler sees of these calls (topsprof probes them). */
#include "topstx/topstx.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define API	       __attribute__((visibility("default"), noinline))

#define MAX_CATEGORIES 64
#define DOMAIN_MAGIC   0x54584d44u

struct topstxDomainRegistration_st {
	uint32_t magic;
	uint32_t id;
	char *name;
	char *category[MAX_CATEGORIES];
};

static uint64_t next_range_id = 1;
static uint32_t next_domain_id = 1;
/* nesting depth per thread: the default domain, and the last custom domain pushed to */
static __thread int depth_default;
static __thread struct {
	topstxDomainHandle_t domain;
	int depth;
} depth_custom[16];

static bool attr_ok(const topstxEventAttributes_t *a)
{
	return a && a->version >= 1 && a->size >= sizeof(*a) - sizeof(a->payload);
}

static bool domain_ok(topstxDomainHandle_t d)
{
	return d && d->magic == DOMAIN_MAGIC;
}

static int *custom_depth(topstxDomainHandle_t d)
{
	for (int i = 0; i < 16; i++)
		if (depth_custom[i].domain == d)
			return &depth_custom[i].depth;
	for (int i = 0; i < 16; i++) {
		if (!depth_custom[i].domain || !depth_custom[i].depth) {
			depth_custom[i].domain = d;
			depth_custom[i].depth = 0;
			return &depth_custom[i].depth;
		}
	}
	return NULL;
}

static int push(int *depth)
{
	return depth ? (*depth)++ : -1;
}

static int pop(int *depth)
{
	if (!depth || *depth == 0)
		return -1;
	return --(*depth);
}

API int topstxRangePush(const topstxEventAttributes_t *attr)
{
	return attr_ok(attr) ? push(&depth_default) : -1;
}

API int topstxRangePushA(const char *message)
{
	return message ? push(&depth_default) : -1;
}

API int topstxRangePop(void)
{
	return pop(&depth_default);
}

API topstxRangeId_t topstxRangeStart(const topstxEventAttributes_t *attr)
{
	return attr_ok(attr) ? __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED) : 0;
}

API void topstxRangeEnd(topstxRangeId_t id)
{
	(void)id;
}

API void topstxMark(const topstxEventAttributes_t *attr)
{
	(void)attr;
}

API topstxDomainHandle_t topstxDomainCreate(const char *name)
{
	struct topstxDomainRegistration_st *d;

	if (!name || !*name)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->name = strdup(name);
	if (!d->name) {
		free(d);
		return NULL;
	}
	d->id = __atomic_fetch_add(&next_domain_id, 1, __ATOMIC_RELAXED);
	d->magic = DOMAIN_MAGIC;
	return d;
}

API void topstxDomainDestroy(topstxDomainHandle_t d)
{
	if (!domain_ok(d))
		return;
	d->magic = 0;
	for (int i = 0; i < MAX_CATEGORIES; i++)
		free(d->category[i]);
	free(d->name);
	free(d);
}

API void topstxDomainNameCategory(topstxDomainHandle_t d, uint32_t category, const char *name)
{
	char *copy;

	if (!domain_ok(d) || !name || category >= MAX_CATEGORIES)
		return;
	copy = strdup(name);
	if (!copy)
		return;
	free(d->category[category]);
	d->category[category] = copy;
}

API int topstxDomainRangePush(topstxDomainHandle_t d, const topstxEventAttributes_t *attr)
{
	return domain_ok(d) && attr_ok(attr) ? push(custom_depth(d)) : -1;
}

API int topstxDomainRangePop(topstxDomainHandle_t d)
{
	return domain_ok(d) ? pop(custom_depth(d)) : -1;
}

API topstxRangeId_t topstxDomainRangeStart(topstxDomainHandle_t d,
					   const topstxEventAttributes_t *attr)
{
	return domain_ok(d) ? topstxRangeStart(attr) : 0;
}

API void topstxDomainRangeEnd(topstxDomainHandle_t d, topstxRangeId_t id)
{
	(void)d;
	(void)id;
}

API void topstxDomainMark(topstxDomainHandle_t d, const topstxEventAttributes_t *attr)
{
	(void)d;
	(void)attr;
}
