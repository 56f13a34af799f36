// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/kfuncs.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int kfuncs_traceable_load(struct kfuncs_traceable *t, const char *path, const char *module)
{
	FILE *f = fopen(path, "re");
	char line[512];
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *mod, *end;
		size_t l = strcspn(line, " \t\n");

		/* "name [module]": the module's, or "name": the core kernel's */
		mod = line + l + strspn(line + l, " \t");
		line[l] = '\0';
		if (*mod == '[') {
			end = strchr(++mod, ']');
			if (!end)
				continue;
			*end = '\0';
		} else {
			mod = NULL;
		}
		if (!l || (module && (!mod || strcmp(mod, module))))
			continue;
		if (t->n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			char **nv = realloc(t->names, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			t->names = nv;
			cap = ncap;
		}
		t->names[t->n] = strdup(name);
		if (!t->names[t->n])
			goto nomem;
		t->n++;
	}
	fclose(f);
	if (t->n > 1)
		qsort(t->names, t->n, sizeof(*t->names), cmp_name);
	return 0;
nomem:
	fclose(f);
	kfuncs_traceable_free(t);
	return -ENOMEM;
}

int kfuncs_traceable_find(struct kfuncs_traceable *t, const char *module, const char **path)
{
	static const char *const places[] = {
		"/sys/kernel/tracing/available_filter_functions",
		"/sys/kernel/debug/tracing/available_filter_functions",
	};
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		err = kfuncs_traceable_load(t, places[i], module);
		if (!err) {
			*path = places[i];
			return 0;
		}
	}
	return err;
}

bool kfuncs_traceable_has(const struct kfuncs_traceable *t, const char *name)
{
	return t->n && bsearch(&name, t->names, t->n, sizeof(*t->names), cmp_name);
}

void kfuncs_traceable_free(struct kfuncs_traceable *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

bool kfuncs_never_probed(const char *name)
{
	static const char *const prefixes[] = { "__pfx_", "__cfi_", "__SCT__" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return strstr(name, ".cold") || !strcmp(name, "init_module") ||
	       !strcmp(name, "cleanup_module");
}

/* the kernel's BTF object named module: its descriptor, or -errno */
static int module_btf_fd(const char *module, __u32 *id_out)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info;
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue; /* gone meanwhile */
		memset(&info, 0, sizeof(info));
		info.name = (__u64)(uintptr_t)name;
		info.name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, module)) {
			*id_out = id;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

int kfuncs_btf_open(struct kfuncs_btf *b, const char *module)
{
	__u32 id = 0;
	int err;

	b->obj_fd = -1;
	b->btf = NULL;
	b->vmlinux = btf__load_vmlinux_btf();
	if (!b->vmlinux)
		return -errno;
	if (!module) {
		b->btf = b->vmlinux;
		return 0;
	}
	b->obj_fd = module_btf_fd(module, &id);
	if (b->obj_fd < 0) {
		err = b->obj_fd;
		kfuncs_btf_close(b);
		return err;
	}
	b->btf = btf__load_from_kernel_by_id_split(id, b->vmlinux);
	if (!b->btf) {
		err = -errno;
		kfuncs_btf_close(b);
		return err;
	}
	return 0;
}

int kfuncs_btf_func(const struct kfuncs_btf *b, const char *name)
{
	int id = b->btf ? btf__find_by_name_kind(b->btf, name, BTF_KIND_FUNC) : -ENOENT;

	return id > 0 ? id : -ENOENT;
}

void kfuncs_btf_close(struct kfuncs_btf *b)
{
	if (b->btf != b->vmlinux)
		btf__free(b->btf);
	btf__free(b->vmlinux);
	if (b->obj_fd >= 0)
		close(b->obj_fd);
	b->btf = b->vmlinux = NULL;
	b->obj_fd = -1;
}

size_t kfuncs_memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return (size_t)v;
}

int kfuncs_attach_copy(const struct bpf_program *loaded, const struct kfuncs_btf *b, int btf_id,
		       size_t *memlock)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = bpf_program__expected_attach_type(loaded),
		    .attach_btf_id = (__u32)btf_id,
		    .attach_btf_obj_fd = b->obj_fd >= 0 ? b->obj_fd : 0);
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, bpf_program__name(loaded), "Dual BSD/GPL",
			     bpf_program__insns(loaded), bpf_program__insn_cnt(loaded), &o);
	if (prog < 0)
		return prog;
	if (memlock)
		*memlock = kfuncs_memlock(prog);
	/* the link holds the program: its own descriptor is not kept */
	link = bpf_raw_tracepoint_open(NULL, prog);
	close(prog);
	return link;
}
