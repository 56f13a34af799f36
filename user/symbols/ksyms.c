// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/ksyms.h"

#include "lib/bsearch.h"
#include "lib/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *intern_module(struct ksyms *k, const char *name)
{
	for (size_t i = 0; i < k->nmodules; i++)
		if (!strcmp(k->modules[i], name))
			return k->modules[i];
	if (!grow_array((void **)&k->modules, &k->capmodules, k->nmodules, sizeof(*k->modules)))
		return NULL;
	k->modules[k->nmodules] = strdup(name);
	return k->modules[k->nmodules] ? k->modules[k->nmodules++] : NULL;
}

/* one line: "ADDR TYPE NAME [MODULE]" */
static int parse_line(struct ksyms *k, char *line, bool *nonzero)
{
	char *end, *name, *mod;
	uint64_t addr;
	char type;

	line[strcspn(line, "\n")] = 0;
	if (!*line)
		return 0;
	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ' || !end[1] || end[2] != ' ' || !end[3])
		return -EINVAL;
	type = end[1];
	name = end + 3;
	mod = strchr(name, '\t');
	if (mod) {
		*mod++ = 0;
		if (*mod != '[' || mod[strlen(mod) - 1] != ']')
			return -EINVAL;
		mod++;
		mod[strlen(mod) - 1] = 0;
	}
	if (addr)
		*nonzero = true;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (!grow_array((void **)&k->v, &k->cap, k->n, sizeof(*k->v)))
		return -ENOMEM;
	k->v[k->n] = (struct ksym){ .addr = addr, .name = strdup(name) };
	if (!k->v[k->n].name)
		return -ENOMEM;
	k->n++;
	if (mod && !(k->v[k->n - 1].module = intern_module(k, mod)))
		return -ENOMEM;
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* aliases at one address: the name without reserved underscores */
	return strspn(x->name, "_") != strspn(y->name, "_")
		       ? (int)strspn(x->name, "_") - (int)strspn(y->name, "_")
		       : strcmp(x->name, y->name);
}

int ksyms_load(struct ksyms *k, const char *path)
{
	bool nonzero = false;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	memset(k, 0, sizeof(*k));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) >= 0)
		err = parse_line(k, line, &nonzero);
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (!err && k->n && !nonzero)
		err = -EPERM;
	if (err) {
		ksyms_free(k);
		return err;
	}
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_addr);
	return 0;
}

void ksyms_free(struct ksyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].name);
	for (size_t i = 0; i < k->nmodules; i++)
		free(k->modules[i]);
	free(k->v);
	free(k->modules);
	memset(k, 0, sizeof(*k));
}

const struct ksym *ksyms_find(const struct ksyms *k, uint64_t addr, uint64_t *delta)
{
	size_t lo = count_at_or_below(k->v, k->n, sizeof(*k->v), offsetof(struct ksym, addr), addr);

	if (!lo)
		return NULL;
	/* among aliases at one address the sort put the best first */
	while (lo > 1 && k->v[lo - 2].addr == k->v[lo - 1].addr)
		lo--;
	if (delta)
		*delta = addr - k->v[lo - 1].addr;
	return &k->v[lo - 1];
}
