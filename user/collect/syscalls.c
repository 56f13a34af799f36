// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/syscalls.h"

#include <stddef.h>

static const char *const names[] = {
#include "syscall_names.h" /* generated from asm/unistd_64.h */
};

/* newer than the headers of Debian 12 (x86-64 numbers) */
static const struct {
	uint64_t nr;
	const char *name;
} newer[] = { { 335, "uretprobe" }, { 336, "uprobe" } };

const char *syscall_name(uint64_t nr)
{
	if (nr < sizeof(names) / sizeof(names[0]) && names[nr])
		return names[nr];
	for (size_t i = 0; i < sizeof(newer) / sizeof(newer[0]); i++)
		if (newer[i].nr == nr)
			return newer[i].name;
	return NULL;
}
