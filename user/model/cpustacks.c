// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "model/cpustacks.h"

#include "lib/hash.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cpu_profile_add(struct cpu_profile *p, uint32_t pid, const char *comm, const char *frames,
		    uint64_t count, bool truncated)
{
	struct cpu_stack *s;

	if (!grow_array((void **)&p->v, &p->cap, p->n, sizeof(*p->v)))
		return -ENOMEM;
	s = &p->v[p->n];
	*s = (struct cpu_stack){ .pid = pid,
				 .comm = strdup(comm),
				 .frames = strdup(frames),
				 .count = count,
				 .truncated = truncated };
	if (!s->comm || !s->frames) {
		free(s->comm);
		free(s->frames);
		return -ENOMEM;
	}
	p->n++;
	p->samples += count;
	if (truncated)
		p->truncated_samples += count;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct cpu_stack *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->frames, y->frames);
}

void cpu_profile_finish(struct cpu_profile *p)
{
	size_t w = 0;

	if (!p->n)
		return;
	qsort(p->v, p->n, sizeof(*p->v), cmp_stack);
	for (size_t i = 0; i < p->n; i++) {
		if (w && !cmp_stack(&p->v[w - 1], &p->v[i])) {
			p->v[w - 1].count += p->v[i].count;
			free(p->v[i].comm);
			free(p->v[i].frames);
			continue;
		}
		p->v[w++] = p->v[i];
	}
	p->n = w;
}

void cpu_profile_free(struct cpu_profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].comm);
		free(p->v[i].frames);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* -- functions: a hash of frame names --------------------------------------------------------- */

struct fn_table {
	struct cpu_fn *fns;
	size_t n, cap;
	struct idindex index; /* of fns, by name */
	uint64_t *seen; /* the stack each function was last counted in (recursion counts once) */
};

static uint64_t hash_name(const char *s, size_t len)
{
	return hash_fnv1a(HASH_FNV_BASIS, s, len);
}

static uint64_t fn_key(const void *ctx, uint32_t i)
{
	const char *name = ((const struct fn_table *)ctx)->fns[i].name;

	return hash_name(name, strlen(name));
}

/* the function named by name[0..len) of a frame string; its index, or -1 on ENOMEM */
static long fn_index(struct fn_table *t, const char *name, size_t len)
{
	uint32_t j;

	if (!idindex_room(&t->index, (uint32_t)t->n, fn_key, t))
		return -1;
	for (j = idindex_first(&t->index, hash_name(name, len)); t->index.slot[j];
	     j = idindex_next(&t->index, j)) {
		const char *s = t->fns[t->index.slot[j] - 1].name;

		if (!strncmp(s, name, len) && !s[len])
			return (long)t->index.slot[j] - 1;
	}
	if (t->n == t->cap) {
		uint64_t *seen;

		if (!grow_array((void **)&t->fns, &t->cap, t->n, sizeof(*t->fns)))
			return -1;
		seen = realloc(t->seen, t->cap * sizeof(*seen));
		if (!seen)
			return -1;
		t->seen = seen;
	}
	t->fns[t->n] = (struct cpu_fn){ .name = strndup(name, len) };
	if (!t->fns[t->n].name)
		return -1;
	t->seen[t->n] = UINT64_MAX;
	t->index.slot[j] = (uint32_t)++t->n;
	return (long)t->n - 1;
}

static int by_self(const void *a, const void *b)
{
	const struct cpu_fn *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

int cpu_profile_functions(const struct cpu_profile *p, struct cpu_fn **out, size_t *n)
{
	struct fn_table t = { 0 };

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < p->n; i++) {
		const char *f = p->v[i].frames;
		long idx = -1;

		while (*f) {
			size_t len = strcspn(f, ";");

			idx = fn_index(&t, f, len);
			if (idx < 0)
				goto nomem;
			if (t.seen[idx] != i) {
				t.fns[idx].total += p->v[i].count;
				t.seen[idx] = i;
			}
			f += len + (f[len] == ';');
		}
		if (idx >= 0)
			t.fns[idx].self += p->v[i].count;
	}
	if (t.n)
		qsort(t.fns, t.n, sizeof(*t.fns), by_self);
	idindex_free(&t.index);
	free(t.seen);
	*out = t.fns;
	*n = t.n;
	return 0;
nomem:
	cpu_fns_free(t.fns, t.n);
	idindex_free(&t.index);
	free(t.seen);
	return -ENOMEM;
}

void cpu_fns_free(struct cpu_fn *fns, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(fns[i].name);
	free(fns);
}

int cpu_profile_write_folded(FILE *f, const struct cpu_profile *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (fprintf(f, "%s;%s %llu\n", p->v[i].comm, p->v[i].frames,
			    (unsigned long long)p->v[i].count) < 0)
			return -EIO;
	return 0;
}

void cpu_frame_sanitize(char *name)
{
	for (char *c = name; *c; c++)
		if (*c == ';' || *c == '\n' || *c == '\r')
			*c = ':';
}

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

bool cpu_frame_is_entry(const char *name)
{
	/* _dl_start_user: the dynamic loader's _start, past its call of _dl_start (its code
	 * runs the libraries' constructors and jumps to the program's _start) */
	static const char *const entries[] = { "_start",  "_dl_start_user", "clone",	   "clone3",
					       "__clone", "__clone3",	    "thread_start" };

	return in_list(name, entries, sizeof(entries) / sizeof(entries[0]));
}

bool cpu_stack_looks_complete(const char *outermost, const char *file)
{
	static const char *const starters[] = { "libc.so", "libc-", "ld-linux", "ld-musl",
						"libpthread" };
	/* where a frame-pointer walk stops short of the entry */
	static const char *const near_entries[] = { "__libc_start_main", "__libc_start_call_main",
						    "start_thread" };
	const char *base = file ? strrchr(file, '/') : NULL;

	if (cpu_frame_is_entry(outermost) ||
	    in_list(outermost, near_entries, sizeof(near_entries) / sizeof(near_entries[0])))
		return true;
	base = base ? base + 1 : file;
	for (size_t i = 0; base && i < sizeof(starters) / sizeof(starters[0]); i++)
		if (!strncmp(base, starters[i], strlen(starters[i])))
			return true;
	return false;
}

const char *stack_end_name(enum stack_end e)
{
	static const char *const names[STACK_END__COUNT] = {
		[STACK_END_ENTRY] = "reached the thread's entry",
		[STACK_END_STACK] = "the stack copy was too short",
		[STACK_END_NOCFI] = "no unwind information, and no frame pointer",
		[STACK_END_UNMAPPED] = "an address in no executable mapping",
		[STACK_END_BAD] = "a frame its unwind information could not undo",
		[STACK_END_DEPTH] = "deeper than the frames kept",
		[STACK_END_NOREGS] = "no user registers",
	};

	return (unsigned)e < STACK_END__COUNT ? names[e] : "?";
}
