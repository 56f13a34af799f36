/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Records that BPF programs send to topsprof through ring buffers. One header for both sides:
 * BPF code includes vmlinux.h first, user code gets the __u32/__u64 types from linux/types.h.
 * Every record starts with struct tp_event_hdr, whose type says what follows. */
#ifndef TOPSPROF_EVENTS_H
#define TOPSPROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TASK_COMM_LEN 16

enum tp_event_type {
	EV_PROC_FORK = 1, /* a tracked process created a child process */
	EV_PROC_EXEC = 2, /* a tracked process exec'd a new image */
	EV_PROC_EXIT = 3, /* the last thread of a tracked process exited */
	/* a tracked process was stopped (SIGSTOP) before its first instruction, for its API probes
	 * to go in (scoped probes, bpf/proc.bpf.c); ppid: why (enum tp_hold_why); exit_code:
	 * bpf_send_signal's result, 0 when it is stopped. Never in raw data */
	EV_PROC_HELD = 4,
	EV_API_CALL = 10, /* a runtime or topstx API call returned (struct tp_api_event) */
	EV_API_STR = 11,  /* a piece of a string argument of a call (struct tp_str_event) */
};

struct tp_event_hdr {
	__u32 type; /* enum tp_event_type */
	__u32 cpu;
	__u32 pid; /* tgid */
	__u32 tid;
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

enum tp_hold_why {
	HOLD_FORK = 1,	      /* a new process, with the runtime mapped from its parent */
	HOLD_EXEC = 2,	      /* a new image, exec'd before the process's probes were in */
	HOLD_THREAD_EXEC = 3, /* a new image exec'd by a thread other than the first: new links */
};

struct tp_proc_event {
	struct tp_event_hdr hdr;
	__u32 ppid;	 /* EV_PROC_FORK: the parent; hdr.pid is the child */
	__s32 exit_code; /* EV_PROC_EXIT: as wait(2) reports it (status << 8 | signal) */
	char comm[TASK_COMM_LEN];
};

/* --- API tracing (bpf/api.bpf.c) ----------------------------------------------------------- */

/* Each uprobe carries a cookie: the function's index in topsprof's API table and what to
 * capture at entry. Register arguments are always captured; stack arguments, strings and
 * topstx attributes when the cookie says so. */
#define API_CK_FN_MASK	  0xffffull
#define API_CK_STACK	  (1ull << 16) /* capture API_STACK_ARGS arguments passed on the stack */
#define API_CK_TOPSTX	  (1ull << 17) /* topstx: streamed even in statistics mode */
#define API_CK_STR	  (1ull << 18) /* argument API_CK_ARG() is a C string */
#define API_CK_ATTR	  (1ull << 19) /* argument API_CK_ARG() is a topstxEventAttributes_t * */
#define API_CK_RET64	  (1ull << 24) /* returns 64 bits (a pointer, an id); else an int in eax */
#define API_CK_SCOPED	  (1ull << 25) /* a probe of the first process's own (its pid) */
#define API_CK_ARG(c)	  (((c) >> 20) & 0xf)
#define API_CK_ARG_IDX(i) ((__u64)(i) << 20)

#define API_REG_ARGS	  6
#define API_STACK_ARGS	  4
#define API_ATTR_SIZE	  40	/* sizeof(topstxEventAttributes_t) */
#define TRACKED_PIDS_MAX  16384 /* processes followed at once: tracked_pids' size */
#define API_MAX_DEPTH	  4	/* API calls made from inside API calls, per thread */

/* topstxEventAttributes_t, as the BPF side reads it */
#define ATTR_OFF_MESSAGE      16
#define ATTR_OFF_PAYLOAD_TYPE 24
#define ATTR_OFF_PAYLOAD_SIZE 28
#define ATTR_OFF_PAYLOAD      32
#define TOPSTX_PAYLOAD_STRING 4
#define TOPSTX_PAYLOAD_BYTES  5

#define API_STR_CHUNK	      4096 /* bytes of string data per tp_str_event */
/* the pieces of API_STR_CHUNK - 2 bytes (a piece may need the NUL and the byte after a cut) a
 * string of bytes takes, and one more */
#define API_STR_PIECES(bytes) (1 + (bytes) / (API_STR_CHUNK - 2))

struct tp_api_event {
	struct tp_event_hdr hdr; /* ts_ns: when the call returned */
	__u64 call_id;		 /* ties string pieces to their call */
	__u64 start_ns;
	__u32 fn; /* index in the API table */
	__u32 flags;
	__s64 ret;
	__u64 args[API_REG_ARGS];
	__u64 stack[API_STACK_ARGS];
	__u8 attr[API_ATTR_SIZE];
};

/* tp_str_event.last: its low two bits say where the piece stands, the others how it was read */
#define API_STR_END    1 /* the last piece */
#define API_STR_CUT    2 /* the last piece, and the string was truncated */
#define API_STR_POS(l) ((l)&3)
/* The application's memory could not be read there without a page fault (a page it has not
 * touched yet: cold .rodata, a fresh file mapping), and the probe could not fault it in (no
 * sleepable uprobes): the piece has no data (len 0) but a struct tp_str_fault, and is the last.
 * A legitimately empty string is a piece of len 0 without this bit. */
#define API_STR_FAULT	  4
#define API_STR_RECOVERED 8  /* topsprof read this piece from the process after the fault */
#define API_STR_ATTR	  16 /* with API_STR_FAULT: the topstxEventAttributes_t itself faulted */

struct tp_str_fault {
	__u64 addr;  /* the user address that could not be read */
	__u32 want;  /* bytes left to read from there, up to --topstx-max-bytes-size */
	__u32 bytes; /* a bytes payload's whole size; 0: a NUL-terminated string */
};

struct tp_str_event {
	struct tp_event_hdr hdr;
	__u64 call_id;
	__u32 offset; /* of this piece in the string */
	__u16 len;    /* bytes of data in this piece */
	__u8 index;   /* 0: the message or name; 1: a string or bytes payload */
	__u8 last;    /* 0, API_STR_END or API_STR_CUT; API_STR_FAULT, API_STR_RECOVERED */
	union {
		char data[API_STR_CHUNK];
		struct tp_str_fault fault; /* API_STR_FAULT */
	};
};

/* statistics mode: per process and function, in a per-CPU hash */
struct api_stat_key {
	__u32 pid;
	__u32 fn;
};

struct api_stat {
	__u64 count;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
};

/* api_drops indices */
enum api_drop {
	API_DROP_CALL = 0,  /* call events lost to a full ring buffer */
	API_DROP_STR = 1,   /* string pieces lost to a full ring buffer */
	API_DROP_DEPTH = 2, /* calls nested deeper than API_MAX_DEPTH, or returns without entry */
	API_DROP_STAT = 3,  /* statistics lost to a full statistics map */
	API_DROP__COUNT
};

/* api_str_counts indices: how strings that faulted were read (not losses) */
enum api_str_count {
	API_STR_FAULTED_IN = 0, /* strings read after the probe faulted their pages in */
	API_STR_FAULTED = 1,	/* strings sent as faulted (API_STR_FAULT), for topsprof to read */
	API_STR__COUNT
};

/* CPU sampling (bpf/cpu.bpf.c): samples counted in the kernel per thread and stack pair */
#define CPU_STACK_DEPTH 127 /* frames kept per stack, the kernel's own limit */

/* A thread inside a function that has a uretprobe (topsprof's own API probes) has the kernel's
 * return trampoline where the caller's address was in its user stack, and kernels before 6.12.y
 * leave it there when they walk the stack ("[unknown] 0x7fffffffdfff" where main should be):
 * the trampoline's address and the addresses it stands for, innermost first (0: no more), for
 * topsprof to put back (stackname.c). All 0 where the kernel has no uprobes state to read. */
#define KC_URET_MAX 2
#define KC_KMORE    2

struct kc_user_returns {
	__u64 tramp;
	__u64 ret[KC_URET_MAX];
};

struct cpu_key {
	__u32 tgid;
	__u32 tid;
	__s32 ustack; /* stack map ids; negative: none */
	__s32 kstack;
	struct kc_user_returns uret;
};

/* cpu_drops indices */
enum cpu_drop {
	CPU_DROP_COUNT = 0, /* samples lost to a full count map (a lost stack is seen in its key) */
	CPU_DROP_SAMPLE = 1, /* samples with a stack copy lost to a full ring buffer */
	CPU_DROP__COUNT
};

/* A thread's user registers by their DWARF numbers, as call frame information names them: on
 * x86-64 rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, and the return address column (rip);
 * on arm64 x0-x30, sp, and pc in 32. */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define UREG_N	33
#define UREG_FP 29
#define UREG_SP 31
#define UREG_PC 32
#else
#define UREG_N	17
#define UREG_FP 6
#define UREG_SP 7
#define UREG_PC 16
#endif

/* CPU samples unwound by topsprof from the call frame information (--cpu-profiling-unwind dwarf):
 * the user registers and a copy of the user stack from its pointer up, sent on cpu_samples with
 * as many bytes of stack as were read (stack_len), never more than CPU_USTACK_MAX */
#define CPU_USTACK_MAX 65536

struct cpu_sample {
	__u32 tgid;
	__u32 tid;
	__s32 kstack; /* a stack map id; negative: none */
	__u32 stack_len;
	struct kc_user_returns uret;
	__u64 regs[UREG_N]; /* all 0: no user registers (a kernel thread's, or unreadable) */
	__u8 stack[CPU_USTACK_MAX];
};

/* Kernel callstacks (bpf/kernel.bpf.c, bpf/kmd.bpf.c): entry points and off-CPU stacks, counted
 * in the kernel; topsprof reads the counts and the stacks at the end. */
enum kc_filter {
	KC_FILTER_CURRENT = 0, /* the profiled processes */
	KC_FILTER_ALL = 1,     /* every process (but topsprof) */
	KC_FILTER_KMD = 2,     /* every process, only through the KMD */
	KC_FILTER_FUNCS = 3,   /* every process, only stacks through the functions given */
};

#define KC_MAX_FUNCS  16
#define KC_MODULE_LEN 56 /* MODULE_NAME_LEN */

enum kc_entry_kind {
	KC_ENTRY_NONE = 0,    /* off CPU outside any entry point (a page fault, say) */
	KC_ENTRY_SYSCALL = 1, /* a system call; id: its number */
	KC_ENTRY_KMD = 2,     /* a function of the KMD; id: its address */
};

/* kc_thread flags */
#define KC_IN_DRIVER 1u /* the entry point is the driver's (a driver file, driver memory, KMD) */
#define KC_MATCHED   2u /* a stack of this entry went through a function of the filter */

/* a file of the driver's: its inode, as the kernel numbers it (dev: major << 20 | minor) */
struct kc_file {
	__u64 ino;
	__u32 dev;
	__u32 reserved;
};

/* counted for every process together: a few hundred keys at most */
struct kc_entry_key {
	__u32 kind;   /* enum kc_entry_kind */
	__u32 driver; /* KC_IN_DRIVER when the call entered the driver */
	__u64 id;     /* syscall number or function address */
};

/* what a kc_entries or kc_stack_counts key has counted: calls or waits, and their time */
struct kc_totals {
	__u64 count, total_ns, max_ns;
};

struct kc_stack_key {
	__u32 tgid;
	__s32 kstack; /* stack map ids; negative: none */
	__s32 ustack;
	__u32 kind; /* the entry point the thread was in */
	__u64 id;
	__u32 driver;
	__u32 offcpu; /* 1: time off CPU (a wait); 0: at the entry of a KMD function */
	/* Where the kernel's unwinder stops at a kretprobe's trampoline (before Linux 5.14: the
	 * KMD's functions under kprobes, one inside another): 1 + the kernel stack of the KMD call
	 * the stack is inside, taken at its entry (kstack goes on there, after its first frame),
	 * and of the call that one is inside; 0: none */
	__u32 kmore[KC_KMORE];
	struct kc_user_returns uret;
};

/* kc_drops indices */
enum kc_drop {
	KC_DROP_ENTRY = 0,  /* entry-point calls lost to a full map */
	KC_DROP_STACK = 1,  /* stacks (waits) lost to a full map */
	KC_DROP_THREAD = 2, /* calls not followed: no room for the thread's state (the LRU map of
			     * threads makes room by forgetting its least recent one, unseen) */
	KC_DROP_UNTOLD = 3, /* futex waits not told to be on the driver's memory or not:
			     * bpf_find_vma could not look (-EBUSY: it does not wait for the
			     * process's memory map lock); counted as not in the driver */
	KC_DROP__COUNT
};

/* --- signals for the launched application (bpf/proc.bpf.c) -------------------------------- */

/* by signal number: the last one generated for the application, and who sent it */
struct tp_sig_seen {
	__u64 ts_ns;  /* bpf_ktime_get_ns() */
	__u32 sender; /* tgid of the task that generated it (global: topsprof runs in the
		       * initial pid namespace, where si_pid is the same) */
	__u32 count;
};

#define TP_SIG_MAX 65

#endif
