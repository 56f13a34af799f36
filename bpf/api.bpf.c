// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* API tracing: one entry and one return program, attached as uprobe/uretprobe to every traced
 * function of libtopsrt.so and libtopstx.so; the attach cookie says which function it is and
 * what to capture. Calls the application makes (not those the runtime makes from inside another
 * call) either stream to topsprof through api_events, or, in statistics mode, are aggregated in
 * api_stats right here. */
/* Nothing here reads a kernel structure whose layout varies: only the registers, whose layout is
 * the architecture's ABI. Without CO-RE relocations and BTF-typed programs, libbpf need not load
 * and parse the kernel's BTF for this object (tens of ms of every start-up). */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"
#include "events.h"
#include "regs.h"
#include "stub.h"
#include "tracked.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool stats_mode = false;
const volatile __u32 max_str_bytes = 4096;
/* API_STR_PIECES(max_str_bytes) */
const volatile __u32 str_pieces = 2;
/* api_entry is loaded sleepable (Linux 6.0+): a string in a page the application has not touched
 * yet is faulted in and read (never while a ring buffer record is held: see str_piece); else
 * (false) the calls to sleepable helpers below are dead code the verifier removes, and such a
 * string goes to topsprof as faulted (API_STR_FAULT). Sleepable, the program may be preempted
 * by another run of it on the same CPU: per-CPU counters are added to atomically (count_in). */
const volatile bool sleepable = false;
/* false before Linux 5.15: no attach cookies; api_entry is reached through a stub per function
 * (stub.h), whose value is the cookie */
const volatile bool have_cookie = true;
/* Single uprobes scoped (no uprobe_multi, Linux 6.6): the first process followed has probes of
 * its own (perf uprobes with its pid, API_CK_SCOPED in their cookies), and from its first child
 * on the probes on the files are there too; a breakpoint of that process then runs both, and
 * the calls of root_tgid go by its own probes alone. root_tgid is set by topsprof (0: none). */
const volatile bool scoped_root = false;
__u32 root_tgid;

/* switched by topsprof at run time (--profile-from-start, start/stop) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* --buffer-size */
} api_events SEC(".maps");

struct frame {
	__u64 call_id;
	__u64 start_ns;
	__u64 cookie;
	__u64 args[API_REG_ARGS];
	__u64 stack[API_STACK_ARGS]; /* from the seventh argument on (args_from7) */
	__u8 attr[API_ATTR_SIZE];
};

struct thread_calls {
	__u32 depth;
	__u32 seq; /* this thread's calls: with the tid, a call id */
	struct frame f[API_MAX_DEPTH];
};

/* calls in flight, per thread */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct thread_calls);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct api_stat_key);
	__type(value, struct api_stat);
} api_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, API_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} api_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, API_STR__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} api_str_counts SEC(".maps");

/* a zeroed thread_calls to start a thread's entry from (too big for the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_calls);
} zero_calls SEC(".maps");

/* Waking topsprof for every event would cost more than the event: it is woken once an eighth
 * of the ring is full; it also reads, without being woken, every 100 ms. */
static __always_inline __u64 wakeup_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&api_events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&api_events, BPF_RB_RING_SIZE);

	return avail >= size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void count_drop(__u32 which)
{
	count_in(&api_drops, which);
}

struct str_ctx {
	const char *src;
	__u64 call_id;
	__u32 tgid, tid;
	__u32 off;
	__u32 limit; /* bytes to take at most */
	__u32 bytes; /* bytes mode: the payload's size; 0: a NUL-terminated string */
	__u8 index;
	__u8 faulted_in; /* a piece was read after faulting its pages in */
};

/* Fault in the pages of [p, p + size), two at most (size < 4096), so that the non-faulting
 * read succeeds: only a sleepable program may, and never while it holds a ring buffer record (it
 * may sleep for as long as the mapping's owner wants: a FUSE file, a userfaultfd region; every
 * record after the held one would wait for it). The second page may rightly be unmapped (a
 * string that ends before it); its error is of no matter. */
static __always_inline void fault_in(const char *p, __u32 size)
{
	__u64 next = ((__u64)p | 4095) + 1;
	char b;

	bpf_copy_from_user(&b, 1, p);
	if (next < (__u64)p + size)
		bpf_copy_from_user(&b, 1, (const void *)next);
}

/* a fixed-size read of user memory into memory of the program's own (never a ring buffer
 * record); a sleepable program faults its pages in when it must (the common, resident case
 * costs what it did) */
static __always_inline long read_user(void *dst, __u32 size, const void *src, __u8 *faulted_in)
{
	long err = bpf_probe_read_user(dst, size, src);

	if (err && sleepable) {
		err = bpf_copy_from_user(dst, size, src);
		if (!err)
			*faulted_in = 1;
	}
	return err;
}

/* the verifier must see the bound right where a size is used: an AND the compiler cannot move */
#define BOUND(v) asm volatile("%[x] &= %[m]" : [x] "+r"(v) : [m] "i"(API_STR_CHUNK - 1))

/* the bytes a piece at c->off may touch: its data, and for a string the byte after the limit
 * (whether it was cut); under API_STR_CHUNK */
static __always_inline __u32 piece_span(const struct str_ctx *c)
{
	__u32 want = c->limit - c->off;

	if (c->bytes)
		return want < API_STR_CHUNK - 1 ? want : API_STR_CHUNK - 1;
	return want < API_STR_CHUNK - 2 ? want + 1 : API_STR_CHUNK - 1;
}

/* The piece at c->off into e->data, without a page fault (nothing here sleeps): 0 with its
 * length and where it stands (0, API_STR_END or API_STR_CUT), or -1 when its memory is not
 * resident. strict: the byte after a string that fills the limit must be read too (else, not
 * readable, the string is taken as ending there). */
static __always_inline int read_piece(const struct str_ctx *c, struct tp_str_event *e,
				      __u32 *len_out, __u8 *last_out, bool strict)
{
	__u32 want = c->limit - c->off, len, size = piece_span(c);
	char next = 0;
	long n;

	BOUND(size);
	if (c->bytes) {
		if (bpf_probe_read_user(e->data, size, c->src + c->off))
			return -1;
		*len_out = size;
		if (size < want)
			*last_out = 0;
		else
			*last_out = c->bytes > c->limit ? 2 : 1;
		return 0;
	}
	/* size leaves room for the terminating NUL that the helper always writes */
	n = bpf_probe_read_user_str(e->data, size, c->src + c->off);
	if (n < 0)
		return -1;
	len = n > 0 ? (__u32)n - 1 : 0;
	*len_out = len;
	if (n == 0 || (__u32)n < size) {
		*last_out = 1; /* the string ended */
	} else if (len < want) {
		*last_out = 0;
	} else {
		/* at the limit: truncated if the string goes on */
		if (bpf_probe_read_user(&next, 1, c->src + c->off + len) && strict)
			return -1;
		*last_out = next ? 2 : 1;
	}
	return 0;
}

/* one piece of a string (or byte payload) per iteration, until its end or the limit */
static long str_piece(__u32 i, struct str_ctx *c)
{
	struct tp_str_event *e;
	__u64 ts = 0;
	__u32 len = 0;
	__u8 last = 0;

	if (c->off >= c->limit)
		return 1;
	e = bpf_ringbuf_reserve(&api_events, sizeof(*e), 0);
	if (!e) {
		count_drop(API_DROP_STR);
		return 1;
	}
	if (read_piece(c, e, &len, &last, sleepable)) {
		if (!sleepable)
			goto fault;
		/* not resident: give the record back before faulting the pages in, which may
		 * sleep; then take one again and read without faulting. A page evicted meanwhile
		 * makes it a faulted piece, as without sleepable uprobes. */
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		fault_in(c->src + c->off, piece_span(c));
		e = bpf_ringbuf_reserve(&api_events, sizeof(*e), 0);
		if (!e) {
			count_drop(API_DROP_STR);
			return 1;
		}
		if (read_piece(c, e, &len, &last, false))
			goto fault;
		c->faulted_in = 1;
	}
	c->off += len;
	goto send;
fault:
	/* no data: where the read failed and what was left, for topsprof to read if it safely can
	 * (woken at once, while the process still runs); the time tells topsprof whether a
	 * process it finds under this pid started after the call */
	len = 0;
	last = API_STR_END | API_STR_FAULT;
	e->fault.addr = (__u64)c->src + c->off;
	e->fault.want = c->limit - c->off;
	e->fault.bytes = c->bytes;
	ts = bpf_ktime_get_ns();
	count_in(&api_str_counts, API_STR_FAULTED);
send:
	/* once a string, at its last piece */
	if (last && c->faulted_in)
		count_in(&api_str_counts, API_STR_FAULTED_IN);
	e->hdr.type = EV_API_STR;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.pid = c->tgid;
	e->hdr.tid = c->tid;
	e->hdr.ts_ns = ts;
	e->call_id = c->call_id;
	e->offset = c->off - len;
	e->len = (__u16)len;
	e->index = c->index;
	e->last = last;
	bpf_ringbuf_submit(e, last & API_STR_FAULT ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
	return last ? 1 : 0;
}

/* pieces a string of the longest limit (--topstx-max-bytes-size 1MB) takes */
#define STR_PIECES_MAX API_STR_PIECES(1u << 20)

/* loop: with bpf_loop (Linux 5.17+), else a bounded loop the verifier walks */
static __always_inline void capture_str(__u64 call_id, __u32 tgid, __u32 tid, __u8 index,
					const void *src, __u32 bytes, bool loop)
{
	struct str_ctx c = {
		.src = src,
		.call_id = call_id,
		.tgid = tgid,
		.tid = tid,
		.limit = max_str_bytes,
		.bytes = bytes,
		.index = index,
	};

	if (!src)
		return;
	if (bytes && bytes < c.limit)
		c.limit = bytes; /* truncated when bytes > max_str_bytes */
	if (loop) {
		bpf_loop(str_pieces, str_piece, &c, 0);
		return;
	}
	/* str_pieces is known to the verifier (read-only data): it walks that many pieces */
	for (__u32 i = 0; i < STR_PIECES_MAX && i < str_pieces; i++)
		if (str_piece(i, &c))
			break;
}

/* the topstxEventAttributes_t at arg could not be read: its message is unknown, sent as faulted
 * (API_STR_ATTR) so that it is counted, or read by topsprof */
static __always_inline void attr_fault(__u64 call_id, __u32 tgid, __u32 tid, const void *arg)
{
	struct tp_str_event *e = bpf_ringbuf_reserve(&api_events, sizeof(*e), 0);

	if (!e) {
		count_drop(API_DROP_STR);
		return;
	}
	e->hdr.type = EV_API_STR;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->hdr.ts_ns = bpf_ktime_get_ns(); /* see str_piece */
	e->call_id = call_id;
	e->offset = 0;
	e->len = 0;
	e->index = 0;
	e->last = API_STR_END | API_STR_FAULT | API_STR_ATTR;
	e->fault.addr = (__u64)arg;
	e->fault.want = max_str_bytes;
	e->fault.bytes = 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	count_in(&api_str_counts, API_STR_FAULTED);
}

/* argument i of the call (a constant offset for each, as the verifier wants) */
static __always_inline __u64 reg_arg(const struct frame *f, __u32 i)
{
	switch (i) {
	case 0:
		return f->args[0];
	case 1:
		return f->args[1];
	case 2:
		return f->args[2];
	case 3:
		return f->args[3];
	case 4:
		return f->args[4];
	default:
		return f->args[5];
	}
}

static __always_inline int entry(struct pt_regs *ctx, bool loop)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie;
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, d;
	struct thread_calls *tc;
	struct frame *f;

	if (!collecting)
		return 0;
	if (!is_tracked(tgid))
		return 0;
	if (have_cookie) {
		cookie = bpf_get_attach_cookie(ctx);
	} else if (!stub_value_get(&cookie)) {
		count_drop(API_DROP_CALL); /* before the call is known: its return finds none */
		return 0;
	}
	if (scoped_root && !(cookie & API_CK_SCOPED) && tgid == READ_ONCE(root_tgid))
		return 0;
	tc = bpf_map_lookup_elem(&inflight, &tid);
	if (!tc) {
		struct thread_calls *z = bpf_map_lookup_elem(&zero_calls, &zero);

		if (!z)
			return 0;
		tc = lookup_or_init(&inflight, &tid, z);
		if (!tc)
			return 0;
	}
	d = tc->depth;
	tc->depth = d + 1;
	if (d >= API_MAX_DEPTH) {
		count_drop(API_DROP_DEPTH);
		return 0;
	}
	f = &tc->f[d & (API_MAX_DEPTH - 1)];
	f->cookie = cookie;
	/* statistics mode keeps nothing of a runtime call but its start */
	if (stats_mode && !(cookie & API_CK_TOPSTX)) {
		f->start_ns = bpf_ktime_get_ns();
		return 0;
	}
	f->call_id = ((__u64)tid << 32) | ++tc->seq;
	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	f->args[3] = PT_REGS_PARM4(ctx);
	f->args[4] = PT_REGS_PARM5(ctx);
	f->args[5] = ARG6(ctx);
	if (cookie & API_CK_STACK)
		args_from7(ctx, f->stack, API_STACK_ARGS);
	else
		__builtin_memset(f->stack, 0, sizeof(f->stack));
	__builtin_memset(f->attr, 0, sizeof(f->attr));
	/* strings of the calls the application makes, read while they are valid */
	if (d == 0 && (cookie & (API_CK_STR | API_CK_ATTR))) {
		const void *arg = (const void *)reg_arg(f, API_CK_ARG(cookie));

		__u8 faulted_in = 0;

		if (cookie & API_CK_STR) {
			capture_str(f->call_id, tgid, tid, 0, arg, 0, loop);
		} else if (arg && read_user(f->attr, sizeof(f->attr), arg, &faulted_in)) {
			attr_fault(f->call_id, tgid, tid, arg);
		} else if (arg) {
			const void *msg = *(const void **)&f->attr[ATTR_OFF_MESSAGE];
			const void *payload = *(const void **)&f->attr[ATTR_OFF_PAYLOAD];
			__s32 ptype = *(__s32 *)&f->attr[ATTR_OFF_PAYLOAD_TYPE];
			__u32 psize = *(__u32 *)&f->attr[ATTR_OFF_PAYLOAD_SIZE];

			capture_str(f->call_id, tgid, tid, 0, msg, 0, loop);
			if (ptype == TOPSTX_PAYLOAD_STRING)
				capture_str(f->call_id, tgid, tid, 1, payload, 0, loop);
			else if (ptype == TOPSTX_PAYLOAD_BYTES && psize)
				capture_str(f->call_id, tgid, tid, 1, payload, psize, loop);
		}
	}
	/* the entry time is taken last, so that capturing costs no time of the call */
	f->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(api_entry)
{
	return entry(ctx, true);
}

/* the same, for kernels without bpf_loop (before Linux 5.17); topsprof loads one of the two */
SEC("uprobe")
int BPF_KPROBE(api_entry_bounded)
{
	return entry(ctx, false);
}

static __always_inline void stat_add(struct api_stat *st, __u64 dur)
{
	/* a CPU's slot of a per-CPU entry another CPU created starts zeroed */
	if (!st->count || dur < st->min_ns)
		st->min_ns = dur;
	if (dur > st->max_ns)
		st->max_ns = dur;
	st->count++;
	st->total_ns += dur;
}

static __always_inline void account(__u32 tgid, __u32 fn, __u64 dur)
{
	struct api_stat_key key = { .pid = tgid, .fn = fn };
	struct api_stat zero = {};
	struct api_stat *st = lookup_or_init(&api_stats, &key, &zero);

	if (!st) {
		count_drop(API_DROP_STAT);
		return;
	}
	stat_add(st, dur);
}

SEC("uretprobe")
int BPF_KRETPROBE(api_return)
{
	__u64 end = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, d;
	struct thread_calls *tc = bpf_map_lookup_elem(&inflight, &tid);
	struct tp_api_event *e;
	struct frame *f;

	if (scoped_root && tgid == READ_ONCE(root_tgid) &&
	    !(bpf_get_attach_cookie(ctx) & API_CK_SCOPED))
		return 0;
	if (!tc || tc->depth == 0) /* its entry was not collected */
		return 0;
	d = --tc->depth;
	if (d != 0) /* the runtime calling itself: not the application's call */
		return 0;
	f = &tc->f[0];
	if (stats_mode && !(f->cookie & API_CK_TOPSTX)) {
		account(tgid, (__u32)(f->cookie & API_CK_FN_MASK), end - f->start_ns);
		return 0;
	}
	e = bpf_ringbuf_reserve(&api_events, sizeof(*e), 0);
	if (!e) {
		count_drop(API_DROP_CALL);
		return 0;
	}
	e->hdr.type = EV_API_CALL;
	e->hdr.cpu = bpf_get_smp_processor_id();
	e->hdr.pid = tgid;
	e->hdr.tid = tid;
	e->hdr.ts_ns = end;
	e->call_id = f->call_id;
	e->start_ns = f->start_ns;
	e->fn = (__u32)(f->cookie & API_CK_FN_MASK);
	e->flags = 0;
	/* an int return leaves the upper half of the register (rax, x0) undefined */
	e->ret = f->cookie & API_CK_RET64 ? (__s64)PT_REGS_RC(ctx) : (__s64)(__s32)PT_REGS_RC(ctx);
	__builtin_memcpy(e->args, f->args, sizeof(e->args));
	__builtin_memcpy(e->stack, f->stack, sizeof(e->stack));
	__builtin_memcpy(e->attr, f->attr, sizeof(e->attr));
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/* a thread that ends inside a traced call never returns from it: forget its calls, so that the
 * next thread given its id starts afresh (the tracepoint runs in the exiting thread) */
SEC("raw_tp/sched_process_exit")
int api_thread_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	(void)ctx;
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}
