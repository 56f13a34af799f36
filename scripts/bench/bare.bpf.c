// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The kernel's floor for the benchmark: a uprobe and a uretprobe that only count. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 entries, returns;

SEC("uprobe")
int BPF_KPROBE(bare_entry)
{
	__sync_fetch_and_add(&entries, 1);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(bare_return)
{
	__sync_fetch_and_add(&returns, 1);
	return 0;
}
