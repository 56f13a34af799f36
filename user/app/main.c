// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topsprof: profile programs that run on Enflame GCUs, with eBPF. */
#include "model/activity.h"
#include "app/cli.h"
#include "model/domain.h"
#include "lib/infile.h"
#include "lib/outfile.h"
#include "lib/outname.h"
#include "lib/log.h"
#include "app/run.h"
#include "app/signals.h"
#include "app/session.h"
#include "collect/umulti.h"
#include "gcu/source.h"
#include "gcu_readout.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

enum {
	EXIT_USAGE = 2,
	MAX_ACTIVITY_FILE = 1 << 20
};

#ifndef TOPSPROF_VERSION
#define TOPSPROF_VERSION "0.0.0-dev"
#endif

static void debug_print_options(const struct cli *cli)
{
	for (int i = 0; i < OPT__COUNT; i++)
		if (cli->given[i])
			pr_debug("option --%s%s%s", cli_options[i].name, cli->text[i] ? " " : "",
				 cli->text[i] ? cli->text[i] : "");
	for (int i = 0; i < cli->app_argc; i++)
		pr_debug("application argv[%d] %s", i, cli->app_argv[i]);
}

static int export_activities(const struct cli *cli)
{
	const char *path = cli->text[OPT_EXPORT_ACTIVITIES];
	char *json = activity_export_json(ACTIVITIES_DEFAULT), err[4200] = "write error";
	struct outfile o;

	if (!json) {
		pr_error("--export-activities: out of memory");
		return 1;
	}
	if (outfile_open(&o, path, cli->given[OPT_FORCE_OVERWRITE], err, sizeof(err)) ||
	    (fprintf(o.f, "%s\n", json) < 0 && (outfile_abort(&o), 1)) ||
	    outfile_commit(&o, err, sizeof(err))) {
		pr_error("--export-activities: %s", err);
		free(json);
		return 1;
	}
	free(json);
	out_print(stdout, "==== Activities exported to %s\n", path);
	return 0;
}

/* --import-activities FILE: the activities checked in it replace the default */
static int import_activities(struct cli *cli)
{
	const char *path = cli->text[OPT_IMPORT_ACTIVITIES];
	char err[512];
	unsigned char *text;
	size_t n;
	int rc;

	/* a regular file only, opened without waiting, read through that one descriptor */
	if (infile_read(path, MAX_ACTIVITY_FILE, &text, &n, err, sizeof(err))) {
		pr_error("--import-activities: %s: %s", path, err);
		return -1;
	}
	rc = activity_import_json((const char *)text, &cli->activities, err, sizeof(err));
	if (rc)
		pr_error("--import-activities: %s: %s", path, err);
	free(text);
	return rc;
}

static int dispatch(struct cli *cli);

static void print_activities(FILE *f)
{
	activity_print_query(f);
}

static void print_domains(FILE *f)
{
	trace_domain_print_query(f, NULL, 0);
}

/* --plugin-list: topsprof's collectors and whether this host can run them */
static void print_plugins(FILE *f)
{
	int ndev = gcu_ro_device_count();

	fprintf(f, "==== Plugins:\n");
	fprintf(f, "    %-12s %-11s %s\n", "NAME", "STATE", "WHAT");
	fprintf(f, "    %-12s %-11s %s\n", "runtime", "available",
		umulti_supported() ? "TopsRT API calls: eBPF uprobes (uprobe_multi links)"
				   : "TopsRT API calls: eBPF uprobes (one per function)");
	fprintf(f, "    %-12s %-11s %s\n", "topstx", "available",
		"topstx ranges, marks, domains: eBPF uprobes");
	fprintf(f, "    %-12s %-11s GCU records through the %s (%d devices)\n", "gcu",
		ndev > 0 ? "available" : "no device", gcu_backend_readout.name,
		ndev > 0 ? ndev : 0);
	fprintf(f, "    %-12s %-11s %s\n", "process", "available",
		"the profiled process tree: tp_btf sched_process_fork/exec/exit");
	fprintf(f, "    %-12s %-11s %s\n", "cpu-stacks", "available",
		"CPU call stacks: eBPF perf_event on cpu-clock, 1-100 Hz");
	fprintf(f, "    %-12s %-11s %s\n", "utilization", "available",
		"CPU and memory utilization over time: /proc schedstat, statm, stat, meminfo");
	fprintf(f, "    %-12s %-11s %s\n", "kernel", "available",
		"kernel call stacks of GCU work: fentry/kprobe on the KMD where the kernel has them; "
		"tracepoints sys_enter/sys_exit, sched_switch");
}

static void print_sessions(FILE *f)
{
	session_list(f);
}

static void print_reset(FILE *f)
{
	session_reset(f);
}

/* what print writes, to standard output and the log file */
static int print_via(void (*print)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return 1;
	print(f);
	fclose(f);
	out_write(stdout, false, buf, len);
	free(buf);
	return 0;
}

/* --log-file: everything printed from here on is also kept in the file */
static int open_log(const struct cli *cli)
{
	char path[4096], err[4400];

	if (!cli->given[OPT_LOG_FILE])
		return 0;
	if (outname_expand(cli->text[OPT_LOG_FILE], getpid(), path, sizeof(path), err,
			   sizeof(err)) ||
	    log_tee_open(path, cli->given[OPT_FORCE_OVERWRITE], err, sizeof(err))) {
		pr_error("--log-file: %s", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli;
	char err[4400];
	int rc;

	if (cli_parse(argc, argv, &cli, err, sizeof(err))) {
		pr_error("%s", err);
		return EXIT_USAGE;
	}
	for (int i = 0; i < cli.nwarnings; i++)
		pr_warn("%s", cli.warnings[i]);
	log_set_debug(cli.given[OPT_DEBUG] || cli.given[OPT_DEBUG_DUMP]);
	/* --quiet silences what --debug-dump implies, not what --debug asks for */
	log_set_debug_quiet(cli.given[OPT_QUIET] && !cli.given[OPT_DEBUG]);
	libbpf_set_print(log_libbpf);
	debug_print_options(&cli);

	if (open_log(&cli))
		return 1;
	rc = dispatch(&cli);
	if (log_tee_close(err, sizeof(err))) {
		pr_error("--log-file: %s", err);
		rc = rc ? rc : 1;
	}
	if (run_exit_signal && run_exit_signal != SIGKILL && run_exit_signal != SIGSTOP) {
		/* die as the application did, but leave its core file alone */
		setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		signal(run_exit_signal, SIG_DFL);
		raise(run_exit_signal);
	}
	return rc;
}

static int dispatch(struct cli *clip)
{
	struct cli cli = *clip;

	if (cli.given[OPT_IMPORT_ACTIVITIES] && import_activities(&cli))
		return EXIT_USAGE;

	switch (cli.cmd) {
	case CMD_NONE:
		cli_print_usage(stderr);
		fputs("Run 'topsprof --help' for the options.\n", stderr);
		return EXIT_USAGE;
	case CMD_HELP:
		cli_print_help(stdout);
		return 0;
	case CMD_VERSION:
		out_print(stdout, "topsprof %s (eBPF edition; libbpf %s)\n", TOPSPROF_VERSION,
			  libbpf_version_string());
		return 0;
	case CMD_QUERY_ACTIVITIES:
		return print_via(print_activities);
	case CMD_QUERY_TRACE:
		return print_via(print_domains);
	case CMD_EXPORT_ACTIVITIES:
		return export_activities(&cli);
	case CMD_PROFILE:
		return cmd_profile(&cli);
	case CMD_MERGE:
		return cmd_merge(&cli);
	case CMD_CONTROL: {
		char err[512];
		int rc = session_control(cli.given[OPT_SESSION] ? cli.text[OPT_SESSION] : NULL,
					 cli.control, stdout, err, sizeof(err));

		if (rc)
			pr_error("%s", err);
		return rc ? 1 : 0;
	}
	case CMD_SESSION_LIST:
		return print_via(print_sessions);
	case CMD_RESET:
		return print_via(print_reset);
	case CMD_PLUGIN_LIST:
		return print_via(print_plugins);
	case CMD_IMPORT:
		return cmd_import(&cli);
	default:
		break;
	}
	pr_error("internal error: command %d has no handler", (int)cli.cmd);
	return 1;
}
