/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What topsprof needs to know of an ELF file: its dependencies and search paths, and where its
 * functions are (file offsets, as uprobes want them). */
#ifndef TOPSPROF_ELFINFO_H
#define TOPSPROF_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_MAX_NEEDED 64

typedef struct Elf Elf;
typedef struct Elf_Scn Elf_Scn;

struct elf_handle {
	int fd;
	Elf *e;
};

/* 0, -ENOEXEC when path is not an ELF file, or another -errno */
int elf_open(const char *path, struct elf_handle *h);
void elf_close(struct elf_handle *h);

/* the section named name, or NULL */
Elf_Scn *elf_find_section(Elf *e, const char *name);

/* A file's loadable segments (PT_LOAD), which tell its virtual addresses from file offsets. */
#define ELF_MAX_SEGS 16

struct elf_seg {
	uint64_t vaddr, offset, filesz;
};

struct elf_segs {
	struct elf_seg v[ELF_MAX_SEGS];
	int n;
};

void elf_read_segments(Elf *e, struct elf_segs *s);
/* The ELF virtual address at file offset off; false when no loadable segment holds it. */
bool elf_segs_vaddr(const struct elf_segs *s, uint64_t off, uint64_t *vaddr);

struct elf_deps {
	int nneeded;
	char *needed[ELF_MAX_NEEDED];
	char *rpath;   /* DT_RPATH, or NULL */
	char *runpath; /* DT_RUNPATH, or NULL */
	char *interp;  /* PT_INTERP, or NULL */
};

/* 0, -ENOEXEC when path is not an ELF file, or another -errno */
int elf_read_deps(const char *path, struct elf_deps *d);
void elf_free_deps(struct elf_deps *d);

enum elf_bind {
	ELF_BIND_GLOBAL,
	ELF_BIND_WEAK,
	ELF_BIND_LOCAL
};

struct elf_func {
	const char *name; /* in the ELF image: valid while it is open */
	uint64_t value, size;
	enum elf_bind bind;
	bool ifunc;	  /* STT_GNU_IFUNC: value is its resolver */
	bool from_symtab; /* .symtab, else .dynsym */
};

/* Call fn for every defined, named function symbol of e's .symtab and .dynsym; a non-zero return
 * of fn stops the walk and is returned. */
int elf_for_each_func(Elf *e, int (*fn)(const struct elf_func *f, void *ctx), void *ctx);

/* File offsets of the named functions defined in path (.dynsym and .symtab); offsets[i] is 0
 * when names[i] is not defined there. Returns how many were found, or -errno. */
int elf_func_offsets(const char *path, const char *const *names, int n, uint64_t *offsets);

/* true when path defines function name (an executable with the runtime linked in) */
bool elf_defines(const char *path, const char *name);

#endif
