// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topsprof: profile programs that run on Enflame GCUs, with eBPF. */
#include "activity.h"
#include "cli.h"
#include "log.h"
#include "run.h"

#include <bpf/libbpf.h>
#include <stdio.h>

#ifndef TOPSPROF_VERSION
#define TOPSPROF_VERSION "0.0.0-dev"
#endif

enum {
	EXIT_USAGE = 2
};

static void debug_print_options(const struct cli *cli)
{
	for (int i = 0; i < OPT__COUNT; i++)
		if (cli->given[i])
			pr_debug("option --%s%s%s", cli_options[i].name, cli->text[i] ? " " : "",
				 cli->text[i] ? cli->text[i] : "");
	for (int i = 0; i < cli->app_argc; i++)
		pr_debug("application argv[%d] %s", i, cli->app_argv[i]);
}

/* a feature whose option is validated but which this build cannot do yet: say so, never
 * pretend it ran */
static int refuse_pending(const struct cli *cli)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		if (cli->given[i] && (cli_options[i].flags & OF_PENDING)) {
			pr_error("--%s: accepted, but not available yet in topsprof %s",
				 cli_options[i].name, TOPSPROF_VERSION);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli;
	char err[512];

	if (cli_parse(argc, argv, &cli, err, sizeof(err))) {
		pr_error("%s", err);
		return EXIT_USAGE;
	}
	for (int i = 0; i < cli.nwarnings; i++)
		pr_warn("%s", cli.warnings[i]);
	log_set_debug(cli.given[OPT_DEBUG] || cli.given[OPT_DEBUG_DUMP]);
	libbpf_set_print(log_libbpf);
	debug_print_options(&cli);

	if (refuse_pending(&cli))
		return 1;

	switch (cli.cmd) {
	case CMD_NONE:
		cli_print_usage(stderr);
		fputs("Run 'topsprof --help' for the options.\n", stderr);
		return EXIT_USAGE;
	case CMD_HELP:
		cli_print_help(stdout);
		return 0;
	case CMD_VERSION:
		printf("topsprof %s (eBPF edition; libbpf %s)\n", TOPSPROF_VERSION,
		       libbpf_version_string());
		return 0;
	case CMD_QUERY_ACTIVITIES:
		activity_print_query(stdout);
		return 0;
	case CMD_PROFILE:
		return cmd_profile(&cli);
	default:
		pr_error("internal error: command %d has no handler", (int)cli.cmd);
		return 1;
	}
}
