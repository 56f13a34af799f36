/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* System call names by number, for this architecture. */
#ifndef TOPSPROF_SYSCALLS_H
#define TOPSPROF_SYSCALLS_H

#include <stdint.h>

/* the name, or NULL for a number this build does not know */
const char *syscall_name(uint64_t nr);

#endif
