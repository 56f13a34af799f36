// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: the symbolizer opens whatever files the profiled processes mapped, so an ELF
 * file (and the xz stream in its .gnu_debugdata) is hostile input. Seeded with the unit tests'
 * fixtures. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct symtab *t;
	char path[64];
	uint64_t v, d;

	if (fd < 0)
		fd = memfd_create("elf", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (symtab_load(path, &t))
		return 0;
	for (size_t i = 0; i < t->nsyms; i++) {
		symtab_find(t, t->syms[i].addr, &d);
		symtab_find(t, t->syms[i].addr - 1, &d);
	}
	if (symtab_offset_to_vaddr(t, size / 2, &v))
		symtab_find(t, v, &d);
	symtab_free(t);
	return 0;
}
