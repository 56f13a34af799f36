// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* bare: attach the counting uprobe+uretprobe pair of bare.bpf.c to one function of a library,
 * run a command, print how often they fired.
 * usage: bare [-m multi|perf] LIBRARY FUNCTION at-entry|after-endbr64 command [args...]
 * -m: the kind of link, as topsprof attaches: uprobe_multi links (Linux 6.6+, the default where
 * the kernel has them) or perf_event uprobes (the default elsewhere). */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bare.skel.h"
#include "target/elfinfo.h"
#include "collect/tracer.h"
#include "collect/umulti.h"

/* the pair as two uprobe_multi links of one function each; 0 or -errno */
static int attach_multi(struct bare_bpf *skel, const char *lib, uint64_t off, int fds[2])
{
	uint64_t cookie = 0;

	fds[0] = umulti_attach(bpf_program__fd(skel->progs.bare_entry), lib, &off, &cookie, 1,
			       false, 0);
	fds[1] = umulti_attach(bpf_program__fd(skel->progs.bare_return), lib, &off, &cookie, 1,
			       true, 0);
	return fds[0] < 0 ? fds[0] : fds[1] < 0 ? fds[1] : 0;
}

/* the pair as two perf_event uprobes (the kernel's uprobe PMU, through libbpf) */
static int attach_perf(struct bare_bpf *skel, const char *lib, uint64_t off, struct bpf_link *l[2])
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	l[0] = bpf_program__attach_uprobe_opts(skel->progs.bare_entry, -1, lib, off, &opts);
	opts.retprobe = true;
	l[1] = bpf_program__attach_uprobe_opts(skel->progs.bare_return, -1, lib, off, &opts);
	return l[0] && l[1] ? 0 : -errno;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[2] = { NULL, NULL };
	int fds[2] = { -1, -1 }, status, err, a = 1;
	const char *lib, *fn;
	struct bare_bpf *skel;
	bool multi = umulti_supported();
	uint64_t off;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "-m")) {
		multi = !strcmp(argv[2], "multi");
		if (!multi && strcmp(argv[2], "perf")) {
			fprintf(stderr, "bare: -m takes multi or perf, not '%s'\n", argv[2]);
			return 2;
		}
		a = 3;
	}
	if (argc - a < 4) {
		fprintf(stderr, "usage: bare [-m multi|perf] LIBRARY FUNCTION "
				"at-entry|after-endbr64 command...\n");
		return 2;
	}
	lib = argv[a];
	fn = argv[a + 1];
	if (elf_func_offsets(lib, &fn, 1, &off) != 1) {
		fprintf(stderr, "bare: %s not in %s\n", fn, lib);
		return 1;
	}
	if (!strcmp(argv[a + 2], "after-endbr64"))
		off = probe_offset(lib, off);
	skel = bare_bpf__open();
	if (skel && multi) {
		bpf_program__set_expected_attach_type(skel->progs.bare_entry,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(skel->progs.bare_return,
						      (enum bpf_attach_type)UMULTI_ATTACH_TYPE);
	}
	if (!skel || bare_bpf__load(skel)) {
		perror("bare: loading");
		return 1;
	}
	err = multi ? attach_multi(skel, lib, off, fds) : attach_perf(skel, lib, off, links);
	if (err) {
		fprintf(stderr, "bare: attaching to %s+0x%llx (%s): %s\n", lib,
			(unsigned long long)off, multi ? "uprobe_multi" : "perf_event",
			strerror(-err));
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[a + 3], &argv[a + 3]);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "bare: %s+0x%llx fired %llu/%llu (%s)\n", fn, (unsigned long long)off,
		(unsigned long long)skel->bss->entries, (unsigned long long)skel->bss->returns,
		multi ? "uprobe_multi links" : "perf_event uprobes");
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(links[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	bare_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
