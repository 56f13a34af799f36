// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/kprof.h"

#include "collect/bpfmaps.h"
#include "collect/collector.h"
#include "gcu_readout.h"
#include "kernel.skel.h"
#include "collect/bpfstub.h"
#include "collect/kfuncs.h"
#include "kmd.skel.h"
#include "symbols/ksyms.h"
#include "lib/log.h"
#include "symbols/proccache.h"
#include "symbols/stackname.h"
#include "symbols/symbolize.h"
#include "collect/proctree.h"
#include "collect/syscalls.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_TARGETS  256		   /* KMD functions probed at most */
#define FENTRY_CHECK "security_file_ioctl" /* a kernel function to load fentry against */
#define TRACEPOINTS  "tracepoints (raw_syscalls, sched_switch)"
#define NTP	     4 /* sys_enter, sys_exit, sched_switch, sched_process_exit */

struct kprof {
	struct kernel_bpf *skel;
	struct bpf_link *tp[NTP];
	/* the fentry/fexit programs (loaded once, copied onto each function), the kprobe ones */
	struct kmd_bpf *kmd[2];
	size_t nkmd;
	struct bpf_link **links; /* kprobes */
	size_t nlinks;
	int *fds; /* the fentry/fexit copies' links, the kprobe_multi links */
	size_t nfds;
	size_t ncopies, copies_memlock; /* the fentry/fexit copies, and their kernel memory */
	struct proc_watch procs;
	struct ksyms ks;
	bool ks_loaded;
	char mechanism[160];
	struct kprof_probes probes;
	bool func_ip; /* bpf_get_func_ip (Linux 5.15); else kprobes through stubs, no fentry */
	uint64_t
		kretprobe_tramp; /* where the kernel's unwinder may stop (kc_common.h: kc_stitch) */
	bool find_vma; /* bpf_find_vma (Linux 5.17): sys_enter is kc_sys_enter, else _novma */
	struct bpf_program *sys_enter;
};

int kprof_function_ranges(const struct ksyms *ks, const char *list, uint64_t *start, uint64_t *end,
			  uint32_t max, uint32_t *n, char *bad, size_t len)
{
	const char *p = list;

	*n = 0;
	while (*p) {
		size_t l = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; l && i < ks->n; i++) {
			if (strlen(ks->v[i].name) != l || strncmp(ks->v[i].name, p, l))
				continue;
			if (*n >= max)
				return -E2BIG;
			size_t next = i + 1;

			/* aliases share the address: the function ends at the next one that does not */
			while (next < ks->n && ks->v[next].addr == ks->v[i].addr)
				next++;
			start[*n] = ks->v[i].addr;
			end[*n] = next < ks->n ? ks->v[next].addr : ks->v[i].addr + 1;
			(*n)++;
			found = true;
		}
		if (!found) {
			snprintf(bad, len, "%.*s", (int)l, p);
			return -ENOENT;
		}
		p += l + (p[l] == ',');
	}
	return 0;
}

static bool add_file(int map_fd, const char *path)
{
	struct kc_file key = { 0, 0, 0 };
	struct stat st;
	__u8 one = 1;

	if (stat(path, &st))
		return false;
	key.ino = st.st_ino;
	key.dev = major(st.st_dev) << 20 | minor(st.st_dev);
	if (!bpf_map_lookup_elem(map_fd, &key, &one))
		return false; /* named twice (the driver's device nodes are /dev/gcu* too) */
	if (bpf_map_update_elem(map_fd, &key, &one, BPF_ANY))
		return false;
	pr_debug("kernel callstacks: driver file %s", path);
	return true;
}

/* the driver's files: the devices' (made by the driver when missing), and /dev/gcu* */
static void add_driver_files(struct kprof *k)
{
	int fd = bpf_map__fd(k->skel->maps.driver_files), count = gcu_ro_device_count(), added = 0;
	glob_t g = { 0 };
	char path[4096];

	for (int d = 0; d < count; d++) {
		struct gcu_ro_dev *dev;
		char err[256];

		if (gcu_ro_device_path(d, path, sizeof(path)))
			continue;
		if (access(path, F_OK) && !gcu_ro_open(d, &dev, err, sizeof(err)))
			gcu_ro_close(dev);
		added += add_file(fd, path);
	}
	if (!glob("/dev/gcu*", 0, NULL, &g))
		for (size_t i = 0; i < g.gl_pathc; i++)
			added += add_file(fd, g.gl_pathv[i]);
	globfree(&g);
	pr_debug("kernel callstacks: %d driver files", added);
}

/* a kmd.bpf.c object counting into the kernel object's maps (and into kmd_calls of share, when
 * given): with its kprobe programs (and kprobe_multi ones, when multi), or with its fentry
 * programs aimed at target */
static int open_kmd(struct kprof *k, const struct kprof_opts *o, bool fentry, bool multi,
		    const char *target, const struct kmd_bpf *share, struct kmd_bpf **out)
{
	struct kmd_bpf *s = kmd_bpf__open();
	int err;

	*out = NULL;
	if (!s)
		return -errno;
	s->rodata->filter = o->filter;
	s->rodata->self_tgid = (__u32)getpid();
	s->rodata->have_func_ip = k->func_ip;
	s->rodata->kc_stitch = k->skel->rodata->kc_stitch;
	s->rodata->use_syscall_slot = !getenv("TOPSPROF_NO_SYSCALL_SLOT");
	s->data->collecting = o->collecting;
	bpf_program__set_autoload(s->progs.kc_kmd_kprobe, !fentry);
	bpf_program__set_autoload(s->progs.kc_kmd_kretprobe, !fentry);
	bpf_program__set_autoload(s->progs.kc_kmd_kmulti, !fentry && multi);
	bpf_program__set_autoload(s->progs.kc_kmd_kretmulti, !fentry && multi);
	bpf_program__set_autoload(s->progs.kc_kmd_fentry, fentry);
	bpf_program__set_autoload(s->progs.kc_kmd_fexit, fentry);
	err = 0;
	if (fentry)
		err = bpf_program__set_attach_target(s->progs.kc_kmd_fentry, 0, target)
			      ?: bpf_program__set_attach_target(s->progs.kc_kmd_fexit, 0, target);
#define SHARE(m) (err = err ?: bpf_map__reuse_fd(s->maps.m, bpf_map__fd(k->skel->maps.m)))
	SHARE(tracked_pids);
	SHARE(tracked_gen); /* unused there: one map, not one per object */
	SHARE(kc_threads);
	SHARE(kc_entries);
	SHARE(kc_stacks);
	SHARE(kc_stack_counts);
	SHARE(kc_seen);
	SHARE(kc_new);
	SHARE(kc_drops);
	SHARE(kc_cpu_syscall);
	SHARE(kc_nests);
#undef SHARE
	if (share)
		err = err
			      ?: bpf_map__reuse_fd(s->maps.kmd_calls,
						   bpf_map__fd(share->maps.kmd_calls));
	if (!err)
		err = kmd_bpf__load(s);
	if (!err && !fentry && !k->func_ip) {
		int progs = bpf_map__fd(s->maps.stub_progs),
		    in = bpf_program__fd(s->progs.kc_kmd_kprobe),
		    out = bpf_program__fd(s->progs.kc_kmd_kretprobe), slot[2] = { 0, 1 };

		if (bpf_map_update_elem(progs, &slot[0], &in, BPF_ANY) ||
		    bpf_map_update_elem(progs, &slot[1], &out, BPF_ANY))
			err = -errno;
	}
	if (err) {
		kmd_bpf__destroy(s);
		return err < 0 ? err : -EINVAL;
	}
	*out = s;
	return 0;
}

static bool keep_link(struct kprof *k, struct bpf_link *l)
{
	struct bpf_link **n;

	if (!l)
		return false;
	n = realloc(k->links, (k->nlinks + 1) * sizeof(*n));
	if (!n) {
		bpf_link__destroy(l);
		return false;
	}
	k->links = n;
	k->links[k->nlinks++] = l;
	return true;
}

/* whether the module's function at ks->v[i] can be probed: not an alias of its init or exit
 * function, not a name no probe takes, and (when the kernel's list could be read) one ftrace can
 * patch */
static bool probeable(const struct ksyms *ks, size_t i, const struct kfuncs_traceable *tr)
{
	size_t a = i, z = i;

	while (a > 0 && ks->v[a - 1].addr == ks->v[i].addr)
		a--;
	while (z + 1 < ks->n && ks->v[z + 1].addr == ks->v[i].addr)
		z++;
	for (size_t j = a; j <= z; j++)
		if (kfuncs_never_probed(ks->v[j].name))
			return false;
	return !tr || kfuncs_traceable_has(tr, ks->v[i].name);
}

/* the functions to probe: the KMD module's, or the filter's; tr: the kernel's list of those
 * ftrace can patch, NULL when it could not be read. *skipped: the module's functions left out. */
static size_t targets(const struct kprof *k, const struct kprof_opts *o,
		      const struct kfuncs_traceable *tr, const char **names, unsigned long *addrs,
		      size_t max, size_t *skipped)
{
	size_t n = 0;

	*skipped = 0;
	if (o->filter == KC_FILTER_FUNCS) {
		const char *p = o->functions;

		/* kallsyms names them: each name once */
		while (*p && n < max) {
			size_t l = strcspn(p, ",");

			for (size_t i = 0; i < k->ks.n; i++)
				if (strlen(k->ks.v[i].name) == l &&
				    !strncmp(k->ks.v[i].name, p, l)) {
					if (probeable(&k->ks, i, tr)) {
						addrs[n] = (unsigned long)k->ks.v[i].addr;
						names[n++] = k->ks.v[i].name;
					} else
						pr_debug(
							"kernel callstacks: %s cannot be probed (%s)",
							k->ks.v[i].name,
							tr ? "not in available_filter_functions"
							   : "by its name");
					break;
				}
			p += l + (p[l] == ',');
		}
		return n;
	}
	for (size_t i = 0; i < k->ks.n && n < max; i++) {
		if (!k->ks.v[i].module || strcmp(k->ks.v[i].module, o->kmd_module))
			continue;
		/* each name once (aliases at one address are one function: kprobes refuse a name
		 * kallsyms gives twice) */
		bool seen = false;

		for (size_t j = 0; j < n && !seen; j++)
			seen = !strcmp(names[j], k->ks.v[i].name);
		if (seen)
			continue;
		if (probeable(&k->ks, i, tr)) {
			addrs[n] = (unsigned long)k->ks.v[i].addr;
			names[n++] = k->ks.v[i].name;
		} else {
			(*skipped)++;
		}
	}
	return n;
}

/* both programs of an object attached, or neither */
static bool attach_pair(struct kprof *k, struct bpf_link *in, struct bpf_link *out)
{
	if (!in || !out) {
		bpf_link__destroy(in);
		bpf_link__destroy(out);
		return false;
	}
	if (!keep_link(k, in)) {
		bpf_link__destroy(out);
		return false;
	}
	return keep_link(k, out);
}

/* room in k->fds for n more descriptors */
static bool fds_room(struct kprof *k, size_t n)
{
	int *fds = realloc(k->fds, (k->nfds + n) * sizeof(*fds));

	if (!fds)
		return false;
	k->fds = fds;
	return true;
}

/* a kprobe_multi link of prog on every function at addrs (returns: kretprobes), made with the
 * bare system call so that a kernel without them is no libbpf failure: its descriptor or -errno */
static int multi_link(const struct bpf_program *prog, const unsigned long *addrs, size_t n,
		      bool returns)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);

	lo.kprobe_multi.addrs = addrs;
	lo.kprobe_multi.cnt = (__u32)n;
	lo.kprobe_multi.flags = returns ? BPF_F_KPROBE_MULTI_RETURN : 0;
	return bpf_link_create(bpf_program__fd(prog), 0, BPF_TRACE_KPROBE_MULTI, &lo);
}

/* kprobe and kretprobe on every function at addrs, in one kprobe_multi link each (Linux
 * 5.18+ with CONFIG_FPROBE: one detach for all, where single kprobes go one by one): n, or 0
 * when the kernel refused (all or none) */
static size_t attach_multi(struct kprof *k, const struct kmd_bpf *s, const unsigned long *addrs,
			   size_t n)
{
	int in, out = -ENOMEM;

	if (!fds_room(k, 2))
		return 0;
	in = multi_link(s->progs.kc_kmd_kmulti, addrs, n, false);
	if (in >= 0)
		out = multi_link(s->progs.kc_kmd_kretmulti, addrs, n, true);
	if (in < 0 || out < 0) {
		if (in >= 0)
			close(in);
		pr_debug(
			"kernel callstacks: kprobe_multi refused by the kernel (%s): a kprobe each",
			strerror(-(in < 0 ? in : out)));
		return 0;
	}
	k->fds[k->nfds++] = in;
	k->fds[k->nfds++] = out;
	pr_debug("kernel callstacks: kprobes on %zu functions in one kprobe_multi link", n);
	return n;
}

/* kprobe and kretprobe on the function at addr for a kernel without bpf_get_func_ip: stubs that
 * hand addr to s's programs; both or neither. The kretprobe first: the kernel runs the handlers
 * of one address newest first, and the kretprobe's puts its trampoline in place of the caller's
 * address, which the kernel's unwinder gives back only from Linux 5.14 on. The entry's stack,
 * taken before, has the caller. */
static bool attach_stubs(struct kprof *k, const struct kmd_bpf *s, unsigned long addr)
{
	int fd[2] = { -1, -1 };

	if (!fds_room(k, 2))
		return false;
	for (int r = 1; r >= 0; r--) {
		int stub = bpf_stub_load(BPF_PROG_TYPE_KPROBE, bpf_map__fd(s->maps.stub_value),
					 bpf_map__fd(s->maps.stub_progs), (uint32_t)r, addr);

		/* by its address: a name may be another module's too, or the core kernel's */
		fd[r] = stub < 0 ? stub : perf_probe_attach(stub, false, r, NULL, addr, -1);
		if (stub >= 0)
			close(stub); /* the event holds it */
		if (fd[r] < 0) {
			if (!r)
				close(fd[1]);
			errno = -fd[r];
			return false;
		}
	}
	k->fds[k->nfds++] = fd[0];
	k->fds[k->nfds++] = fd[1];
	return true;
}

/* fentry and fexit on the function btf_id: copies of the loaded programs of t; both or neither */
static bool attach_copies(struct kprof *k, const struct kmd_bpf *t, const struct kfuncs_btf *b,
			  int btf_id, const char *name)
{
	size_t m_in = 0, m_out = 0;
	int in, out = -ENOMEM;

	if (!fds_room(k, 2))
		return false;
	in = kfuncs_attach_copy(t->progs.kc_kmd_fentry, b, btf_id, &m_in);
	if (in >= 0)
		out = kfuncs_attach_copy(t->progs.kc_kmd_fexit, b, btf_id, &m_out);
	if (in < 0 || out < 0) {
		int e = in < 0 ? in : out;

		/* 524: the kernel's ENOTSUPP, which user space has no name for */
		pr_debug("kernel callstacks: fentry/fexit on %s: %s", name,
			 e == -524 ? "not supported there (its arguments, or its BTF)"
				   : strerror(-e));
		if (in >= 0)
			close(in);
		return false;
	}
	k->fds[k->nfds++] = in;
	k->fds[k->nfds++] = out;
	k->ncopies += 2;
	k->copies_memlock += m_in + m_out;
	return true;
}

/* the kernel memory the run's BPF objects hold: their maps (each once: kmd.bpf.c's objects use
 * kernel.bpf.c's) and programs, with the copies' */
static void say_memory(const struct kprof *k)
{
	const struct bpf_object *objs[3] = { k->skel->obj };
	size_t nobj = 1, maps = 0, progs = k->copies_memlock, nmaps = 0, nprogs = k->ncopies;
	__u32 seen[64];

	for (size_t i = 0; i < k->nkmd; i++)
		objs[nobj++] = k->kmd[i]->obj;
	for (size_t i = 0; i < nobj; i++) {
		struct bpf_program *p;
		struct bpf_map *m;

		bpf_object__for_each_map(m, objs[i])
		{
			struct bpf_map_info info = { 0 };
			__u32 len = sizeof(info);
			bool dup = false;
			int fd = bpf_map__fd(m);

			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
				continue;
			for (size_t j = 0; j < nmaps && !dup; j++)
				dup = seen[j] == info.id;
			if (dup || nmaps == sizeof(seen) / sizeof(seen[0]))
				continue;
			seen[nmaps++] = info.id;
			maps += kfuncs_memlock(fd);
		}
		bpf_object__for_each_program(p, objs[i])
		{
			if (bpf_program__fd(p) < 0)
				continue;
			progs += kfuncs_memlock(bpf_program__fd(p));
			nprogs++;
		}
	}
	pr_debug("kernel callstacks: kernel memory: %.1f MB in %zu maps, %.1f MB in %zu programs "
		 "(%zu of them fentry/fexit copies)",
		 (double)maps / 1048576.0, nmaps, (double)progs / 1048576.0, nprogs, k->ncopies);
}

/* Each function: fentry/fexit where BTF describes it and the kernel attaches there (copies of one
 * loaded pair, aimed at a kernel function of its own), else kprobes where the kernel has them.
 * The kprobe programs are loaded, so verified, even with nothing to attach. */
static void probe_functions(struct kprof *k, const struct kprof_opts *o)
{
	static const char *names[MAX_TARGETS], *rest[MAX_TARGETS];
	static unsigned long addrs[MAX_TARGETS], rest_addrs[MAX_TARGETS];
	bool kmd = o->filter != KC_FILTER_FUNCS, one_each;
	bool have_kprobes = !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
	struct kfuncs_traceable tr;
	struct kfuncs_btf btf = { .obj_fd = -1 };
	size_t n = 0, nrest = 0, skipped = 0, fentry = 0, kprobed = 0;
	struct kmd_bpf *t = NULL, *s = NULL;
	const char *trpath = NULL;
	int err, btf_err = -ENOENT;

	k->probes.kprobe_load = 1; /* not tried: fentry serves */
	if (k->ks_loaded) {
		err = kfuncs_traceable_find(&tr, kmd ? o->kmd_module : NULL, &trpath);
		if (err)
			pr_debug("kernel callstacks: the functions ftrace can patch are not known "
				 "(available_filter_functions: %s; tracefs not mounted?): those to "
				 "probe chosen by name",
				 strerror(-err));
		n = targets(k, o, err ? NULL : &tr, names, addrs, MAX_TARGETS, &skipped);
		if (!err)
			kfuncs_traceable_free(&tr);
	}
	if (!kmd)
		pr_debug("kernel callstacks: %zu of the filter's functions to probe", n);
	else if (n || skipped)
		pr_debug(
			"kernel callstacks: KMD module %s: loaded, %zu functions to probe, %zu that "
			"cannot be (%s)",
			o->kmd_module, n, skipped, trpath ? trpath : "by their names");
	else
		pr_debug("kernel callstacks: KMD module %s: not loaded (none of its functions in "
			 "/proc/kallsyms)",
			 o->kmd_module);
	if (n == MAX_TARGETS)
		pr_warn("kernel callstacks: probing the first %d functions only", MAX_TARGETS);
	/* fentry: loaded once, against a core kernel function (so that a module's function
	 * without BTF does not turn it off), and copied onto each function BTF describes */
	if (getenv("TOPSPROF_NO_FENTRY")) { /* the kprobe path, where fentry would serve */
		err = -EOPNOTSUPP;
		pr_debug("kernel callstacks: fentry/fexit not tried (TOPSPROF_NO_FENTRY)");
	} else if (!k->func_ip) {
		err = -EOPNOTSUPP;
		pr_debug("kernel callstacks: fentry/fexit not tried: no bpf_get_func_ip (Linux "
			 "5.15+)");
	} else {
		err = open_kmd(k, o, true, false, FENTRY_CHECK, NULL, &t);
		pr_debug("kernel callstacks: fentry/fexit programs %s%s, against " FENTRY_CHECK,
			 err ? "refused by the kernel: " : "loaded",
			 err ? strerror(-err) : " (verifier passed)");
	}
	k->probes.fentry_load = err;
	if (!err) {
		k->kmd[k->nkmd++] = t;
		if (n) {
			btf_err = kfuncs_btf_open(&btf, kmd ? o->kmd_module : NULL);
			if (btf_err)
				pr_debug("kernel callstacks: no BTF for %s (%s): kprobes only",
					 kmd ? o->kmd_module : "vmlinux", strerror(-btf_err));
		}
	}
	for (size_t i = 0; i < n; i++) {
		int id = btf_err ? -ENOENT : kfuncs_btf_func(&btf, names[i]);

		if (id > 0 && attach_copies(k, t, &btf, id, names[i])) {
			fentry++;
		} else {
			rest_addrs[nrest] = addrs[i];
			rest[nrest++] = names[i];
		}
	}
	if (!btf_err)
		kfuncs_btf_close(&btf);
	/* kprobes: one object for the functions fentry did not take; one kprobe_multi link for
	 * them all where the kernel has it (Linux 5.18+), else a kprobe each */
	if (nrest || !fentry) {
		bool multi = k->func_ip && !getenv("TOPSPROF_NO_KPROBE_MULTI");

		if (!k->func_ip)
			pr_debug(
				"kernel callstacks: a kprobe each, through stubs (no bpf_get_func_ip: "
				"Linux 5.15+)");

		err = open_kmd(k, o, false, multi, NULL, t, &s);
		if (err && multi) {
			pr_debug(
				"kernel callstacks: kprobe_multi programs refused by the kernel (%s; "
				"Linux 5.18+): a kprobe each",
				strerror(-err));
			multi = false;
			err = open_kmd(k, o, false, false, NULL, t, &s);
		}
		k->probes.kprobe_load = err;
		pr_debug("kernel callstacks: kprobe/kretprobe programs %s%s",
			 err ? "refused by the kernel: " : "loaded (verifier passed)",
			 err ? strerror(-err) : "");
		if (!err)
			k->kmd[k->nkmd++] = s;
		if (!err && have_kprobes && multi && nrest)
			kprobed = attach_multi(k, s, rest_addrs, nrest);
		one_each = !kprobed;
		for (size_t i = 0; !err && have_kprobes && one_each && i < nrest; i++) {
			bool ok = !k->func_ip ? attach_stubs(k, s, rest_addrs[i])
					      : attach_pair(k,
							    bpf_program__attach_kprobe(
								    s->progs.kc_kmd_kprobe, false,
								    rest[i]),
							    bpf_program__attach_kprobe(
								    s->progs.kc_kmd_kretprobe, true,
								    rest[i]));

			kprobed += ok;
			if (!ok)
				pr_debug("kernel callstacks: kprobes on %s: %s", rest[i],
					 strerror(errno));
		}
		if (!have_kprobes)
			pr_debug("kernel callstacks: kprobes: not in this kernel (no kprobe event "
				 "source): not attached");
	}
	/* none probed: the tracepoints serve, as on any kernel; some: say which part is missing */
	if (fentry + kprobed && fentry + kprobed < n)
		pr_warn("kernel callstacks: %zu of %zu functions could not be probed",
			n - fentry - kprobed, n);
	if (fentry && kprobed)
		snprintf(k->mechanism, sizeof(k->mechanism),
			 "fentry/fexit on %zu functions, kprobes on %zu, " TRACEPOINTS, fentry,
			 kprobed);
	else if (fentry)
		snprintf(k->mechanism, sizeof(k->mechanism),
			 "fentry/fexit on %zu functions, " TRACEPOINTS, fentry);
	else if (kprobed)
		snprintf(k->mechanism, sizeof(k->mechanism),
			 "kprobes on %zu functions, " TRACEPOINTS, kprobed);
	else
		snprintf(k->mechanism, sizeof(k->mechanism), TRACEPOINTS);
	k->probes.fentry_attached = fentry;
	k->probes.kprobe_attached = kprobed;
	pr_debug("kernel callstacks: fentry on %zu functions, kprobes on %zu", fentry, kprobed);
	say_memory(k);
}

void kprof_probes(const struct kprof *k, struct kprof_probes *out)
{
	*out = k->probes;
}

/* whether the kernel's unwinder leaves a kretprobe's trampoline where a caller's address was
 * (it gives them back from Linux 5.14 on x86, from 5.16 on arm64) */
static bool unwinder_stops_at_kretprobes(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
#if defined(__aarch64__)
	return major < 5 || (major == 5 && minor < 16);
#else
	return major < 5 || (major == 5 && minor < 14);
#endif
}

int kprof_open(struct kprof **out, const struct kprof_opts *o)
{
	struct kprof *k = calloc(1, sizeof(*k));
	struct btf *vmlinux;
	bool vma_tree;
	int err;

	*out = NULL;
	if (!k)
		return -ENOMEM;
	err = ksyms_load(&k->ks, o->kallsyms ? o->kallsyms : "/proc/kallsyms");
	k->ks_loaded = !err;
	if (err && (o->filter == KC_FILTER_FUNCS || o->filter == KC_FILTER_KMD))
		pr_warn("kernel callstacks: /proc/kallsyms: %s", strerror(-err));
	k->skel = kernel_bpf__open();
	if (!k->skel) {
		err = -errno;
		pr_error("opening the kernel callstack BPF object: %s", strerror(-err));
		goto fail;
	}
	k->skel->rodata->filter = o->filter;
	k->skel->rodata->self_tgid = (__u32)getpid();
	k->skel->data->collecting = o->collecting;
	k->skel->rodata->follow_by_task = o->follow_by_task;
	/* bpf_find_vma (Linux 5.17+) tells a futex wait on the driver's memory;
	 * TOPSPROF_NO_FIND_VMA=1 takes the other path here, to test it */
	k->find_vma =
		bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_find_vma, "TOPSPROF_NO_FIND_VMA");
	k->sys_enter =
		k->find_vma ? k->skel->progs.kc_sys_enter : k->skel->progs.kc_sys_enter_novma;
	bpf_program__set_autoload(k->find_vma ? k->skel->progs.kc_sys_enter_novma
					      : k->skel->progs.kc_sys_enter,
				  false);
	k->func_ip =
		bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_func_ip, "TOPSPROF_NO_FUNC_IP");
	/* kernels without it (before 5.15) take kprobes; the unwinder stops at a kretprobe's
	 * trampoline before 5.14 on x86, 5.16 on arm64 (kc_common.h) */
	k->skel->rodata->kc_stitch = !k->func_ip || unwinder_stops_at_kretprobes();
	if (!k->skel->rodata->kc_stitch) /* the map is not used: the least the kernel makes */
		bpf_map__set_max_entries(k->skel->maps.kc_nests, 1);
	for (size_t i = 0; k->ks_loaded && i < k->ks.n && !k->kretprobe_tramp; i++)
		if (!k->ks.v[i].module && (!strcmp(k->ks.v[i].name, "kretprobe_trampoline") ||
					   !strcmp(k->ks.v[i].name, "__kretprobe_trampoline")))
			k->kretprobe_tramp = k->ks.v[i].addr;
	/* sched_switch's arguments (Linux 5.18 added prev_state) and whether the mappings are in a
	 * red-black tree (before 6.1), from the kernel's BTF, read once */
	vmlinux = btf__load_vmlinux_btf();
	k->skel->rodata->switch_state_arg = vmlinux && btf_tp_nargs(vmlinux, "sched_switch") >= 4;
	vma_tree = vmlinux && btf_struct_has(vmlinux, "mm_struct", "mm_rb") > 0;
	btf__free(vmlinux);
	/* task storage (Linux 5.11) only when asked for: else the map is not made */
	bpf_map__set_autocreate(k->skel->maps.kc_follow_task, o->follow_by_task);
	snprintf((char *)k->skel->rodata->kmd_module, KC_MODULE_LEN, "%s", o->kmd_module);
	if (o->filter == KC_FILTER_FUNCS) {
		char bad[256];
		uint32_t n = 0;

		err = k->ks_loaded ? kprof_function_ranges(&k->ks, o->functions,
							   (uint64_t *)k->skel->rodata->func_start,
							   (uint64_t *)k->skel->rodata->func_end,
							   KC_MAX_FUNCS, &n, bad, sizeof(bad))
				   : -EPERM;
		if (err) {
			if (err == -ENOENT)
				pr_error("--kernel-callstack-filter: no kernel function '%s' in "
					 "/proc/kallsyms",
					 bad);
			else if (err == -E2BIG)
				pr_error(
					"--kernel-callstack-filter: the functions have more than %d "
					"symbols",
					KC_MAX_FUNCS);
			else
				pr_error("--kernel-callstack-filter: kernel function names need "
					 "/proc/kallsyms: %s",
					 strerror(-err));
			goto fail;
		}
		k->skel->rodata->nfuncs = n;
	}
	err = o->pid_map_fd >= 0 ? bpf_map__reuse_fd(k->skel->maps.tracked_pids, o->pid_map_fd) : 0;
	if (!err && o->pid_map_fd >= 0)
		err = bpf_map__reuse_fd(k->skel->maps.tracked_gen, o->gen_map_fd);
	if (!err)
		err = kernel_bpf__load(k->skel);
	if (err) {
		pr_error("loading the kernel callstack BPF programs: %s", strerror(-err));
		goto fail;
	}
	add_driver_files(k);
	k->tp[0] = bpf_program__attach(k->sys_enter);
	k->tp[1] = bpf_program__attach(k->skel->progs.kc_sys_exit);
	k->tp[2] = bpf_program__attach(k->skel->progs.kc_switch);
	k->tp[3] = bpf_program__attach(k->skel->progs.kc_thread_exit);
	for (int i = 0; i < NTP; i++)
		if (!k->tp[i]) {
			err = -errno;
			pr_error("attaching the kernel callstack tracepoints: %s", strerror(-err));
			goto fail;
		}
	pr_debug("kernel callstacks: tracepoints sys_enter, sys_exit, sched_switch attached");
	if (o->filter == KC_FILTER_CURRENT)
		pr_debug("kernel callstacks: whether a thread is followed: %s",
			 o->follow_by_task ? "kept in its task storage (TOPSPROF_TASK_STORAGE=1)"
					   : "kept per CPU, by thread and generation of the set");
	if (k->find_vma)
		pr_debug(
			"kernel callstacks: futex waits on the driver's memory told by bpf_find_vma");
	else if (vma_tree)
		pr_debug("kernel callstacks: no bpf_find_vma in this kernel (Linux 5.17+): futex "
			 "waits on the driver's memory told by a walk of the process's mappings "
			 "(mm_rb)");
	else
		pr_debug("kernel callstacks: no bpf_find_vma in this kernel (Linux 5.17+): futex "
			 "waits are not told apart as the driver's");
	probe_functions(k, o);
	err = proc_watch_init(&k->procs, bpf_map__fd(k->skel->maps.kc_new),
			      bpf_map__fd(k->skel->maps.kc_seen));
	if (err) {
		pr_error("opening the kernel callstack ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = k;
	return 0;
fail:
	kprof_close(k);
	return err;
}

void kprof_close(struct kprof *k)
{
	if (!k)
		return;
	bpf_release_links(k->links, k->nlinks, k->fds, k->nfds);
	for (int i = 0; i < NTP; i++)
		bpf_link__destroy(k->tp[i]);
	for (size_t i = 0; i < k->nkmd; i++)
		kmd_bpf__destroy(k->kmd[i]);
	free(k->links);
	free(k->fds);
	proc_watch_free(&k->procs);
	kernel_bpf__destroy(k->skel);
	ksyms_free(&k->ks);
	free(k);
}

void kprof_set_collecting(struct kprof *k, bool on)
{
	if (!k)
		return;
	k->skel->data->collecting = on;
	for (size_t i = 0; i < k->nkmd; i++)
		k->kmd[i]->data->collecting = on;
}

void kprof_clear(struct kprof *k)
{
	if (!k)
		return;
	bpf_map_clear(bpf_map__fd(k->skel->maps.kc_entries), sizeof(struct kc_entry_key));
	bpf_map_clear(bpf_map__fd(k->skel->maps.kc_stack_counts), sizeof(struct kc_stack_key));
	/* the calls and waits under way belong to the time thrown away */
	bpf_map_clear(bpf_map__fd(k->skel->maps.kc_threads), sizeof(__u32));
	for (size_t i = 0; i < k->nkmd; i++)
		bpf_map_clear(bpf_map__fd(k->kmd[i]->maps.kmd_calls),
			      bpf_map__key_size(k->kmd[i]->maps.kmd_calls));
	for (uint32_t i = 0; i < KC_DROP__COUNT; i++)
		percpu_u64_zero(bpf_map__fd(k->skel->maps.kc_drops), i);
}

size_t kprof_threads(const struct kprof *k, uint32_t *tids, size_t max)
{
	int fd = bpf_map__fd(k->skel->maps.kc_threads);
	__u32 key, *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (n < max)
			tids[n] = key;
		n++;
		prev = &key;
	}
	return n;
}

void kprof_poll(struct kprof *k)
{
	if (k)
		proc_watch_poll(&k->procs, false);
}

int kprof_epoll_fd(const struct kprof *k)
{
	return k ? proc_watch_epoll_fd(&k->procs) : -1;
}

static const char *entry_name(struct kprof *k, uint32_t kind, uint64_t id, char *buf, size_t len)
{
	const struct ksym *s;
	const char *name;

	switch (kind) {
	case KC_ENTRY_SYSCALL:
		name = syscall_name(id);
		if (name)
			return name;
		snprintf(buf, len, "syscall %llu", (unsigned long long)id);
		return buf;
	case KC_ENTRY_KMD:
		s = k->ks_loaded ? ksyms_find(&k->ks, id, NULL) : NULL;
		if (s)
			snprintf(buf, len, "%s%s%s%s", s->name, s->module ? " [" : "",
				 s->module ? s->module : "", s->module ? "]" : "");
		else
			snprintf(buf, len, "0x%llx", (unsigned long long)id);
		return buf;
	default:
		return NULL;
	}
}

/* what the tracepoint programs cost, when kernel.bpf_stats_enabled is on (--debug): their own
 * run time, not the kernel's dispatch to them (scripts/bench/kcalls.sh) */
static void say_costs(const struct kprof *k)
{
	const struct bpf_program *progs[] = { k->sys_enter, k->skel->progs.kc_sys_exit,
					      k->skel->progs.kc_switch };
	char line[256];
	int len = 0;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = { 0 };
		__u32 ilen = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &ilen) ||
		    !info.run_cnt)
			return;
		len += snprintf(line + len, sizeof(line) - len, "%s%s %llu runs, %.1f ns each",
				i ? "; " : "", bpf_program__name(progs[i]),
				(unsigned long long)info.run_cnt,
				(double)info.run_time_ns / (double)info.run_cnt);
		if (len >= (int)sizeof(line))
			return;
	}
	pr_debug("kernel callstack programs: %s", line);
}

int kprof_collect(struct kprof *k, struct kernel_profile *p)
{
	int entries = bpf_map__fd(k->skel->maps.kc_entries);
	int counts = bpf_map__fd(k->skel->maps.kc_stack_counts);
	int stacks = bpf_map__fd(k->skel->maps.kc_stacks);
	struct kc_entry_key ek, *eprev = NULL;
	struct kc_stack_key sk, *sprev = NULL;
	struct kstack_more kmore = { .tramp = k->kretprobe_tramp };
	struct stackname name = { 0 };
	struct symbolizer sym;
	uint64_t lost;
	char buf[256];
	int err = 0;

	say_costs(k);
	free(p->mechanism);
	p->mechanism = strdup(k->mechanism);
	proc_watch_poll(&k->procs, true);
	while (!err && !bpf_map_get_next_key(entries, eprev, &ek)) {
		struct kc_totals v;

		eprev = &ek;
		if (!bpf_map_lookup_elem(entries, &ek, &v))
			err = kernel_add_entry(p, entry_name(k, ek.kind, ek.id, buf, sizeof(buf)),
					       ek.driver != 0, v.count, v.total_ns, v.max_ns);
	}
	symbolizer_init(&sym, NULL);
	while (!err && !bpf_map_get_next_key(counts, sprev, &sk)) {
		const struct cached_proc *proc = proccache_find(&k->procs.cache, sk.tgid);
		struct kernel_stack s = { 0 };
		struct kc_totals v;
		bool complete;

		sprev = &sk;
		if (bpf_map_lookup_elem(counts, &sk, &v))
			continue;
		kmore.more[0] = sk.kmore[0];
		kmore.more[1] = sk.kmore[1];
		err = stack_name(&sym, stacks, proc ? &proc->maps : NULL, sk.ustack, sk.kstack,
				 true, &sk.uret, &kmore, &name, &complete);
		if (err)
			break;
		/* a side the kernel could not keep: a full stack map, or its slot taken by another
		 * stack (-EFAULT: that side had no frames) */
		if ((sk.kstack < 0 && sk.kstack != -EFAULT) ||
		    (sk.ustack < 0 && sk.ustack != -EFAULT))
			p->lost_stacks += v.count;
		s.pid = sk.tgid;
		s.comm = proc ? (char *)proc->comm : NULL;
		s.entry = (char *)entry_name(k, sk.kind, sk.id, buf, sizeof(buf));
		s.driver = sk.driver != 0;
		s.offcpu = sk.offcpu != 0;
		s.frames = name.len ? name.buf : "[no stack]";
		s.count = v.count;
		s.total_ns = v.total_ns;
		s.max_ns = v.max_ns;
		err = kernel_add_stack(p, &s);
	}
	symbolizer_free(&sym);
	free(name.buf);
	if (!percpu_u64_sum(bpf_map__fd(k->skel->maps.kc_drops), KC_DROP_ENTRY, &lost))
		p->lost_entries += lost;
	if (!percpu_u64_sum(bpf_map__fd(k->skel->maps.kc_drops), KC_DROP_STACK, &lost))
		p->lost_stacks += lost;
	if (!percpu_u64_sum(bpf_map__fd(k->skel->maps.kc_drops), KC_DROP_THREAD, &lost))
		p->lost_threads += lost;
	if (!percpu_u64_sum(bpf_map__fd(k->skel->maps.kc_drops), KC_DROP_UNTOLD, &lost))
		p->untold += lost;
	kernel_profile_finish(p);
	return err;
}

/* -- the kernel callstacks collector: system-wide, the profiled processes are every process --- */

static bool kernel_wanted(const struct collect_settings *s)
{
	return s->kernel_stacks;
}

static int kernel_open(struct collector_state *st)
{
	const struct collect_settings *s = st->env->set;
	struct kprof_opts o = {
		.filter = s->kfilter,
		.functions = s->kfilter_functions,
		.kmd_module = s->kmd_module,
		/* a launched application: from its release on (not its wait for it), begin */
		.collecting = s->collecting && !s->launched,
		.pid_map_fd = st->env->pid_map_fd,
		.gen_map_fd = st->env->gen_map_fd,
		.follow_by_task = getenv("TOPSPROF_TASK_STORAGE") != NULL,
	};

	if (o.filter == KC_FILTER_CURRENT && s->system_wide)
		o.filter = KC_FILTER_ALL;
	if (kprof_open((struct kprof **)&st->h, &o))
		return 1;
	st->env->m->kernel.collected = true;
	st->env->m->kernel.filter = strdup(s->kfilter_name);
	return 0;
}

static void kernel_set_collecting(struct collector_state *st, bool on)
{
	kprof_set_collecting(st->h, on);
}

/* the held application's wait to be released is topsprof's, not its own */
static void kernel_begin(struct collector_state *st)
{
	if (st->env->set->launched)
		kprof_set_collecting(st->h, st->env->collecting);
}

static void kernel_clear(struct collector_state *st)
{
	kprof_clear(st->h);
}

static int kernel_fd(const struct collector_state *st)
{
	return kprof_epoll_fd(st->h);
}

static void kernel_poll(struct collector_state *st)
{
	kprof_poll(st->h);
}

static void kernel_report(struct collector_state *st)
{
	if (kprof_collect(st->h, &st->env->m->kernel))
		pr_warn("kernel stacks: out of memory; the KERNEL activities are incomplete");
}

static void kernel_close(struct collector_state *st)
{
	kprof_close(st->h);
}

const struct collector kernel_collector = {
	.name = "kernel callstacks",
	.wanted = kernel_wanted,
	.open = kernel_open,
	.begin = kernel_begin,
	.set_collecting = kernel_set_collecting,
	.clear = kernel_clear,
	.fd = kernel_fd,
	.poll = kernel_poll,
	.report = kernel_report,
	.close = kernel_close,
};
