/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Kernel function symbols, from /proc/kallsyms: a sampled kernel address to its function and
 * module. */
#ifndef TOPSPROF_KSYMS_H
#define TOPSPROF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;
	const char *module; /* points into struct ksyms' module names; NULL for the core kernel */
};

struct ksyms {
	struct ksym *v; /* sorted by addr */
	size_t n, cap;
	char **modules;
	size_t nmodules, capmodules;
};

/* Read a kallsyms file (text symbols only). 0; -EPERM when its addresses are all hidden
 * (kptr_restrict, or not root); -EINVAL on a malformed line; another -errno. */
int ksyms_load(struct ksyms *k, const char *path);
void ksyms_free(struct ksyms *k);

/* The function holding addr, and addr's distance from its start; NULL below the first. */
const struct ksym *ksyms_find(const struct ksyms *k, uint64_t addr, uint64_t *delta);

#endif
