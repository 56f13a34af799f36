/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The command line: one table of options (manual chapter 2 plus our own), the rules of the
 * manual's section 2.7, and the typed configuration that the rest of topsprof reads. */
#ifndef TOPSPROF_CLI_H
#define TOPSPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/domain.h"

enum opt_id {
	/* GCU collection (manual 2.1) */
	OPT_PROFILE_FROM_START,
	OPT_QUERY_ACTIVITIES,
	OPT_QUERY_TRACE,
	OPT_ENABLE_ACTIVITIES,
	OPT_EXPORT_ACTIVITIES,
	OPT_IMPORT_ACTIVITIES,
	/* CPU collection (manual 2.2) */
	OPT_TRACE,
	OPT_TOPSTX_DOMAIN_INCLUDE,
	OPT_TOPSTX_MAX_BYTES_SIZE,
	OPT_CPU_PROFILING_CALLSTACK,
	OPT_CPU_PROFILING_FREQUENCY,
	OPT_CPU_PROFILING_UNWIND,
	OPT_CPU_UTILIZATION,
	OPT_MEMORY_UTILIZATION,
	OPT_UTILIZATION_FREQUENCY,
	OPT_KERNEL_CALLSTACK,
	OPT_KERNEL_CALLSTACK_FILTER,
	OPT_KMD_MODULE,
	/* printing (manual 2.3) */
	OPT_PRINT_API_SUMMARY,
	OPT_PRINT_GCU_SUMMARY,
	OPT_PRINT_GCU_TRACE,
	OPT_PRINT_SUMMARY,
	OPT_PRINT_SUMMARY_PER_GCU,
	OPT_QUIET,
	OPT_PRINT_APP_LOG,
	/* input and output (manual 2.4) */
	OPT_EXPORT_PROFILE,
	OPT_EXPORT_VISUAL_PROFILER,
	OPT_IMPORT_PROFILE,
	OPT_EXPORT_RAWDATA,
	OPT_IMPORT_RAWDATA,
	OPT_EXPORT_CSV,
	OPT_EXPORT_CHROME_TRACE,
	OPT_EXPORT_FOLDED,
	OPT_VP_MERGE_FROM,
	OPT_VP_MERGE_TO,
	OPT_LOG_FILE,
	OPT_FORCE_OVERWRITE,
	OPT_HELP,
	OPT_VERSION,
	OPT_DEBUG,
	OPT_DEBUG_DUMP,
	/* control (manual 2.5) and targets beyond the manual */
	OPT_SESSION,
	OPT_SESSION_NEW,
	OPT_SESSION_LIST,
	OPT_START,
	OPT_STOP,
	OPT_CANCEL,
	OPT_ATTACH_PID,
	OPT_SYSTEM_WIDE,
	OPT_DURATION,
	/* advanced (manual 2.6) */
	OPT_RESET,
	OPT_PLUGIN_LIST,
	OPT_RUNTIME_LIB,
	OPT_BUFFER_SIZE,
	OPT_API_MODE,
	OPT__COUNT
};

enum opt_arg {
	ARG_NONE,
	ARG_ONOFF,	/* on | off */
	ARG_ACTIVITIES, /* Operator,Memcpy,... | all */
	ARG_DOMAINS,	/* runtime,topstx,topsprofiler (unknown names warn) */
	ARG_NAMES,	/* comma list of names | all */
	ARG_BYTES,	/* 1B .. 1MB */
	ARG_FREQ,	/* 1 .. 100 Hz */
	ARG_KFILTER,	/* current | all | kmd | f1,f2,... */
	ARG_FILE,
	ARG_DIR,
	ARG_SESSION, /* letters, digits, '-', '_' */
	ARG_IDENT,   /* a kernel module name */
	ARG_PID,
	ARG_SECONDS,
	ARG_BUFSIZE, /* ring buffer size */
	ARG_APIMODE, /* auto | stats | trace */
	ARG_UNWIND,  /* dwarf | fp */
};

enum opt_group {
	GRP_GCU,
	GRP_CPU,
	GRP_PRINT,
	GRP_IO,
	GRP_CONTROL,
	GRP_ADVANCED,
	GRP__COUNT
};

enum opt_flags {
	OF_STANDALONE = 1u << 0,  /* only alone (manual 2.7) */
	OF_CONTROL = 1u << 1,	  /* only alone or with --session (manual 2.7) */
	OF_LAUNCH_ONLY = 1u << 2, /* only when profiling a target (manual 2.7) */
	OF_MODIFIER = 1u << 3,	  /* may accompany any command: --debug, --log-file, ... */
	OF_EXTENSION = 1u << 4,	  /* ours, beyond the manual */
};

struct opt_def {
	enum opt_id id;
	const char *name;
	enum opt_arg arg;
	const char *metavar;
	const char *def; /* default as shown by --help, or NULL */
	enum opt_group group;
	unsigned flags;
	const char *help;
};

/* what a run of topsprof does, decided from the options */
enum cli_command {
	CMD_NONE,
	CMD_PROFILE, /* launch an application, attach to a pid, or trace the system */
	CMD_HELP,
	CMD_VERSION,
	CMD_QUERY_ACTIVITIES,
	CMD_QUERY_TRACE,
	CMD_EXPORT_ACTIVITIES,
	CMD_PLUGIN_LIST,
	CMD_RESET,
	CMD_SESSION_LIST,
	CMD_CONTROL,
	CMD_IMPORT,
	CMD_MERGE,
};

enum control_action {
	CTL_NONE,
	CTL_START,
	CTL_STOP,
	CTL_CANCEL
};

enum api_mode {
	API_MODE_AUTO,
	API_MODE_STATS,
	API_MODE_TRACE
};

enum kfilter_kind {
	KFILTER_CURRENT,
	KFILTER_ALL,
	KFILTER_KMD,
	KFILTER_FUNCS
};

#define CLI_MAX_WARNINGS 8
#define CLI_MSG_LEN	 256
#define SESSION_NAME_MAX 64

struct cli {
	enum cli_command cmd;
	bool given[OPT__COUNT];
	const char *text[OPT__COUNT]; /* the argument as given (NULL for flags) */

	/* typed values; defaults filled in by cli_parse() */
	bool profile_from_start;
	unsigned activities;	/* enum activity_bit mask */
	unsigned trace_domains; /* enum trace_domain mask */
	bool topstx_all_domains;
	uint32_t topstx_max_bytes;
	uint32_t cpu_frequency_hz;
	bool cpu_unwind_fp; /* --cpu-profiling-unwind fp */
	uint32_t utilization_frequency_hz;
	enum kfilter_kind kfilter;
	const char *kfilter_functions; /* comma list when kfilter == KFILTER_FUNCS */
	const char *kmd_module;
	enum control_action control;
	pid_t attach_pid;
	double duration_s;
	uint64_t buffer_size;
	enum api_mode api_mode;

	/* the application and its arguments (NULL-terminated, points into argv) */
	int app_argc;
	char **app_argv;

	int nwarnings;
	char warnings[CLI_MAX_WARNINGS][CLI_MSG_LEN];
};

extern const struct opt_def cli_options[OPT__COUNT];
extern const char *const cli_group_titles[GRP__COUNT];

/* Parse argv into cli. On a usage error returns -1 with one line in err naming the option and
 * the reason; warnings (accepted but questionable input) are left in cli->warnings. */
int cli_parse(int argc, char **argv, struct cli *cli, char *err, size_t errlen);

const struct opt_def *cli_find(const char *name, size_t len);
void cli_print_help(FILE *out);
/* the application and its arguments joined by spaces ("" without one) */
void cli_command_line(const struct cli *cli, char *out, size_t len);
void cli_print_usage(FILE *out);

#endif
