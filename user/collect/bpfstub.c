// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "collect/bpfstub.h"
#include "collect/bpfinsn.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int bpf_stub_load(enum bpf_prog_type type, int value_fd, int progs_fd, uint32_t slot,
		  uint64_t value)
{
	const struct bpf_insn insns[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0), /* r6 = ctx */
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),	       /* key 0 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		LD_IMM64(BPF_REG_1, BPF_PSEUDO_MAP_FD, value_fd),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 11, 0),	       /* to the exit */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0), /* r7 = the slot */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_7, BPF_REG_0, 8, 0), /* its thread */
		LD_IMM64(BPF_REG_1, 0, value),
		INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_7, BPF_REG_1, 0, 0), /* its value */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
		LD_IMM64(BPF_REG_2, BPF_PSEUDO_MAP_FD, progs_fd),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, (int32_t)slot),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(type, "topsprof_stub", "Dual BSD/GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	return fd < 0 ? -errno : fd;
}

/* A number from a sysfs file of the uprobe or kprobe PMU: its type (retbit false) or the
 * "config:N" of its retprobe bit; -errno if none. Read once a process (a probe each on kernels
 * without multi links: a hundred or more at a start), from the collectors' threads alike: the
 * value is the same whoever reads it first. */
static int pmu_number(bool uprobe, bool retbit)
{
	static int known[2][2]; /* 1 + the number; 0: not read yet */
	const char *prefix = retbit ? "config:" : "";
	char path[128], buf[64];
	int v = __atomic_load_n(&known[uprobe][retbit], __ATOMIC_RELAXED);
	FILE *f;

	if (v)
		return v - 1;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/%s",
		 uprobe ? "uprobe" : "kprobe", retbit ? "format/retprobe" : "type");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	v = -ENOENT;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, prefix, strlen(prefix)))
		v = atoi(buf + strlen(prefix));
	fclose(f);
	if (v >= 0)
		__atomic_store_n(&known[uprobe][retbit], v + 1, __ATOMIC_RELAXED);
	return v;
}

int perf_probe_attach(int prog_fd, bool uprobe, bool retprobe, const char *target, uint64_t off,
		      pid_t pid)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	int type = pmu_number(uprobe, false), bit = 0, fd, err;

	if (type < 0)
		return type;
	if (retprobe) {
		bit = pmu_number(uprobe, true);
		if (bit < 0 || bit > 63)
			return bit < 0 ? bit : -EINVAL;
	}
	a.type = (uint32_t)type;
	a.config = retprobe ? 1ull << bit : 0;
	a.config1 = (uint64_t)(uintptr_t)target; /* uprobe_path, kprobe_func (0: by address) */
	a.config2 = off;			 /* probe_offset, kprobe_addr */
	/* the program runs wherever the probe fires: the event's CPU is of no matter */
	fd = (int)syscall(__NR_perf_event_open, &a, pid, pid < 0 ? 0 : -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((prog_fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

bool bpf_have_helper(enum bpf_prog_type type, enum bpf_func_id helper, const char *env)
{
	if (env && getenv(env)) /* as the other TOPSPROF_NO_* switches: set, whatever its value */
		return false;
	return libbpf_probe_bpf_helper(type, helper, NULL) > 0;
}

int btf_tp_nargs(const struct btf *v, const char *tp)
{
	const struct btf_type *t;
	char name[128];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(v, name, BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(v, (__u32)id) : NULL;
	t = t ? btf__type_by_id(v, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(v, t->type) : NULL;
	return t && btf_is_func_proto(t) && btf_vlen(t) > 0 ? btf_vlen(t) - 1 : -ENOENT;
}

/* member of the struct or union t, or of one of its nameless members (as C reads them) */
static bool has_member(const struct btf *v, const struct btf_type *t, const char *member, int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(v, m[i].name_off);
		const struct btf_type *mt;

		if (name && *name) {
			if (!strcmp(name, member))
				return true;
			continue;
		}
		mt = btf__type_by_id(v, m[i].type);
		while (mt && btf_is_mod(mt))
			mt = btf__type_by_id(v, mt->type);
		if (mt && depth < 8 && btf_is_composite(mt) && has_member(v, mt, member, depth + 1))
			return true;
	}
	return false;
}

int btf_struct_has(const struct btf *v, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(v, type, BTF_KIND_STRUCT);

	return id > 0 ? has_member(v, btf__type_by_id(v, (__u32)id), member, 0) : -ENOENT;
}

/* the kernel's BTF names are NUL-terminated strings, so a scan of the raw file tells, in a few
 * ms where parsing it took 15 */
bool kernel_btf_has_name(const char *name)
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
