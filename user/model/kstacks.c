// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/kstacks.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

int kernel_add_entry(struct kernel_profile *p, const char *name, bool driver, uint64_t calls,
		     uint64_t total_ns, uint64_t max_ns)
{
	struct kernel_entry *e;
	bool oom = false;

	if (!grow_array((void **)&p->e, &p->cape, p->ne, sizeof(*p->e)))
		return -ENOMEM;
	e = &p->e[p->ne];
	e->name = dup_or_null(name ? name : "?", &oom);
	if (oom)
		return -ENOMEM;
	e->driver = driver;
	e->calls = calls;
	e->total_ns = total_ns;
	e->max_ns = max_ns;
	p->ne++;
	return 0;
}

int kernel_add_stack(struct kernel_profile *p, const struct kernel_stack *s)
{
	struct kernel_stack *d;
	bool oom = false;

	if (!grow_array((void **)&p->s, &p->caps, p->ns, sizeof(*p->s)))
		return -ENOMEM;
	d = &p->s[p->ns];
	*d = *s;
	d->comm = dup_or_null(s->comm ? s->comm : "?", &oom);
	d->entry = dup_or_null(s->entry, &oom);
	d->frames = dup_or_null(s->frames ? s->frames : "", &oom);
	if (oom) {
		free(d->comm);
		free(d->entry);
		free(d->frames);
		return -ENOMEM;
	}
	p->ns++;
	return 0;
}

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int entry_key(const void *a, const void *b)
{
	const struct kernel_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (int)x->driver - (int)y->driver;
}

static int stack_key(const void *a, const void *b)
{
	const struct kernel_stack *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->driver != y->driver)
		return (int)x->driver - (int)y->driver;
	if (x->offcpu != y->offcpu)
		return (int)x->offcpu - (int)y->offcpu;
	c = strcmp_null(x->entry, y->entry);
	return c ? c : strcmp(x->frames, y->frames);
}

static int entry_time(const void *a, const void *b)
{
	const struct kernel_entry *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return entry_key(a, b);
}

static int stack_time(const void *a, const void *b)
{
	const struct kernel_stack *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return stack_key(a, b);
}

void kernel_profile_finish(struct kernel_profile *p)
{
	size_t n = 0;

	if (p->ne) {
		qsort(p->e, p->ne, sizeof(*p->e), entry_key);
		for (size_t i = 0; i < p->ne; i++) {
			struct kernel_entry *o = n ? &p->e[n - 1] : NULL;

			if (o && !entry_key(o, &p->e[i])) {
				o->calls += p->e[i].calls;
				o->total_ns += p->e[i].total_ns;
				if (p->e[i].max_ns > o->max_ns)
					o->max_ns = p->e[i].max_ns;
				free(p->e[i].name);
			} else {
				p->e[n++] = p->e[i];
			}
		}
		p->ne = n;
		qsort(p->e, p->ne, sizeof(*p->e), entry_time);
	}
	n = 0;
	if (p->ns) {
		qsort(p->s, p->ns, sizeof(*p->s), stack_key);
		for (size_t i = 0; i < p->ns; i++) {
			struct kernel_stack *o = n ? &p->s[n - 1] : NULL;

			if (o && !stack_key(o, &p->s[i])) {
				o->count += p->s[i].count;
				o->total_ns += p->s[i].total_ns;
				if (p->s[i].max_ns > o->max_ns)
					o->max_ns = p->s[i].max_ns;
				free(p->s[i].comm);
				free(p->s[i].entry);
				free(p->s[i].frames);
			} else {
				p->s[n++] = p->s[i];
			}
		}
		p->ns = n;
		qsort(p->s, p->ns, sizeof(*p->s), stack_time);
	}
}

void kernel_profile_clear(struct kernel_profile *p)
{
	for (size_t i = 0; i < p->ne; i++)
		free(p->e[i].name);
	for (size_t i = 0; i < p->ns; i++) {
		free(p->s[i].comm);
		free(p->s[i].entry);
		free(p->s[i].frames);
	}
	p->ne = p->ns = 0;
	p->lost_entries = p->lost_stacks = p->lost_threads = p->untold = 0;
}

void kernel_profile_free(struct kernel_profile *p)
{
	kernel_profile_clear(p);
	free(p->e);
	free(p->s);
	free(p->mechanism);
	free(p->filter);
	p->e = NULL;
	p->s = NULL;
	p->mechanism = p->filter = NULL;
	p->cape = p->caps = 0;
}
