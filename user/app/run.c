// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topsprof [options] app args...: find the runtime the app will use (target/discover.c), put
 * the collectors in place (collect/collection.c), start the app, drain them while it runs,
 * report (app/present.c), and exit as the app did. */
#include "app/run.h"
#include "app/debugdump.h"
#include "app/launch.h"
#include "app/present.h"
#include "app/session.h"
#include "app/signals.h"
#include "collect/bpfmaps.h"
#include "collect/collection.h"
#include "lib/log.h"
#include "lib/monotime.h"
#include "lib/outfile.h"
#include "model/activity.h"
#include "output/rawdata.h"
#include "target/discover.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the epoll tags of the main loop */
enum {
	TAG_COLLECTOR,
	TAG_SESSION
};

struct run {
	const struct cli *cli;
	struct model m;
	struct discovery found;
	struct collect_settings set;
	struct collection col;
	struct raw_writer *raw;
	struct session *session;
	struct launch app;
	struct exports exports;
	struct outtarget raw_out, dump; /* --export-rawdata, --debug-dump's text */
	int failed;			/* outputs that failed: topsprof's exit status says so */
};

/* what the collectors are asked for, from the options */
static void settings(struct run *r)
{
	const struct cli *cli = r->cli;
	static const enum kc_filter filters[] = { [KFILTER_CURRENT] = KC_FILTER_CURRENT,
						  [KFILTER_ALL] = KC_FILTER_ALL,
						  [KFILTER_KMD] = KC_FILTER_KMD,
						  [KFILTER_FUNCS] = KC_FILTER_FUNCS };

	r->set = (struct collect_settings){
		.system_wide = cli->given[OPT_SYSTEM_WIDE],
		.launched = cli->app_argc > 0,
		.collecting = cli->profile_from_start,
		.stats_mode = cli->api_mode == API_MODE_STATS ||
			      (cli->api_mode == API_MODE_AUTO && !needs_every_call(cli)),
		.trace_domains = cli->trace_domains,
		.max_str_bytes = cli->topstx_max_bytes,
		.buffer_size = cli->buffer_size,
		.found = &r->found,
		.cpu_stacks = cli->given[OPT_CPU_PROFILING_CALLSTACK],
		.cpu_hz = cli->cpu_frequency_hz,
		.cpu_unwind_fp = cli->cpu_unwind_fp,
		.kernel_stacks = cli->given[OPT_KERNEL_CALLSTACK],
		.kfilter = filters[cli->kfilter],
		.kfilter_name = cli->given[OPT_KERNEL_CALLSTACK_FILTER]
					? cli->text[OPT_KERNEL_CALLSTACK_FILTER]
					: "current",
		.kfilter_functions = cli->kfilter_functions,
		.kmd_module = cli->kmd_module,
		.cpu_util = cli->given[OPT_CPU_UTILIZATION],
		.mem_util = cli->given[OPT_MEMORY_UTILIZATION],
		.util_hz = cli->utilization_frequency_hz,
		.gcu_activities = activity_to_gcu(cli->activities),
	};
}

static int find_target(struct run *r)
{
	const struct cli *cli = r->cli;
	struct discover_req q = {
		.mode = cli->given[OPT_ATTACH_PID]    ? DISCOVER_ATTACH
			: cli->given[OPT_SYSTEM_WIDE] ? DISCOVER_HOST
						      : DISCOVER_LAUNCH,
		.argv0 = cli->app_argc ? cli->app_argv[0] : NULL,
		.pid = cli->attach_pid,
		.runtime_lib = cli->given[OPT_RUNTIME_LIB] ? cli->text[OPT_RUNTIME_LIB] : NULL,
		.want_runtime = cli->trace_domains & TRACE_RUNTIME,
		/* what a sampler sees is worth having from a program without the runtime */
		.runtime_optional = cli->given[OPT_CPU_PROFILING_CALLSTACK] ||
				    cli->given[OPT_KERNEL_CALLSTACK] ||
				    cli->given[OPT_CPU_UTILIZATION] ||
				    cli->given[OPT_MEMORY_UTILIZATION],
	};

	return discover(&r->found, &q);
}

/* every event as it comes, into the raw data file */
static void raw_tap(void *ctx, const void *event, size_t size)
{
	raw_event(((struct run *)ctx)->raw, event, size);
}

/* every run is a member of a session: a new one, or the one named by --session */
static int open_session(struct run *r)
{
	const struct cli *cli = r->cli;
	char cmd[1024], err[PATH_MAX + 256];

	cli_command_line(cli, cmd, sizeof(cmd));
	if (session_open(&r->session,
			 cli->given[OPT_SESSION_NEW] ? cli->text[OPT_SESSION_NEW]
			 : cli->given[OPT_SESSION]   ? cli->text[OPT_SESSION]
						     : NULL,
			 cli->given[OPT_SESSION], cmd, r->col.env.collecting, err, sizeof(err))) {
		pr_error("%s", err);
		return 1;
	}
	return 0;
}

static void print_header(struct run *r)
{
	const struct cli *cli = r->cli;
	char session[32], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	snprintf(session, sizeof(session), "%s", session_name(r->session));
	if (cli->given[OPT_SYSTEM_WIDE])
		fprintf(f, " TOPSPROF is profiling every process, session: %s, command:", session);
	else
		fprintf(f, " TOPSPROF is profiling process %d%s, session: %s, command:",
			(int)r->app.pid, cli->given[OPT_ATTACH_PID] ? " (attached)" : "", session);
	for (int i = 0; i < cli->app_argc; i++)
		fprintf(f, " %s", cli->app_argv[i]);
	if (!cli->app_argc)
		fprintf(f, " %s", r->found.exe[0] ? r->found.exe : "(all)");
	fclose(f);
	/* kept for a profile export: an import prints it again */
	r->m.header = buf;
	out_print_quiet(cli->given[OPT_QUIET], "==%d==%s\n", (int)r->app.pid, buf);
}

/* topsprof start / stop / cancel from another terminal */
static void control(struct run *r, enum control_action a)
{
	switch (a) {
	case CTL_START:
	case CTL_STOP:
		collection_set_collecting(&r->col, a == CTL_START);
		session_set_state(r->session, a == CTL_START);
		pr_debug("collection %s", a == CTL_START ? "started" : "stopped");
		break;
	case CTL_CANCEL:
		collection_clear(&r->col);
		model_clear_collected(&r->m);
		pr_debug("collected data thrown away");
		break;
	default:
		break;
	}
}

/* the end of a run: the launched application exits; an attached process exits; Ctrl-C when
 * nothing was launched; --duration */
static bool run_ended(struct run *r)
{
	const struct cli *cli = r->cli;

	if (cli->given[OPT_DURATION] &&
	    (double)(mono_ns() - r->m.span_start_ns) / 1e9 >= cli->duration_s)
		return true;
	if (cli->app_argc)
		return launch_reap(&r->app, false);
	if (stop_requested)
		return true;
	return cli->given[OPT_ATTACH_PID] && kill(cli->attach_pid, 0) && errno == ESRCH;
}

/* the main loop; the handled signals are blocked in it except while it waits (wait_mask: the
 * mask topsprof had), so a signal never comes between a look at pending[] and the wait */
static void collect(struct run *r, const sigset_t *wait_mask)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_SESSION };

	if (ep >= 0) {
		collection_watch(&r->col, ep, TAG_COLLECTOR);
		if (session_fd(r->session) >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, session_fd(r->session), &ev);
	}
	while (!run_ended(r)) {
		struct epoll_event got[16];
		int wait_ms = forward_signals(r->col.env.pt, r->app.pid) ? 5 : POLL_MS;
		struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
		int n = ep >= 0 ? epoll_pwait(ep, got, 16, wait_ms, wait_mask)
				: (ppoll(NULL, 0, &ts, wait_mask), 0);

		for (int i = 0; i < n; i++)
			if (got[i].data.u32 == TAG_SESSION)
				control(r, session_serve(r->session));
		/* every collector is read at every wake: the probes wake topsprof only when a
		 * ring fills */
		collection_poll(&r->col);
	}
	if (ep >= 0)
		close(ep);
	r->m.span_end_ns = mono_ns();
	/* what the application did up to its end */
	collection_finish(&r->col);
}

/* every output named and checked before anything runs */
static int prepare_outputs(struct run *r)
{
	const struct cli *cli = r->cli;

	if (prepare_exports(cli, &r->exports))
		return 1;
	if (cli->given[OPT_EXPORT_RAWDATA] &&
	    export_target(&r->raw_out, "export-rawdata", cli->text[OPT_EXPORT_RAWDATA], false,
			  cli->given[OPT_FORCE_OVERWRITE]))
		return 1;
	if (cli->given[OPT_DEBUG_DUMP] &&
	    debug_dump_prepare(cli->given[OPT_FORCE_OVERWRITE], cli->given[OPT_EXPORT_RAWDATA],
			       &r->raw_out, &r->dump))
		return 1;
	if (r->raw_out.open) {
		char err[PATH_MAX + 256];

		if (raw_open(&r->raw, &r->raw_out, err, sizeof(err))) {
			pr_error("--export-rawdata: %s", err);
			return 1;
		}
	}
	return 0;
}

static void report(struct run *r)
{
	const struct cli *cli = r->cli;
	const char *include =
		cli->given[OPT_TOPSTX_DOMAIN_INCLUDE] ? cli->text[OPT_TOPSTX_DOMAIN_INCLUDE] : NULL;
	double t0 = mono_s();
	struct timespec ts;

	collection_report(&r->col);
	r->m.buffer_size = cli->buffer_size;
	if (r->raw) {
		struct raw_settings rs = { .stats_mode = r->set.stats_mode,
					   .has_include = include };
		char err[PATH_MAX + 256];

		if (include)
			snprintf(rs.include_domains, sizeof(rs.include_domains), "%s", include);
		if (raw_finish(r->raw, &r->m, &rs, err, sizeof(err))) {
			pr_error("--export-rawdata: %s", err);
			r->failed++;
		}
		r->raw = NULL;
	}
	if (cli->given[OPT_DEBUG_DUMP])
		debug_dump_write(&r->dump, &r->raw_out,
				 &(struct debug_facts){
					 .cli = cli,
					 .found = &r->found,
					 .stats_mode = r->set.stats_mode,
					 .session = r->session ? session_name(r->session) : "-",
					 .m = &r->m });
	finish_model(&r->m, r->set.stats_mode, include);
	r->m.process_s = mono_s() - t0;
	r->failed += print_outputs(cli, &r->m, &r->exports);
	/* topsprof's own cost, for the benchmark and the curious */
	if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		pr_debug("topsprof's own CPU time: %.3f ms",
			 (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
}

/* the application's exit status, as topsprof's own */
static int exit_as(const struct launch *app, bool quiet)
{
	if (WIFEXITED(app->status))
		return WEXITSTATUS(app->status);
	if (WIFSIGNALED(app->status)) {
		int sig = WTERMSIG(app->status);

		/* --quiet: the exit status says it */
		out_fprint_quiet(stderr, quiet,
				 "==%d== the application was killed by signal %d (%s)\n",
				 (int)app->pid, sig, strsignal(sig));
		/* main() dies of it once everything is cleaned up */
		run_exit_signal = sig;
		return 128 + sig;
	}
	return 1;
}

/* a signal before the launched application ran: topsprof ends with it, the held child (if any)
 * without running anything */
static int interrupted(struct run *r)
{
	int sig = stop_requested;

	pr_error("interrupted by signal %d (%s) before %s started", sig, strsignal(sig),
		 r->found.exe);
	if (r->app.pid > 0)
		launch_abort(&r->app);
	run_exit_signal = sig;
	return 128 + sig;
}

/* the launched application, held until the probes are in place; 0, or topsprof's exit status */
static int hold_app(struct run *r)
{
	const struct cli *cli = r->cli;
	int err;

	if (!stop_requested) {
		err = launch_prepare(&r->app, r->found.exe, cli->app_argv,
				     cli->given[OPT_PRINT_APP_LOG], &handled_signals,
				     &ignored_at_start);
		if (err) {
			pr_error("starting %s: %s", r->found.exe, strerror(-err));
			return 1;
		}
		/* BPF notes the held child's signals already: one that comes while it is held and
		 * still reaches it is its own, not to be forwarded again */
		proctree_watch_signals(r->col.env.pt, r->app.pid);
		pr_debug("holding %s (pid %d) until the probes are in place", r->found.exe,
			 (int)r->app.pid);
	}
	/* a signal before the application could have it (even while it was forked) ends topsprof
	 * with that signal */
	return stop_requested ? interrupted(r) : 0;
}

/* Up to the release a signal ends topsprof (stop_requested), from then on it is the
 * application's (forwarded): the handled signals are blocked from the last look at
 * stop_requested until signals_give_to says which, and stay blocked in collect but for its
 * wait. 0, or topsprof's exit status. */
static int release_app(struct run *r, sigset_t *wait_mask)
{
	sigprocmask(SIG_BLOCK, &handled_signals, wait_mask);
	if (!r->cli->app_argc)
		return 0;
	if (stop_requested || launch_release(&r->app)) {
		/* a signal that came meanwhile, such as the Ctrl-C that ended the held child,
		 * sets stop_requested now */
		sigprocmask(SIG_SETMASK, wait_mask, NULL);
		if (stop_requested)
			return interrupted(r);
		launch_abort(&r->app);
		if (WIFSIGNALED(r->app.status))
			pr_error("starting %s: it was killed by signal %d (%s) before it could be "
				 "released",
				 r->found.exe, WTERMSIG(r->app.status),
				 strsignal(WTERMSIG(r->app.status)));
		else
			pr_error("starting %s: it ended before it could be released", r->found.exe);
		return 1;
	}
	signals_give_to(r->app.pid);
	return 0;
}

/* find the target, open the outputs and the collectors, hold the application; 0, or topsprof's
 * exit status */
static int setup(struct run *r)
{
	const struct cli *cli = r->cli;
	int rc;

	settings(r);
	r->m.buffer_size = cli->buffer_size;
	if (prepare_outputs(r) || find_target(r) ||
	    collection_open(&r->col, &r->set, &r->m, r->raw ? raw_tap : NULL, r) || open_session(r))
		return 1;
	if (cli->app_argc) {
		rc = hold_app(r);
		if (rc)
			return rc;
	} else {
		/* attached to a process, or the whole system: reports are named after topsprof */
		r->app.pid = cli->given[OPT_ATTACH_PID] ? cli->attach_pid : getpid();
		r->m.system_wide = cli->given[OPT_SYSTEM_WIDE];
	}
	r->m.root_pid = (uint32_t)r->app.pid;
	if (!cli->given[OPT_SYSTEM_WIDE] && proctree_add(r->col.env.pt, r->app.pid)) {
		pr_error("following process %d: %s", (int)r->app.pid, strerror(errno));
		if (cli->app_argc)
			launch_abort(&r->app);
		return 1;
	}
	if (!cli->given[OPT_SYSTEM_WIDE] && (rc = collection_follow(&r->col, r->app.pid))) {
		pr_error("probing process %d: %s", (int)r->app.pid, strerror(-rc));
		if (cli->app_argc)
			launch_abort(&r->app);
		return 1;
	}
	print_header(r);
	collection_begin(&r->col);
	r->m.span_start_ns = mono_ns();
	return 0;
}

int cmd_profile(const struct cli *cli)
{
	uint64_t t0 = mono_ns(), t1;
	struct run r;
	sigset_t wait_mask;
	int rc;

	memset(&r, 0, sizeof(r));
	r.cli = cli;
	r.app.go_fd = -1;
	model_init(&r.m);
	/* no SA_RESTART: a signal cuts a wait short (epoll_pwait and ppoll never restart) */
	set_signals(true, 0);
	stop_requested = 0;
	rc = setup(&r);
	if (!rc)
		rc = release_app(&r, &wait_mask);
	if (rc)
		goto out;
	pr_debug("start-up: %.1f ms from topsprof's start to the application's release",
		 (double)(mono_ns() - t0) / 1e6);
	collect(&r, &wait_mask);
	/* With --duration the application may still run: a signal topsprof is sent is still its,
	 * noted as it comes (its time tells whether the application got it too), and the report's
	 * writes to a pipe or a terminal go on after it (SA_RESTART) rather than fail */
	set_signals(true, SA_RESTART);
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	report(&r);
	if (cli->app_argc)
		wait_app(&r.app, r.col.env.pt, &wait_mask);
	set_signals(false, 0);
	rc = cli->app_argc ? exit_as(&r.app, cli->given[OPT_QUIET]) : 0;
	if (!rc && r.failed)
		rc = 1;
out:
	signals_give_to(0);
	set_signals(false, 0);
	session_close(r.session);
	raw_abort(r.raw);
	t1 = mono_ns();
	/* the programs idle at once; the single uprobes' slow release is left to a child */
	collection_set_collecting(&r.col, false);
	bpf_release_in_background();
	collection_close(&r.col);
	pr_debug("detach: %.1f ms to release every probe", (double)(mono_ns() - t1) / 1e6);
	if (bpf_release_background_pid())
		pr_debug("detach: the single uprobes are released by process %d, in the background "
			 "(this kernel has no uprobe_multi links; it takes about 0.1 s each here)",
			 bpf_release_background_pid());
	model_free(&r.m);
	exports_close(&r.exports);
	outtarget_close(&r.raw_out);
	outtarget_close(&r.dump);
	return rc;
}
