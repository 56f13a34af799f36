// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int launch_prepare(struct launch *l, const char *exe, char *const argv[], bool app_output)
{
	int p[2];
	char go;

	memset(l, 0, sizeof(*l));
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	l->pid = fork();
	if (l->pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (l->pid == 0) {
		int err_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(127); /* topsprof gave up */
		close(p[0]);
		if (!app_output) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
				if (null > STDERR_FILENO)
					close(null);
			}
		}
		execv(exe, argv);
		dprintf(err_fd, "topsprof: error: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(p[0]);
	l->go_fd = p[1];
	return 0;
}

int launch_release(struct launch *l)
{
	char go = 1;
	int err = write(l->go_fd, &go, 1) == 1 ? 0 : -errno;

	close(l->go_fd);
	l->go_fd = -1;
	return err;
}

void launch_abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	l->go_fd = -1;
	launch_reap(l, true);
}

bool launch_reap(struct launch *l, bool block)
{
	pid_t r;

	if (l->exited)
		return true;
	do
		r = waitpid(l->pid, &l->status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == l->pid)
		l->exited = true;
	return l->exited;
}
