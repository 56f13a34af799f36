// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* CPU callstack sampling: a software cpu-clock perf event on every CPU runs this program. With
 * frame pointers (--cpu-profiling-unwind fp) a sample of a tracked process counts its user and
 * kernel stacks in the kernel, and topsprof reads the counts and the stacks at the end. Otherwise
 * (dwarf) each sample sends the thread's user registers and a copy of its user stack, which
 * topsprof unwinds by the call frame information of the code they ran (symbols/unwind.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"
#include "events.h"
#include "tracked.h"
#include "uregs.h"
#include "user_returns.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* true: the user stack is copied for topsprof to unwind, not walked here by frame pointers */
const volatile bool copy_stack = false;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384); /* topsprof may resize before load */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CPU_STACK_DEPTH * sizeof(__u64));
} cpu_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cpu_key);
	__type(value, __u64);
} cpu_counts SEC(".maps");

/* the processes sampled so far; the first sample of each is announced on cpu_new */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64); /* the image last announced (announce_process) */
} cpu_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} cpu_new SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPU_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cpu_drops SEC(".maps");

static __always_inline void count_drop(__u32 which)
{
	count_in(&cpu_drops, which);
}

/* one sample being made per CPU (a perf_event program does not nest on its CPU); topsprof sets
 * max_entries to the number of CPUs. Too big for a per-CPU array's value (32 KB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_sample);
} cpu_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* topsprof may resize before load */
} cpu_samples SEC(".maps");

/* topsprof reads the samples every 100 ms without being woken, and is woken once an eighth of
 * the ring is full. A wakeup for every sample lost samples: in 1 run of 4 here, a quarter of a
 * 2-second run's went unseen (no program run, no drop counted), never with no wakeups. */
static __always_inline __u64 wakeup_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&cpu_samples, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&cpu_samples, BPF_RB_RING_SIZE);

	return avail >= size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

struct vma_end {
	__u64 end;
};

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_end *)data)->end = vma->vm_end;
	return 0;
}

/* How many bytes of user stack from sp to copy: up to the end of its mapping, found by
 * bpf_find_vma (Linux 5.17+); without it (or when it fails) up to the main thread's stack top
 * when sp is near it
 * (the stack's mapping reaches past start_stack), else CPU_USTACK_MAX, which copy_searched
 * shortens to what reads. */
static __always_inline __u64 stack_span(struct task_struct *task, __u64 sp, bool find_vma)
{
	struct vma_end v = { 0 };
	__u64 top;

	/* it fails (-EBUSY) while the mmap lock is taken or wanted for writing (a sample in
	 * mmap or brk): then as without it */
	if (find_vma && !bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end_cb, &v, 0) &&
	    v.end > sp)
		return v.end - sp < CPU_USTACK_MAX ? v.end - sp : CPU_USTACK_MAX;
	top = BPF_CORE_READ(task, mm, start_stack);
	if (top > sp && top - sp < CPU_USTACK_MAX)
		return top - sp;
	return CPU_USTACK_MAX;
}

/* Where the stack's end is not known (before bpf_find_vma) and a whole copy did not read: the
 * longest that reads, found by halves in whole pages past sp's own (which reads: sp is in it),
 * then read again (a read that fails leaves zeros); its length, 0 when nothing reads. */
static __always_inline __u64 copy_searched(struct cpu_sample *s, __u64 sp)
{
	const __u64 first = 4096 - (sp & 4095);
	__u32 ok = 0, bad = (CPU_USTACK_MAX + 4095) / 4096; /* pages past the first */
	__u64 len;

	for (int i = 0; i < 4 && bad - ok > 1; i++) {
		__u32 mid = (ok + bad) / 2;

		len = first + (__u64)mid * 4096;
		if (len > CPU_USTACK_MAX)
			len = CPU_USTACK_MAX;
		if (!bpf_probe_read_user(s->stack, len, (void *)sp))
			ok = mid;
		else
			bad = mid;
	}
	len = first + (__u64)ok * 4096;
	if (len > CPU_USTACK_MAX)
		len = CPU_USTACK_MAX;
	return bpf_probe_read_user(s->stack, len, (void *)sp) ? 0 : len;
}

/* the sample sent with its registers and stack; false when the ring buffer was full */
static __always_inline bool cpu_copy(const struct cpu_key *key, bool find_vma)
{
	struct task_struct *task = task_current();
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_sample *s = bpf_map_lookup_elem(&cpu_scratch, &cpu);
	__u64 len = 0, sp;

	if (!s)
		return true;
	s->tgid = key->tgid;
	s->tid = key->tid;
	s->kstack = key->kstack;
	s->uret = key->uret;
	if (user_regs_dwarf(task, s->regs)) {
		sp = s->regs[UREG_SP];
		len = stack_span(task, sp, find_vma);
		if (len > CPU_USTACK_MAX)
			len = CPU_USTACK_MAX;
		if (len && bpf_probe_read_user(s->stack, len, (void *)sp))
			len = copy_searched(s, sp);
	} else {
		__builtin_memset(s->regs, 0, sizeof(s->regs));
	}
	if (len > CPU_USTACK_MAX)
		len = CPU_USTACK_MAX;
	s->stack_len = (__u32)len;
	return !bpf_ringbuf_output(&cpu_samples, s, offsetof(struct cpu_sample, stack) + len,
				   wakeup_flag());
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, bool find_vma)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct cpu_key key = { .tgid = id >> 32, .tid = (__u32)id };
	__u64 zero = 0, *n;

	if (!key.tgid || !collecting) /* the idle task */
		return 0;
	if (!is_tracked(key.tgid))
		return 0;
	announce_process(&cpu_seen, &cpu_new, key.tgid);
	key.kstack = bpf_get_stackid(ctx, &cpu_stacks, 0);
	kc_user_returns(&key.uret);
	if (copy_stack) {
		if (!cpu_copy(&key, find_vma))
			count_drop(CPU_DROP_SAMPLE);
		return 0;
	}
	key.ustack = bpf_get_stackid(ctx, &cpu_stacks, BPF_F_USER_STACK);
	/* a negative id stays in the key: -EFAULT, no frames on that side; else the stack was lost
	 * (-ENOMEM: the map is full; -EEXIST: its bucket holds another stack) */
	n = lookup_or_init(&cpu_counts, &key, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		count_drop(CPU_DROP_COUNT);
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/* the same without bpf_find_vma (before Linux 5.17); topsprof loads one of the two */
SEC("perf_event")
int cpu_sample_novma(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}
