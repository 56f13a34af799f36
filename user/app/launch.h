/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Starting the application so that no call is missed: it is forked and held before exec until
 * topsprof has its probes in place, then released. */
#ifndef TOPSPROF_LAUNCH_H
#define TOPSPROF_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd; /* write end: a byte releases the child; closing it without one ends it */
	bool exited;
	int status; /* as waitpid(2) reports it */
};

/* fork the child and hold it; app_output false sends its stdout and stderr to /dev/null. The
 * signals in reset (those topsprof handles) start at their defaults in it, or ignored when in
 * ignored; they are blocked from the fork until the child has reset them, so one that comes
 * meanwhile finds the child's own disposition, and the child runs with the signal mask of the
 * caller */
int launch_prepare(struct launch *l, const char *exe, char *const argv[], bool app_output,
		   const sigset_t *reset, const sigset_t *ignored);
/* 0, or -errno (-EPIPE: the child ended, e.g. of a signal, before it could be released) */
int launch_release(struct launch *l);
/* topsprof could not set up: the child ends without running anything */
void launch_abort(struct launch *l);
/* true once the child has exited (status set); block waits for it */
bool launch_reap(struct launch *l, bool block);

#endif
