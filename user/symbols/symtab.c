// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/symtab.h"

#include "lib/bsearch.h"
#include "target/elfinfo.h"
#include "lib/grow.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the Itanium C++ ABI entry point) */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define DEBUGDATA_MAX (256u << 20) /* a decompressed .gnu_debugdata larger than this is refused */
#define XZ_MEMLIMIT   (128u << 20) /* nor one whose decoder would need more memory */

struct raw_sym {
	uint64_t addr, size;
	int rank; /* lower wins among symbols at one address */
	const char *name;
};

struct collect {
	struct raw_sym *v;
	size_t n, cap;
	struct elf_handle debug; /* a separate debug file the names point into */
};

char *sym_demangle(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);

		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* the name without reserved underscores first (getpid over __getpid), then global before weak
 * before local */
static int sym_rank(const struct elf_func *f)
{
	int us = leading_underscores(f->name);

	return (us > 3 ? 3 : us) * 4 + (int)f->bind;
}

struct collect_ctx {
	struct collect *c;
	bool symtab_seen;
};

static int add_func(const struct elf_func *f, void *p)
{
	struct collect_ctx *x = p;
	struct collect *c = x->c;

	x->symtab_seen |= f->from_symtab;
	if (!grow_array((void **)&c->v, &c->cap, c->n, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->n++] = (struct raw_sym){
		.addr = f->value, .size = f->size, .rank = sym_rank(f), .name = f->name
	};
	return 0;
}

/* e's function symbols into c; has_symtab (when not NULL) set when e has a .symtab */
static int collect_syms(Elf *e, struct collect *c, bool *has_symtab)
{
	struct collect_ctx x = { .c = c };
	int err = elf_for_each_func(e, add_func, &x);

	if (has_symtab && x.symtab_seen)
		*has_symtab = true;
	return err;
}

/* the xz stream of .gnu_debugdata, decompressed into *out (malloc'd) */
static int unxz(const uint8_t *in, size_t inlen, uint8_t **out, size_t *outlen)
{
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = inlen * 4 + 4096;
	uint8_t *buf = malloc(cap);
	lzma_ret ret;

	if (!buf)
		return -ENOMEM;
	if (lzma_stream_decoder(&st, XZ_MEMLIMIT, 0) != LZMA_OK) {
		free(buf);
		return -ENOMEM;
	}
	st.next_in = in;
	st.avail_in = inlen;
	st.next_out = buf;
	st.avail_out = cap;
	for (;;) {
		ret = lzma_code(&st, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
			goto bad;
		if (st.avail_out == 0) {
			size_t used = cap;
			uint8_t *nb;

			cap *= 2;
			if (cap > DEBUGDATA_MAX)
				goto bad;
			nb = realloc(buf, cap);
			if (!nb)
				goto bad;
			buf = nb;
			st.next_out = buf + used;
			st.avail_out = cap - used;
		} else if (ret == LZMA_BUF_ERROR) {
			goto bad; /* input ended before the stream did */
		}
	}
	*outlen = (size_t)st.total_out;
	*out = buf;
	lzma_end(&st);
	return 0;
bad:
	lzma_end(&st);
	free(buf);
	return -EBADMSG;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* one symbol per address, the best named, with the largest size any of them gave */
static int build(struct symtab *t, struct collect *c)
{
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_raw);
	t->syms = calloc(c->n ? c->n : 1, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		struct sym *last = t->nsyms ? &t->syms[t->nsyms - 1] : NULL;

		if (last && last->addr == c->v[i].addr) {
			if (c->v[i].size > last->size)
				last->size = c->v[i].size;
			continue;
		}
		t->syms[t->nsyms].name = sym_demangle(c->v[i].name);
		if (!t->syms[t->nsyms].name)
			return -ENOMEM;
		t->syms[t->nsyms].addr = c->v[i].addr;
		t->syms[t->nsyms].size = c->v[i].size;
		t->nsyms++;
	}
	return 0;
}

/* the file's GNU build-id as hex into hex (at least 2 * 64 + 1 bytes); false without one */
static bool build_id(Elf *e, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4) ||
			    !nh.n_descsz || nh.n_descsz * 2 + 1 > len)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			return true;
		}
	}
	return false;
}

/* a stripped file's separate debug file, found by build-id under $TOPSPROF_DEBUG_DIR (else
 * /usr/lib/debug): its .symtab added to c */
static int add_debug_file(Elf *e, struct collect *c, bool *found)
{
	const char *root = getenv("TOPSPROF_DEBUG_DIR");
	char hex[129], path[4096];
	struct elf_handle dh;
	bool has;
	int err;

	*found = false;
	if (!build_id(e, hex, sizeof(hex)))
		return 0;
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
		 root && *root ? root : "/usr/lib/debug", hex, hex + 2);
	if (elf_open(path, &dh))
		return 0; /* none installed, or not an ELF file: the file's own symbols serve */
	err = collect_syms(dh.e, c, &has);
	/* the names point into the debug file's image: keep it open until built */
	c->debug = dh;
	*found = !err && has;
	return err;
}

int symtab_load(const char *path, struct symtab **out)
{
	struct collect c = { 0 };
	struct elf_handle h;
	struct symtab *t;
	Elf *inner = NULL;
	uint8_t *mini = NULL;
	Elf_Scn *dd;
	int err;

	*out = NULL;
	err = elf_open(path, &h);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	elf_read_segments(h.e, &t->segs);
	err = collect_syms(h.e, &c, &t->has_symtab);
	if (err)
		goto out;
	dd = elf_find_section(h.e, ".gnu_debugdata");
	if (dd) {
		Elf_Data *data = elf_rawdata(dd, NULL);
		size_t len = 0;

		if (!data || !data->d_buf || !data->d_size) {
			err = -EBADMSG;
			goto out;
		}
		err = unxz(data->d_buf, data->d_size, &mini, &len);
		if (err)
			goto out;
		inner = elf_memory((char *)mini, len);
		if (!inner || elf_kind(inner) != ELF_K_ELF) {
			err = -EBADMSG;
			goto out;
		}
		err = collect_syms(inner, &c, NULL);
		if (err)
			goto out;
		t->has_debugdata = true;
	}
	if (!t->has_symtab) {
		err = add_debug_file(h.e, &c, &t->has_debugfile);
		if (err)
			goto out;
	}
	err = build(t, &c); /* the names still point into the ELF images: build before closing */
out:
	if (c.debug.e)
		elf_close(&c.debug);
	if (inner)
		elf_end(inner);
	free(mini);
	free(c.v);
	elf_close(&h);
	if (err) {
		symtab_free(t);
		return err;
	}
	*out = t;
	return 0;
}

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].name);
	free(t->syms);
	free(t);
}

/* whether a and b lie in one loadable segment (true when the file has none to tell) */
static bool same_segment(const struct symtab *t, uint64_t a, uint64_t b)
{
	for (int i = 0; i < t->segs.n; i++) {
		uint64_t lo = t->segs.v[i].vaddr, hi = lo + t->segs.v[i].filesz;

		if (a >= lo && a < hi)
			return b >= lo && b < hi;
	}
	return !t->segs.n;
}

const char *symtab_find(const struct symtab *t, uint64_t vaddr, uint64_t *delta)
{
	size_t lo = count_at_or_below(t->syms, t->nsyms, sizeof(*t->syms),
				      offsetof(struct sym, addr), vaddr);
	const struct sym *s;

	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	if (s->size && vaddr >= s->addr + s->size)
		return NULL;
	if (!s->size && !same_segment(t, s->addr, vaddr)) /* sizeless: to its segment's end */
		return NULL;
	if (delta)
		*delta = vaddr - s->addr;
	return s->name;
}

bool symtab_offset_to_vaddr(const struct symtab *t, uint64_t off, uint64_t *vaddr)
{
	return elf_segs_vaddr(&t->segs, off, vaddr);
}
