// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "target/discover.h"
#include "lib/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool missing(const struct discovery *d)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!d->libs[i].t.path[0])
			return true;
	return false;
}

/* findlib_find for the libraries not found yet, under ctx->root */
static void find_from(struct findlib_ctx *ctx, const char *exe, struct discovery *d)
{
	struct findlib_target t[DISCOVER_MAX_LIBS];

	for (unsigned i = 0; i < d->n; i++)
		t[i] = d->libs[i].t;
	findlib_find(ctx, exe, t, (int)d->n);
	for (unsigned i = 0; i < d->n; i++)
		if (!d->libs[i].t.path[0])
			d->libs[i].t = t[i];
}

/* the libraries a running process has mapped, seen through /proc/PID/root (containers); one
 * replaced on disk since (an upgrade while it runs) through /proc/PID/map_files, the mapped file
 * itself */
static void mapped_libraries(pid_t pid, struct discovery *d)
{
	static const char deleted[] = " (deleted)";
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		size_t len;
		bool gone;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		len = strlen(file);
		gone = len > sizeof(deleted) - 1 &&
		       !strcmp(file + len - (sizeof(deleted) - 1), deleted);
		if (gone)
			file[len - (sizeof(deleted) - 1)] = '\0';
		for (unsigned i = 0; i < d->n; i++) {
			struct findlib_target *t = &d->libs[i].t;

			if (t->path[0] || !findlib_matches(file, t->soname))
				continue;
			if (gone) /* the range the line begins with names it there */
				snprintf(t->path, sizeof(t->path), "/proc/%d/map_files/%.*s",
					 (int)pid, (int)strcspn(line, " "), line);
			else
				snprintf(t->path, sizeof(t->path), "/proc/%d/root%s", (int)pid,
					 file);
		}
	}
	if (f)
		fclose(f);
}

/* the runtime files on this host: those running processes have mapped, and where the dynamic
 * loader or the vendor's directories would have them by name */
static void host_libraries(struct discovery *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	while (dir && (de = readdir(dir)) && missing(d)) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!*end && pid > 0 && pid != getpid())
			mapped_libraries((pid_t)pid, d);
	}
	if (dir)
		closedir(dir);
	for (unsigned i = 0; i < d->n; i++) {
		struct findlib_target *t = &d->libs[i].t;
		char path[PATH_MAX];
		const char *p = d->libs[i].rt->dirs;

		if (!t->path[0] && !findlib_ldcache("", t->soname, path, sizeof(path)))
			snprintf(t->path, sizeof(t->path), "%s", path);
		while (!t->path[0] && p && *p) {
			size_t len = strcspn(p, ":");

			snprintf(path, sizeof(path), "%.*s/%s", (int)len, p, t->soname);
			if (!access(path, R_OK))
				snprintf(t->path, sizeof(t->path), "%s", path);
			p += len + (p[len] == ':');
		}
	}
}

/* the runtime of an attached process: mapped, linked in, or where it would be dlopen()ed */
static void attached_libraries(pid_t pid, struct discovery *d)
{
	char root[64], link[64], target[PATH_MAX];
	struct findlib_ctx ctx = { .root = root };
	ssize_t k;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	k = readlink(link, target, sizeof(target) - 1);
	target[k > 0 ? k : 0] = '\0';
	snprintf(d->exe, sizeof(d->exe), "%s", target);
	mapped_libraries(pid, d);
	if (missing(d) && k > 0)
		find_from(&ctx, target, d);
}

/* the vendor directories of every runtime, for the error message */
static void vendor_dirs(char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (unsigned r = 0; r < runtime_count() && used < len; r++)
		if (runtime_get(r)->dirs)
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
						 runtime_get(r)->dirs);
	if (!used) /* no runtime names any */
		snprintf(out, len, "no vendor directory");
}

/* --runtime-lib PATH: the library of the runtime whose file name it has (else the first
 * runtime's), and its companions beside it when not found otherwise */
static int named_runtime(struct discovery *d, const char *path)
{
	const char *slash = strrchr(path, '/');
	unsigned k = 0;

	if (access(path, R_OK)) {
		pr_error("--runtime-lib: %s: %s", path, strerror(errno));
		return 1;
	}
	for (unsigned i = 0; i < d->n; i++)
		if (d->libs[i].lib->domain == DOM_RUNTIME &&
		    findlib_matches(path, d->libs[i].t.soname)) {
			k = i;
			break;
		}
	snprintf(d->libs[k].t.path, sizeof(d->libs[k].t.path), "%s", path);
	d->libs[k].t.in_executable = false;
	for (unsigned i = 0; i < d->n; i++) {
		char beside[PATH_MAX];

		if (d->libs[i].rt != d->libs[k].rt || d->libs[i].t.path[0])
			continue;
		snprintf(beside, sizeof(beside), "%.*s/%s", slash ? (int)(slash - path) : 1,
			 slash ? path : ".", d->libs[i].t.soname);
		if (!access(beside, R_OK))
			snprintf(d->libs[i].t.path, sizeof(d->libs[i].t.path), "%s", beside);
	}
	return 0;
}

static int attach_target(struct discovery *d, pid_t pid, struct findlib_ctx *ctx)
{
	char maps[64], dirs[512];
	int fd;

	if (kill(pid, 0) && errno == ESRCH) {
		pr_error("--attach-pid %d: no such process", (int)pid);
		return 1;
	}
	/* what the kernel lets this user read of it is what it lets them trace */
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	fd = open(maps, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		pr_error("--attach-pid %d: this user may not trace it (%s)", (int)pid,
			 strerror(errno));
		return 1;
	}
	if (fd >= 0)
		close(fd);
	attached_libraries(pid, d);
	vendor_dirs(dirs, sizeof(dirs));
	snprintf(ctx->looked, sizeof(ctx->looked), "its maps and its program's search path, %s",
		 dirs);
	return 0;
}

/* the runtimes' names, for the error message: "the GCU runtime (libtopsrt.so)" */
static void runtime_names(const struct discovery *d, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, "%s (",
				       runtime_count() == 1 ? runtime_get(0)->what : "a runtime");

	for (unsigned i = 0, n = 0; i < d->n && used < len; i++)
		if (d->libs[i].lib->domain == DOM_RUNTIME)
			used += (size_t)snprintf(out + used, len - used, "%s%.*s", n++ ? ", " : "",
						 (int)findlib_prefix_len(d->libs[i].t.soname),
						 d->libs[i].t.soname);
	if (used < len)
		snprintf(out + used, len - used, ")");
}

static void debug_found(const struct discovery *d)
{
	char line[4096];
	size_t used = (size_t)snprintf(line, sizeof(line), "application %s", d->exe);

	for (unsigned i = 0; i < d->n && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "; %s %s%s",
					 api_domain_name(d->libs[i].lib->domain),
					 d->libs[i].t.path[0] ? d->libs[i].t.path : "-",
					 d->libs[i].t.in_executable ? " (linked in)" : "");
	pr_debug("%s", line);
}

int discover(struct discovery *d, const struct discover_req *q)
{
	struct findlib_ctx ctx = { .root = "", .ld_library_path = getenv("LD_LIBRARY_PATH") };
	const char *what = q->mode == DISCOVER_LAUNCH ? q->argv0 : "the host";
	char buf[32], names[512], dirs[512];
	bool any = false;
	int err;

	memset(d, 0, sizeof(*d));
	for (unsigned r = 0; r < runtime_count(); r++) {
		const struct runtime *rt = runtime_get(r);

		for (unsigned l = 0; l < rt->nlibs && d->n < DISCOVER_MAX_LIBS; l++, d->n++) {
			d->libs[d->n].rt = rt;
			d->libs[d->n].lib = &rt->libs[l];
			d->libs[d->n].t = (struct findlib_target){
				.soname = rt->libs[l].soname,
				.probe_symbol = rt->libs[l].probe_symbol,
				.vendor_dirs = rt->dirs,
			};
		}
	}
	if (q->mode == DISCOVER_ATTACH) {
		if (attach_target(d, q->pid, &ctx))
			return 1;
		snprintf(buf, sizeof(buf), "process %d", (int)q->pid);
		what = buf;
	} else if (q->mode == DISCOVER_HOST) {
		if (!q->runtime_lib)
			host_libraries(d);
		vendor_dirs(dirs, sizeof(dirs));
		snprintf(ctx.looked, sizeof(ctx.looked),
			 "the maps of running processes, /etc/ld.so.cache, %s", dirs);
	} else {
		err = findlib_resolve_exe(q->argv0, getenv("PATH"), d->exe, sizeof(d->exe));
		if (err) {
			pr_error("cannot run '%s': %s", q->argv0,
				 err == -ENOENT && !strchr(q->argv0, '/')
					 ? "not found (looked in PATH)"
					 : strerror(-err));
			return 1;
		}
		find_from(&ctx, d->exe, d);
	}
	if (q->runtime_lib && named_runtime(d, q->runtime_lib))
		return 1;
	for (unsigned i = 0; i < d->n; i++)
		any |= d->libs[i].lib->domain == DOM_RUNTIME && d->libs[i].t.path[0];
	if (q->want_runtime && !any) {
		runtime_names(d, names, sizeof(names));
		if (!q->runtime_optional) {
			pr_error("cannot find %s that '%s' uses: not linked in, not a dependency, "
				 "and not in %s; name it with --runtime-lib PATH",
				 names, what, ctx.looked);
			return 1;
		}
		pr_warn("cannot find %s that '%s' uses (not linked in, not a dependency, and not in "
			"%s): its calls are not traced, the samplers run; name it with --runtime-lib "
			"PATH",
			names, what, ctx.looked);
	}
	debug_found(d);
	return 0;
}
