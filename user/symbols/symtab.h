/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The function symbols of one ELF file, for turning sampled addresses into names: .symtab, else
 * .dynsym, plus the symbols of a stripped file's embedded MiniDebugInfo (.gnu_debugdata) and of
 * its separate debug file (by build-id, under $TOPSPROF_DEBUG_DIR or /usr/lib/debug), with C++
 * names demangled. Lookups take the file's link-time (ELF) virtual addresses; a sampled
 * address becomes one through its mapping's file offset (symtab_offset_to_vaddr). */
#ifndef TOPSPROF_SYMTAB_H
#define TOPSPROF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/elfinfo.h"

struct sym {
	uint64_t addr;
	uint64_t size; /* 0: unknown, it runs to the next symbol */
	char *name;    /* demangled when it was a C++ name */
};

struct symtab {
	struct sym *syms; /* sorted by addr, one per address */
	size_t nsyms;
	struct elf_segs segs; /* PT_LOAD */
	bool has_symtab;      /* a full .symtab, not only exported names */
	bool has_debugdata;   /* symbols came from .gnu_debugdata too */
	bool has_debugfile;   /* ... and from a separate debug file, found by build-id */
};

/* 0, -ENOEXEC when path is not an ELF file, -EBADMSG when .gnu_debugdata is corrupt, or
 * another -errno */
int symtab_load(const char *path, struct symtab **out);
void symtab_free(struct symtab *t);

/* The name of the function holding vaddr, and vaddr's distance from its start; NULL when no
 * known function holds it. */
const char *symtab_find(const struct symtab *t, uint64_t vaddr, uint64_t *delta);

/* The ELF virtual address at file offset off; false when no loadable segment holds it. */
bool symtab_offset_to_vaddr(const struct symtab *t, uint64_t off, uint64_t *vaddr);

/* name demangled when it is a C++ (Itanium ABI) name, else a copy of it; NULL on ENOMEM */
char *sym_demangle(const char *name);

#endif
