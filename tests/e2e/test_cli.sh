#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# What a user sees of the command line: help, version, queries, and one-line errors with exit 2.
. "$E2E_DIR/lib.sh"

run "$TOPSPROF" --help
expect_rc 0
for opt in profile-from-start query-activities query-trace enable-activities export-activities \
	import-activities trace topstx-domain-include topstx-max-bytes-size cpu-profiling-callstack \
	cpu-profiling-frequency cpu-utilization memory-utilization utilization-frequency \
	kernel-callstack kernel-callstack-filter print-gcu-summary print-gcu-trace print-summary \
	print-summary-per-gcu quiet print-app-log export-profile export-visual-profiler import-profile \
	export-rawdata import-rawdata export-csv visual-profiler-merge-from visual-profiler-merge-to \
	log-file force-overwrite help version debug debug-dump session session-new session-list start \
	stop cancel reset; do
	expect_out "  --$opt"
done
# grouped as in the manual, in the manual's order
groups=$(grep -E '^[A-Z].* options:$' <<<"$out" | tr '\n' '|')
[ "$groups" = "GCU collection options:|CPU collection options:|Print options:|Input and output options:|Control options:|Advanced options:|" ] ||
	die "help groups: $groups"

run "$TOPSPROF" -help
expect_rc 0
expect_out "Usage: topsprof [options] [application] [application-arguments]"

run "$TOPSPROF" --version
expect_rc 0
expect_out "topsprof 0.1.0"
expect_lines out 1

run "$TOPSPROF" --query-activities
expect_rc 0
[ "$out" = $'==== User Activities:\n    Memcpy,Memcpy_cdte,Memcpy_sdte,Operator' ] || die "query-activities: $out"

# nothing at all: the usage on stderr, exit 2
run "$TOPSPROF"
expect_rc 2
expect_err "Usage: topsprof"

# bad input: one line naming the option and the reason, exit 2, nothing on stdout
bad() {
	local want=$1
	shift
	run "$TOPSPROF" "$@"
	expect_rc 2 "$*"
	expect_lines err 1
	expect_lines out 0
	expect_err "topsprof: error: $want"
}
bad "--topstx-max-bytes-size: '2MB' is out of range (1B to 1MB)" --topstx-max-bytes-size 2MB ./app
bad "--cpu-profiling-frequency: '0' is out of range (1 to 100 Hz)" --cpu-profiling-frequency=0 ./app
bad "--profile-from-start: 'maybe' is not on or off" -profile-from-start maybe ./app
bad "--session-new: 'a b' is not a session name" --session-new "a b" ./app
bad "--print-gcu-summary and --print-summary cannot be used together" --print-summary --print-gcu-summary ./app
bad "--import-profile and --export-profile cannot be used together" --import-profile a --export-profile b
bad "--help must be used alone (not with --version)" --help --version
bad "--query-activities must be used alone (not with an application './app')" --query-activities ./app
bad "--stop can only be used alone or with --session (not with --print-summary)" --stop --print-summary
bad "--enable-activities can only be used when profiling" --enable-activities all
bad "unknown option '--frobnicate'" --frobnicate ./app
bad "--enable-activities: unknown activity 'kernels'" --enable-activities kernels ./app
bad "--session: missing value (NAME)" --session

# unknown trace domains: a warning, not an error (the run then stops where the tracer is missing)
run "$TOPSPROF" --trace torch_gcu,TopsFlame,runtime --version
expect_rc 2
run "$TOPSPROF" --trace torch_gcu,TopsFlame,runtime /bin/true
expect_err "topsprof: warning: --trace: ignoring trace domains topsprof does not know: torch_gcu,TopsFlame"
[ "$rc" -ne 2 ] || die "unknown trace domains must not be a usage error: $err"

run "$TOPSPROF" --plugin-list
expect_rc 0
expect_out "==== Plugins:"
expect_out "runtime"
expect_out "gcu"

# what cannot be run says why, in one line, and nothing runs
run "$TOPSPROF" "$(dirname "$TOPSPROF")"
expect_rc 1
expect_err "cannot run '$(dirname "$TOPSPROF")': Is a directory"
expect_lines err 1
run "$TOPSPROF" /nonexistent/app
expect_rc 1
expect_err "cannot run '/nonexistent/app': No such file or directory"

# --debug shows what was parsed
run "$TOPSPROF" --debug --query-activities
expect_rc 0
expect_err "topsprof: debug: option --query-activities"
done_ok
