/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which kernel functions can be probed, and how (the KMD's functions, or the filter's): the
 * functions ftrace can patch (tracefs' available_filter_functions, which fentry and kprobes on a
 * function's entry both need), the functions BTF describes (fentry needs them), and one loaded
 * fentry/fexit program copied onto each function, so that a function costs two programs and no
 * maps of its own. */
#ifndef TOPSPROF_KFUNCS_H
#define TOPSPROF_KFUNCS_H

#include <stdbool.h>
#include <stddef.h>

/* the names ftrace can patch in one module (or in the whole kernel) */
struct kfuncs_traceable {
	char **names; /* sorted */
	size_t n;
};

/* Read an available_filter_functions file ("name" for the core kernel, "name [module]" for a
 * module's, one a line): the names of module (NULL: every name, the core kernel's and every
 * module's). 0, or -errno (-ENOENT when the file is missing). */
int kfuncs_traceable_load(struct kfuncs_traceable *t, const char *path, const char *module);
/* the first of the usual places (tracefs, under debugfs) that holds the list: 0 with its path,
 * or -errno (tracefs not mounted) */
int kfuncs_traceable_find(struct kfuncs_traceable *t, const char *module, const char **path);
bool kfuncs_traceable_has(const struct kfuncs_traceable *t, const char *name);
void kfuncs_traceable_free(struct kfuncs_traceable *t);

/* Names no probe can take whatever the kernel (for when the traceable list cannot be read): the
 * padding before a function (__pfx_, __cfi_), static call trampolines (__SCT__), the cold parts
 * a compiler splits off (.cold), a module's init and exit functions (init_module,
 * cleanup_module). */
bool kfuncs_never_probed(const char *name);

/* the BTF of a module (or of the core kernel) and its object in the kernel, for fentry */
struct btf;
struct kfuncs_btf {
	struct btf *vmlinux, *btf; /* btf: the module's (split on vmlinux), or vmlinux */
	int obj_fd;		   /* the module's BTF object; -1 for the core kernel */
};

/* 0, or -errno (-ENOENT: the module has no BTF) */
int kfuncs_btf_open(struct kfuncs_btf *b, const char *module);
/* the BTF id of the function name, or -ENOENT */
int kfuncs_btf_func(const struct kfuncs_btf *b, const char *name);
void kfuncs_btf_close(struct kfuncs_btf *b);

/* A copy of a loaded fentry or fexit program (its instructions, relocated, with the maps of its
 * object) loaded for the function btf_id of b and attached: the link's descriptor (the copy
 * lives while it is open), or -errno. *memlock (when not NULL) gets the copy's kernel memory. */
struct bpf_program;
int kfuncs_attach_copy(const struct bpf_program *loaded, const struct kfuncs_btf *b, int btf_id,
		       size_t *memlock);

/* the kernel memory a BPF map or program holds (its fdinfo's memlock), 0 when not told */
size_t kfuncs_memlock(int fd);

#endif
