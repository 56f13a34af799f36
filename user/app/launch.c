// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "app/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int launch_prepare(struct launch *l, const char *exe, char *const argv[], bool app_output,
		   const sigset_t *reset, const sigset_t *ignored)
{
	sigset_t mask;
	int p[2];
	char go;

	memset(l, 0, sizeof(*l));
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	/* a signal between the fork and the reset below would run topsprof's handler in the
	 * child: it waits, blocked, for the child's own disposition */
	sigprocmask(SIG_BLOCK, reset, &mask);
	l->pid = fork();
	if (l->pid < 0) {
		int err = -errno;

		sigprocmask(SIG_SETMASK, &mask, NULL);
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (l->pid == 0) {
		int err_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		ssize_t n;

		/* the application starts with the signal dispositions topsprof was given: what
		 * was ignored stays ignored */
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(reset, sig) == 1)
				signal(sig, sigismember(ignored, sig) == 1 ? SIG_IGN : SIG_DFL);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		close(p[1]);
		do
			n = read(p[0], &go, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
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
	sigprocmask(SIG_SETMASK, &mask, NULL);
	close(p[0]);
	l->go_fd = p[1];
	return 0;
}

int launch_release(struct launch *l)
{
	char go = 1;
	ssize_t n;
	int err;

	do
		n = write(l->go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	err = n == 1 ? 0 : -errno;

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
