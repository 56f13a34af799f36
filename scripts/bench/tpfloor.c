// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* tpfloor: attach tpfloor.bpf.c's empty programs to sys_enter, sys_exit and sched_switch, run a
 * command, detach. What the command pays then is the least any BPF on those tracepoints costs.
 * usage: tpfloor command [args...] */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tpfloor.skel.h"

int main(int argc, char **argv)
{
	struct tpfloor_bpf *skel;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: tpfloor command [args...]\n");
		return 2;
	}
	skel = tpfloor_bpf__open_and_load();
	if (!skel) {
		perror("tpfloor: loading");
		return 1;
	}
	if (tpfloor_bpf__attach(skel)) {
		perror("tpfloor: attaching");
		tpfloor_bpf__destroy(skel);
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[1], &argv[1]);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 1 << 8;
	tpfloor_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
