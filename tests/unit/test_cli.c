// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The command line: forms, every rule of the manual's section 2.7, every value check. The rule
 * lists here are copied from the manual, not from cli.c, so that a wrong table fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/activity.h"
#include "app/cli.h"

#define MAX_WORDS 32

struct run {
	char buf[1024];
	char *argv[MAX_WORDS];
	int argc;
	struct cli cli;
	char err[512];
	int rc;
};

/* parse "topsprof" followed by the words of line (split on spaces) */
static struct run *parse(const char *line)
{
	static struct run r;
	char *save = NULL, *w;

	memset(&r, 0, sizeof(r));
	snprintf(r.buf, sizeof(r.buf), "%s", line);
	r.argv[r.argc++] = "topsprof";
	for (w = strtok_r(r.buf, " ", &save); w && r.argc < MAX_WORDS - 1;
	     w = strtok_r(NULL, " ", &save))
		r.argv[r.argc++] = w;
	r.argv[r.argc] = NULL;
	r.rc = cli_parse(r.argc, r.argv, &r.cli, r.err, sizeof(r.err));
	return &r;
}

static struct run *parse_ok(const char *line)
{
	struct run *r = parse(line);

	if (r->rc != 0)
		fail_msg("'%s' should parse, got: %s", line, r->err);
	return r;
}

static void parse_err(const char *line, const char *needle)
{
	struct run *r = parse(line);

	if (r->rc == 0)
		fail_msg("'%s' should be refused", line);
	if (!strstr(r->err, needle))
		fail_msg("'%s': error '%s' lacks '%s'", line, r->err, needle);
	if (strchr(r->err, '\n'))
		fail_msg("'%s': error is more than one line: %s", line, r->err);
}

static void test_forms_are_equivalent(void **state)
{
	const char *forms[] = {
		"--topstx-max-bytes-size 2048 ./app", "--topstx-max-bytes-size=2048 ./app",
		"-topstx-max-bytes-size 2048 ./app",  "-topstx-max-bytes-size=2048 ./app",
		"--topstx-max-bytes-size=2KB ./app",  "--topstx-max-bytes-size 2048B ./app",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct run *r = parse_ok(forms[i]);

		assert_int_equal(r->cli.topstx_max_bytes, 2048);
		assert_true(r->cli.given[OPT_TOPSTX_MAX_BYTES_SIZE]);
		assert_int_equal(r->cli.cmd, CMD_PROFILE);
		assert_int_equal(r->cli.app_argc, 1);
		assert_string_equal(r->cli.app_argv[0], "./app");
	}
}

static void test_app_owns_the_rest(void **state)
{
	struct run *r = parse_ok("--print-gcu-trace ./app --print-summary -x --session=1 start");

	(void)state;
	assert_int_equal(r->cli.app_argc, 5);
	assert_string_equal(r->cli.app_argv[0], "./app");
	assert_string_equal(r->cli.app_argv[1], "--print-summary");
	assert_string_equal(r->cli.app_argv[4], "start");
	assert_null(r->cli.app_argv[5]);
	assert_false(r->cli.given[OPT_PRINT_SUMMARY]);
	assert_true(r->cli.given[OPT_PRINT_GCU_TRACE]);

	r = parse_ok("--print-gcu-trace -- --weird-app-name a");
	assert_int_equal(r->cli.app_argc, 2);
	assert_string_equal(r->cli.app_argv[0], "--weird-app-name");

	/* a word that is a value is not the application */
	r = parse_ok("--session-new s1 python3 train.py");
	assert_int_equal(r->cli.app_argc, 2);
	assert_string_equal(r->cli.app_argv[0], "python3");
	assert_string_equal(r->cli.text[OPT_SESSION_NEW], "s1");
}

static void test_defaults(void **state)
{
	struct run *r = parse_ok("./app");

	(void)state;
	assert_true(r->cli.profile_from_start);
	assert_int_equal(r->cli.activities, ACT_OPERATOR | ACT_MEMCPY);
	assert_int_equal(r->cli.trace_domains, TRACE_TOPSTX | TRACE_RUNTIME);
	assert_int_equal(r->cli.topstx_max_bytes, 4096);
	assert_int_equal(r->cli.cpu_frequency_hz, 100);
	assert_int_equal(r->cli.utilization_frequency_hz, 100);
	assert_int_equal(r->cli.kfilter, KFILTER_CURRENT);
	assert_string_equal(r->cli.kmd_module, "enflame");
	assert_int_equal(r->cli.nwarnings, 0);
}

static void test_bad_words(void **state)
{
	(void)state;
	parse_err("--no-such-option ./app", "unknown option '--no-such-option'");
	parse_err("-no-such=3 ./app", "unknown option '-no-such'");
	parse_err("--session", "--session: missing value (NAME)");
	parse_err("--quiet=yes ./app", "--quiet takes no value");
	parse_err("--quiet --quiet ./app", "--quiet: given more than once");
	parse_err("--print-summary", "no application to profile");
	parse_err("--debug", "no application to profile");
	parse_err("start ./app", "unexpected './app' after 'start'");
	parse_err("start --start", "--start: given more than once");
}

static void test_nothing_prints_usage(void **state)
{
	struct run *r = parse_ok("");

	(void)state;
	assert_int_equal(r->cli.cmd, CMD_NONE);
}

/* manual 2.7, conflicting options: every pair of every line */
static void test_conflicts(void **state)
{
	static const char *lines[][4] = {
		{ "import-rawdata", "import-profile" },
		{ "import-profile", "export-profile", "export-visual-profiler" },
		{ "export-profile", "export-visual-profiler" },
		{ "enable-activities", "import-activities" },
		{ "print-api-summary", "print-gcu-summary", "print-summary",
		  "print-summary-per-gcu" },
		{ "session", "session-new" },
	};
	static const struct {
		const char *name, *arg;
	} args[] = {
		{ "import-rawdata", "r.raw" },
		{ "import-profile", "p.prof" },
		{ "export-profile", "o.prof" },
		{ "export-visual-profiler", "vpd" },
		{ "enable-activities", "all" },
		{ "import-activities", "a.json" },
		{ "session", "s1" },
		{ "session-new", "s2" },
	};

	(void)state;
	for (size_t l = 0; l < sizeof(lines) / sizeof(lines[0]); l++) {
		for (int a = 0; a < 4 && lines[l][a]; a++) {
			for (int b = a + 1; b < 4 && lines[l][b]; b++) {
				char line[256], *p = line;
				const char *pair[2] = { lines[l][a], lines[l][b] };

				for (int k = 0; k < 2; k++) {
					const char *arg = "";

					for (size_t j = 0; j < sizeof(args) / sizeof(args[0]); j++)
						if (!strcmp(args[j].name, pair[k]))
							arg = args[j].arg;
					p += sprintf(p, "--%s %s ", pair[k], arg);
				}
				/* an application where the pair needs one to be valid otherwise */
				if (!strstr(line, "import-"))
					strcpy(p, "./app");
				parse_err(line, "cannot be used together");
			}
		}
	}
	/* each alone is fine */
	parse_ok("--export-profile o.prof ./app");
	parse_ok("--export-visual-profiler vpd ./app");
	parse_ok("--import-profile p.prof --print-gcu-trace");
	parse_ok("--import-rawdata r.raw --export-profile o.prof");
	parse_ok("--print-gcu-summary --print-gcu-trace ./app");
}

static void test_standalone(void **state)
{
	static const struct {
		const char *opt;
		enum cli_command cmd;
	} alone[] = {
		{ "--export-activities a.json", CMD_EXPORT_ACTIVITIES },
		{ "--query-activities", CMD_QUERY_ACTIVITIES },
		{ "--plugin-list", CMD_PLUGIN_LIST },
		{ "--help", CMD_HELP },
		{ "--version", CMD_VERSION },
		{ "--reset", CMD_RESET },
		{ "--session-list", CMD_SESSION_LIST },
	};
	char line[256];

	(void)state;
	for (size_t i = 0; i < sizeof(alone) / sizeof(alone[0]); i++) {
		assert_int_equal(parse_ok(alone[i].opt)->cli.cmd, alone[i].cmd);
		snprintf(line, sizeof(line), "%s --debug", alone[i].opt);
		assert_int_equal(parse_ok(line)->cli.cmd, alone[i].cmd);
		snprintf(line, sizeof(line), "%s --print-summary", alone[i].opt);
		parse_err(line, "must be used alone");
		snprintf(line, sizeof(line), "--quiet %s", alone[i].opt);
		parse_err(line, "must be used alone");
		snprintf(line, sizeof(line), "%s ./app", alone[i].opt);
		parse_err(line, "must be used alone (not with an application './app')");
		for (size_t j = 0; j < sizeof(alone) / sizeof(alone[0]); j++) {
			if (i == j)
				continue;
			snprintf(line, sizeof(line), "%s %s", alone[i].opt, alone[j].opt);
			parse_err(line, "must be used alone");
		}
	}
}

static void test_control(void **state)
{
	static const char *words[] = { "start", "stop", "cancel" };

	(void)state;
	for (int i = 0; i < 3; i++) {
		char line[128];
		struct run *r;

		snprintf(line, sizeof(line), "--%s", words[i]);
		r = parse_ok(line);
		assert_int_equal(r->cli.cmd, CMD_CONTROL);
		assert_int_equal(r->cli.control, CTL_START + i);

		snprintf(line, sizeof(line), "%s", words[i]); /* the manual's bare word */
		r = parse_ok(line);
		assert_int_equal(r->cli.cmd, CMD_CONTROL);
		assert_int_equal(r->cli.control, CTL_START + i);
		assert_int_equal(r->cli.app_argc, 0);

		snprintf(line, sizeof(line), "%s --session job-1", words[i]);
		r = parse_ok(line);
		assert_int_equal(r->cli.control, CTL_START + i);
		assert_string_equal(r->cli.text[OPT_SESSION], "job-1");
		snprintf(line, sizeof(line), "--session=job_2 -%s", words[i]);
		assert_int_equal(parse_ok(line)->cli.control, CTL_START + i);

		snprintf(line, sizeof(line), "--%s --print-summary", words[i]);
		parse_err(line, "only be used alone or with --session");
		snprintf(line, sizeof(line), "%s --session-new x", words[i]);
		parse_err(line, "only be used alone or with --session");
		snprintf(line, sizeof(line), "--%s ./app", words[i]);
		parse_err(line, "takes no application");
	}
	parse_err("--start --stop", "cannot be used together");
	parse_err("stop --cancel", "cannot be used together");
	/* an application that happens to be called start runs with ./ or after -- */
	assert_int_equal(parse_ok("./start")->cli.cmd, CMD_PROFILE);
	assert_int_equal(parse_ok("-- start")->cli.cmd, CMD_PROFILE);
}

/* manual 2.7: only when launching an application */
static void test_launch_only(void **state)
{
	static const char *opts[] = {
		"--profile-from-start off",
		"--import-activities a.json",
		"--enable-activities operator",
		"--trace runtime",
		"--topstx-domain-include d1",
		"--export-rawdata r.raw",
		"--print-app-log",
		"--cpu-profiling-callstack",
		"--cpu-profiling-frequency 10",
		"--cpu-utilization",
		"--memory-utilization",
		"--utilization-frequency 10",
		"--session-new s1",
	};
	char line[256];

	(void)state;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		snprintf(line, sizeof(line), "%s ./app", opts[i]);
		assert_int_equal(parse_ok(line)->cli.cmd, CMD_PROFILE);
		parse_err(opts[i], "only be used when profiling");
		snprintf(line, sizeof(line), "%s --import-profile p.prof", opts[i]);
		parse_err(line, "");
	}
	/* with a target other than a launched application */
	parse_ok("--cpu-utilization --attach-pid 1");
	parse_ok("--enable-activities all --system-wide");
	parse_err("--print-app-log --attach-pid 1", "needs an application");
}

static void test_targets(void **state)
{
	struct run *r;

	(void)state;
	r = parse_ok("--attach-pid 4242");
	assert_int_equal(r->cli.cmd, CMD_PROFILE);
	assert_int_equal(r->cli.attach_pid, 4242);
	parse_err("--attach-pid 0", "not a process id");
	parse_err("--attach-pid 12x", "not a process id");
	parse_err("--attach-pid 1 ./app", "cannot be used with an application");
	parse_err("--system-wide ./app", "cannot be used with an application");
	parse_err("--attach-pid 1 --system-wide", "cannot be used together");
	parse_err("--import-profile p --attach-pid 1", "cannot be used with --attach-pid");
	r = parse_ok("--duration 2.5s --system-wide");
	assert_true(r->cli.duration_s > 2.49 && r->cli.duration_s < 2.51);
	r = parse_ok("--duration 500ms --system-wide");
	assert_true(r->cli.duration_s > 0.49 && r->cli.duration_s < 0.51);
	parse_err("--duration 0 ./app", "out of range");
	parse_err("--duration soon ./app", "not a duration");
	assert_int_equal(parse_ok("--import-profile p.prof")->cli.cmd, CMD_IMPORT);
	assert_int_equal(parse_ok("--import-rawdata r.raw")->cli.cmd, CMD_IMPORT);
	assert_int_equal(parse_ok("--query-trace")->cli.cmd, CMD_QUERY_TRACE);
	assert_int_equal(parse_ok("--query-trace ./app")->cli.cmd, CMD_PROFILE);
	parse_err("--query-trace --print-summary", "must be used alone");
}

static void test_merge(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("--visual-profiler-merge-from d --visual-profiler-merge-to m.vpd")
				 ->cli.cmd,
			 CMD_MERGE);
	assert_int_equal(parse_ok("--visual-profiler-merge-to m.vpd --visual-profiler-merge-from d "
				  "--force-overwrite")
				 ->cli.cmd,
			 CMD_MERGE);
	parse_err("--visual-profiler-merge-from d", "needs --visual-profiler-merge-to");
	parse_err("--visual-profiler-merge-to m", "needs --visual-profiler-merge-from");
	parse_err("--visual-profiler-merge-from d --visual-profiler-merge-to m ./app",
		  "an application");
	parse_err("--visual-profiler-merge-from d --visual-profiler-merge-to m --print-summary",
		  "--print-summary");
}

static void test_on_off(void **state)
{
	(void)state;
	assert_false(parse_ok("--profile-from-start off ./app")->cli.profile_from_start);
	assert_true(parse_ok("--profile-from-start on ./app")->cli.profile_from_start);
	assert_false(parse_ok("--profile-from-start=OFF ./app")->cli.profile_from_start);
	parse_err("--profile-from-start maybe ./app", "'maybe' is not on or off");
	parse_err("--profile-from-start= ./app", "is not on or off");
	parse_err("--profile-from-start 1 ./app", "not on or off");
}

static void test_bytes(void **state)
{
	static const struct {
		const char *v;
		uint32_t want;
	} ok[] = {
		{ "4096", 4096 }, { "4096B", 4096 },	  { "4KB", 4096 },	   { "4kb", 4096 },
		{ "4K", 4096 },	  { "1MB", 1u << 20 },	  { "1048576", 1u << 20 }, { "1", 1 },
		{ "1B", 1 },	  { "1024KB", 1u << 20 },
	};
	static const char *range[] = { "0", "0B", "1048577", "2MB", "1025KB", "1GB" };
	static const char *syntax[] = { "abc", "-1", "4XB", "KB", "4.5KB", "0x10" };
	char line[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(line, sizeof(line), "--topstx-max-bytes-size=%s ./app", ok[i].v);
		assert_int_equal(parse_ok(line)->cli.topstx_max_bytes, ok[i].want);
	}
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		snprintf(line, sizeof(line), "--topstx-max-bytes-size=%s ./app", range[i]);
		parse_err(line, "out of range (1B to 1MB)");
	}
	for (size_t i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++) {
		snprintf(line, sizeof(line), "--topstx-max-bytes-size=%s ./app", syntax[i]);
		parse_err(line, "is not a size");
	}
	parse_err("--topstx-max-bytes-size= ./app", "empty SIZE");
}

static void test_frequency(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("--cpu-profiling-frequency 1 --cpu-profiling-callstack ./app")
				 ->cli.cpu_frequency_hz,
			 1);
	assert_int_equal(parse_ok("--cpu-profiling-frequency 100Hz --cpu-profiling-callstack ./app")
				 ->cli.cpu_frequency_hz,
			 100);
	assert_int_equal(parse_ok("--utilization-frequency=50hz --cpu-utilization ./app")
				 ->cli.utilization_frequency_hz,
			 50);
	parse_err("--cpu-profiling-frequency 0 ./app", "out of range (1 to 100 Hz)");
	parse_err("--cpu-profiling-frequency 101 ./app", "out of range (1 to 100 Hz)");
	parse_err("--utilization-frequency 1000Hz ./app", "out of range");
	parse_err("--utilization-frequency 1kHz ./app", "not a frequency");
	parse_err("--utilization-frequency fast ./app", "not a frequency");
}

static void test_frequency_without_feature_warns(void **state)
{
	struct run *r = parse_ok("--cpu-profiling-frequency 10 ./app");

	(void)state;
	assert_int_equal(r->cli.nwarnings, 1);
	assert_non_null(strstr(r->cli.warnings[0], "no effect without --cpu-profiling-callstack"));
	r = parse_ok("--utilization-frequency 10 --memory-utilization ./app");
	assert_int_equal(r->cli.nwarnings, 0);
	r = parse_ok("--kernel-callstack-filter kmd ./app");
	assert_int_equal(r->cli.nwarnings, 1);
}

static void test_session_names(void **state)
{
	static const char *good[] = { "a", "job-1", "rank_07", "ABCxyz019" };
	static const char *bad[] = { "a.b", "a/b", "a:b", "ünï", "a%p" };
	char line[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(line, sizeof(line), "--session-new %s ./app", good[i]);
		assert_string_equal(parse_ok(line)->cli.text[OPT_SESSION_NEW], good[i]);
		snprintf(line, sizeof(line), "stop --session %s", good[i]);
		parse_ok(line);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "--session-new %s ./app", bad[i]);
		parse_err(line, "is not a session name");
		snprintf(line, sizeof(line), "--session=%s --start", bad[i]);
		parse_err(line, "is not a session name");
	}
	parse_err("--session-new= ./app", "empty NAME");
	memset(line, 0, sizeof(line));
	strcpy(line, "--session-new ");
	memset(line + strlen(line), 'a', 65);
	strcat(line, " ./app");
	parse_err(line, "is not a session name");
}

static void test_activities(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("--enable-activities operator ./app")->cli.activities,
			 ACT_OPERATOR);
	assert_int_equal(parse_ok("--enable-activities Operator,MEMCPY ./app")->cli.activities,
			 ACT_OPERATOR | ACT_MEMCPY);
	assert_int_equal(
		parse_ok("--enable-activities memcpy_cdte,Memcpy_sdte ./app")->cli.activities,
		ACT_MEMCPY_CDTE | ACT_MEMCPY_SDTE);
	assert_int_equal(parse_ok("--enable-activities all ./app")->cli.activities, ACT_ALL);
	assert_int_equal(parse_ok("--enable-activities ALL ./app")->cli.activities, ACT_ALL);
	parse_err("--enable-activities operator,kernels ./app", "unknown activity 'kernels'");
	parse_err("--enable-activities operator,,memcpy ./app", "empty activity name");
	parse_err("--enable-activities , ./app", "empty activity name");
}

static void test_trace_domains(void **state)
{
	struct run *r;

	(void)state;
	r = parse_ok("--trace runtime ./app");
	assert_int_equal(r->cli.trace_domains, TRACE_RUNTIME);
	assert_int_equal(r->cli.nwarnings, 0);
	r = parse_ok("--trace RUNTIME,topsprofiler ./app");
	assert_int_equal(r->cli.trace_domains, TRACE_RUNTIME | TRACE_TOPSPROFILER);
	/* real users pass framework domains: a warning, not an error */
	r = parse_ok("--trace torch_gcu,TopsFlame,topstx ./app");
	assert_int_equal(r->cli.trace_domains, TRACE_TOPSTX);
	assert_int_equal(r->cli.nwarnings, 1);
	assert_non_null(strstr(r->cli.warnings[0], "torch_gcu,TopsFlame"));
	parse_err("--trace runtime, ./app", "empty domain name");

	r = parse_ok("--topstx-domain-include all ./app");
	assert_true(r->cli.topstx_all_domains);
	r = parse_ok("--trace topstx --topstx-domain-include PyTorch,my-domain ./app");
	assert_false(r->cli.topstx_all_domains);
	parse_err("--trace runtime --topstx-domain-include d1 ./app",
		  "needs the topstx domain in --trace");
	parse_err("--topstx-domain-include d1,,d2 ./app", "empty domain name");
}

static void test_kernel_filter(void **state)
{
	struct run *r;

	(void)state;
	r = parse_ok("--kernel-callstack --kernel-callstack-filter all ./app");
	assert_int_equal(r->cli.kfilter, KFILTER_ALL);
	r = parse_ok("--kernel-callstack --kernel-callstack-filter kmd ./app");
	assert_int_equal(r->cli.kfilter, KFILTER_KMD);
	r = parse_ok("--kernel-callstack --kernel-callstack-filter current ./app");
	assert_int_equal(r->cli.kfilter, KFILTER_CURRENT);
	r = parse_ok("--kernel-callstack --kernel-callstack-filter abc,def,ghi.isra.0 ./app");
	assert_int_equal(r->cli.kfilter, KFILTER_FUNCS);
	assert_string_equal(r->cli.kfilter_functions, "abc,def,ghi.isra.0");
	parse_err("--kernel-callstack --kernel-callstack-filter abc,,def ./app",
		  "empty function name");
	parse_err("--kernel-callstack --kernel-callstack-filter a-b ./app",
		  "not a kernel function name");
	r = parse_ok("--kernel-callstack --kmd-module gcu_drv ./app");
	assert_string_equal(r->cli.kmd_module, "gcu_drv");
	parse_err("--kernel-callstack --kmd-module a/b ./app", "not a kernel module name");
}

static void test_buffer_size(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("./app")->cli.buffer_size, 8u << 20);
	assert_int_equal(parse_ok("--buffer-size 64KB ./app")->cli.buffer_size, 64u << 10);
	assert_int_equal(parse_ok("--buffer-size 3MB ./app")->cli.buffer_size, 4u << 20);
	assert_int_equal(parse_ok("--buffer-size 1GB ./app")->cli.buffer_size, 1u << 30);
	parse_err("--buffer-size 4KB ./app", "out of range (64KB to 1GB)");
	parse_err("--buffer-size 2GB ./app", "out of range");
}

static void test_every_manual_option_exists(void **state)
{
	static const char *manual[] = {
		"profile-from-start",
		"query-activities",
		"query-trace",
		"enable-activities",
		"export-activities",
		"import-activities",
		"trace",
		"topstx-domain-include",
		"topstx-max-bytes-size",
		"cpu-profiling-callstack",
		"cpu-profiling-frequency",
		"cpu-utilization",
		"memory-utilization",
		"utilization-frequency",
		"kernel-callstack",
		"kernel-callstack-filter",
		"print-gcu-summary",
		"print-gcu-trace",
		"print-summary",
		"print-summary-per-gcu",
		"quiet",
		"print-app-log",
		"export-profile",
		"export-visual-profiler",
		"import-profile",
		"export-rawdata",
		"import-rawdata",
		"export-csv",
		"visual-profiler-merge-from",
		"visual-profiler-merge-to",
		"log-file",
		"force-overwrite",
		"help",
		"version",
		"debug",
		"debug-dump",
		"session",
		"session-new",
		"session-list",
		"start",
		"stop",
		"cancel",
		"reset",
		"print-api-summary",
		"plugin-list",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(manual) / sizeof(manual[0]); i++)
		if (!cli_find(manual[i], strlen(manual[i])))
			fail_msg("option --%s of the manual is missing", manual[i]);
	/* the table is indexed by id */
	for (int i = 0; i < OPT__COUNT; i++)
		assert_int_equal(cli_options[i].id, i);
}

static void test_help_lists_every_option(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	cli_print_help(f);
	fclose(f);
	for (int i = 0; i < OPT__COUNT; i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "  --%s", cli_options[i].name);
		if (!strstr(buf, needle))
			fail_msg("--help does not list %s", needle);
	}
	assert_non_null(strstr(buf, "GCU collection options:"));
	assert_non_null(strstr(buf, "Advanced options:"));
	free(buf);
}

static void test_query_activities_text(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	activity_print_query(f);
	fclose(f);
	assert_string_equal(buf,
			    "==== User Activities:\n    Memcpy,Memcpy_cdte,Memcpy_sdte,Operator\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms_are_equivalent),
		cmocka_unit_test(test_app_owns_the_rest),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_words),
		cmocka_unit_test(test_nothing_prints_usage),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_standalone),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_launch_only),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_on_off),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_frequency),
		cmocka_unit_test(test_frequency_without_feature_warns),
		cmocka_unit_test(test_session_names),
		cmocka_unit_test(test_activities),
		cmocka_unit_test(test_trace_domains),
		cmocka_unit_test(test_kernel_filter),
		cmocka_unit_test(test_buffer_size),
		cmocka_unit_test(test_every_manual_option_exists),
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_query_activities_text),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
