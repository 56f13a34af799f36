// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/cpuprof.h"

#include "collect/bpfmaps.h"
#include "collect/collector.h"
#include "cpu.skel.h"
#include "events.h"
#include "lib/log.h"
#include "symbols/proccache.h"
#include "symbols/stackname.h"
#include "symbols/symbolize.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cpuprof {
	struct cpu_bpf *skel;
	struct bpf_link **links;
	int ncpus;
	struct proc_watch procs; /* announced on cpu_new when first sampled; all in cpu_seen */
};

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
		c->links[cpu] = bpf_program__attach_perf_event(c->skel->progs.cpu_sample, pfd);
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
	c->skel->data->collecting = o->collecting;
	err = o->pid_map_fd >= 0 ? bpf_map__reuse_fd(c->skel->maps.tracked_pids, o->pid_map_fd) : 0;
	if (!err)
		err = cpu_bpf__load(c->skel);
	if (err) {
		pr_error("loading the CPU sampling BPF program: %s", strerror(-err));
		goto fail;
	}
	err = proc_watch_init(&c->procs, bpf_map__fd(c->skel->maps.cpu_new),
			      bpf_map__fd(c->skel->maps.cpu_seen));
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
	percpu_u64_sum(bpf_map__fd(c->skel->maps.cpu_drops), CPU_DROP_COUNT, &lost);
	p->lost_samples += lost;
	{
		/* what the sampling program cost, when kernel.bpf_stats_enabled is on */
		struct bpf_prog_info info = { 0 };
		__u32 ilen = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(c->skel->progs.cpu_sample), &info,
					    &ilen) &&
		    info.run_cnt)
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
