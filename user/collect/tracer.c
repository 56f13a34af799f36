// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/tracer.h"
#include "api.skel.h"
#include "collect/bpfinsn.h"
#include "collect/bpfmaps.h"
#include "collect/bpfstub.h"
#include "target/elfinfo.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "collect/umulti.h"
#include "collect/collector.h"
#include "model/domain.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tracer {
	struct api_bpf *skel;
	bool multi;	/* uprobe_multi links */
	bool sleepable; /* api_entry faults in the pages of the strings it reads */
	bool cookies;	/* attach cookies (Linux 5.15); else a stub per function (bpfstub.h) */
	bool loop;	/* bpf_loop (Linux 5.17) */
	struct bpf_program *entry; /* api_entry, or api_entry_bounded where bpf_loop is missing */
	struct bpf_link **links;
	size_t nlinks, cap;
	int *link_fds; /* multi links (entry and return, per probed file); the stubs' perf events */
	size_t nlink_fds, fds_cap;
	struct bpf_link *exit_link;
	/* scoped probes: the files' probes, made into links for each followed process (uprobe_multi
	 * links); with single uprobes, for the first alone (root), and on the files from a second
	 * process on (on_files) */
	bool scoped;
	pid_t root;
	bool on_files;
	struct probe_file *files;
	size_t nfiles, files_cap;
	struct proc_links *procs;
	size_t nprocs, procs_cap;
	struct bpf_releaser *releaser; /* where followed processes' links go (the caller's) */
};

/* what tracer_attach found to probe in one file */
struct probe_file {
	char *path;
	uint64_t offs[API_MAX_FNS], cookies[API_MAX_FNS];
	uint32_t n;
};

/* the links of one followed process: each file's return probes, then its entries */
struct proc_links {
	pid_t pid;
	int nfds;
	int *fds;
};

/* Sleepable uprobe programs (Linux 6.0; with uprobe_multi links, 6.6) may call
 * bpf_copy_from_user, which faults pages in. Before, the kernel refuses BPF_F_SLEEPABLE for a
 * kprobe-type program (EINVAL): a program of a few instructions, loaded as api_entry would be,
 * tells. TOPSPROF_NO_SLEEPABLE=1 takes the other path (strings read after the fact) here. */
static bool sleepable_uprobes(bool multi)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, -8),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 8),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_copy_from_user),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE,
		    .expected_attach_type = multi ? (enum bpf_attach_type)UMULTI_ATTACH_TYPE : 0);
	int fd;

	if (getenv("TOPSPROF_NO_SLEEPABLE"))
		return false;
	fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "Dual BSD/GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Without bpf_loop the verifier walks every piece of the bounded loop, each of the call sites
 * apart: Debian 11's 5.10 gives up (a million instructions) at some lengths from 32 KB on, and
 * not at others. Strings there are taken up to this many bytes, a length it takes. */
#define BOUNDED_STR_MAX (16 * 1024)

/* open, configure and load the object; api_entry sleepable or not */
static int load(struct tracer *t, const struct tracer_opts *o, bool sleepable)
{
	uint32_t max_str = o->max_str_bytes;
	bool loop = t->loop;
	struct bpf_program *entry;
	int err;

	if (!loop && max_str > BOUNDED_STR_MAX) {
		pr_warn("this kernel has no bpf_loop (Linux 5.17+): topstx strings are taken up to "
			"%d KB, not %u KB (--topstx-max-bytes-size); longer ones are cut there and "
			"marked",
			BOUNDED_STR_MAX / 1024, (unsigned)(max_str / 1024));
		max_str = BOUNDED_STR_MAX;
	}

	t->skel = api_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_error("opening the API tracer BPF object: %s", strerror(-err));
		return err;
	}
	t->skel->rodata->filter_pids = !o->system_wide;
	t->skel->rodata->stats_mode = o->stats_mode;
	t->skel->rodata->max_str_bytes = max_str;
	t->skel->rodata->str_pieces = API_STR_PIECES(max_str);
	t->skel->rodata->sleepable = sleepable;
	t->skel->rodata->have_cookie = t->cookies;
	t->skel->rodata->scoped_root = t->scoped && !t->multi;
	t->skel->data->collecting = o->collecting;
	err = bpf_map__set_max_entries(t->skel->maps.api_events, (__u32)o->buffer_size);
	if (!err && o->pid_map_fd >= 0)
		err = bpf_map__reuse_fd(t->skel->maps.tracked_pids, o->pid_map_fd);
	if (err) {
		pr_error("configuring the API tracer: %s", strerror(-err));
		return err;
	}
	entry = loop ? t->skel->progs.api_entry : t->skel->progs.api_entry_bounded;
	bpf_program__set_autoload(
		loop ? t->skel->progs.api_entry_bounded : t->skel->progs.api_entry, false);
	if (sleepable)
		bpf_program__set_flags(entry, bpf_program__flags(entry) | BPF_F_SLEEPABLE);
	if (t->multi) {
		bpf_program__set_expected_attach_type(entry,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(t->skel->progs.api_return,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	}
	err = api_bpf__load(t->skel);
	if (err && sleepable) {
		/* the kernel has sleepable uprobes, yet refuses this one: the other path */
		pr_debug("loading the API tracer sleepable failed (%s): loading it without",
			 strerror(-err));
		api_bpf__destroy(t->skel);
		t->skel = NULL;
		return load(t, o, false);
	}
	if (err) {
		pr_error("loading the API tracer BPF programs: %s%s", strerror(-err),
			 err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		return err;
	}
	if (!t->cookies) {
		int slot = 0, fd = bpf_program__fd(entry);

		err = bpf_map_update_elem(bpf_map__fd(t->skel->maps.stub_progs), &slot, &fd,
					  BPF_ANY);
		if (err) {
			err = -errno;
			pr_error("loading the API tracer's stubs: %s", strerror(-err));
			return err;
		}
	}
	t->sleepable = sleepable;
	t->entry = entry;
	return 0;
}

int tracer_open(struct tracer **out, const struct tracer_opts *o)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->cookies = ucookies_supported();
	t->multi = t->cookies && umulti_supported();
	/* single uprobes are scoped by their cookies (API_CK_SCOPED) */
	t->scoped = o->scoped && (t->multi || t->cookies);
	t->releaser = o->releaser;
	if (!t->cookies)
		pr_debug("no attach cookies (Linux 5.15+): a stub program per function");
	t->loop = bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, "TOPSPROF_NO_BPF_LOOP");
	if (!t->loop)
		pr_debug("no bpf_loop (Linux 5.17+): strings read by a bounded loop");
	/* sleepable uprobes came later (6.0); a bounded loop over pages that may fault in is too
	 * much for the verifier, and a stub (no sleepable program has a program array) may not
	 * tail-call a sleepable program */
	err = load(t, o, t->cookies && t->loop && sleepable_uprobes(t->multi));
	if (err)
		goto fail;
	pr_debug("strings in pages the application has not touched yet: %s",
		 t->sleepable ? "faulted in by the probe (sleepable uprobes)"
			      : "read again by topsprof from read-only mappings");
	t->exit_link = bpf_program__attach(t->skel->progs.api_thread_exit);
	if (!t->exit_link) {
		err = -errno;
		pr_error("attaching to the sched_process_exit tracepoint: %s", strerror(-err));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	tracer_close(t);
	return err;
}

static int add_link(struct tracer *t, struct bpf_link *l)
{
	if (!grow_array((void **)&t->links, &t->cap, t->nlinks, sizeof(*t->links))) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	t->links[t->nlinks++] = l;
	return 0;
}

static int add_fd(struct tracer *t, int fd)
{
	if (!grow_array((void **)&t->link_fds, &t->fds_cap, t->nlink_fds, sizeof(*t->link_fds))) {
		close(fd);
		return -ENOMEM;
	}
	t->link_fds[t->nlink_fds++] = fd;
	return 0;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	/* the links of the processes still running go to the releaser too: topsprof exits without
	 * waiting for their grace periods, and they are gone one period later (their programs idle
	 * meanwhile: collection stopped). Without a releaser, they go with the others, here. */
	for (size_t i = 0; i < t->nprocs; i++) {
		if (t->releaser)
			bpf_release_later(t->releaser, t->procs[i].fds, (size_t)t->procs[i].nfds);
		else
			for (int k = 0; k < t->procs[i].nfds; k++)
				if (add_fd(t, t->procs[i].fds[k]))
					close(t->procs[i].fds[k]);
		free(t->procs[i].fds);
	}
	free(t->procs);
	for (size_t i = 0; i < t->nfiles; i++)
		free(t->files[i].path);
	free(t->files);
	bpf_release_links(t->links, t->nlinks, t->link_fds, t->nlink_fds);
	bpf_link__destroy(t->exit_link);
	free(t->links);
	free(t->link_fds);
	api_bpf__destroy(t->skel);
	free(t);
}

uint64_t probe_offset(const char *path, uint64_t off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char insn[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool skip = false;

	if (fd >= 0) {
		skip = pread(fd, insn, sizeof(insn), (off_t)off) == sizeof(insn) &&
		       !memcmp(insn, endbr64, sizeof(insn));
		close(fd);
	}
	return skip ? off + sizeof(endbr64) : off;
}

/* the entry probe of a kernel without attach cookies: a stub that tail-calls the entry program
 * with the cookie, on a uprobe made by hand (libbpf attaches only programs of its objects) */
static int attach_stub(struct tracer *t, const char *path, uint64_t off, uint64_t cookie)
{
	int stub = bpf_stub_load(BPF_PROG_TYPE_KPROBE, bpf_map__fd(t->skel->maps.stub_value),
				 bpf_map__fd(t->skel->maps.stub_progs), 0, cookie),
	    fd;

	if (stub < 0)
		return stub;
	fd = perf_probe_attach(stub, true, false, path, off, -1);
	close(stub); /* the event holds it */
	return fd < 0 ? fd : add_fd(t, fd);
}

/*
 * Each function's return probe goes in before its entry probe. A thread of a running process
 * (--attach-pid) that enters a function between the two would otherwise count a depth that no
 * return ever takes back, and every later call of that thread would look nested in it and be
 * dropped. A return whose entry was not seen is ignored (api_return: depth 0).
 */

/* one uretprobe and one uprobe per function, in every process (pid -1) or in pid's alone (its
 * cookies say so: API_CK_SCOPED; attach cookies needed) */
static int attach_single(struct tracer *t, const char *path, const uint64_t *offs,
			 const uint64_t *cookies, int n, pid_t pid)
{
	uint64_t scope = pid >= 0 ? API_CK_SCOPED : 0;

	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct bpf_program *progs[2] = { t->entry, t->skel->progs.api_return };

		for (int r = 1; r >= 0; r--) {
			struct bpf_link *l;
			int err;

			if (!r && !t->cookies) { /* never scoped (pid -1) */
				err = attach_stub(t, path, offs[i], cookies[i]);
				if (err)
					return err;
				continue;
			}
			/* the return address is still on top of the stack after endbr64 */
			opts.retprobe = r;
			opts.bpf_cookie = (r ? 0 : cookies[i]) | scope; /* api_return: the scope */
			l = bpf_program__attach_uprobe_opts(progs[r], pid, path, offs[i], &opts);
			err = l ? add_link(t, l) : -errno;
			if (err)
				return err;
		}
	}
	return 0;
}

/* all functions' returns of the file in one uprobe_multi link, then their entries in one, in
 * every process (pid 0) or in one; the fds into fds[0..1]; 0 or -errno and none */
static int multi_links(const struct tracer *t, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, int n, int pid, int fds[2])
{
	const struct bpf_program *progs[2] = { t->entry, t->skel->progs.api_return };

	for (int r = 1; r >= 0; r--) {
		fds[r] = umulti_attach(bpf_program__fd(progs[r]), path, offs, cookies, (uint32_t)n,
				       r, pid);
		if (fds[r] < 0) {
			int err = fds[r];

			if (!r)
				close(fds[1]);
			return err;
		}
	}
	return 0;
}

static int attach_multi(struct tracer *t, const char *path, const uint64_t *offs,
			const uint64_t *cookies, int n)
{
	int fds[2], err = multi_links(t, path, offs, cookies, n, 0, fds);

	for (int r = 1; r >= 0 && !err; r--)
		err = add_fd(t, fds[r]);
	return err;
}

/* the file's probes kept, for the links made for each process followed */
static int keep_file(struct tracer *t, const char *path, const uint64_t *offs,
		     const uint64_t *cookies, int n)
{
	struct probe_file *f;

	if (!grow_array((void **)&t->files, &t->files_cap, t->nfiles, sizeof(*t->files)))
		return -ENOMEM;
	f = &t->files[t->nfiles];
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	memcpy(f->offs, offs, (size_t)n * sizeof(*offs));
	memcpy(f->cookies, cookies, (size_t)n * sizeof(*cookies));
	f->n = (uint32_t)n;
	t->nfiles++;
	return 0;
}

int tracer_attach(struct tracer *t, const char *path, const struct runtime_lib *lib)
{
	const char *names[API_MAX_FNS] = { NULL };
	uint64_t offs[API_MAX_FNS], probe_offs[API_MAX_FNS], cookies[API_MAX_FNS];
	int idx[API_MAX_FNS] = { 0 }, n = 0, found, probed = 0, err;

	for (unsigned f = 0; f < api_table_len; f++) {
		if (api_table[f].lib != lib)
			continue;
		idx[n] = (int)f;
		names[n++] = api_table[f].name;
	}
	found = elf_func_offsets(path, names, n, offs);
	if (found < 0) {
		pr_error("reading the symbols of %s: %s", path, strerror(-found));
		return found;
	}
	for (int i = 0; i < n; i++) {
		if (!offs[i])
			continue;
		probe_offs[probed] = probe_offset(path, offs[i]);
		cookies[probed] = (uint64_t)idx[i] | api_table[idx[i]].capture;
		pr_debug("probing %s at %s+0x%llx%s", names[i], path,
			 (unsigned long long)probe_offs[probed],
			 probe_offs[probed] != offs[i] ? " (after endbr64)" : "");
		probed++;
	}
	if (!probed)
		return 0;
	err = t->scoped	 ? keep_file(t, path, probe_offs, cookies, probed)
	      : t->multi ? attach_multi(t, path, probe_offs, cookies, probed)
			 : attach_single(t, path, probe_offs, cookies, probed, -1);
	if (err) {
		pr_error("attaching probes to %s: %s", path, strerror(-err));
		return err;
	}
	pr_debug("%d functions of %s probed (%s)", probed, path,
		 t->scoped && t->multi ? "uprobe_multi links for each followed process, in it alone"
		 : t->scoped ? "one uprobe each with the pid of the first process followed, in it "
			       "alone; in every process that maps it from that one's first child on"
		 : t->multi  ? "uprobe_multi links, in every process that maps it"
		 : t->cookies
			 ? "one uprobe each, in every process that maps it"
			 : "one uprobe each, entries through stubs, in every process that maps it");
	return probed;
}

/* what tracer_attach kept, on the files: in every process from now on */
static int attach_files(struct tracer *t)
{
	int err = 0;

	for (size_t i = 0; i < t->nfiles && !err; i++) {
		const struct probe_file *f = &t->files[i];

		err = t->multi ? attach_multi(t, f->path, f->offs, f->cookies, (int)f->n)
			       : attach_single(t, f->path, f->offs, f->cookies, (int)f->n, -1);
		if (err)
			pr_error("attaching probes to %s: %s", f->path, strerror(-err));
	}
	return err;
}

int tracer_unscope(struct tracer *t)
{
	if (!t->scoped)
		return 0;
	t->scoped = false;
	return t->on_files ? 0 : attach_files(t);
}

/* Single uprobes (no uprobe_multi): the first process followed gets probes with its pid, in its
 * address space alone; at a second, the probes go on the files, for it (held until then) and
 * every later one, and the first keeps its own (the programs count its calls by those alone).
 * Not a set for each process: each uprobe's release waits for a grace period while it holds
 * the lock of every tracing tool's set-up on the host (docs/HOW-IT-WORKS.md). */
static int follow_single(struct tracer *t, pid_t pid)
{
	int err = 0;

	if (t->on_files || pid == t->root)
		return 0;
	if (t->root) {
		err = attach_files(t);
		t->on_files = !err;
		if (!err)
			pr_debug(
				"API probes: process %d is the second followed: on the probed files "
				"from now on",
				(int)pid);
		return err;
	}
	for (size_t i = 0; i < t->nfiles && !err; i++) {
		const struct probe_file *f = &t->files[i];

		err = attach_single(t, f->path, f->offs, f->cookies, (int)f->n, pid);
	}
	if (!err) {
		t->root = pid;
		__atomic_store_n(&t->skel->bss->root_tgid, (__u32)pid, __ATOMIC_RELEASE);
	}
	return err;
}

static struct proc_links *proc_find(struct tracer *t, pid_t pid)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

void tracer_unfollow(struct tracer *t, pid_t pid)
{
	struct proc_links *p = proc_find(t, pid);

	/* the first process's probes idle once it is gone (released with the others at the end);
	 * a process given its pid later goes by the probes on the files */
	if (t->root && pid == t->root)
		__atomic_store_n(&t->skel->bss->root_tgid, 0, __ATOMIC_RELEASE);
	if (!p)
		return;
	/* each release waits for a grace period of the kernel's (tens of ms): never here, where
	 * the events are drained, nor at topsprof's exit */
	bpf_release_later(t->releaser, p->fds, (size_t)p->nfds);
	free(p->fds);
	*p = t->procs[--t->nprocs];
}

int tracer_follow(struct tracer *t, pid_t pid)
{
	struct proc_links *p;
	int *fds, n = 0, err = 0;

	if (!t->scoped || proc_find(t, pid))
		return 0;
	if (!t->multi)
		return follow_single(t, pid);
	fds = calloc(2 * t->nfiles + 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (size_t i = 0; i < t->nfiles && !err; i++) {
		const struct probe_file *f = &t->files[i];

		err = multi_links(t, f->path, f->offs, f->cookies, (int)f->n, pid, &fds[n]);
		if (!err)
			n += 2;
	}
	if (!err && !grow_array((void **)&t->procs, &t->procs_cap, t->nprocs, sizeof(*t->procs)))
		err = -ENOMEM;
	if (err) {
		for (int i = 0; i < n; i++)
			close(fds[i]);
		free(fds);
		return err;
	}
	p = &t->procs[t->nprocs++];
	p->pid = pid;
	p->nfds = n;
	p->fds = fds;
	return 0;
}

void tracer_set_collecting(struct tracer *t, bool on)
{
	__atomic_store_n(&t->skel->data->collecting, on ? 1 : 0, __ATOMIC_RELEASE);
}

void tracer_clear(struct tracer *t)
{
	bpf_map_clear(bpf_map__fd(t->skel->maps.api_stats), sizeof(struct api_stat_key));
}

int tracer_events_fd(const struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.api_events);
}

int tracer_collect_maps(struct tracer *t, struct model *m)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->skel->maps.api_stats), err = 0;
	uint64_t *lost[API_DROP__COUNT] = {
		[API_DROP_CALL] = &m->lost_calls,
		[API_DROP_STR] = &m->lost_strings,
		[API_DROP_DEPTH] = &m->lost_depth,
		[API_DROP_STAT] = &m->lost_stats,
	};
	struct api_stat_key key, next, *prev = NULL;
	struct api_stat *vals;

	if (ncpu < 0)
		return ncpu;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			model_add_stat(m, key.fn, &vals[c]);
	}
	free(vals);
	for (uint32_t k = 0; k < API_DROP__COUNT && !err; k++) {
		uint64_t sum;

		err = percpu_u64_sum(bpf_map__fd(t->skel->maps.api_drops), k, &sum);
		*lost[k] += sum;
	}
	if (!err) {
		uint64_t sum;

		/* API_STR_FAULTED: those are counted as they arrive, recovered or lost */
		err = percpu_u64_sum(bpf_map__fd(t->skel->maps.api_str_counts), API_STR_FAULTED_IN,
				     &sum);
		m->str_faulted_in += sum;
	}
	return err;
}

/* -- the API collector: the tracer, its ring buffer, the strings read again ------------------- */

struct api_collect {
	struct tracer *t;
	struct ring_buffer *rb;
};

static void api_event(const struct collect_env *env, const void *data, size_t size)
{
	if (env->tap)
		env->tap(env->tap_ctx, data, size);
}

static int on_api_event(void *ctx, void *data, size_t size)
{
	const struct collect_env *env = ((struct collector_state *)ctx)->env;
	const struct tp_event_hdr *h = data;

	/* a string the probe could not read: read it now, while the process runs, if that is
	 * safe; what was read replaces the faulted piece (also in the raw data) */
	if (size >= sizeof(struct tp_str_event) && h->type == EV_API_STR &&
	    (((const struct tp_str_event *)data)->last & API_STR_FAULT)) {
		struct tp_str_event *pieces;
		size_t n = strrecover_pieces(data, &pieces);

		for (size_t i = 0; i < n; i++) {
			api_event(env, &pieces[i], sizeof(pieces[i]));
			model_add_str(env->m, &pieces[i]);
		}
		free(pieces);
		if (n)
			return 0;
	}
	api_event(env, data, size);
	if (size >= sizeof(struct tp_api_event) && h->type == EV_API_CALL)
		model_add_call(env->m, data);
	else if (size >= sizeof(struct tp_str_event) && h->type == EV_API_STR)
		model_add_str(env->m, data);
	return 0;
}

static bool api_wanted(const struct collect_settings *s)
{
	(void)s;
	return true; /* its counters and the process tracking's share: always loaded */
}

/* the probes on every library found of the domains traced */
static int api_attach(struct tracer *t, const struct collect_settings *s)
{
	const struct discovery *d = s->found;

	for (unsigned i = 0; d && i < d->n; i++) {
		const struct found_lib *f = &d->libs[i];
		unsigned dom = f->lib->domain == DOM_RUNTIME ? TRACE_RUNTIME : TRACE_TOPSTX;
		int n;

		if (!(s->trace_domains & dom) || !f->t.path[0])
			continue;
		n = tracer_attach(t, f->t.path, f->lib);
		if (n < 0)
			return 1;
		if (n == 0 && f->lib->domain == DOM_RUNTIME) {
			pr_error("%s has none of %s's functions", f->t.path, f->rt->what);
			return 1;
		}
	}
	return 0;
}

static int api_open(struct collector_state *st)
{
	const struct collect_settings *s = st->env->set;
	struct api_collect *a = calloc(1, sizeof(*a));
	struct tracer_opts o = {
		.system_wide = s->system_wide,
		.stats_mode = s->stats_mode,
		.collecting = s->collecting,
		.max_str_bytes = s->max_str_bytes,
		.buffer_size = s->buffer_size,
		.pid_map_fd = st->env->pid_map_fd,
		.scoped = st->env->scoped,
		.releaser = st->env->releaser,
	};

	st->h = a;
	if (!a) {
		pr_error("out of memory");
		return 1;
	}
	if (tracer_open(&a->t, &o) || api_attach(a->t, s))
		return 1;
	a->rb = ring_buffer__new(tracer_events_fd(a->t), on_api_event, st, NULL);
	if (!a->rb) {
		pr_error("opening the API event ring buffer: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* scoped probes for a process; where new processes could not be held after all (the process
 * collector found no way), the probes on every process instead (at the first process) */
static int api_follow(struct collector_state *st, pid_t pid)
{
	struct tracer *t = ((struct api_collect *)st->h)->t;

	return st->env->scoped ? tracer_follow(t, pid) : tracer_unscope(t);
}

static void api_unfollow(struct collector_state *st, pid_t pid)
{
	tracer_unfollow(((struct api_collect *)st->h)->t, pid);
}

static void api_set_collecting(struct collector_state *st, bool on)
{
	tracer_set_collecting(((struct api_collect *)st->h)->t, on);
}

static void api_poll(struct collector_state *st)
{
	/* the probes wake topsprof only when the ring fills: read what came meanwhile */
	ring_buffer__consume(((struct api_collect *)st->h)->rb);
}

static void api_clear(struct collector_state *st)
{
	api_poll(st); /* what is in flight belongs to what is thrown away */
	tracer_clear(((struct api_collect *)st->h)->t);
}

static int api_fd(const struct collector_state *st)
{
	return ring_buffer__epoll_fd(((const struct api_collect *)st->h)->rb);
}

static void api_report(struct collector_state *st)
{
	tracer_collect_maps(((struct api_collect *)st->h)->t, st->env->m);
}

static void api_close(struct collector_state *st)
{
	struct api_collect *a = st->h;

	if (!a)
		return;
	ring_buffer__free(a->rb);
	tracer_close(a->t);
	free(a);
}

const struct collector api_collector = {
	.name = "API calls",
	.wanted = api_wanted,
	.open = api_open,
	.follow = api_follow,
	.unfollow = api_unfollow,
	.set_collecting = api_set_collecting,
	.clear = api_clear,
	.fd = api_fd,
	.poll = api_poll,
	.finish = api_poll,
	.report = api_report,
	.close = api_close,
};
