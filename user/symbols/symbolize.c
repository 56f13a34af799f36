// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/symbolize.h"

#include "lib/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void symbolizer_init(struct symbolizer *s, const char *kallsyms_path)
{
	memset(s, 0, sizeof(*s));
	s->kallsyms_path = kallsyms_path ? kallsyms_path : "/proc/kallsyms";
}

void symbolizer_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		symtab_free(s->files[i].t);
	}
	free(s->files);
	ksyms_free(&s->k);
	memset(s, 0, sizeof(*s));
}

/* the symbols of path, read on first use; NULL when it has none to give */
static const struct symtab *file_symtab(struct symbolizer *s, const char *path)
{
	struct symfile *f;

	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return s->files[i].t;
	if (!grow_array((void **)&s->files, &s->capfiles, s->nfiles, sizeof(*s->files)))
		return NULL;
	f = &s->files[s->nfiles];
	*f = (struct symfile){ .path = strdup(path) };
	if (!f->path)
		return NULL;
	s->nfiles++;
	f->err = symtab_load(path, &f->t);
	return f->t;
}

const char *symbolize_user(struct symbolizer *s, const struct procmaps *m, uint64_t ip, char *buf,
			   size_t len)
{
	uint64_t off = 0, v, d;
	const struct procmap *p = procmaps_find(m, ip, &off);
	const struct symtab *t;
	const char *name, *base;

	if (!p || !p->path) { /* anonymous: JIT code, or a mapping gone before it was captured */
		snprintf(buf, len, "[unknown] 0x%" PRIx64, ip);
		return buf;
	}
	base = strrchr(p->path, '/');
	base = base ? base + 1 : p->path;
	if (p->path[0] == '/' && (p->open_path || !p->foreign) &&
	    (t = file_symtab(s, p->open_path ? p->open_path : p->path)) &&
	    symtab_offset_to_vaddr(t, off, &v) && (name = symtab_find(t, v, &d))) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	snprintf(buf, len, "[unknown] %s+0x%" PRIx64, base, off);
	return buf;
}

const char *symbolize_kernel(struct symbolizer *s, uint64_t ip, char *buf, size_t len)
{
	const struct ksym *k = NULL;
	uint64_t d;

	if (!s->kloaded) {
		s->kloaded = 1;
		s->kerr = ksyms_load(&s->k, s->kallsyms_path);
	}
	if (!s->kerr)
		k = ksyms_find(&s->k, ip, &d);
	if (!k)
		snprintf(buf, len, "[unknown] 0x%" PRIx64, ip);
	else if (k->module)
		snprintf(buf, len, "%s [%s]", k->name, k->module);
	else
		snprintf(buf, len, "%s", k->name);
	return buf;
}
