// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/umulti.h"
#include "collect/bpfstub.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the BPF_LINK_CREATE part of union bpf_attr, as Linux 6.6+ lays out uprobe_multi */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
};

#define UPROBE_MULTI_RETURN 1 /* BPF_F_UPROBE_MULTI_RETURN */

bool umulti_supported(void)
{
	static int known = -1;

	if (known < 0 && getenv("TOPSPROF_NO_UPROBE_MULTI")) /* to test the other path here */
		known = 0;
	if (known < 0)
		known = kernel_btf_has_name("bpf_uprobe_multi_link");
	return known;
}

bool ucookies_supported(void)
{
	static int known = -1;

	if (known < 0)
		known = bpf_have_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					"TOPSPROF_NO_COOKIE");
	return known;
}

int umulti_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  uint32_t cnt, bool retprobe, int pid)
{
	struct link_create_uprobe_multi a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = UMULTI_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = cnt;
	a.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}
