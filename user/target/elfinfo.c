// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "target/elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int elf_open(const char *path, struct elf_handle *h)
{
	struct stat st;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* a path a profiled process may have put there: never wait on a FIFO, never take a
	 * terminal, never open a device for real */
	h->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (h->fd < 0)
		return -errno;
	if (fstat(h->fd, &st) || !S_ISREG(st.st_mode)) {
		close(h->fd);
		return -ENOEXEC;
	}
	/* read, not mapped: a file cut short meanwhile is an error, not a SIGBUS */
	h->e = elf_begin(h->fd, ELF_C_READ, NULL);
	if (!h->e || elf_kind(h->e) != ELF_K_ELF) {
		if (h->e)
			elf_end(h->e);
		close(h->fd);
		return -ENOEXEC;
	}
	return 0;
}

void elf_close(struct elf_handle *h)
{
	elf_end(h->e);
	close(h->fd);
}

Elf_Scn *elf_find_section(Elf *e, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

void elf_read_segments(Elf *e, struct elf_segs *s)
{
	size_t nph;

	s->n = 0;
	if (elf_getphdrnum(e, &nph))
		return;
	for (size_t i = 0; i < nph && s->n < ELF_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			s->v[s->n++] = (struct elf_seg){ .vaddr = ph.p_vaddr,
							 .offset = ph.p_offset,
							 .filesz = ph.p_filesz };
	}
}

bool elf_segs_vaddr(const struct elf_segs *s, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < s->n; i++) {
		const struct elf_seg *g = &s->v[i];

		if (off >= g->offset && off - g->offset < g->filesz) {
			*vaddr = off - g->offset + g->vaddr;
			return true;
		}
	}
	return false;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int elf_read_deps(const char *path, struct elf_deps *d)
{
	struct elf_handle h;
	Elf_Scn *scn = NULL;
	size_t nph;
	int err;

	memset(d, 0, sizeof(*d));
	err = elf_open(path, &h);
	if (err)
		return err;
	if (!elf_getphdrnum(h.e, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			size_t len;
			char *img = elf_rawfile(h.e, &len);

			if (gelf_getphdr(h.e, (int)i, &ph) && ph.p_type == PT_INTERP && img &&
			    ph.p_offset + ph.p_filesz <= len && ph.p_filesz > 1)
				d->interp = strndup(img + ph.p_offset, ph.p_filesz - 1);
		}
	}
	while ((scn = elf_nextscn(h.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1);
		     i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(h.e, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED && d->nneeded < ELF_MAX_NEEDED)
				d->needed[d->nneeded++] = strdup(s);
			else if (dyn.d_tag == DT_RPATH && !d->rpath)
				d->rpath = dup_or_null(s);
			else if (dyn.d_tag == DT_RUNPATH && !d->runpath)
				d->runpath = dup_or_null(s);
		}
	}
	elf_close(&h);
	return 0;
}

void elf_free_deps(struct elf_deps *d)
{
	for (int i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
	free(d->rpath);
	free(d->runpath);
	free(d->interp);
	memset(d, 0, sizeof(*d));
}

/* the file offset of virtual address v, from the loadable segments */
static uint64_t vaddr_to_offset(Elf *e, uint64_t v)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (v >= ph.p_vaddr && v < ph.p_vaddr + ph.p_filesz)
			return v - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

int elf_for_each_func(Elf *e, int (*fn)(const struct elf_func *f, void *ctx), void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < count; i++) {
			struct elf_func f;
			GElf_Sym sym;
			int type, bind, rc;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			f.name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!f.name || !*f.name)
				continue;
			bind = GELF_ST_BIND(sym.st_info);
			f.value = sym.st_value;
			f.size = sym.st_size;
			f.bind = bind == STB_GLOBAL ? ELF_BIND_GLOBAL
				 : bind == STB_WEAK ? ELF_BIND_WEAK
						    : ELF_BIND_LOCAL;
			f.ifunc = type == STT_GNU_IFUNC;
			f.from_symtab = sh.sh_type == SHT_SYMTAB;
			rc = fn(&f, ctx);
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct offsets_ctx {
	Elf *e;
	const char *const *names;
	int n, found;
	uint64_t *offsets;
};

static int match_offset(const struct elf_func *f, void *p)
{
	struct offsets_ctx *c = p;

	if (f->ifunc) /* a resolver, not the function it picks */
		return 0;
	for (int k = 0; k < c->n; k++) {
		if (c->offsets[k] || strcmp(f->name, c->names[k]))
			continue;
		c->offsets[k] = vaddr_to_offset(c->e, f->value);
		c->found += c->offsets[k] != 0;
	}
	return 0;
}

int elf_func_offsets(const char *path, const char *const *names, int n, uint64_t *offsets)
{
	struct offsets_ctx c = { .names = names, .n = n, .offsets = offsets };
	struct elf_handle h;
	int err;

	memset(offsets, 0, (size_t)n * sizeof(*offsets));
	err = elf_open(path, &h);
	if (err)
		return err;
	c.e = h.e;
	elf_for_each_func(h.e, match_offset, &c);
	elf_close(&h);
	return c.found;
}

bool elf_defines(const char *path, const char *name)
{
	uint64_t off;

	return elf_func_offsets(path, &name, 1, &off) == 1;
}
