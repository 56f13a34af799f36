// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Command line parsing. Every option comes from cli_options[]; every rule of the manual's
 * section 2.7 from the rule tables below. --help is generated from both. */
#include "app/cli.h"
#include "model/activity.h"
#include "model/domain.h"
#include "lib/infile.h"
#include "lib/strlist.h"
#include "lib/units.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BYTES_MAX	(1u << 20)
#define FREQ_MAX	100
#define PID_MAX_LIMIT	(1 << 22)
#define DURATION_MAX_S	(366.0 * 24 * 3600)
#define BUFSIZE_MIN	(64ull << 10)
#define BUFSIZE_MAX	(1ull << 30)
#define BUFSIZE_DEFAULT (8ull << 20)
#define MODULE_NAME_MAX 55

#define L		OF_LAUNCH_ONLY
#define X		OF_EXTENSION

const struct opt_def cli_options[OPT__COUNT] = {
	/* GCU collection */
	[OPT_PROFILE_FROM_START] = { OPT_PROFILE_FROM_START, "profile-from-start", ARG_ONOFF,
				     "on|off", "on", GRP_GCU, L,
				     "Collect from the start (on), or run uncollected until "
				     "'topsprof start' from another terminal (off)." },
	[OPT_QUERY_ACTIVITIES] = { OPT_QUERY_ACTIVITIES, "query-activities", ARG_NONE, NULL, NULL,
				   GRP_GCU, OF_STANDALONE,
				   "List the device activities that can be collected." },
	[OPT_QUERY_TRACE] = { OPT_QUERY_TRACE, "query-trace", ARG_NONE, NULL, NULL, GRP_GCU, 0,
			      "List the trace domains (with an application: also the custom topstx "
			      "domains it creates)." },
	[OPT_ENABLE_ACTIVITIES] = { OPT_ENABLE_ACTIVITIES, "enable-activities", ARG_ACTIVITIES,
				    "ACTIVITIES", "operator,memcpy", GRP_GCU, L,
				    "Collect these device activities: Operator, Memcpy, "
				    "Memcpy_cdte, Memcpy_sdte (comma list, any case, or all)." },
	[OPT_EXPORT_ACTIVITIES] = { OPT_EXPORT_ACTIVITIES, "export-activities", ARG_FILE, "FILE",
				    NULL, GRP_GCU, OF_STANDALONE,
				    "Write the activity tree as JSON to FILE, to edit and read "
				    "back with --import-activities." },
	[OPT_IMPORT_ACTIVITIES] = { OPT_IMPORT_ACTIVITIES, "import-activities", ARG_FILE, "FILE",
				    NULL, GRP_GCU, L,
				    "Collect the activities checked (isCheck: true) in a JSON file "
				    "written by --export-activities." },
	/* CPU collection */
	[OPT_TRACE] = { OPT_TRACE, "trace", ARG_DOMAINS, "DOMAINS", "topstx,runtime", GRP_CPU, L,
			"Trace these domains: runtime, topstx, topsprofiler (comma list; other "
			"names are ignored with a warning)." },
	[OPT_TOPSTX_DOMAIN_INCLUDE] = { OPT_TOPSTX_DOMAIN_INCLUDE, "topstx-domain-include",
					ARG_NAMES, "DOMAINS", NULL, GRP_CPU, L,
					"With topstx traced, also trace these custom topstx "
					"domains (comma list, or all)." },
	[OPT_TOPSTX_MAX_BYTES_SIZE] = { OPT_TOPSTX_MAX_BYTES_SIZE, "topstx-max-bytes-size",
					ARG_BYTES, "SIZE", "4096B", GRP_CPU, L,
					"Truncate strings and payloads the API trace captures "
					"(messages, payloads, domain and category names) to SIZE: "
					"1B to 1MB, e.g. 4096, 4096B, 4KB, 1MB." },
	[OPT_CPU_PROFILING_CALLSTACK] = { OPT_CPU_PROFILING_CALLSTACK, "cpu-profiling-callstack",
					  ARG_NONE, NULL, NULL, GRP_CPU, L,
					  "Sample user and kernel call stacks of the profiled "
					  "processes (BPF perf_event; no perf needed)." },
	[OPT_CPU_PROFILING_FREQUENCY] = { OPT_CPU_PROFILING_FREQUENCY, "cpu-profiling-frequency",
					  ARG_FREQ, "FREQ", "100Hz", GRP_CPU, L,
					  "Call stack sampling frequency, 1 to 100 Hz." },
	[OPT_CPU_PROFILING_UNWIND] = { OPT_CPU_PROFILING_UNWIND, "cpu-profiling-unwind", ARG_UNWIND,
				       "dwarf|fp", "dwarf", GRP_CPU, L,
				       "How sampled user stacks are walked: dwarf copies the "
				       "stack and unwinds it by the binaries' call frame "
				       "information (whole stacks without frame pointers); fp "
				       "walks frame pointers in the kernel (cheaper, cut short "
				       "where code has none)." },
	[OPT_CPU_UTILIZATION] = { OPT_CPU_UTILIZATION, "cpu-utilization", ARG_NONE, NULL, NULL,
				  GRP_CPU, L,
				  "Sample CPU utilization of the profiled processes and the host." },
	[OPT_MEMORY_UTILIZATION] = { OPT_MEMORY_UTILIZATION, "memory-utilization", ARG_NONE, NULL,
				     NULL, GRP_CPU, L,
				     "Sample memory use (RSS, virtual size) of the profiled "
				     "processes." },
	[OPT_UTILIZATION_FREQUENCY] = { OPT_UTILIZATION_FREQUENCY, "utilization-frequency",
					ARG_FREQ, "FREQ", "100Hz", GRP_CPU, L,
					"Sampling frequency of --cpu-utilization and "
					"--memory-utilization, 1 to 100 Hz." },
	[OPT_KERNEL_CALLSTACK] = { OPT_KERNEL_CALLSTACK, "kernel-callstack", ARG_NONE, NULL, NULL,
				   GRP_CPU, L,
				   "Collect kernel call stacks of GCU work (driver entry points, "
				   "driver syscalls, off-CPU waits) with BPF; no ftrace needed." },
	[OPT_KERNEL_CALLSTACK_FILTER] = { OPT_KERNEL_CALLSTACK_FILTER, "kernel-callstack-filter",
					  ARG_KFILTER, "FILTER", "current", GRP_CPU, L,
					  "Which kernel stacks: current (the profiled processes), "
					  "all (every process), kmd (through the driver only), or "
					  "f1,f2,... (through these kernel functions)." },
	[OPT_KMD_MODULE] = { OPT_KMD_MODULE, "kmd-module", ARG_IDENT, "NAME", "enflame", GRP_CPU,
			     L | X, "Kernel module of the GCU driver, for the kmd filter." },
	/* printing */
	[OPT_PRINT_API_SUMMARY] = { OPT_PRINT_API_SUMMARY, "print-api-summary", ARG_NONE, NULL,
				    NULL, GRP_PRINT, 0,
				    "Print the API summary (runtime and topstx) only." },
	[OPT_PRINT_GCU_SUMMARY] = { OPT_PRINT_GCU_SUMMARY, "print-gcu-summary", ARG_NONE, NULL,
				    NULL, GRP_PRINT, 0, "Print the summary of the GCU records." },
	[OPT_PRINT_GCU_TRACE] = { OPT_PRINT_GCU_TRACE, "print-gcu-trace", ARG_NONE, NULL, NULL,
				  GRP_PRINT, 0, "Print every GCU record, in time order." },
	[OPT_PRINT_SUMMARY] = { OPT_PRINT_SUMMARY, "print-summary", ARG_NONE, NULL, NULL, GRP_PRINT,
				0,
				"Print the summary of everything collected (the default when no "
				"print option is given)." },
	[OPT_PRINT_SUMMARY_PER_GCU] = { OPT_PRINT_SUMMARY_PER_GCU, "print-summary-per-gcu",
					ARG_NONE, NULL, NULL, GRP_PRINT, 0,
					"Print the summary, one block per GCU." },
	[OPT_QUIET] = { OPT_QUIET, "quiet", ARG_NONE, NULL, NULL, GRP_PRINT, 0,
			"Quiet mode: print nothing but errors and warnings of lost data (the "
			"report still goes to --log-file; the debug lines --debug-dump implies "
			"too)." },
	[OPT_PRINT_APP_LOG] = { OPT_PRINT_APP_LOG, "print-app-log", ARG_NONE, NULL, NULL, GRP_PRINT,
				L, "Show the application's output while it is profiled." },
	/* input and output */
	[OPT_EXPORT_PROFILE] = { OPT_EXPORT_PROFILE, "export-profile", ARG_FILE, "FILE", NULL,
				 GRP_IO, 0,
				 "Save the profile to FILE (read it with --import-profile)." },
	[OPT_EXPORT_VISUAL_PROFILER] = { OPT_EXPORT_VISUAL_PROFILER, "export-visual-profiler",
					 ARG_DIR, "DIR", NULL, GRP_IO, 0,
					 "Save one visual-profiler file (vpd, SQLite) per profiled "
					 "process in DIR." },
	[OPT_IMPORT_PROFILE] = { OPT_IMPORT_PROFILE, "import-profile", ARG_FILE, "FILE", NULL,
				 GRP_IO, 0,
				 "Load a profile saved by --export-profile, or a vpd file, and "
				 "report it." },
	[OPT_EXPORT_RAWDATA] = { OPT_EXPORT_RAWDATA, "export-rawdata", ARG_FILE, "FILE", NULL,
				 GRP_IO, L, "Save the raw event streams and device records." },
	[OPT_IMPORT_RAWDATA] = { OPT_IMPORT_RAWDATA, "import-rawdata", ARG_FILE, "FILE", NULL,
				 GRP_IO, 0, "Analyse raw data saved by --export-rawdata." },
	[OPT_EXPORT_CSV] = { OPT_EXPORT_CSV, "export-csv", ARG_FILE, "FILE", NULL, GRP_IO, 0,
			     "Also write the printed report to FILE as CSV." },
	[OPT_EXPORT_CHROME_TRACE] = { OPT_EXPORT_CHROME_TRACE, "export-chrome-trace", ARG_FILE,
				      "FILE", NULL, GRP_IO, X,
				      "Save a Chrome/Perfetto trace (JSON) that ui.perfetto.dev "
				      "opens." },
	[OPT_EXPORT_FOLDED] = { OPT_EXPORT_FOLDED, "export-folded", ARG_FILE, "FILE", NULL, GRP_IO,
				X,
				"Save the sampled CPU call stacks in folded form (flamegraph.pl, "
				"speedscope)." },
	[OPT_VP_MERGE_FROM] = { OPT_VP_MERGE_FROM, "visual-profiler-merge-from", ARG_DIR, "DIR",
				NULL, GRP_IO, 0,
				"Merge every vpd file in DIR (with --visual-profiler-merge-to)." },
	[OPT_VP_MERGE_TO] = { OPT_VP_MERGE_TO, "visual-profiler-merge-to", ARG_FILE, "FILE", NULL,
			      GRP_IO, 0,
			      "Write the vpd files of --visual-profiler-merge-from, merged, to "
			      "FILE." },
	[OPT_LOG_FILE] = { OPT_LOG_FILE, "log-file", ARG_FILE, "FILE", NULL, GRP_IO, OF_MODIFIER,
			   "Also write all of topsprof's output to FILE (created if missing)." },
	[OPT_FORCE_OVERWRITE] = { OPT_FORCE_OVERWRITE, "force-overwrite", ARG_NONE, NULL, NULL,
				  GRP_IO, OF_MODIFIER, "Overwrite output files that exist." },
	[OPT_HELP] = { OPT_HELP, "help", ARG_NONE, NULL, NULL, GRP_IO, OF_STANDALONE,
		       "Print this help." },
	[OPT_VERSION] = { OPT_VERSION, "version", ARG_NONE, NULL, NULL, GRP_IO, OF_STANDALONE,
			  "Print the version." },
	[OPT_DEBUG] = { OPT_DEBUG, "debug", ARG_NONE, NULL, NULL, GRP_IO, OF_MODIFIER,
			"Print what topsprof does, libbpf's messages included." },
	[OPT_DEBUG_DUMP] = { OPT_DEBUG_DUMP, "debug-dump", ARG_NONE, NULL, NULL, GRP_IO,
			     OF_MODIFIER,
			     "As --debug, and write the raw state to files in the current "
			     "directory for a bug report." },
	/* control */
	[OPT_SESSION] = { OPT_SESSION, "session", ARG_SESSION, "NAME", NULL, GRP_CONTROL, 0,
			  "An existing session: the one to join when profiling, or to control with "
			  "start, stop, cancel." },
	[OPT_SESSION_NEW] = { OPT_SESSION_NEW, "session-new", ARG_SESSION, "NAME", "{pid}",
			      GRP_CONTROL, L,
			      "Create a session of this name for this run (letters, digits, '-', "
			      "'_')." },
	[OPT_SESSION_LIST] = { OPT_SESSION_LIST, "session-list", ARG_NONE, NULL, NULL, GRP_CONTROL,
			       OF_STANDALONE, "List the sessions on this host." },
	[OPT_START] = { OPT_START, "start", ARG_NONE, NULL, NULL, GRP_CONTROL, OF_CONTROL,
			"Start (resume) collection of a running topsprof; also the bare word "
			"'topsprof start'." },
	[OPT_STOP] = { OPT_STOP, "stop", ARG_NONE, NULL, NULL, GRP_CONTROL, OF_CONTROL,
		       "Pause collection of a running topsprof, keeping what it collected." },
	[OPT_CANCEL] = { OPT_CANCEL, "cancel", ARG_NONE, NULL, NULL, GRP_CONTROL, OF_CONTROL,
			 "Throw away what a running topsprof collected so far." },
	[OPT_ATTACH_PID] = { OPT_ATTACH_PID, "attach-pid", ARG_PID, "PID", NULL, GRP_CONTROL, X,
			     "Profile a running process and its future children instead of "
			     "launching one; detaching leaves it running." },
	[OPT_SYSTEM_WIDE] = { OPT_SYSTEM_WIDE, "system-wide", ARG_NONE, NULL, NULL, GRP_CONTROL, X,
			      "Profile every process that uses the GCU runtime, including ones "
			      "that start later; its calls trap into the probes in every process (in "
			      "the other modes, in the profiled processes alone)." },
	[OPT_DURATION] = { OPT_DURATION, "duration", ARG_SECONDS, "SECONDS", NULL, GRP_CONTROL,
			   L | X, "Stop profiling after SECONDS (e.g. 10, 2.5s, 500ms)." },
	/* advanced */
	[OPT_RESET] = { OPT_RESET, "reset", ARG_NONE, NULL, NULL, GRP_ADVANCED, OF_STANDALONE,
			"Reset topsprof's state (stale sessions, pinned BPF objects) and remove "
			"~/.trace.topspti.conf; use after topsprof ended abnormally." },
	[OPT_PLUGIN_LIST] = { OPT_PLUGIN_LIST, "plugin-list", ARG_NONE, NULL, NULL, GRP_ADVANCED,
			      OF_STANDALONE,
			      "List topsprof's collectors and whether this host supports them." },
	[OPT_RUNTIME_LIB] = { OPT_RUNTIME_LIB, "runtime-lib", ARG_FILE, "PATH", NULL, GRP_ADVANCED,
			      L | X,
			      "Trace this libtopsrt.so instead of the one the application loads." },
	[OPT_BUFFER_SIZE] = { OPT_BUFFER_SIZE, "buffer-size", ARG_BUFSIZE, "SIZE", "8MB",
			      GRP_ADVANCED, L | X,
			      "BPF ring buffer size, 64KB to 1GB (rounded up to a power of two)." },
	[OPT_API_MODE] = { OPT_API_MODE, "api-mode", ARG_APIMODE, "auto|stats|trace", "auto",
			   GRP_ADVANCED, L | X,
			   "How API calls are collected: stats aggregates them in the kernel "
			   "(cheapest), trace streams every call; auto picks stats unless an "
			   "output needs every call." },
};

#undef L
#undef X
#undef P

const char *const cli_group_titles[GRP__COUNT] = {
	[GRP_GCU] = "GCU collection options", [GRP_CPU] = "CPU collection options",
	[GRP_PRINT] = "Print options",	      [GRP_IO] = "Input and output options",
	[GRP_CONTROL] = "Control options",    [GRP_ADVANCED] = "Advanced options",
};

/* manual 2.7: the options of one line cannot be used together; below the line, ours */
#define CONFLICT_MAX 4
static const enum opt_id conflicts[][CONFLICT_MAX] = {
	{ OPT_IMPORT_RAWDATA, OPT_IMPORT_PROFILE, OPT__COUNT },
	{ OPT_IMPORT_PROFILE, OPT_EXPORT_PROFILE, OPT_EXPORT_VISUAL_PROFILER, OPT__COUNT },
	{ OPT_EXPORT_PROFILE, OPT_EXPORT_VISUAL_PROFILER, OPT__COUNT },
	{ OPT_ENABLE_ACTIVITIES, OPT_IMPORT_ACTIVITIES, OPT__COUNT },
	{ OPT_PRINT_API_SUMMARY, OPT_PRINT_GCU_SUMMARY, OPT_PRINT_SUMMARY,
	  OPT_PRINT_SUMMARY_PER_GCU },
	{ OPT_SESSION, OPT_SESSION_NEW, OPT__COUNT },
	{ OPT_START, OPT_STOP, OPT_CANCEL, OPT__COUNT },
	{ OPT_ATTACH_PID, OPT_SYSTEM_WIDE, OPT__COUNT },
};
#define N_CONFLICT_LINES_MANUAL 6

static const char *const control_words[] = { "start", "stop", "cancel" };
static const enum opt_id control_ids[] = { OPT_START, OPT_STOP, OPT_CANCEL };

static void fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void warn(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	if (cli->nwarnings >= CLI_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(cli->warnings[cli->nwarnings++], CLI_MSG_LEN, fmt, ap);
	va_end(ap);
}

const struct opt_def *cli_find(const char *name, size_t len)
{
	for (size_t i = 0; i < OPT__COUNT; i++)
		if (strlen(cli_options[i].name) == len && !strncmp(cli_options[i].name, name, len))
			return &cli_options[i];
	return NULL;
}

static bool only_chars(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return false;
	return true;
}

static int check_kfilter(const char *v, struct cli *cli, char *err, size_t errlen)
{
	static const struct {
		const char *word;
		enum kfilter_kind kind;
	} words[] = { { "current", KFILTER_CURRENT },
		      { "all", KFILTER_ALL },
		      { "kmd", KFILTER_KMD } };
	struct strlist_iter it;
	const char *item;
	size_t len;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!strcasecmp(v, words[i].word)) {
			cli->kfilter = words[i].kind;
			return 0;
		}
	}
	strlist_init(&it, v);
	while (strlist_next(&it, &item, &len)) {
		if (!len) {
			fail(err, errlen, "empty function name in '%s'", v);
			return -1;
		}
		for (size_t i = 0; i < len; i++) {
			if (!isalnum((unsigned char)item[i]) && item[i] != '_' && item[i] != '.') {
				char *name = strndup(item, len);

				quoted_errf(
					err, errlen, name ? name : v,
					" is not a kernel function name (or current, all, kmd)");
				free(name);
				return -1;
			}
		}
	}
	cli->kfilter = KFILTER_FUNCS;
	cli->kfilter_functions = v;
	return 0;
}

static int check_names(const char *v, struct cli *cli, char *err, size_t errlen)
{
	struct strlist_iter it;
	const char *item;
	size_t len;

	strlist_init(&it, v);
	while (strlist_next(&it, &item, &len)) {
		if (!len) {
			fail(err, errlen, "empty domain name in '%s'", v);
			return -1;
		}
		if (len == 3 && !strncasecmp(item, "all", 3))
			cli->topstx_all_domains = true;
	}
	return 0;
}

static uint64_t round_up_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* validate v for option d and store the typed value; err gets the reason (without the name) */
static int apply_value(const struct opt_def *d, const char *v, struct cli *cli, char *err,
		       size_t errlen)
{
	uint64_t n;
	char unknown[CLI_MSG_LEN / 2];

	if (d->arg != ARG_ONOFF && d->arg != ARG_NONE && !*v) {
		fail(err, errlen, "empty %s", d->metavar);
		return -1;
	}
	switch (d->arg) {
	case ARG_NONE:
		return 0;
	case ARG_ONOFF:
		if (strcasecmp(v, "on") && strcasecmp(v, "off")) {
			quoted_errf(err, errlen, v, " is not on or off");
			return -1;
		}
		cli->profile_from_start = !strcasecmp(v, "on");
		return 0;
	case ARG_ACTIVITIES:
		return activity_parse_list(v, &cli->activities, err, errlen);
	case ARG_DOMAINS:
		if (trace_domain_parse_list(v, &cli->trace_domains, unknown, sizeof(unknown), err,
					    errlen))
			return -1;
		if (unknown[0])
			warn(cli,
			     "--%s: ignoring trace domains topsprof does not know: %s (known: "
			     "runtime, topstx, topsprofiler)",
			     d->name, unknown);
		return 0;
	case ARG_NAMES:
		return check_names(v, cli, err, errlen);
	case ARG_BYTES:
		if (parse_bytes(v, &n)) {
			quoted_errf(err, errlen, v, " is not a size (e.g. 4096, 4096B, 4KB, 1MB)");
			return -1;
		}
		if (n < 1 || n > BYTES_MAX) {
			quoted_errf(err, errlen, v, " is out of range (1B to 1MB)");
			return -1;
		}
		cli->topstx_max_bytes = (uint32_t)n;
		return 0;
	case ARG_FREQ:
		if (parse_hz(v, &n)) {
			quoted_errf(err, errlen, v, " is not a frequency (e.g. 100, 100Hz)");
			return -1;
		}
		if (n < 1 || n > FREQ_MAX) {
			quoted_errf(err, errlen, v, " is out of range (1 to 100 Hz)");
			return -1;
		}
		if (d->id == OPT_CPU_PROFILING_FREQUENCY)
			cli->cpu_frequency_hz = (uint32_t)n;
		else
			cli->utilization_frequency_hz = (uint32_t)n;
		return 0;
	case ARG_KFILTER:
		return check_kfilter(v, cli, err, errlen);
	case ARG_FILE:
	case ARG_DIR:
		return 0;
	case ARG_SESSION:
		if (strlen(v) > SESSION_NAME_MAX || !only_chars(v, "-_")) {
			quoted_errf(err, errlen, v,
				    " is not a session name (letters, digits, '-' and '_', at most "
				    "%d)",
				    SESSION_NAME_MAX);
			return -1;
		}
		return 0;
	case ARG_IDENT:
		if (strlen(v) > MODULE_NAME_MAX || !only_chars(v, "-_")) {
			quoted_errf(err, errlen, v, " is not a kernel module name");
			return -1;
		}
		cli->kmd_module = v;
		return 0;
	case ARG_PID:
		if (parse_uint(v, &n) || n < 1 || n > PID_MAX_LIMIT) {
			quoted_errf(err, errlen, v, " is not a process id");
			return -1;
		}
		cli->attach_pid = (pid_t)n;
		return 0;
	case ARG_SECONDS:
		if (parse_seconds(v, &cli->duration_s)) {
			quoted_errf(err, errlen, v, " is not a duration (e.g. 10, 2.5s, 500ms)");
			return -1;
		}
		if (cli->duration_s <= 0 || cli->duration_s > DURATION_MAX_S) {
			quoted_errf(err, errlen, v,
				    " is out of range (more than 0, at most a year)");
			return -1;
		}
		return 0;
	case ARG_APIMODE: {
		static const char *const modes[] = { "auto", "stats", "trace" };

		for (int i = 0; i < 3; i++) {
			if (!strcasecmp(v, modes[i])) {
				cli->api_mode = (enum api_mode)i;
				return 0;
			}
		}
		quoted_errf(err, errlen, v, " is not auto, stats or trace");
		return -1;
	}
	case ARG_UNWIND:
		if (strcasecmp(v, "dwarf") && strcasecmp(v, "fp")) {
			quoted_errf(err, errlen, v, " is not dwarf or fp");
			return -1;
		}
		cli->cpu_unwind_fp = !strcasecmp(v, "fp");
		return 0;
	case ARG_BUFSIZE:
		if (parse_bytes(v, &n)) {
			quoted_errf(err, errlen, v, " is not a size (e.g. 8MB, 65536)");
			return -1;
		}
		if (n < BUFSIZE_MIN || n > BUFSIZE_MAX) {
			quoted_errf(err, errlen, v, " is out of range (64KB to 1GB)");
			return -1;
		}
		cli->buffer_size = round_up_pow2(n);
		return 0;
	}
	fail(err, errlen, "unhandled argument kind");
	return -1;
}

static void set_defaults(struct cli *cli)
{
	memset(cli, 0, sizeof(*cli));
	cli->profile_from_start = true;
	cli->activities = ACTIVITIES_DEFAULT;
	cli->trace_domains = TRACE_DEFAULT;
	cli->topstx_max_bytes = 4096;
	cli->cpu_frequency_hz = 100;
	cli->utilization_frequency_hz = 100;
	cli->kfilter = KFILTER_CURRENT;
	cli->kmd_module = "enflame";
	cli->buffer_size = BUFSIZE_DEFAULT;
}

static const char *opt_name(enum opt_id id)
{
	return cli_options[id].name;
}

/* the first given option other than self that is not in allowed (a flags mask), or OPT__COUNT */
static enum opt_id first_other(const struct cli *cli, enum opt_id self, unsigned allowed,
			       enum opt_id also_allowed, enum opt_id also_allowed2)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		if (!cli->given[i] || i == (int)self || i == (int)also_allowed ||
		    i == (int)also_allowed2)
			continue;
		if (cli_options[i].flags & allowed)
			continue;
		return (enum opt_id)i;
	}
	return OPT__COUNT;
}

static int check_conflicts(const struct cli *cli, char *err, size_t errlen)
{
	for (size_t l = 0; l < sizeof(conflicts) / sizeof(conflicts[0]); l++) {
		enum opt_id first = OPT__COUNT;

		for (int k = 0; k < CONFLICT_MAX && conflicts[l][k] != OPT__COUNT; k++) {
			enum opt_id id = conflicts[l][k];

			if (!cli->given[id])
				continue;
			if (first != OPT__COUNT) {
				fail(err, errlen, "--%s and --%s cannot be used together",
				     opt_name(first), opt_name(id));
				return -1;
			}
			first = id;
		}
	}
	return 0;
}

/* manual 2.7: stand-alone options, and start/stop/cancel only alone or with --session */
static int check_alone(struct cli *cli, char *err, size_t errlen)
{
	for (int i = 0; i < OPT__COUNT; i++) {
		const struct opt_def *d = &cli_options[i];
		enum opt_id other;

		if (!cli->given[i] || !(d->flags & (OF_STANDALONE | OF_CONTROL)))
			continue;
		if (d->flags & OF_STANDALONE) {
			other = first_other(cli, d->id, OF_MODIFIER, OPT__COUNT, OPT__COUNT);
			if (other != OPT__COUNT) {
				fail(err, errlen, "--%s must be used alone (not with --%s)",
				     d->name, opt_name(other));
				return -1;
			}
			if (cli->app_argc) {
				fail(err, errlen,
				     "--%s must be used alone (not with an application '%s')",
				     d->name, cli->app_argv[0]);
				return -1;
			}
		} else {
			other = first_other(cli, d->id, OF_MODIFIER, OPT_SESSION, OPT__COUNT);
			if (other != OPT__COUNT) {
				fail(err, errlen,
				     "--%s can only be used alone or with --session (not with "
				     "--%s)",
				     d->name, opt_name(other));
				return -1;
			}
			if (cli->app_argc) {
				fail(err, errlen,
				     "--%s controls a running topsprof and takes no application "
				     "('%s')",
				     d->name, cli->app_argv[0]);
				return -1;
			}
		}
	}
	return 0;
}

static enum cli_command standalone_command(const struct cli *cli)
{
	static const struct {
		enum opt_id id;
		enum cli_command cmd;
	} map[] = {
		{ OPT_HELP, CMD_HELP },
		{ OPT_VERSION, CMD_VERSION },
		{ OPT_QUERY_ACTIVITIES, CMD_QUERY_ACTIVITIES },
		{ OPT_EXPORT_ACTIVITIES, CMD_EXPORT_ACTIVITIES },
		{ OPT_PLUGIN_LIST, CMD_PLUGIN_LIST },
		{ OPT_RESET, CMD_RESET },
		{ OPT_SESSION_LIST, CMD_SESSION_LIST },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (cli->given[map[i].id])
			return map[i].cmd;
	return CMD_NONE;
}

/* what the run does, and the rules that depend on it */
static int decide_command(struct cli *cli, char *err, size_t errlen)
{
	bool target = cli->app_argc || cli->given[OPT_ATTACH_PID] || cli->given[OPT_SYSTEM_WIDE];
	enum opt_id import = cli->given[OPT_IMPORT_PROFILE]   ? OPT_IMPORT_PROFILE
			     : cli->given[OPT_IMPORT_RAWDATA] ? OPT_IMPORT_RAWDATA
							      : OPT__COUNT;
	bool merge = cli->given[OPT_VP_MERGE_FROM] || cli->given[OPT_VP_MERGE_TO];
	enum opt_id other;

	cli->cmd = standalone_command(cli);
	if (cli->cmd != CMD_NONE)
		return 0;
	for (size_t i = 0; i < sizeof(control_ids) / sizeof(control_ids[0]); i++) {
		if (cli->given[control_ids[i]]) {
			cli->cmd = CMD_CONTROL;
			cli->control = (enum control_action)(CTL_START + i);
			return 0;
		}
	}

	if (cli->app_argc && (cli->given[OPT_ATTACH_PID] || cli->given[OPT_SYSTEM_WIDE])) {
		fail(err, errlen, "--%s cannot be used with an application ('%s')",
		     opt_name(cli->given[OPT_ATTACH_PID] ? OPT_ATTACH_PID : OPT_SYSTEM_WIDE),
		     cli->app_argv[0]);
		return -1;
	}
	if (import != OPT__COUNT && target) {
		fail(err, errlen, "--%s reads a saved profile and cannot be used with %s",
		     opt_name(import),
		     cli->app_argc ? "an application" : "--attach-pid or --system-wide");
		return -1;
	}
	if (merge) {
		if (!cli->given[OPT_VP_MERGE_FROM] || !cli->given[OPT_VP_MERGE_TO]) {
			fail(err, errlen, "--%s needs --%s",
			     opt_name(cli->given[OPT_VP_MERGE_FROM] ? OPT_VP_MERGE_FROM
								    : OPT_VP_MERGE_TO),
			     opt_name(cli->given[OPT_VP_MERGE_FROM] ? OPT_VP_MERGE_TO
								    : OPT_VP_MERGE_FROM));
			return -1;
		}
		/* --quiet too: a merge prints one line when it is done */
		other = first_other(cli, OPT_VP_MERGE_FROM, OF_MODIFIER, OPT_VP_MERGE_TO,
				    OPT_QUIET);
		if (other != OPT__COUNT || target) {
			fail(err, errlen,
			     "--visual-profiler-merge-from/-to can only be used with each other "
			     "(not with %s%s)",
			     other != OPT__COUNT ? "--" : "",
			     other != OPT__COUNT ? opt_name(other) : "an application");
			return -1;
		}
		cli->cmd = CMD_MERGE;
		return 0;
	}

	/* options that only make sense while collecting */
	for (int i = 0; i < OPT__COUNT; i++) {
		if (!cli->given[i] || !(cli_options[i].flags & OF_LAUNCH_ONLY))
			continue;
		if (!target) {
			fail(err, errlen,
			     "--%s can only be used when profiling an application (give one after "
			     "the options, or --attach-pid / --system-wide)",
			     cli_options[i].name);
			return -1;
		}
	}
	if (cli->given[OPT_PRINT_APP_LOG] && !cli->app_argc) {
		fail(err, errlen, "--print-app-log needs an application that topsprof launches");
		return -1;
	}

	if (import != OPT__COUNT) {
		cli->cmd = CMD_IMPORT;
		return 0;
	}
	if (target) {
		cli->cmd = CMD_PROFILE;
		return 0;
	}
	if (cli->given[OPT_QUERY_TRACE]) {
		other = first_other(cli, OPT_QUERY_TRACE, OF_MODIFIER, OPT__COUNT, OPT__COUNT);
		if (other != OPT__COUNT) {
			fail(err, errlen,
			     "--query-trace without an application must be used alone (not with "
			     "--%s)",
			     opt_name(other));
			return -1;
		}
		cli->cmd = CMD_QUERY_TRACE;
		return 0;
	}
	for (int i = 0; i < OPT__COUNT; i++)
		if (cli->given[i])
			goto no_target;
	cli->cmd = CMD_NONE; /* no words at all: main prints the usage */
	return 0;
no_target:
	fail(err, errlen,
	     "no application to profile: give it after the options (or --attach-pid, "
	     "--system-wide, --import-profile)");
	return -1;
}

/* rules between values of different options */
static int check_values(struct cli *cli, char *err, size_t errlen)
{
	static const struct {
		enum opt_id opt, needs1, needs2;
	} idle[] = {
		{ OPT_CPU_PROFILING_FREQUENCY, OPT_CPU_PROFILING_CALLSTACK, OPT__COUNT },
		{ OPT_CPU_PROFILING_UNWIND, OPT_CPU_PROFILING_CALLSTACK, OPT__COUNT },
		{ OPT_UTILIZATION_FREQUENCY, OPT_CPU_UTILIZATION, OPT_MEMORY_UTILIZATION },
		{ OPT_KERNEL_CALLSTACK_FILTER, OPT_KERNEL_CALLSTACK, OPT__COUNT },
		{ OPT_KMD_MODULE, OPT_KERNEL_CALLSTACK, OPT__COUNT },
	};

	if (cli->given[OPT_TOPSTX_DOMAIN_INCLUDE] && !(cli->trace_domains & TRACE_TOPSTX)) {
		fail(err, errlen, "--topstx-domain-include needs the topstx domain in --trace");
		return -1;
	}
	for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++) {
		if (!cli->given[idle[i].opt] || cli->given[idle[i].needs1] ||
		    (idle[i].needs2 != OPT__COUNT && cli->given[idle[i].needs2]))
			continue;
		warn(cli, "--%s has no effect without --%s%s%s", opt_name(idle[i].opt),
		     opt_name(idle[i].needs1), idle[i].needs2 != OPT__COUNT ? " or --" : "",
		     idle[i].needs2 != OPT__COUNT ? opt_name(idle[i].needs2) : "");
	}
	return 0;
}

static int control_word(const char *w)
{
	for (size_t i = 0; i < sizeof(control_words) / sizeof(control_words[0]); i++)
		if (!strcmp(w, control_words[i]))
			return (int)i;
	return -1;
}

static int parse_words(int argc, char **argv, struct cli *cli, char *err, size_t errlen)
{
	bool control_seen = false;
	char reason[CLI_MSG_LEN];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *value = NULL;
		const struct opt_def *d;
		size_t len;
		int cw;

		if (!strcmp(a, "--")) {
			if (i + 1 < argc && !control_seen) {
				cli->app_argv = &argv[i + 1];
				cli->app_argc = argc - i - 1;
			}
			return 0;
		}
		if (a[0] != '-' || !a[1]) {
			cw = control_word(a);
			if (control_seen) {
				fail(err, errlen, "unexpected '%s' after '%s'", a,
				     control_words[cli->control - CTL_START]);
				return -1;
			}
			if (cw >= 0 && !cli->app_argc) {
				if (cli->given[control_ids[cw]]) {
					fail(err, errlen, "--%s: given more than once", a);
					return -1;
				}
				cli->given[control_ids[cw]] = true;
				cli->control = (enum control_action)(CTL_START + cw);
				control_seen = true;
				continue;
			}
			cli->app_argv = &argv[i];
			cli->app_argc = argc - i;
			return 0;
		}
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		d = cli_find(name, len);
		if (!d) {
			char *word = strndup(a, len + (size_t)(name - a));
			size_t used = (size_t)snprintf(err, errlen, "unknown option ");

			if (used < errlen)
				quoted_errf(err + used, errlen - used, word ? word : a,
					    " (see --help)");
			free(word);
			return -1;
		}
		if (cli->given[d->id]) {
			fail(err, errlen, "--%s: given more than once", d->name);
			return -1;
		}
		if (d->arg == ARG_NONE) {
			if (eq) {
				fail(err, errlen, "--%s takes no value (got '%s')", d->name,
				     eq + 1);
				return -1;
			}
		} else if (eq) {
			value = eq + 1;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			fail(err, errlen, "--%s: missing value (%s)", d->name, d->metavar);
			return -1;
		}
		cli->given[d->id] = true;
		cli->text[d->id] = value;
		if (apply_value(d, value, cli, reason, sizeof(reason))) {
			fail(err, errlen, "--%s: %s", d->name, reason);
			return -1;
		}
	}
	return 0;
}

int cli_parse(int argc, char **argv, struct cli *cli, char *err, size_t errlen)
{
	set_defaults(cli);
	if (parse_words(argc, argv, cli, err, errlen) || check_conflicts(cli, err, errlen) ||
	    check_alone(cli, err, errlen) || decide_command(cli, err, errlen) ||
	    check_values(cli, err, errlen))
		return -1;
	return 0;
}

static void print_wrapped(FILE *out, const char *text, int indent, int width)
{
	int col = indent;
	const char *p = text;

	while (*p) {
		const char *sp = strchr(p, ' ');
		int wl = sp ? (int)(sp - p) : (int)strlen(p);

		if (col > indent && col + 1 + wl > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", wl, p);
		col += wl;
		p += wl;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

void cli_print_usage(FILE *out)
{
	fputs("Usage: topsprof [options] [application] [application-arguments]\n       topsprof start|stop|cancel [--session NAME]\n",
	      out);
}

static void print_rule(FILE *out, const char *title, unsigned flag)
{
	char line[512];
	size_t used = 0;

	for (int i = 0; i < OPT__COUNT; i++) {
		if (!(cli_options[i].flags & flag))
			continue;
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", used ? ", " : "",
				 cli_options[i].name);
		if (n > 0 && (size_t)n < sizeof(line) - used)
			used += (size_t)n;
	}
	fprintf(out, "  %s:\n    ", title);
	print_wrapped(out, line, 4, 100);
}

void cli_print_help(FILE *out)
{
	enum {
		COL = 38,
		WIDTH = 100
	};

	cli_print_usage(out);
	fputs("\nOptions start with -- or - (--print-summary, -print-summary); an argument follows\nafter a space or '=' (--session-new a, --session-new=a). The first word that is\nnot an option is the application; everything after it is the application's.\n",
	      out);
	for (int g = 0; g < GRP__COUNT; g++) {
		fprintf(out, "\n%s:\n", cli_group_titles[g]);
		for (int i = 0; i < OPT__COUNT; i++) {
			const struct opt_def *d = &cli_options[i];
			char head[80], help[512];
			int n;

			if (d->group != (enum opt_group)g)
				continue;
			n = snprintf(head, sizeof(head), "  --%s%s%s", d->name,
				     d->metavar ? " " : "", d->metavar ? d->metavar : "");
			snprintf(help, sizeof(help), "%s%s%s%s", d->help,
				 d->def ? " Default: " : "", d->def ? d->def : "",
				 d->def ? "." : "");
			if (n >= COL) {
				fprintf(out, "%s\n%*s", head, COL, "");
			} else {
				fprintf(out, "%-*s", COL, head);
			}
			print_wrapped(out, help, COL, WIDTH);
		}
	}
	fputs("\nRules (manual 2.7):\n  These cannot be used together:\n", out);
	for (size_t l = 0; l < sizeof(conflicts) / sizeof(conflicts[0]); l++) {
		fputs("    ", out);
		for (int k = 0; k < CONFLICT_MAX && conflicts[l][k] != OPT__COUNT; k++)
			fprintf(out, "%s%s", k ? ", " : "", opt_name(conflicts[l][k]));
		fputs(l >= N_CONFLICT_LINES_MANUAL ? "  (ours)\n" : "\n", out);
	}
	print_rule(out, "Only alone (with --debug, --debug-dump, --log-file, --force-overwrite)",
		   OF_STANDALONE);
	print_rule(out, "Only alone or with --session", OF_CONTROL);
	print_rule(out, "Only when profiling (an application, --attach-pid or --system-wide)",
		   OF_LAUNCH_ONLY);
	fputs("\nExit status: the application's when it ran; 2 for a bad command line; 1 when topsprof\nitself fails.\n",
	      out);
}

void cli_command_line(const struct cli *cli, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < cli->app_argc && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? " " : "",
					 cli->app_argv[i]);
}
