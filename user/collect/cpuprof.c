// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/cpuprof.h"

#include "collect/bpfmaps.h"
#include "collect/bpfstub.h"
#include "collect/collector.h"
#include "cpu.skel.h"
#include "events.h"
#include "lib/log.h"
#include "symbols/proccache.h"
#include "symbols/stackname.h"
#include "symbols/symbolize.h"
#include "symbols/unwind.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/monotime.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a user stack unwound here, with its kernel side's stack map id, and how often it was seen */
struct ustack {
	uint64_t hash, count;
	uint32_t tgid;
	int32_t kstack;
	uint32_t ip0; /* its frames: ips[ip0 .. ip0 + n) */
	uint16_t n;
	uint8_t end; /* enum stack_end */
};

/* the stack copies' ring buffer: 8 MB, and 256 KB a CPU past 32 (read every 100 ms, or when an
 * eighth is full: at 100 Hz, 80 whole copies a CPU, or 4 times as many of a typical 6 KB) */
#define SAMPLES_RING_MIN     (8u << 20)
#define SAMPLES_RING_PER_CPU (256u << 10)
/* distinct stacks kept (the frame-pointer path's stack map keeps 16384): past them, samples of a
 * new stack are lost, counted */
#define USTACKS_MAX (1u << 20)
/* a sample with an address in no mapping known (code mapped since they were read: the C library
 * while the process starts, a dlopen) reads its process's anew, this often at most */
#define REREAD_NS (20 * 1000000ull)

struct cpuprof {
	struct cpu_bpf *skel;
	struct bpf_link **links;
	struct bpf_program *prog; /* the one of cpu_sample(_novma) this kernel loads */
	int ncpus;
	struct proc_watch procs; /* announced on cpu_new when first sampled; all in cpu_seen */
	bool unwind;		 /* stack copies come on cpu_samples, unwound here */
	struct unwinder *uw;
	struct ustack *us;
	size_t nus, capus;
	struct idindex index; /* of us, by hash */
	uint64_t *ips;
	size_t nips, capips;
	uint64_t unwound, unwind_ns, copied, bad_records;
	uint64_t full; /* samples of a new stack past USTACKS_MAX, lost */
	bool oom;      /* said */
};

/* the stack copies' maps sized, and the sampling program that fits the kernel chosen; with
 * frame pointers, the least of both */
static int set_copy_maps(struct cpuprof *c)
{
	int ncpus = libbpf_num_possible_cpus(), err;
	__u32 ring = SAMPLES_RING_MIN;
	/* a kernel without bpf_find_vma refuses a program that names its callback, even where it
	 * would not run (frame pointers): the program is chosen by the kernel alone */
	bool find_vma = bpf_have_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma,
					"TOPSPROF_NO_FIND_VMA");

	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	while (ring / SAMPLES_RING_PER_CPU < (__u32)ncpus && ring < (1u << 30))
		ring *= 2;
	err = bpf_map__set_max_entries(c->skel->maps.cpu_scratch, c->unwind ? (__u32)ncpus : 1)
		      ?: bpf_map__set_max_entries(c->skel->maps.cpu_samples,
						  c->unwind ? ring : (__u32)getpagesize());
	c->prog = find_vma ? c->skel->progs.cpu_sample : c->skel->progs.cpu_sample_novma;
	bpf_program__set_autoload(c->skel->progs.cpu_sample, find_vma);
	bpf_program__set_autoload(c->skel->progs.cpu_sample_novma, !find_vma);
	if (c->unwind)
		pr_debug("CPU sampling: user stacks copied (%u KB at most) and unwound by their "
			 "CFI; stack ends %s",
			 CPU_USTACK_MAX / 1024,
			 find_vma ? "by bpf_find_vma" : "by the stack's top, or shortened to read");
	return err;
}

static int open_events(struct cpuprof *c, uint32_t hz)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	int attached = 0;

	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0)
		return c->ncpus ? c->ncpus : -ENODEV;
	c->links = calloc((size_t)c->ncpus, sizeof(*c->links));
	if (!c->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		int pfd =
			(int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (pfd < 0) {
			if (errno == ENODEV) /* an offline CPU */
				continue;
			return -errno;
		}
		/* once attached, the link owns pfd and closes it */
		c->links[cpu] = bpf_program__attach_perf_event(c->prog, pfd);
		if (!c->links[cpu]) {
			int err = -errno;

			close(pfd);
			return err;
		}
		attached++;
	}
	pr_debug("CPU sampling: cpu-clock at %u Hz on %d CPUs", hz, attached);
	return attached ? 0 : -ENODEV;
}

static uint64_t stack_hash(uint32_t tgid, int32_t kstack, const uint64_t *ips, size_t n)
{
	return hash_mix64(hash_fnv1a(HASH_FNV_BASIS ^ ((uint64_t)tgid << 32 | (uint32_t)kstack),
				     ips, n * sizeof(*ips)));
}

static uint64_t ustack_key(const void *ctx, uint32_t i)
{
	return ((const struct cpuprof *)ctx)->us[i].hash;
}

/* one more sample of a stack; false when out of memory */
static bool count_stack(struct cpuprof *c, uint32_t tgid, int32_t kstack, const uint64_t *ips,
			size_t n, enum stack_end end)
{
	uint64_t h = stack_hash(tgid, kstack, ips, n);
	uint32_t j;

	if (!idindex_room(&c->index, (uint32_t)c->nus, ustack_key, c))
		return false;
	for (j = idindex_first(&c->index, h); c->index.slot[j]; j = idindex_next(&c->index, j)) {
		struct ustack *e = &c->us[c->index.slot[j] - 1];

		if (e->hash == h && e->tgid == tgid && e->kstack == kstack && e->n == n &&
		    (!n || !memcmp(&c->ips[e->ip0], ips, n * sizeof(*ips)))) {
			e->count++;
			return true;
		}
	}
	if (c->nus == USTACKS_MAX) {
		c->full++;
		return true;
	}
	if (!grow_array((void **)&c->us, &c->capus, c->nus, sizeof(*c->us)) ||
	    !grow_array_to((void **)&c->ips, &c->capips, c->nips + n, sizeof(*c->ips)))
		return false;
	if (n) /* no frames (no registers): the pool may still be empty */
		memcpy(&c->ips[c->nips], ips, n * sizeof(*ips));
	c->us[c->nus] = (struct ustack){ .hash = h,
					 .count = 1,
					 .tgid = tgid,
					 .kstack = kstack,
					 .ip0 = (uint32_t)c->nips,
					 .n = (uint16_t)n,
					 .end = (uint8_t)end };
	c->nips += n;
	c->index.slot[j] = (uint32_t)++c->nus;
	return true;
}

/* a sample's stack copy, unwound as it comes (its process's mappings were read when it was
 * announced, on the ring buffer consumed before this one) */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct cpuprof *c = ctx;
	const struct cpu_sample *s = data;
	const size_t head = offsetof(struct cpu_sample, stack);
	uint64_t ips[UNWIND_MAX_FRAMES], t0 = mono_ns();
	struct unwind_input in;
	const struct cached_proc *p;
	enum stack_end end;
	size_t n = 0;

	if (size < head || s->stack_len > size - head) {
		c->bad_records++;
		return 0;
	}
	in = (struct unwind_input){ (const uint64_t *)s->regs, s->stack, s->stack_len, &s->uret };
	p = proccache_find(&c->procs.cache, s->tgid);
	if (!p) {
		proccache_capture(&c->procs.cache, s->tgid, t0);
		p = proccache_find(&c->procs.cache, s->tgid);
	}
	if (p) {
		n = unwind_user(c->uw, &p->maps, &in, ips, UNWIND_MAX_FRAMES, &end);
		if (end == STACK_END_UNMAPPED && !p->gone && t0 - p->read_ns > REREAD_NS) {
			proccache_renew(&c->procs.cache, s->tgid, t0);
			p = proccache_find(&c->procs.cache, s->tgid);
			if (p)
				n = unwind_user(c->uw, &p->maps, &in, ips, UNWIND_MAX_FRAMES, &end);
		}
	} else {
		end = STACK_END_UNMAPPED;
	}
	if (!count_stack(c, s->tgid, s->kstack, ips, n, end) && !c->oom) {
		c->oom = true;
		pr_warn("CPU stacks: out of memory; samples from now on are lost");
	}
	c->unwound++;
	c->copied += s->stack_len;
	c->unwind_ns += mono_ns() - t0;
	return 0;
}

int cpuprof_open(struct cpuprof **out, const struct cpuprof_opts *o)
{
	struct cpuprof *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->skel = cpu_bpf__open();
	if (!c->skel) {
		err = -errno;
		pr_error("opening the CPU sampling BPF object: %s", strerror(-err));
		goto fail;
	}
	c->skel->rodata->filter_pids = !o->system_wide;
	c->skel->rodata->copy_stack = c->unwind = !o->unwind_fp;
	c->skel->data->collecting = o->collecting;
	err = set_copy_maps(c);
	if (!err && o->pid_map_fd >= 0)
		err = bpf_map__reuse_fd(c->skel->maps.tracked_pids, o->pid_map_fd);
	if (!err)
		err = cpu_bpf__load(c->skel);
	if (err) {
		pr_error("loading the CPU sampling BPF program: %s", strerror(-err));
		goto fail;
	}
	err = proc_watch_init(&c->procs, bpf_map__fd(c->skel->maps.cpu_new),
			      bpf_map__fd(c->skel->maps.cpu_seen));
	/* consumed after cpu_new, whose announcements read the processes' mappings */
	if (!err && c->unwind &&
	    (unwinder_new(&c->uw) ||
	     ring_buffer__add(c->procs.rb, bpf_map__fd(c->skel->maps.cpu_samples), on_sample, c)))
		err = -ENOMEM;
	if (err) {
		pr_error("opening the CPU sampling ring buffer: %s", strerror(-err));
		goto fail;
	}
	err = open_events(c, o->hz);
	if (err) {
		pr_error("starting CPU sampling (cpu-clock perf events): %s", strerror(-err));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	cpuprof_close(c);
	return err;
}

void cpuprof_close(struct cpuprof *c)
{
	if (!c)
		return;
	for (int i = 0; c->links && i < c->ncpus; i++)
		bpf_link__destroy(c->links[i]);
	proc_watch_free(&c->procs);
	unwinder_free(c->uw);
	free(c->us);
	idindex_free(&c->index);
	free(c->ips);
	free(c->links);
	cpu_bpf__destroy(c->skel);
	free(c);
}

void cpuprof_set_collecting(struct cpuprof *c, bool on)
{
	if (c)
		c->skel->data->collecting = on;
}

void cpuprof_clear(struct cpuprof *c)
{
	if (!c)
		return;
	bpf_map_clear(bpf_map__fd(c->skel->maps.cpu_counts), sizeof(struct cpu_key));
	/* what the ring still holds was taken before: counted, then thrown away with the rest */
	proc_watch_poll(&c->procs, false);
	c->nus = c->nips = c->full = 0;
	idindex_clear(&c->index);
	/* the losses of the time thrown away go too */
	for (uint32_t i = 0; i < CPU_DROP__COUNT; i++)
		percpu_u64_zero(bpf_map__fd(c->skel->maps.cpu_drops), i);
}

void cpuprof_poll(struct cpuprof *c)
{
	if (c)
		proc_watch_poll(&c->procs, false);
}

int cpuprof_epoll_fd(const struct cpuprof *c)
{
	return c ? proc_watch_epoll_fd(&c->procs) : -1;
}

int cpuprof_collect(struct cpuprof *c, struct cpu_profile *p)
{
	int counts = bpf_map__fd(c->skel->maps.cpu_counts);
	int stacks = bpf_map__fd(c->skel->maps.cpu_stacks);
	struct cpu_key k, *prev = NULL;
	struct stackname name = { 0 };
	struct symbolizer sym;
	uint64_t lost = 0;
	int err = 0;

	symbolizer_init(&sym, NULL);
	proc_watch_poll(&c->procs, true);
	while (!err && !bpf_map_get_next_key(counts, prev, &k)) {
		const struct cached_proc *proc = proccache_find(&c->procs.cache, k.tgid);
		bool complete;
		uint64_t n;

		prev = &k;
		if (bpf_map_lookup_elem(counts, &k, &n))
			continue;
		err = stack_name(&sym, stacks, proc ? &proc->maps : NULL, k.ustack, k.kstack, false,
				 &k.uret, NULL, &name, &complete);
		if (err)
			break;
		/* a side the kernel could not keep (else -EFAULT: that side had no frames) */
		if ((k.ustack < 0 && k.ustack != -EFAULT) || (k.kstack < 0 && k.kstack != -EFAULT))
			p->lost_stacks += n;
		err = cpu_profile_add(p, k.tgid, proc ? proc->comm : "?",
				      name.len ? name.buf : "[no stack]", n, !complete);
	}
	for (size_t i = 0; !err && i < c->nus; i++) {
		const struct ustack *e = &c->us[i];
		const struct cached_proc *proc = proccache_find(&c->procs.cache, e->tgid);

		enum stack_end end = (enum stack_end)e->end;

		err = stack_name_unwound(&sym, stacks, proc ? &proc->maps : NULL, &c->ips[e->ip0],
					 e->n, e->kstack, &name);
		if (err)
			break;
		if (e->kstack < 0 && e->kstack != -EFAULT)
			p->lost_stacks += e->count;
		p->ends[end] += e->count;
		err = cpu_profile_add(p, e->tgid, proc ? proc->comm : "?",
				      name.len ? name.buf : "[no stack]", e->count,
				      end != STACK_END_ENTRY);
	}
	p->unwound = c->unwind;
	for (uint32_t i = 0; i < CPU_DROP__COUNT; i++) {
		uint64_t v = 0;

		percpu_u64_sum(bpf_map__fd(c->skel->maps.cpu_drops), i, &v);
		lost += v;
	}
	p->lost_samples += lost + c->full;
	if (c->unwind && c->unwound) {
		struct unwind_stats st;

		unwinder_stats(c->uw, &st);
		pr_debug(
			"CPU samples unwound: %llu, %.1f us each on average (their mappings' reads "
			"too), %.0f bytes of stack copied each; unwind rules of %zu files, %zu "
			"addresses, %zu KB; %llu bad records",
			(unsigned long long)c->unwound,
			(double)c->unwind_ns / 1e3 / (double)c->unwound,
			(double)c->copied / (double)c->unwound, st.files, st.rules, st.bytes / 1024,
			(unsigned long long)c->bad_records);
	}
	{
		/* what the sampling program cost, when kernel.bpf_stats_enabled is on */
		struct bpf_prog_info info = { 0 };
		__u32 ilen = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(c->prog), &info, &ilen) && info.run_cnt)
			pr_debug("CPU sampling program: %llu runs, %llu ns each on average",
				 (unsigned long long)info.run_cnt,
				 (unsigned long long)(info.run_time_ns / info.run_cnt));
	}
	if (sym.kerr && sym.kloaded)
		pr_warn("kernel frames not named: /proc/kallsyms: %s", strerror(-sym.kerr));
	symbolizer_free(&sym);
	free(name.buf);
	cpu_profile_finish(p);
	return err;
}

/* -- the CPU stacks collector ------------------------------------------------------------------ */

static bool cpu_wanted(const struct collect_settings *s)
{
	return s->cpu_stacks;
}

static int cpu_open(struct collector_state *st)
{
	struct collect_env *env = st->env;
	struct cpuprof_opts o = { .system_wide = env->set->system_wide,
				  .collecting = env->set->collecting,
				  .hz = env->set->cpu_hz,
				  .unwind_fp = env->set->cpu_unwind_fp,
				  .pid_map_fd = env->pid_map_fd };

	if (cpuprof_open((struct cpuprof **)&st->h, &o))
		return 1;
	env->m->cpu.sampled = true;
	env->m->cpu.hz = o.hz;
	return 0;
}

static void cpu_set_collecting(struct collector_state *st, bool on)
{
	cpuprof_set_collecting(st->h, on);
}

static void cpu_clear(struct collector_state *st)
{
	cpuprof_clear(st->h);
}

static int cpu_fd(const struct collector_state *st)
{
	return cpuprof_epoll_fd(st->h);
}

static void cpu_poll(struct collector_state *st)
{
	cpuprof_poll(st->h);
}

static void cpu_report(struct collector_state *st)
{
	if (cpuprof_collect(st->h, &st->env->m->cpu))
		pr_warn("CPU stacks: out of memory; the CPU activities are incomplete");
}

static void cpu_close(struct collector_state *st)
{
	cpuprof_close(st->h);
}

const struct collector cpu_collector = {
	.name = "CPU stacks",
	.wanted = cpu_wanted,
	.open = cpu_open,
	.set_collecting = cpu_set_collecting,
	.clear = cpu_clear,
	.fd = cpu_fd,
	.poll = cpu_poll,
	.report = cpu_report,
	.close = cpu_close,
};
