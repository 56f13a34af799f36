// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/umulti.h"

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

/* whether the kernel's BTF names the uprobe_multi link (Linux 6.6+, or a backport): its type
 * names are NUL-terminated strings, so a scan of the raw file tells, in a few ms where parsing it
 * took 15 */
static bool kernel_btf_names(const char *name)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	size_t nlen = strlen(name) + 2, have = 0;
	char buf[65536], key[128];
	bool found = false;
	ssize_t n;

	if (fd < 0 || nlen > sizeof(key)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	key[0] = '\0';
	memcpy(key + 1, name, nlen - 1); /* "\0name\0" */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		found = memmem(buf, have, key, nlen) != NULL;
		/* keep the tail a name could straddle */
		if (have > nlen) {
			memmove(buf, buf + have - (nlen - 1), nlen - 1);
			have = nlen - 1;
		}
	}
	close(fd);
	return found;
}

bool umulti_supported(void)
{
	static int known = -1;

	if (known < 0 && getenv("TOPSPROF_NO_UPROBE_MULTI")) /* to test the other path here */
		known = 0;
	if (known < 0)
		known = kernel_btf_names("bpf_uprobe_multi_link");
	return known;
}

int umulti_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		  uint32_t cnt, bool retprobe)
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
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}
