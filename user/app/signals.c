// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The signals of a profiling run: before the application is released a signal ends topsprof;
 * from then on it is the application's, forwarded once (signals.h). */
#include "app/signals.h"
#include "lib/log.h"
#include "lib/monotime.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* the launched application once it is released: from then on a signal is the application's
 * (forwarded), before it is topsprof's end */
static volatile pid_t child_pid;
int run_exit_signal;
/* without a launched application (attach, system-wide), a signal ends the profiling; before the
 * application runs, it ends topsprof: the signal */
volatile sig_atomic_t stop_requested;

/* a signal sent to topsprof while the application runs, for the main loop (and after it, the
 * wait for the application's end) to forward unless the application got it too. pending[] is
 * read only with the handled signals blocked (they come in the loop's wait, the report, the
 * wait for the end), so a half-written one is never read. One per signal: a second of the same
 * signal before the first was decided on is one, and a real-time signal's value (sigqueue) is
 * not kept: it is forwarded with kill(), without it. */
static struct {
	bool set;
	pid_t sender;
	int code;
	uint64_t ns;
} pending[NSIG];

/* The signals topsprof handles, and resets in the application: every one whose default ends a
 * process and that another process sends (a terminal, a shell, a batch system: INT, TERM, HUP,
 * QUIT, USR1, USR2, ALRM, VTALRM, PROF, IO, PWR and the real-time ones), SIGCHLD (it cuts the
 * wait short) and SIGPIPE (ignored: a write to the held child's pipe fails with EPIPE instead).
 * Not the faults (SEGV, BUS, ...: topsprof's own), not XCPU/XFSZ (topsprof's own limits), not
 * job control (TSTP, TTIN, TTOU, CONT, STOP) nor WINCH: those act on topsprof as on any job. */
static const int handled_list[] = { SIGCHLD, SIGINT,  SIGTERM,	 SIGHUP,  SIGQUIT, SIGPIPE, SIGUSR1,
				    SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR };
sigset_t handled_signals;
/* what topsprof was started ignoring (nohup, a batch system's SIGPIPE, a background job's
 * SIGINT) the application starts ignoring, and it ends no profiling; sent to topsprof alone,
 * it is still forwarded: the application may have set a handler of its own */
sigset_t ignored_at_start;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	if (sig == SIGCHLD) {
		errno = saved;
		return;
	}
	if (child_pid <= 0) {
		/* ignored when topsprof started (nohup): not an end */
		if (!sigismember(&ignored_at_start, sig))
			stop_requested = sig;
	} else {
		pending[sig].sender = si->si_pid;
		pending[sig].code = si->si_code;
		pending[sig].ns = mono_ns();
		pending[sig].set = true;
	}
	errno = saved;
}

/* install: topsprof's handlers (flags: SA_RESTART, or 0 for a signal to cut any wait short),
 * or else the dispositions topsprof was started with */
void set_signals(bool install, int flags)
{
	static bool known;
	struct sigaction sa, old;

	if (!known) {
		sigemptyset(&handled_signals);
		for (size_t i = 0; i < sizeof(handled_list) / sizeof(handled_list[0]); i++)
			sigaddset(&handled_signals, handled_list[i]);
		for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
			sigaddset(&handled_signals, sig);
		sigemptyset(&ignored_at_start);
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&handled_signals, sig) == 1 &&
			    !sigaction(sig, NULL, &old) && old.sa_handler == SIG_IGN)
				sigaddset(&ignored_at_start, sig);
		known = true;
	}
	memset(&sa, 0, sizeof(sa));
	/* one handler at a time: they share pending[] */
	sa.sa_mask = handled_signals;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(&handled_signals, sig) != 1)
			continue;
		if (install && sig != SIGPIPE)
			sa.sa_sigaction = on_signal;
		else if (install || sigismember(&ignored_at_start, sig))
			sa.sa_handler = SIG_IGN;
		else
			sa.sa_handler = SIG_DFL;
		if (sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL)
			sa.sa_flags = 0;
		else
			sa.sa_flags = SA_SIGINFO | flags;
		sigaction(sig, &sa, NULL);
	}
}

void signals_give_to(pid_t app)
{
	child_pid = app;
}

/* how long a signal sent to topsprof waits for the news that the application got it too */
#define FORWARD_WAIT_NS (50 * 1000000ull)

/* whether the application got the signal topsprof was sent too: a signal from the kernel (the
 * terminal's) has no sender to compare; one from a process, the same sender (pids as seen from
 * topsprof's pid namespace, as si_pid and bpf/proc.bpf.c give them) */
static bool app_got_signal(const struct proctree *pt, int sig)
{
	pid_t sender;

	if (!proctree_app_signaled(pt, sig, pending[sig].ns - 2 * FORWARD_WAIT_NS, getpid(),
				   &sender))
		return false;
	return pending[sig].code > 0 || sender == pending[sig].sender;
}

/* Forward the signals topsprof was sent to the application, once: a signal sent to the whole
 * process group or job (Ctrl-C, kill -- -PGID, a batch system's SIGTERM to every process) has
 * reached the application already, as the BPF signal tracepoint tells; one sent to topsprof
 * alone is meant for it. True while one still waits for that news. Called with the handled
 * signals blocked: pending[] is the loop's alone here. */
bool forward_signals(const struct proctree *pt, pid_t app)
{
	bool waiting = false;

	for (int sig = 1; sig < NSIG; sig++) {
		bool got;

		if (!pending[sig].set)
			continue;
		got = app_got_signal(pt, sig);
		if (!got && mono_ns() - pending[sig].ns < FORWARD_WAIT_NS) {
			waiting = true;
			continue;
		}
		pending[sig].set = false;
		if (!got)
			kill(app, sig);
		pr_debug("signal %d (%s) from pid %d: %s", sig, strsignal(sig),
			 (int)pending[sig].sender,
			 got ? "the application got it too" : "forwarded to the application");
	}
	return waiting;
}

/* The application after the report: with --duration it may still run, and its exit status is
 * still topsprof's. Until it ends, a signal topsprof is sent is forwarded as in the main loop:
 * what came since the loop's last look (in its last wait, in the report) first. Called with the
 * handlers installed; the handled signals are blocked but while waiting (wait_mask, as in
 * collect). A reaped application is not signaled (its pid may be another's by then). */
void wait_app(struct launch *app, struct proctree *pt, const sigset_t *wait_mask)
{
	sigprocmask(SIG_BLOCK, &handled_signals, NULL);
	for (;;) {
		/* a process of the application's held meanwhile (it execs a child) wakes the wait,
		 * and runs on (proctree_let_go): the application may wait for it */
		struct pollfd held = { pt ? proctree_epoll_fd(pt) : -1, POLLIN, 0 };
		int wait_ms;
		struct timespec ts;

		proctree_let_go(pt);
		errno = 0;
		if (launch_reap(app, false) || errno == ECHILD)
			break;
		/* SIGCHLD (handled) cuts the wait short when the application ends */
		wait_ms = forward_signals(pt, app->pid) ? 5 : POLL_MS;
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (wait_ms % 1000) * 1000000L;
		ppoll(&held, 1, &ts, wait_mask);
	}
	sigprocmask(SIG_SETMASK, wait_mask, NULL);
}
