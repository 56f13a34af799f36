// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* bare: attach the counting uprobe+uretprobe pair of bare.bpf.c to one function of a library,
 * run a command, print how often they fired.
 * usage: bare LIBRARY FUNCTION at-entry|after-endbr64 command [args...] */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bare.skel.h"
#include "target/elfinfo.h"
#include "collect/tracer.h"

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	const char *lib, *fn;
	struct bare_bpf *skel;
	struct bpf_link *l1, *l2;
	uint64_t off;
	int status;
	pid_t pid;

	if (argc < 5) {
		fprintf(stderr, "usage: bare LIBRARY FUNCTION at-entry|after-endbr64 command...\n");
		return 2;
	}
	lib = argv[1];
	fn = argv[2];
	if (elf_func_offsets(lib, &fn, 1, &off) != 1) {
		fprintf(stderr, "bare: %s not in %s\n", fn, lib);
		return 1;
	}
	if (!strcmp(argv[3], "after-endbr64"))
		off = probe_offset(lib, off);
	skel = bare_bpf__open_and_load();
	if (!skel) {
		perror("bare: loading");
		return 1;
	}
	l1 = bpf_program__attach_uprobe_opts(skel->progs.bare_entry, -1, lib, off, &opts);
	opts.retprobe = true;
	l2 = bpf_program__attach_uprobe_opts(skel->progs.bare_return, -1, lib, off, &opts);
	if (!l1 || !l2) {
		perror("bare: attaching");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[4], &argv[4]);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "bare: %s+0x%llx fired %llu/%llu\n", fn, (unsigned long long)off,
		(unsigned long long)skel->bss->entries, (unsigned long long)skel->bss->returns);
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bare_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
