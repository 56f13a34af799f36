// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "target/findlib.h"
#include "target/elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LIBS 256

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu",
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
};

static void note(struct findlib_ctx *c, const char *what)
{
	size_t used = strlen(c->looked);

	if (strstr(c->looked, what))
		return;
	snprintf(c->looked + used, sizeof(c->looked) - used, "%s%s", used ? ", " : "", what);
}

/* path (as the program sees it) under root, for topsprof to open */
static const char *rooted(const char *root, const char *path, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s%s", root, path) >= (int)len)
		buf[0] = '\0';
	return buf;
}

/* whether path is a file under root; out gets path as the program sees it */
static bool is_file(const char *root, const char *path, char *out, size_t len)
{
	char full[PATH_MAX];
	struct stat st;

	if (stat(rooted(root, path, full, sizeof(full)), &st) || !S_ISREG(st.st_mode))
		return false;
	return snprintf(out, len, "%s", path) < (int)len;
}

int findlib_resolve_exe(const char *argv0, const char *path_env, char *out, size_t len)
{
	const char *p;

	if (strchr(argv0, '/')) {
		struct stat st;

		if (stat(argv0, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (access(argv0, X_OK))
			return -errno;
		return snprintf(out, len, "%s", argv0) >= (int)len ? -ENAMETOOLONG : 0;
	}
	p = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;

		if (snprintf(out, len, "%.*s/%s", (int)(dl ? dl : 1), dl ? p : ".", argv0) <
			    (int)len &&
		    !stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return 0;
		p += dl + (colon ? 1 : 0);
	}
	return -ENOENT;
}

/* ld.so.cache, format "glibc-ld.so.cache1.1" */
struct cache_hdr {
	char magic[17];
	char version[3];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t ext_offset;
	uint32_t unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

int findlib_ldcache(const char *root, const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	const struct cache_hdr *h;
	struct stat st;
	void *map;
	int fd, rc = -ENOENT;

	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*h)) {
		close(fd);
		return -ENOENT;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	h = map;
	if (!memcmp(h->magic, "glibc-ld.so.cache", 17) && !memcmp(h->version, "1.1", 3) &&
	    sizeof(*h) + (uint64_t)h->nlibs * sizeof(struct cache_entry) <= (uint64_t)st.st_size) {
		const struct cache_entry *e = (const void *)(h + 1);

		for (uint32_t i = 0; i < h->nlibs && rc; i++) {
			const char *key = (const char *)map + e[i].key;
			const char *val = (const char *)map + e[i].value;

			if (e[i].key >= st.st_size || e[i].value >= st.st_size ||
			    !memchr(key, 0, (size_t)(st.st_size - e[i].key)) ||
			    !memchr(val, 0, (size_t)(st.st_size - e[i].value)))
				continue;
			if ((e[i].flags & 0xff) == 3 /* ELF libc6 */ && !strcmp(key, name) &&
			    is_file(root, val, out, len))
				rc = 0;
		}
	}
	munmap(map, (size_t)st.st_size);
	return rc;
}

/* one colon-separated search path, $ORIGIN expanded to origin */
static bool search_list(struct findlib_ctx *c, const char *list, const char *origin,
			const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *p = list;

	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		char full[PATH_MAX + 256];

		if (dl >= sizeof(dir))
			dl = sizeof(dir) - 1;
		memcpy(dir, p, dl);
		dir[dl] = '\0';
		if (!strncmp(dir, "$ORIGIN", 7) || !strncmp(dir, "${ORIGIN}", 9)) {
			const char *rest = dir + (dir[1] == '{' ? 9 : 7);
			char tmp[PATH_MAX];

			snprintf(tmp, sizeof(tmp), "%s%s", origin, rest);
			snprintf(dir, sizeof(dir), "%s", tmp);
		}
		if (*dir) {
			note(c, dir);
			snprintf(full, sizeof(full), "%s/%s", dir, name);
			if (is_file(c->root, full, out, len))
				return true;
		}
		p += dl + (colon ? 1 : 0);
	}
	return false;
}

struct requester {
	char origin[PATH_MAX]; /* its directory */
	struct elf_deps deps;
};

/* where ld.so finds a DT_NEEDED name for requester (exe: the executable, for its RPATH) */
static bool resolve_needed(struct findlib_ctx *c, const char *name, const struct requester *req,
			   const struct requester *exe, char *out, size_t len)
{
	if (strchr(name, '/'))
		return is_file(c->root, name, out, len);
	if (!req->deps.runpath) {
		if (search_list(c, req->deps.rpath, req->origin, name, out, len))
			return true;
		if (exe && exe != req && !exe->deps.runpath &&
		    search_list(c, exe->deps.rpath, exe->origin, name, out, len))
			return true;
	}
	if (search_list(c, c->ld_library_path, req->origin, name, out, len))
		return true;
	if (search_list(c, req->deps.runpath, req->origin, name, out, len))
		return true;
	note(c, "/etc/ld.so.cache");
	if (!findlib_ldcache(c->root, name, out, len))
		return true;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++)
		if (search_list(c, default_dirs[i], "", name, out, len))
			return true;
	return false;
}

static void origin_of(const char *path, char *origin, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(origin, len, ".");
	else
		snprintf(origin, len, "%.*s", (int)(slash - path), path);
}

size_t findlib_prefix_len(const char *soname)
{
	const char *so = strstr(soname, ".so");

	return so ? (size_t)(so + 3 - soname) : strlen(soname);
}

bool findlib_matches(const char *path, const char *soname)
{
	const char *base = strrchr(path, '/');

	return !strncmp(base ? base + 1 : path, soname, findlib_prefix_len(soname));
}

int findlib_find(struct findlib_ctx *c, const char *exe_path, struct findlib_target *t, int n)
{
	struct requester *q = calloc(MAX_LIBS, sizeof(*q));
	char(*seen)[PATH_MAX] = calloc(MAX_LIBS, PATH_MAX), full[PATH_MAX];
	int nq = 0, found = 0;

	c->looked[0] = '\0';
	if (!q || !seen) {
		free(q);
		free(seen);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		t[i].path[0] = '\0';
		t[i].in_executable = false;
	}
	/* the executable: the runtime may be linked in */
	snprintf(seen[0], PATH_MAX, "%s", exe_path);
	origin_of(exe_path, q[0].origin, sizeof(q[0].origin));
	elf_read_deps(rooted(c->root, exe_path, full, sizeof(full)), &q[0].deps);
	nq = 1;
	for (int i = 0; i < n; i++) {
		if (elf_defines(full, t[i].probe_symbol)) {
			snprintf(t[i].path, sizeof(t[i].path), "%s", full);
			t[i].in_executable = true;
			found++;
		}
	}
	/* breadth first through DT_NEEDED, as ld.so loads them */
	for (int k = 0; k < nq && found < n; k++) {
		for (int d = 0; d < q[k].deps.nneeded && found < n; d++) {
			char path[PATH_MAX];
			bool dup = false;

			if (!resolve_needed(c, q[k].deps.needed[d], &q[k], &q[0], path,
					    sizeof(path)))
				continue;
			for (int s = 0; s < nq && !dup; s++)
				dup = !strcmp(seen[s], path);
			if (dup)
				continue;
			for (int i = 0; i < n; i++) {
				if (!t[i].path[0] && findlib_matches(path, t[i].soname)) {
					rooted(c->root, path, t[i].path, sizeof(t[i].path));
					found++;
				}
			}
			if (nq < MAX_LIBS) {
				snprintf(seen[nq], PATH_MAX, "%s", path);
				origin_of(path, q[nq].origin, sizeof(q[nq].origin));
				elf_read_deps(rooted(c->root, path, full, sizeof(full)),
					      &q[nq].deps);
				nq++;
			}
		}
	}
	/* not a dependency: what dlopen("libtopsrt.so.1") from the executable would find */
	for (int i = 0; i < n; i++) {
		char name[256], path[PATH_MAX];

		for (int v = 0; v < 2 && !t[i].path[0]; v++) {
			/* the soname, then the development link's name */
			snprintf(name, sizeof(name), "%.*s",
				 (int)(v ? findlib_prefix_len(t[i].soname) : strlen(t[i].soname)),
				 t[i].soname);
			if (resolve_needed(c, name, &q[0], &q[0], path, sizeof(path)) ||
			    search_list(c, t[i].vendor_dirs, "", name, path, sizeof(path))) {
				rooted(c->root, path, t[i].path, sizeof(t[i].path));
				found++;
			}
		}
	}
	for (int k = 0; k < nq; k++)
		elf_free_deps(&q[k].deps);
	free(q);
	free(seen);
	return found;
}
