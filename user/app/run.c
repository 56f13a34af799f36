// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topsprof [options] app args...: find the runtime the app will use, put the probes in place,
 * start the app, drain the events while it runs, report, and exit as the app did. */
#include "app/run.h"
#include "model/domain.h"
#include "model/activity.h"
#include "target/findlib.h"
#include "gcu/correlate.h"
#include "gcu/source.h"
#include "app/launch.h"
#include "lib/log.h"
#include "model/model.h"
#include "collect/proctree.h"
#include "output/report.h"
#include "collect/cpuprof.h"
#include "collect/usampler.h"
#include "collect/kprof.h"
#include "lib/monotime.h"
#include "collect/tracer.h"
#include "output/chrome.h"
#include "output/store.h"
#include "output/vpd.h"
#include "app/session.h"
#include "output/rawdata.h"
#include "lib/outfile.h"
#include "lib/outname.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 100

#ifndef TOPSPROF_VERSION
#define TOPSPROF_VERSION "0.0.0-dev"
#endif
#define TOPSPROF_VERSION_STRING TOPSPROF_VERSION

/* the launched application once it is released: from then on a signal is the application's
 * (forwarded), before it is topsprof's end */
static volatile pid_t child_pid;
/* the signal topsprof dies of once everything is cleaned up (main) */
int run_exit_signal;
/* without a launched application (attach, system-wide), a signal ends the profiling; before the
 * application runs, it ends topsprof: the signal */
static volatile sig_atomic_t stop_requested;

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
static sigset_t handled_signals;
/* what topsprof was started ignoring (nohup, a batch system's SIGPIPE, a background job's
 * SIGINT) the application starts ignoring, and it ends no profiling; sent to topsprof alone,
 * it is still forwarded: the application may have set a handler of its own */
static sigset_t ignored_at_start;

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
static void set_signals(bool install, int flags)
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

static double now_s(void)
{
	return (double)mono_ns() / 1e9;
}

/* the processes seen using a GCU (system-wide utilization), and how far the model was read */
struct gcu_users {
	uint32_t pids[256];
	size_t n;
	size_t calls, ops;
	bool full; /* said */
};

static void gcu_user_add(struct gcu_users *g, uint32_t pid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->pids[i] == pid)
			return;
	if (pid && g->n < sizeof(g->pids) / sizeof(g->pids[0]))
		g->pids[g->n++] = pid;
	else if (pid && !g->full) {
		g->full = true;
		pr_warn("utilization: %zu processes seen using a GCU, the most followed: further ones "
			"are not sampled",
			g->n);
	}
}

/* the files a run writes, their names expanded, their directories opened and checked before
 * anything runs (outfile.h); .open says which are asked for */
struct outputs {
	struct outtarget csv, chrome, profile, vpd_dir, raw, folded;
	struct outtarget dump; /* --debug-dump's text */
};

struct run {
	const struct cli *cli;
	struct model m;
	struct proctree *pt;
	struct tracer *tr;
	struct cpuprof *cpu;
	struct usampler *util;
	struct gcu_users gcu_users;
	struct kprof *kern;
	struct ring_buffer *rb;
	struct gcu_source *gcu;
	struct raw_writer *raw;
	struct session *session;
	bool collecting;
	struct launch app;
	bool stats_mode;
	char exe[PATH_MAX];
	struct findlib_target libs[2]; /* runtime, topstx */
	struct outputs outs;
};

static void on_proc_event(void *ctx, const struct tp_proc_event *e)
{
	struct run *r = ctx;

	raw_event(r->raw, e, sizeof(*e));
	model_add_proc_event(&r->m, e);
}

static int on_api_event(void *ctx, void *data, size_t size)
{
	struct run *r = ctx;
	const struct tp_event_hdr *h = data;

	/* a string the probe could not read: read it now, while the process runs, if that is
	 * safe; what was read replaces the faulted piece (also in the raw data) */
	if (size >= sizeof(struct tp_str_event) && h->type == EV_API_STR &&
	    (((const struct tp_str_event *)data)->last & API_STR_FAULT)) {
		struct tp_str_event *pieces;
		size_t n = strrecover_pieces(data, &pieces);

		for (size_t i = 0; i < n; i++) {
			raw_event(r->raw, &pieces[i], sizeof(pieces[i]));
			model_add_str(&r->m, &pieces[i]);
		}
		free(pieces);
		if (n)
			return 0;
	}
	raw_event(r->raw, data, size);
	if (size >= sizeof(struct tp_api_event) && h->type == EV_API_CALL)
		model_add_call(&r->m, data);
	else if (size >= sizeof(struct tp_str_event) && h->type == EV_API_STR)
		model_add_str(&r->m, data);
	return 0;
}

/* whether the requested output needs every call, or statistics will do */
static bool needs_every_call(const struct cli *cli)
{
	static const enum opt_id trace_outputs[] = {
		OPT_EXPORT_PROFILE,	 OPT_EXPORT_VISUAL_PROFILER, OPT_EXPORT_RAWDATA,
		OPT_EXPORT_CHROME_TRACE, OPT_PRINT_GCU_TRACE,
	};

	for (size_t i = 0; i < sizeof(trace_outputs) / sizeof(trace_outputs[0]); i++)
		if (cli->given[trace_outputs[i]])
			return true;
	return false;
}

/* which libraries to probe; 0, or 1 after one error line */
/* the libraries a running process has mapped, seen through /proc/PID/root (containers) */
static void mapped_libraries(pid_t pid, struct findlib_target *t, int n)
{
	char path[64], line[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		for (int i = 0; i < n; i++) {
			const char *base = strrchr(file, '/') + 1;

			if (!t[i].path[0] &&
			    !strncmp(base, t[i].soname_prefix, strlen(t[i].soname_prefix)))
				snprintf(t[i].path, sizeof(t[i].path), "/proc/%d/root%s", (int)pid,
					 file);
		}
	}
	if (f)
		fclose(f);
}

/* the runtime files on this host: those running processes have mapped, and where the dynamic
 * loader would find them by name */
static void host_libraries(struct findlib_target *t, int n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d)) && (!t[0].path[0] || !t[1].path[0])) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!*end && pid > 0 && pid != getpid())
			mapped_libraries((pid_t)pid, t, n);
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		char name[64], path[PATH_MAX];

		snprintf(name, sizeof(name), "%s.1", t[i].soname_prefix);
		if (!t[i].path[0] && !findlib_ldcache("", name, path, sizeof(path)))
			snprintf(t[i].path, sizeof(t[i].path), "%s", path);
		snprintf(path, sizeof(path), "/opt/tops/lib/%s", name);
		if (!t[i].path[0] && !access(path, R_OK))
			snprintf(t[i].path, sizeof(t[i].path), "%s", path);
	}
}

/* the runtime of an attached process: mapped, linked in, or where it would be dlopen()ed */
static void attached_libraries(pid_t pid, struct findlib_target *t, int n, char *exe, size_t len)
{
	char root[64], link[64], target[PATH_MAX];
	struct findlib_ctx ctx = { .root = root };
	ssize_t k;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	k = readlink(link, target, sizeof(target) - 1);
	target[k > 0 ? k : 0] = '\0';
	snprintf(exe, len, "%s", target);
	mapped_libraries(pid, t, n);
	if ((!t[0].path[0] || !t[1].path[0]) && k > 0) {
		struct findlib_target more[2] = { t[0], t[1] };

		findlib_find(&ctx, target, more, n);
		for (int i = 0; i < n; i++)
			if (!t[i].path[0])
				t[i] = more[i];
	}
}

static int find_libraries(struct run *r)
{
	const struct cli *cli = r->cli;
	struct findlib_ctx ctx = { .root = "", .ld_library_path = getenv("LD_LIBRARY_PATH") };
	struct findlib_target *rt = &r->libs[0], *tx = &r->libs[1];
	const char *what = cli->app_argc ? cli->app_argv[0] : "the host";
	char buf[32];
	int err;

	*rt = (struct findlib_target){ .soname_prefix = "libtopsrt.so",
				       .probe_symbol = "topsLaunchKernel" };
	*tx = (struct findlib_target){ .soname_prefix = "libtopstx.so",
				       .probe_symbol = "topstxRangePush" };
	if (cli->given[OPT_ATTACH_PID]) {
		char maps[64];
		int fd;

		if (kill(cli->attach_pid, 0) && errno == ESRCH) {
			pr_error("--attach-pid %d: no such process", (int)cli->attach_pid);
			return 1;
		}
		/* what the kernel lets this user read of it is what it lets them trace */
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)cli->attach_pid);
		fd = open(maps, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			pr_error("--attach-pid %d: this user may not trace it (%s)",
				 (int)cli->attach_pid, strerror(errno));
			return 1;
		}
		if (fd >= 0)
			close(fd);
		attached_libraries(cli->attach_pid, r->libs, 2, r->exe, sizeof(r->exe));
		snprintf(buf, sizeof(buf), "process %d", (int)cli->attach_pid);
		snprintf(ctx.looked, sizeof(ctx.looked),
			 "its maps and its program's search path, /opt/tops/lib");
		what = buf;
	} else if (cli->given[OPT_SYSTEM_WIDE]) {
		if (!cli->given[OPT_RUNTIME_LIB])
			host_libraries(r->libs, 2);
		snprintf(ctx.looked, sizeof(ctx.looked),
			 "the maps of running processes, /etc/ld.so.cache, /opt/tops/lib");
	} else {
		err = findlib_resolve_exe(cli->app_argv[0], getenv("PATH"), r->exe, sizeof(r->exe));
		if (err) {
			pr_error("cannot run '%s': %s", cli->app_argv[0],
				 err == -ENOENT && !strchr(cli->app_argv[0], '/')
					 ? "not found (looked in PATH)"
					 : strerror(-err));
			return 1;
		}
		findlib_find(&ctx, r->exe, r->libs, 2);
	}
	if (cli->given[OPT_RUNTIME_LIB]) {
		if (access(cli->text[OPT_RUNTIME_LIB], R_OK)) {
			pr_error("--runtime-lib: %s: %s", cli->text[OPT_RUNTIME_LIB],
				 strerror(errno));
			return 1;
		}
		snprintf(rt->path, sizeof(rt->path), "%s", cli->text[OPT_RUNTIME_LIB]);
		rt->in_executable = false;
		if (!tx->path[0]) { /* libtopstx.so beside it */
			char dir[PATH_MAX];
			const char *slash = strrchr(rt->path, '/');

			snprintf(dir, sizeof(dir), "%.*s/libtopstx.so.1",
				 slash ? (int)(slash - rt->path) : 1, slash ? rt->path : ".");
			if (!access(dir, R_OK))
				snprintf(tx->path, sizeof(tx->path), "%s", dir);
		}
	}
	if ((cli->trace_domains & TRACE_RUNTIME) && !rt->path[0]) {
		pr_error("cannot find the GCU runtime (libtopsrt.so) that '%s' uses: not linked "
			 "in, not a dependency, and not in %s; name it with --runtime-lib PATH",
			 what, ctx.looked);
		return 1;
	}
	pr_debug("application %s; runtime %s%s; topstx %s", r->exe, rt->path[0] ? rt->path : "-",
		 rt->in_executable ? " (linked in)" : "", tx->path[0] ? tx->path : "-");
	return 0;
}

/* --kernel-callstack: system-wide, the profiled processes are every process */
static int setup_kernel(struct run *r, int pid_map_fd)
{
	const struct cli *cli = r->cli;
	static const enum kc_filter filters[] = { [KFILTER_CURRENT] = KC_FILTER_CURRENT,
						  [KFILTER_ALL] = KC_FILTER_ALL,
						  [KFILTER_KMD] = KC_FILTER_KMD,
						  [KFILTER_FUNCS] = KC_FILTER_FUNCS };
	struct kprof_opts ko = {
		.filter = filters[cli->kfilter],
		.functions = cli->kfilter_functions,
		.kmd_module = cli->kmd_module,
		/* a launched application: from its release on (not its wait for it) */
		.collecting = cli->profile_from_start && !cli->app_argc,
		.pid_map_fd = pid_map_fd
	};

	if (ko.filter == KC_FILTER_CURRENT && cli->given[OPT_SYSTEM_WIDE])
		ko.filter = KC_FILTER_ALL;
	if (kprof_open(&r->kern, &ko))
		return 1;
	r->m.kernel.collected = true;
	r->m.kernel.filter = strdup(cli->given[OPT_KERNEL_CALLSTACK_FILTER]
					    ? cli->text[OPT_KERNEL_CALLSTACK_FILTER]
					    : "current");
	return 0;
}

static int setup_bpf(struct run *r)
{
	const struct cli *cli = r->cli;
	struct proctree_opts po = { .on_event = on_proc_event,
				    .ctx = r,
				    .system_wide = cli->given[OPT_SYSTEM_WIDE] };
	struct tracer_opts to = {
		.system_wide = cli->given[OPT_SYSTEM_WIDE],
		.stats_mode = r->stats_mode,
		.collecting = cli->profile_from_start,
		.max_str_bytes = cli->topstx_max_bytes,
		.buffer_size = cli->buffer_size,
	};
	int n;

	if (proctree_open(&r->pt, &po))
		return 1;
	to.pid_map_fd = proctree_map_fd(r->pt);
	if (tracer_open(&r->tr, &to))
		return 1;
	if (cli->given[OPT_CPU_PROFILING_CALLSTACK]) {
		struct cpuprof_opts co = { .system_wide = cli->given[OPT_SYSTEM_WIDE],
					   .collecting = cli->profile_from_start,
					   .hz = cli->cpu_frequency_hz,
					   .pid_map_fd = to.pid_map_fd };

		if (cpuprof_open(&r->cpu, &co))
			return 1;
		r->m.cpu.sampled = true;
		r->m.cpu.hz = co.hz;
	}
	if (cli->given[OPT_KERNEL_CALLSTACK] && setup_kernel(r, to.pid_map_fd))
		return 1;
	if (cli->trace_domains & TRACE_RUNTIME) {
		n = tracer_attach(r->tr, r->libs[0].path, DOM_RUNTIME);
		if (n < 0)
			return 1;
		if (n == 0) {
			pr_error("%s has none of the GCU runtime's functions", r->libs[0].path);
			return 1;
		}
	}
	if ((cli->trace_domains & TRACE_TOPSTX) && r->libs[1].path[0] &&
	    tracer_attach(r->tr, r->libs[1].path, DOM_TOPSTX) < 0)
		return 1;
	r->rb = ring_buffer__new(tracer_events_fd(r->tr), on_api_event, r, NULL);
	if (!r->rb) {
		pr_error("opening the API event ring buffer: %s", strerror(errno));
		return 1;
	}
	return 0;
}

/* system-wide, the processes whose utilization is sampled: those seen using a GCU (their calls,
 * their GCU records), gathered from what was collected since the last time */
static size_t gcu_pids(void *ctx, uint32_t *out, size_t max)
{
	struct run *r = ctx;
	struct gcu_users *g = &r->gcu_users;

	if (g->calls > r->m.ncalls || g->ops > r->m.nops) /* topsprof cancel emptied them */
		g->calls = g->ops = 0;
	for (; g->calls < r->m.ncalls; g->calls++)
		gcu_user_add(g, r->m.calls[g->calls].pid);
	for (; g->ops < r->m.nops; g->ops++)
		gcu_user_add(g, r->m.ops[g->ops].rec.pid);
	memcpy(out, g->pids, (g->n < max ? g->n : max) * sizeof(*out));
	return g->n < max ? g->n : max;
}

/* --cpu-utilization, --memory-utilization: the tracked processes; system-wide, the host's and
 * the processes seen using a GCU */
static int setup_utilization(struct run *r)
{
	const struct cli *cli = r->cli;
	bool all = cli->given[OPT_SYSTEM_WIDE];
	struct usampler_opts uo = { .cpu = cli->given[OPT_CPU_UTILIZATION],
				    .mem = cli->given[OPT_MEMORY_UTILIZATION],
				    .collecting = r->collecting,
				    .hz = cli->utilization_frequency_hz,
				    .pid_map_fd = all ? -1 : proctree_map_fd(r->pt),
				    .more_pids = all ? gcu_pids : NULL,
				    .ctx = r };

	return usampler_open(&r->util, &uo, &r->m.util) ? 1 : 0;
}

/* GCU records: from every device, of the activities asked for */
static void setup_gcu(struct run *r)
{
	const struct cli *cli = r->cli;
	unsigned act = activity_to_gcu(cli->activities);
	const char *meta = getenv("ENFLAME_GENERATE_PROFILE_META");

	if (!act || !r->collecting)
		return; /* with collection off, the devices start recording at 'topsprof start' */
	if ((act & (GCU_ACT_CDTE | GCU_ACT_SDTE)) && (!meta || strcmp(meta, "true")))
		pr_warn("Memcpy_cdte/Memcpy_sdte need profile meta, which this run will not have: "
			"export ENFLAME_GENERATE_PROFILE_META=true (factor programs) or compile with "
			"topscc -fgcu-generate-profile-meta");
	if (gcu_source_open(&r->gcu, &gcu_backend_readout, act, &r->m))
		r->gcu = NULL;
}

/* every run is a member of a session: a new one, or the one named by --session */
static int open_session(struct run *r)
{
	const struct cli *cli = r->cli;
	char cmd[1024] = "", err[PATH_MAX + 256];
	size_t used = 0;

	for (int i = 0; i < cli->app_argc && used < sizeof(cmd); i++)
		used += (size_t)snprintf(cmd + used, sizeof(cmd) - used, "%s%s", i ? " " : "",
					 cli->app_argv[i]);
	if (session_open(&r->session,
			 cli->given[OPT_SESSION_NEW] ? cli->text[OPT_SESSION_NEW]
			 : cli->given[OPT_SESSION]   ? cli->text[OPT_SESSION]
						     : NULL,
			 cli->given[OPT_SESSION], cmd, r->collecting, err, sizeof(err))) {
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
		fprintf(f, " %s", r->exe[0] ? r->exe : "(all)");
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
		r->collecting = a == CTL_START;
		tracer_set_collecting(r->tr, r->collecting);
		cpuprof_set_collecting(r->cpu, r->collecting);
		usampler_set_collecting(r->util, r->collecting);
		kprof_set_collecting(r->kern, r->collecting);
		if (r->collecting && !r->gcu)
			setup_gcu(
				r); /* --profile-from-start off: the devices start recording now */
		else if (r->gcu)
			gcu_source_pause(r->gcu, !r->collecting);
		session_set_state(r->session, r->collecting);
		pr_debug("collection %s", r->collecting ? "started" : "stopped");
		break;
	case CTL_CANCEL:
		/* what is in flight belongs to what is thrown away */
		ring_buffer__consume(r->rb);
		if (r->gcu)
			gcu_source_poll(r->gcu, &r->m);
		tracer_clear_stats(r->tr);
		cpuprof_clear(r->cpu);
		kprof_clear(r->kern);
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

/* how long a signal sent to topsprof waits for the news that the application got it too */
#define FORWARD_WAIT_NS (50 * 1000000ull)

/* whether the application got the signal topsprof was sent too: a signal from the kernel (the
 * terminal's) has no sender to compare; one from a process, the same sender (pids as seen from
 * topsprof's pid namespace, as si_pid and bpf/proc.bpf.c give them) */
static bool app_got_signal(const struct run *r, int sig)
{
	pid_t sender;

	if (!proctree_app_signaled(r->pt, sig, pending[sig].ns - 2 * FORWARD_WAIT_NS, getpid(),
				   &sender))
		return false;
	return pending[sig].code > 0 || sender == pending[sig].sender;
}

/* Forward the signals topsprof was sent to the application, once: a signal sent to the whole
 * process group or job (Ctrl-C, kill -- -PGID, a batch system's SIGTERM to every process) has
 * reached the application already, as the BPF signal tracepoint tells; one sent to topsprof
 * alone is meant for it. True while one still waits for that news. Called with the handled
 * signals blocked: pending[] is the loop's alone here. */
static bool forward_signals(struct run *r)
{
	bool waiting = false;

	for (int sig = 1; sig < NSIG; sig++) {
		bool got;

		if (!pending[sig].set)
			continue;
		got = app_got_signal(r, sig);
		if (!got && mono_ns() - pending[sig].ns < FORWARD_WAIT_NS) {
			waiting = true;
			continue;
		}
		pending[sig].set = false;
		if (!got)
			kill(r->app.pid, sig);
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
static void wait_app(struct run *r, const sigset_t *wait_mask)
{
	sigprocmask(SIG_BLOCK, &handled_signals, NULL);
	for (;;) {
		int wait_ms;
		struct timespec ts;

		errno = 0;
		if (launch_reap(&r->app, false) || errno == ECHILD)
			break;
		/* SIGCHLD (handled) cuts the wait short when the application ends */
		wait_ms = forward_signals(r) ? 5 : POLL_MS;
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (wait_ms % 1000) * 1000000L;
		ppoll(NULL, 0, &ts, wait_mask);
	}
	sigprocmask(SIG_SETMASK, wait_mask, NULL);
}

/* the main loop; the handled signals are blocked in it except while it waits (wait_mask: the
 * mask topsprof had), so a signal never comes between a look at pending[] and the wait */
static void collect(struct run *r, const sigset_t *wait_mask)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	int fds[6] = { ring_buffer__epoll_fd(r->rb), proctree_epoll_fd(r->pt),
		       session_fd(r->session),	     cpuprof_epoll_fd(r->cpu),
		       usampler_fd(r->util),	     kprof_epoll_fd(r->kern) };

	for (int i = 0; ep >= 0 && i < 6; i++) {
		ev.data.u32 = (uint32_t)i;
		if (fds[i] >= 0)
			epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	while (!run_ended(r)) {
		struct epoll_event got[6];
		int wait_ms = forward_signals(r) ? 5 : POLL_MS;
		struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
		int n = ep >= 0 ? epoll_pwait(ep, got, 6, wait_ms, wait_mask)
				: (ppoll(NULL, 0, &ts, wait_mask), 0);

		for (int i = 0; i < n; i++)
			if (got[i].data.u32 == 2)
				control(r, session_serve(r->session));
		usampler_tick(r->util);
		/* the probes wake topsprof only when the ring fills: read what came meanwhile */
		ring_buffer__consume(r->rb);
		proctree_poll(r->pt, 0);
		cpuprof_poll(r->cpu);
		kprof_poll(r->kern);
		if (r->gcu) {
			gcu_source_poll(r->gcu, &r->m);
			gcu_source_sync(r->gcu, &r->m);
		}
	}
	if (ep >= 0)
		close(ep);
	r->m.span_end_ns = mono_ns();
	/* what the application did up to its end */
	ring_buffer__consume(r->rb);
	proctree_poll(r->pt, 0);
	if (r->gcu)
		gcu_source_finish(r->gcu, &r->m);
}

static void warn_losses(const struct model *m)
{
	uint32_t pid = m->root_pid;

	if (m->lost_calls + m->lost_strings)
		out_print(stderr,
			  "==%u== warning: %llu events lost (%llu calls, %llu string pieces): the "
			  "ring buffer was full; raise --buffer-size (now %llu bytes)\n",
			  pid, (unsigned long long)(m->lost_calls + m->lost_strings),
			  (unsigned long long)m->lost_calls, (unsigned long long)m->lost_strings,
			  (unsigned long long)m->buffer_size);
	if (m->lost_unreadable)
		out_print(stderr,
			  "==%u== warning: %llu topstx strings could not be read: not in memory "
			  "when passed, and not safe to read again later (writable memory, the "
			  "process had ended, or its page did not come in time); shown as "
			  "[unreadable string at 0x...]\n",
			  pid, (unsigned long long)m->lost_unreadable);
	if (m->str_faulted_in + m->str_recovered)
		pr_debug("topstx strings in pages the application had not touched: %llu faulted in "
			 "by the probe, %llu read again from the process",
			 (unsigned long long)m->str_faulted_in,
			 (unsigned long long)m->str_recovered);
	if (m->lost_depth)
		out_print(stderr,
			  "==%u== warning: %llu calls nested deeper than %d were not traced\n", pid,
			  (unsigned long long)m->lost_depth, API_MAX_DEPTH);
	if (m->lost_stats)
		out_print(stderr, "==%u== warning: %llu calls lost to a full statistics map\n", pid,
			  (unsigned long long)m->lost_stats);
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		if (m->dev[d].overflow)
			out_print(
				stderr,
				"==%u== warning: GCU %d dropped %llu profiler records (its ring was "
				"full)\n",
				pid, d, (unsigned long long)m->dev[d].overflow);
	if (m->gcu_joined && (m->unjoined_records || m->unjoined_calls))
		out_print(stderr,
			  "==%u== warning: %llu GCU records and %llu API calls could not be joined "
			  "to each other\n",
			  pid, (unsigned long long)m->unjoined_records,
			  (unsigned long long)m->unjoined_calls);
	if (m->lost_proc_events + m->lost_pids)
		out_print(stderr,
			  "==%u== warning: %llu process events lost, %llu processes not followed\n",
			  pid, (unsigned long long)m->lost_proc_events,
			  (unsigned long long)m->lost_pids);
	if (m->cpu.lost_samples + m->cpu.lost_stacks)
		out_print(stderr,
			  "==%u== warning: CPU sampling lost %llu samples (the count map was full) "
			  "and the stacks of %llu (the stack map was full, or its slot taken)\n",
			  pid, (unsigned long long)m->cpu.lost_samples,
			  (unsigned long long)m->cpu.lost_stacks);
	if (m->kernel.lost_entries + m->kernel.lost_stacks + m->kernel.lost_threads)
		out_print(stderr,
			  "==%u== warning: kernel callstacks lost %llu calls (the entry map was "
			  "full), %llu waits or their stacks (a map was full, or a stack's slot "
			  "taken) and %llu threads' calls (no room for the thread)\n",
			  pid, (unsigned long long)m->kernel.lost_entries,
			  (unsigned long long)m->kernel.lost_stacks,
			  (unsigned long long)m->kernel.lost_threads);
}

/* --query-trace with an application: the domains, and the custom ones it created */
static void query_trace(const struct model *m)
{
	const char **names = calloc(m->ncalls + 1, sizeof(*names));
	size_t n = 0;

	for (size_t i = 0; names && i < m->ncalls; i++) {
		const struct api_call *c = &m->calls[i];
		size_t k;

		if (api_table[c->fn].tx != TX_DOMAIN_NEW || !c->str[0])
			continue;
		for (k = 0; k < n && strcmp(names[k], c->str[0]); k++)
			;
		if (k == n)
			names[n++] = c->str[0];
	}
	trace_domain_print_query(stdout, names, n);
	free(names);
}

/* exports that failed: topsprof's exit status says so */
static int export_errors;

/* an export: write(f) into its prepared place, atomically */
static void export_file(const char *opt, const struct outtarget *t,
			int (*write)(FILE *, const void *), const void *ctx)
{
	struct outfile o;
	char err[PATH_MAX + 256];

	if (outfile_create(&o, t, NULL, err, sizeof(err))) {
		pr_error("--%s: %s", opt, err);
		export_errors++;
		return;
	}
	/* a writer fails on a write error (said by the commit, e.g. a full disk) or for memory */
	if (write(o.f, ctx) && !outfile_write_error(&o)) {
		pr_error("--%s: %s: out of memory", opt, t->path);
		outfile_abort(&o);
		export_errors++;
	} else if (outfile_commit(&o, err, sizeof(err))) {
		pr_error("--%s: %s", opt, err);
		export_errors++;
	} else {
		pr_debug("wrote %s", t->path);
	}
}

struct csv_ctx {
	const struct model *m;
	const struct report_opts *ro;
	bool trace;
};

static int write_csv(FILE *f, const void *p)
{
	const struct csv_ctx *c = p;

	if (c->trace)
		report_csv_gcu_trace(f, c->m);
	else
		report_csv_summary(f, c->m, c->ro);
	return 0;
}

static int write_chrome(FILE *f, const void *p)
{
	chrome_write(f, p);
	return 0;
}

static int write_folded(FILE *f, const void *m)
{
	return cpu_profile_write_folded(f, &((const struct model *)m)->cpu);
}

static int write_profile(FILE *f, const void *m)
{
	return store_write_profile(f, m);
}

static void write_exports(const struct cli *cli, const struct model *m,
			  const struct report_opts *ro, const struct outputs *o)
{
	struct csv_ctx c = { m, ro, cli->given[OPT_PRINT_GCU_TRACE] };

	if (o->csv.open)
		export_file("export-csv", &o->csv, write_csv, &c);
	if (o->chrome.open)
		export_file("export-chrome-trace", &o->chrome, write_chrome, m);
	if (o->profile.open)
		export_file("export-profile", &o->profile, write_profile, m);
	if (o->folded.open && !m->cpu.sampled) {
		/* an imported profile recorded without --cpu-profiling-callstack */
		pr_error("--export-folded: the profile has no CPU call stacks");
		export_errors++;
	} else if (o->folded.open) {
		export_file("export-folded", &o->folded, write_folded, m);
	}
	if (o->vpd_dir.open) {
		char host[256], cmd[4096] = "", err[PATH_MAX + 256];
		struct vpd_identity id = { host, vpd_rank(), cmd };
		size_t used = 0;

		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		for (int i = 0; i < cli->app_argc && used < sizeof(cmd); i++)
			used += (size_t)snprintf(cmd + used, sizeof(cmd) - used, "%s%s",
						 i ? " " : "", cli->app_argv[i]);
		if (vpd_export(&o->vpd_dir, m, &id, err, sizeof(err)) < 0) {
			pr_error("--export-visual-profiler: %s", err);
			export_errors++;
		}
	}
}

static void close_outputs(struct outputs *o)
{
	outtarget_close(&o->csv);
	outtarget_close(&o->chrome);
	outtarget_close(&o->profile);
	outtarget_close(&o->vpd_dir);
	outtarget_close(&o->raw);
	outtarget_close(&o->folded);
	outtarget_close(&o->dump);
}

/* running as root, an output in a directory another user can change: said once, as they can
 * replace the file once it is written (topsprof's own writes never follow their links) */
static void warn_exposed(const char *opt, const struct outtarget *t)
{
	char msg[PATH_MAX + 256];

	if (!geteuid() && outtarget_exposed(t, msg, sizeof(msg)) > 0)
		pr_warn("--%s: %s", opt, msg);
}

/* --debug-dump: the raw state of the run and what topsprof did, in the current directory, for a
 * bug report: topsprof-debug-PID.{raw,txt}; when either name is taken (a file, a link, a
 * directory: anyone may put one there) and --force-overwrite is not given,
 * topsprof-debug-PID-RANDOM.{raw,txt}, so nobody can keep root's run from starting */
static int prepare_debug_dump(const struct cli *cli, struct outputs *o)
{
	bool force = cli->given[OPT_FORCE_OVERWRITE], raw = !cli->given[OPT_EXPORT_RAWDATA];
	char err[PATH_MAX + 256], path[PATH_MAX], suffix[24] = "";

	for (int tries = 0;; tries++) {
		int k, e;

		for (k = raw ? 0 : 1; k < 2; k++) {
			snprintf(path, sizeof(path), "topsprof-debug-%d%s.%s", (int)getpid(),
				 suffix, k ? "txt" : "raw");
			if (outtarget_file(k ? &o->dump : &o->raw, path, force, err, sizeof(err)))
				break;
		}
		if (k == 2)
			break;
		e = errno;
		if (k && raw)
			outtarget_close(&o->raw);
		if (force || (e != EEXIST && e != EISDIR) || tries == 16) {
			pr_error("--debug-dump: %s", err);
			return -1;
		}
		snprintf(suffix, sizeof(suffix), "-%016llx", (unsigned long long)outfile_random());
	}
	if (suffix[0])
		pr_debug("--debug-dump: topsprof-debug-%d.%s is taken: writing %s%s%s",
			 (int)getpid(), raw ? "{raw,txt}" : "txt", raw ? o->raw.path : "",
			 raw ? " and " : "", o->dump.path);
	warn_exposed("debug-dump", &o->dump);
	return 0;
}

/* output names expanded (%p, %h, %q{ENV}) and checked before anything runs; closed with
 * close_outputs */
static int prepare_outputs(const struct cli *cli, struct outputs *o)
{
	static const struct {
		enum opt_id opt;
		size_t off;
	} outs[] = {
		{ OPT_EXPORT_CSV, offsetof(struct outputs, csv) },
		{ OPT_EXPORT_CHROME_TRACE, offsetof(struct outputs, chrome) },
		{ OPT_EXPORT_PROFILE, offsetof(struct outputs, profile) },
		{ OPT_EXPORT_VISUAL_PROFILER, offsetof(struct outputs, vpd_dir) },
		{ OPT_EXPORT_RAWDATA, offsetof(struct outputs, raw) },
		{ OPT_EXPORT_FOLDED, offsetof(struct outputs, folded) },
	};
	bool force = cli->given[OPT_FORCE_OVERWRITE];
	char err[PATH_MAX + 256], path[PATH_MAX];

	memset(o, 0, sizeof(*o));
	if (cli->given[OPT_EXPORT_FOLDED] && !cli->given[OPT_CPU_PROFILING_CALLSTACK] &&
	    !cli->given[OPT_IMPORT_PROFILE] && !cli->given[OPT_IMPORT_RAWDATA]) {
		pr_error("--export-folded: needs --cpu-profiling-callstack");
		return 1;
	}
	/* every output's directory opened once and checked writable for real, so that a long
	 * run's results are never lost at its end */
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		struct outtarget *t = (struct outtarget *)((char *)o + outs[i].off);

		if (!cli->given[outs[i].opt])
			continue;
		if (outname_expand(cli->text[outs[i].opt], getpid(), path, sizeof(path), err,
				   sizeof(err)) ||
		    (outs[i].opt == OPT_EXPORT_VISUAL_PROFILER
			     ? outtarget_dir(t, path, force, err, sizeof(err))
			     : outtarget_file(t, path, force, err, sizeof(err)))) {
			pr_error("--%s: %s", cli_options[outs[i].opt].name, err);
			goto fail;
		}
		warn_exposed(cli_options[outs[i].opt].name, t);
	}
	if (cli->given[OPT_DEBUG_DUMP] && !cli->given[OPT_IMPORT_PROFILE] &&
	    !cli->given[OPT_IMPORT_RAWDATA] && prepare_debug_dump(cli, o))
		goto fail;
	return 0;
fail:
	close_outputs(o);
	return 1;
}

/* what the print options ask for, from a finished model: the same for a live run and an
 * imported profile */
static void print_outputs(const struct cli *cli, const struct model *m, const struct outputs *outs)
{
	struct report_opts ro = { .pid = m->root_pid,
				  .api_only = cli->given[OPT_PRINT_API_SUMMARY],
				  .gcu_only = cli->given[OPT_PRINT_GCU_SUMMARY],
				  .per_gcu = cli->given[OPT_PRINT_SUMMARY_PER_GCU] };
	/* the GCU trace replaces the summary, unless a summary is asked for too */
	bool summary = !cli->given[OPT_PRINT_GCU_TRACE] || cli->given[OPT_PRINT_SUMMARY] ||
		       cli->given[OPT_PRINT_API_SUMMARY] || cli->given[OPT_PRINT_GCU_SUMMARY] ||
		       cli->given[OPT_PRINT_SUMMARY_PER_GCU];

	if (cli->given[OPT_QUERY_TRACE]) {
		query_trace(m);
	} else {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (f) {
			report_progress(f, m->process_s);
			if (cli->given[OPT_PRINT_GCU_TRACE])
				report_gcu_trace(f, m, ro.pid);
			if (summary)
				report_summary(f, m, &ro);
			fclose(f);
			out_write(stdout, cli->given[OPT_QUIET], buf, len);
			free(buf);
		}
	}
	warn_losses(m);
	write_exports(cli, m, &ro, outs);
}

/* the analysis after collection, the same for a live run and replayed raw data */
static void finish_model(struct model *m, bool stats_mode, const char *include_domains)
{
	if (!m->system_wide)
		model_keep_own_gcu(m);
	model_finish(m, !stats_mode, include_domains);
	gcu_align(m);
	if (!stats_mode)
		gcu_join(m);
	if (m->gcu_joined)
		pr_debug("joined %llu of %zu GCU records to API calls; %llu calls without a record",
			 (unsigned long long)m->joined, m->nops,
			 (unsigned long long)m->unjoined_calls);
}

/* --debug-dump: what topsprof did, beside the raw data */
static void debug_dump(const struct run *r)
{
	char err[PATH_MAX + 256];
	struct outfile o;
	FILE *f;

	if (outfile_create(&o, &r->outs.dump, NULL, err, sizeof(err))) {
		pr_warn("--debug-dump: %s", err);
		return;
	}
	f = o.f;
	fprintf(f, "topsprof %s\ncommand:", TOPSPROF_VERSION_STRING);
	for (int i = 0; i < r->cli->app_argc; i++)
		fprintf(f, " %s", r->cli->app_argv[i]);
	fprintf(f, "\nexecutable: %s\nruntime: %s%s\ntopstx: %s\nmode: %s\nsession: %s\n", r->exe,
		r->libs[0].path, r->libs[0].in_executable ? " (linked in)" : "",
		r->libs[1].path[0] ? r->libs[1].path : "-", r->stats_mode ? "statistics" : "trace",
		r->session ? session_name(r->session) : "-");
	fprintf(f, "calls: %zu\ngcu records: %zu\nprocesses: %zu\nranges: %zu\n", r->m.ncalls,
		r->m.nops, r->m.nprocs, r->m.nranges);
	fprintf(f, "lost: calls %llu, strings %llu, depth %llu, stats %llu, process events %llu\n",
		(unsigned long long)r->m.lost_calls, (unsigned long long)r->m.lost_strings,
		(unsigned long long)r->m.lost_depth, (unsigned long long)r->m.lost_stats,
		(unsigned long long)r->m.lost_proc_events);
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		if (r->m.dev[d].present)
			fprintf(f, "GCU %d: tick %llu Hz, %zu sync pairs, %llu dropped\n", d,
				(unsigned long long)r->m.dev[d].tick_hz, r->m.dev[d].npairs,
				(unsigned long long)r->m.dev[d].overflow);
	if (outfile_commit(&o, err, sizeof(err)))
		pr_warn("--debug-dump: %s", err);
	else
		pr_debug("--debug-dump: wrote %s and %s", r->outs.dump.path, r->outs.raw.path);
}

static void report(struct run *r)
{
	const struct cli *cli = r->cli;
	struct proctree_drops d = { 0, 0 };
	double t0 = now_s();

	tracer_collect_maps(r->tr, &r->m);
	if (r->cpu && cpuprof_collect(r->cpu, &r->m.cpu))
		pr_warn("CPU stacks: out of memory; the CPU activities are incomplete");
	if (r->kern && kprof_collect(r->kern, &r->m.kernel))
		pr_warn("kernel stacks: out of memory; the KERNEL activities are incomplete");
	if (!proctree_drops(r->pt, &d)) {
		r->m.lost_proc_events += d.events;
		r->m.lost_pids += d.pids;
	}
	r->m.buffer_size = cli->buffer_size;
	if (r->raw) {
		struct raw_settings rs = { .stats_mode = r->stats_mode,
					   .has_include = cli->given[OPT_TOPSTX_DOMAIN_INCLUDE] };
		char err[PATH_MAX + 256];

		if (rs.has_include)
			snprintf(rs.include_domains, sizeof(rs.include_domains), "%s",
				 cli->text[OPT_TOPSTX_DOMAIN_INCLUDE]);
		if (raw_finish(r->raw, &r->m, &rs, err, sizeof(err))) {
			pr_error("--export-rawdata: %s", err);
			export_errors++;
		}
		r->raw = NULL;
	}
	if (cli->given[OPT_DEBUG_DUMP])
		debug_dump(r);
	finish_model(&r->m, r->stats_mode,
		     cli->given[OPT_TOPSTX_DOMAIN_INCLUDE] ? cli->text[OPT_TOPSTX_DOMAIN_INCLUDE]
							   : NULL);
	r->m.process_s = now_s() - t0;
	print_outputs(cli, &r->m, &r->outs);
	{
		/* topsprof's own cost, for the benchmark and the curious */
		struct timespec ts;

		if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
			pr_debug("topsprof's own CPU time: %.3f ms",
				 (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
	}
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

	pr_error("interrupted by signal %d (%s) before %s started", sig, strsignal(sig), r->exe);
	if (r->app.pid > 0)
		launch_abort(&r->app);
	run_exit_signal = sig;
	return 128 + sig;
}

int cmd_profile(const struct cli *cli)
{
	struct run r;
	sigset_t wait_mask;
	int rc = 1, err;

	memset(&r, 0, sizeof(r));
	r.cli = cli;
	r.app.go_fd = -1;
	model_init(&r.m);
	r.stats_mode = cli->api_mode == API_MODE_STATS ||
		       (cli->api_mode == API_MODE_AUTO && !needs_every_call(cli));
	/* no SA_RESTART: a signal cuts a wait short (epoll_pwait and ppoll never restart) */
	set_signals(true, 0);
	stop_requested = 0;
	if (prepare_outputs(cli, &r.outs) || find_libraries(&r) || setup_bpf(&r))
		goto out;
	r.collecting = cli->profile_from_start;
	if (open_session(&r))
		goto out;
	setup_gcu(&r);
	if (r.outs.raw.open) {
		char err[PATH_MAX + 256];

		if (raw_open(&r.raw, &r.outs.raw, err, sizeof(err))) {
			pr_error("--export-rawdata: %s", err);
			goto out;
		}
	}
	r.m.buffer_size = cli->buffer_size;
	if (cli->app_argc) {
		if (!stop_requested) {
			err = launch_prepare(&r.app, r.exe, cli->app_argv,
					     cli->given[OPT_PRINT_APP_LOG], &handled_signals,
					     &ignored_at_start);
			if (err) {
				pr_error("starting %s: %s", r.exe, strerror(-err));
				goto out;
			}
			/* BPF notes the held child's signals already: one that comes while it is
			 * held and still reaches it is its own, not to be forwarded again */
			proctree_watch_signals(r.pt, r.app.pid);
			pr_debug("holding %s (pid %d) until the probes are in place", r.exe,
				 (int)r.app.pid);
		}
		/* a signal before the application could have it (even while it was forked) ends
		 * topsprof with that signal */
		if (stop_requested) {
			rc = interrupted(&r);
			goto out;
		}
		r.m.root_pid = (uint32_t)r.app.pid;
	} else {
		/* attached to a process, or the whole system: reports are named after topsprof */
		r.app.pid = cli->given[OPT_ATTACH_PID] ? cli->attach_pid : getpid();
		r.m.root_pid = (uint32_t)r.app.pid;
		r.m.system_wide = cli->given[OPT_SYSTEM_WIDE];
	}
	if (!cli->given[OPT_SYSTEM_WIDE] && proctree_add(r.pt, r.app.pid)) {
		pr_error("following process %d: %s", (int)r.app.pid, strerror(errno));
		if (cli->app_argc)
			launch_abort(&r.app);
		goto out;
	}
	print_header(&r);
	if ((cli->given[OPT_CPU_UTILIZATION] || cli->given[OPT_MEMORY_UTILIZATION]) &&
	    setup_utilization(&r)) {
		if (cli->app_argc)
			launch_abort(&r.app);
		goto out;
	}
	if (r.gcu)
		gcu_source_sync(r.gcu, &r.m);
	r.m.span_start_ns = mono_ns();
	/* the held application's wait to be released is topsprof's, not its own */
	if (cli->app_argc)
		kprof_set_collecting(r.kern, r.collecting);
	/* Up to the release a signal ends topsprof (on_signal: stop_requested), from then on it is
	 * the application's (pending[]): the handled signals are blocked from the last look at
	 * stop_requested until child_pid says which, and stay blocked in collect but for its wait */
	sigprocmask(SIG_BLOCK, &handled_signals, &wait_mask);
	if (cli->app_argc && (stop_requested || launch_release(&r.app))) {
		/* a signal that came meanwhile, such as the Ctrl-C that ended the held child,
		 * sets stop_requested now */
		sigprocmask(SIG_SETMASK, &wait_mask, NULL);
		if (stop_requested) {
			rc = interrupted(&r);
			goto out;
		}
		launch_abort(&r.app);
		if (WIFSIGNALED(r.app.status))
			pr_error("starting %s: it was killed by signal %d (%s) before it could be "
				 "released",
				 r.exe, WTERMSIG(r.app.status), strsignal(WTERMSIG(r.app.status)));
		else
			pr_error("starting %s: it ended before it could be released", r.exe);
		goto out;
	}
	if (cli->app_argc)
		child_pid = r.app.pid;
	collect(&r, &wait_mask);
	/* With --duration the application may still run: a signal topsprof is sent is still its,
	 * noted in pending[] as it comes (its time tells whether the application got it too), and
	 * the report's writes to a pipe or a terminal go on after it (SA_RESTART) rather than fail */
	set_signals(true, SA_RESTART);
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	report(&r);
	if (cli->app_argc)
		wait_app(&r, &wait_mask);
	set_signals(false, 0);
	rc = cli->app_argc ? exit_as(&r.app, cli->given[OPT_QUIET]) : 0;
	if (!rc && export_errors)
		rc = 1;
out:
	child_pid = 0;
	set_signals(false, 0);
	ring_buffer__free(r.rb);
	session_close(r.session);
	raw_abort(r.raw);
	gcu_source_close(r.gcu);
	cpuprof_close(r.cpu);
	kprof_close(r.kern);
	usampler_close(r.util);
	tracer_close(r.tr);
	proctree_close(r.pt);
	model_free(&r.m);
	close_outputs(&r.outs);
	return rc;
}

int cmd_import(const struct cli *cli)
{
	struct outputs outs;
	struct model m;
	char err[512];
	const char *path = cli->text[OPT_IMPORT_PROFILE];
	int rc;

	if (prepare_outputs(cli, &outs))
		return 1;
	model_init(&m);
	if (cli->given[OPT_IMPORT_RAWDATA]) {
		struct raw_settings rs;
		double t0 = now_s();

		path = cli->text[OPT_IMPORT_RAWDATA];
		rc = raw_import(path, &m, &rs, err, sizeof(err));
		if (!rc) {
			finish_model(&m, rs.stats_mode, rs.has_include ? rs.include_domains : NULL);
			m.process_s = now_s() - t0;
		}
	} else {
		rc = vpd_import_profile(path, &m, err, sizeof(err));
	}
	if (rc) {
		pr_error("--import-%s: %s: %s",
			 cli->given[OPT_IMPORT_RAWDATA] ? "rawdata" : "profile", path, err);
		model_free(&m);
		close_outputs(&outs);
		return 2;
	}
	if (m.header)
		out_print_quiet(cli->given[OPT_QUIET], "==%u==%s\n", m.root_pid, m.header);
	print_outputs(cli, &m, &outs);
	model_free(&m);
	close_outputs(&outs);
	return export_errors ? 1 : 0;
}

int cmd_merge(const struct cli *cli)
{
	char out[PATH_MAX], err[PATH_MAX + 512];
	struct outtarget t;
	int n;

	/* the output checked before any member is read */
	if (outname_expand(cli->text[OPT_VP_MERGE_TO], getpid(), out, sizeof(out), err,
			   sizeof(err)) ||
	    outtarget_file(&t, out, cli->given[OPT_FORCE_OVERWRITE], err, sizeof(err))) {
		pr_error("--visual-profiler-merge-to: %s", err);
		return 1;
	}
	warn_exposed("visual-profiler-merge-to", &t);
	n = vpd_merge(cli->text[OPT_VP_MERGE_FROM], &t, err, sizeof(err));
	outtarget_close(&t);
	if (n < 0) {
		pr_error("--visual-profiler-merge-%s: %s", n == VPD_MERGE_OUTPUT ? "to" : "from",
			 err);
		return 1;
	}
	out_print_quiet(cli->given[OPT_QUIET], "==== Merged %d vpd files into %s\n", n, out);
	return 0;
}
