/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The signals of a profiling run. Up to the application's release a signal ends topsprof
 * (stop_requested); from then on it is the application's: noted as it comes and forwarded once
 * by the main loop, unless the application got it too (a Ctrl-C, a signal to the whole job). */
#ifndef TOPSPROF_SIGNALS_H
#define TOPSPROF_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "app/launch.h"
#include "collect/proctree.h"

/* how often the main loop and the wait for the application look around, at the least */
#define POLL_MS 100

/* the signal topsprof dies of once everything is cleaned up (main) */
extern int run_exit_signal;
/* without a launched application (attach, system-wide), a signal ends the profiling; before the
 * application runs, it ends topsprof: the signal */
extern volatile sig_atomic_t stop_requested;
/* the signals topsprof handles, and those it was started ignoring (the application starts
 * ignoring them too) */
extern sigset_t handled_signals, ignored_at_start;

/* install: topsprof's handlers (flags: SA_RESTART, or 0 for a signal to cut any wait short),
 * or else the dispositions topsprof was started with */
void set_signals(bool install, int flags);
/* from now on (app > 0) a signal is the application's; 0: nobody's */
void signals_give_to(pid_t app);
/* Forward what topsprof was sent to app, once; true while one still waits for the news that
 * app got it too. Called with the handled signals blocked. */
bool forward_signals(const struct proctree *pt, pid_t app);
/* until app ends (--duration may end the profiling first), forwarding as the main loop does;
 * the handled signals are blocked but while waiting (wait_mask) */
void wait_app(struct launch *app, struct proctree *pt, const sigset_t *wait_mask);

#endif
