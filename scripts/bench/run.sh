#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The benchmarks (make bench): API tracing, ns per call of one cheap runtime call (apibench),
# untraced, under the bare counting uprobe+uretprobe pair (the kernel's floor), and under
# topsprof in statistics and trace mode; on the plain runtime and the -fcf-protection one
# (functions begin with endbr64), where probing the first byte costs a single-step. All in one
# run, as ratios against the bare pair; the median of 5 runs for each. Then the highest call rate
# traced with no lost event at the default buffer size. Prints a Markdown table. Then the costs
# of CPU sampling, utilization sampling and kernel callstacks, each against a run without.
set -euo pipefail
OUT=${1:-build}
BIN=$OUT/sim/bin
TOPSPROF=$OUT/topsprof
BARE=$OUT/bench/bare
APIB=$OUT/bench/apibench
N=${BENCH_CALLS:-200000}
export TOPS_SIM_DRIVER_DIR=$(mktemp -d /tmp/topsprof-bench.XXXXXX)
trap 'rm -rf "$TOPS_SIM_DRIVER_DIR"' EXIT

[ "$(id -u)" = 0 ] || { echo "bench: needs root for BPF" >&2; exit 1; }

ns() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p'; }
median5() { # command...: the median ns/call of five runs
	for _ in 1 2 3 4 5; do "$@" 2>/dev/null | ns; done | sort -g | sed -n 3p
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

declare -A R
for lib in plain cet; do
	if [ $lib = plain ]; then libdir=$OUT/sim/lib; else libdir=$OUT/sim/lib-cet; fi
	so=$libdir/libtopsrt.so.1
	export LD_LIBRARY_PATH=$libdir
	R[$lib,untraced]=$(median5 "$APIB" -n "$N")
	R[$lib,bare]=$(median5 "$BARE" "$so" topsPeekAtLastError after-endbr64 "$APIB" -n "$N")
	R[$lib,stats]=$(median5 "$TOPSPROF" --quiet --print-app-log --api-mode stats "$APIB" -n "$N")
	R[$lib,trace]=$(median5 "$TOPSPROF" --quiet --print-app-log --api-mode trace "$APIB" -n "$N")
	if [ $lib = cet ]; then
		# single-stepped: far slower, fewer calls do
		R[$lib,first]=$(median5 "$BARE" "$so" topsPeekAtLastError at-entry "$APIB" -n $((N / 10)))
	fi
done
unset LD_LIBRARY_PATH

echo "| runtime | untraced | bare uprobe pair | topsprof stats | topsprof trace | stats / bare | trace / bare |"
echo "|---|---|---|---|---|---|---|"
for lib in plain cet; do
	name=$([ $lib = plain ] && echo "plain" || echo "-fcf-protection (endbr64)")
	echo "| $name | ${R[$lib,untraced]} ns | ${R[$lib,bare]} ns | ${R[$lib,stats]} ns | ${R[$lib,trace]} ns | $(ratio "${R[$lib,stats]}" "${R[$lib,bare]}")x | $(ratio "${R[$lib,trace]}" "${R[$lib,bare]}")x |"
done
echo
echo "Probing the endbr64 build at its first byte (single-stepped): ${R[cet,first]} ns a call," \
	"$(ratio "${R[cet,first]}" "${R[cet,stats]}")x topsprof's statistics mode after endbr64."

# the highest call rate: every core calling, trace mode, default buffer; lost events must be 0
threads=$(nproc)
line=$("$TOPSPROF" --print-app-log --api-mode trace --print-api-summary "$APIB" -n "$N" -t "$threads" 2>"$TOPS_SIM_DRIVER_DIR/err")
rate=$(sed -n 's/.*calls_per_s=\([0-9]*\).*/\1/p' <<<"$line")
lost=$(sed -n 's/.*warning: \([0-9]*\) events lost.*/\1/p' "$TOPS_SIM_DRIVER_DIR/err")
seen=$(awk '$NF == "topsPeekAtLastError" { print $(NF-4); exit }' <<<"$line")
echo
echo "All $threads cores calling, trace mode, default --buffer-size: ${rate} calls/s traced," \
	"${lost:-0} events lost ($seen of $((N * threads + 1)) calls in the report)."

# CPU call stack sampling: a busy 2-thread app doing a fixed amount of work, under topsprof
# without and with --cpu-profiling-callstack at 100 Hz; the CPU time of both, each measured by
# itself in ns (the app's CPU-time clock, which the sampling program's runs are charged to, and
# topsprof's own, as --debug says it), the median of 5 runs each, taken in turns
ROUNDS=${BENCH_CPU_ROUNDS:-1500}
cpu_total_ms() { # command...: the CPU ms of the command and its children, with its wall ms
	local t0 t1 c0 c1 me=$BASHPID # this (sub)shell, whose children's CPU time /proc shows
	read -r c0 < <(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$me/stat")
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; return 1; }
	t1=$EPOCHREALTIME
	read -r c1 < <(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$me/stat")
	awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v a="$t0" -v b="$t1" \
		'BEGIN { printf "%.0f %.0f\n", c * 1000 / hz, (b - a) * 1000 }'
}
hot_ms() { # topsprof options...: "total_cpu_ms app_ms topsprof_ms wall_ms" of one run
	local t0 out
	t0=$EPOCHREALTIME
	out=$("$TOPSPROF" --quiet --debug --print-app-log "$@" "$BIN/cpu_hot" -n "$ROUNDS" 2>&1) ||
		{ echo "bench: failed: $out" >&2; return 1; }
	awk -v a="$t0" -v b="$EPOCHREALTIME" '
		/cpu_ms=/ { sub(/.*cpu_ms=/, ""); sub(/,.*/, ""); app = $0 }
		/own CPU time:/ { sub(/.*own CPU time: /, ""); sub(/ ms.*/, ""); own = $0 }
		END { printf "%.1f %.1f %.1f %.0f\n", app + own, app, own, (b - a) * 1000 }' <<<"$out"
}
# off and on alternate, so that a drift in the machine's speed falls on both alike; prints the
# median runs, "total app topsprof wall" off then on
compare() { # options...: cpu_hot under topsprof without and with the options
	local off_runs="" on_runs=""
	for _ in 1 2 3 4 5; do
		off_runs+=$(hot_ms)$'\n'
		on_runs+=$(hot_ms "$@")$'\n'
	done
	echo "$(grep . <<<"$off_runs" | sort -g | sed -n 3p) $(grep . <<<"$on_runs" | sort -g | sed -n 3p)" \
		"$(grep . <<<"$off_runs" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }')"
}
share() { awk -v a="$1" -v b="$2" -v w="$3" 'BEGIN { printf "%.2f", (a - b) * 100 / w }'; }
read -r off_cpu off_app off_own off_wall on_cpu on_app on_own on_wall lo hi < <(compare --cpu-profiling-callstack)
echo
echo "CPU call stacks at 100 Hz, a busy 2-thread app ($ROUNDS rounds): ${off_cpu} ms of CPU" \
	"without sampling (app ${off_app}, topsprof ${off_own}; the five runs from ${lo} to ${hi})," \
	"${on_cpu} ms with (app ${on_app}, topsprof ${on_own}); the difference is" \
	"$(share "$on_cpu" "$off_cpu" "$on_wall")% of one core over the ${on_wall} ms run, topsprof's" \
	"own part $(share "$on_own" "$off_own" "$on_wall")%."
# utilization sampling costs topsprof's own time only (it reads /proc): measured on an idle app
# (sleep 2), where nothing else moves the CPU time, without and with it at 100 Hz
idle_runs() { # options...: "cpu wall" medians of topsprof watching sleep 2
	for _ in 1 2 3 4 5; do
		cpu_total_ms "$TOPSPROF" --quiet --runtime-lib "$OUT/sim/lib/libtopsrt.so.1" "$@" \
			sleep 2
	done | sort -g | sed -n 3p
}
read -r off_cpu off_wall < <(idle_runs)
read -r on_cpu on_wall < <(idle_runs --cpu-utilization --memory-utilization)
echo "CPU and memory utilization at 100 Hz, topsprof watching an idle app for 2 s: ${off_cpu} ms" \
	"of CPU without, ${on_cpu} ms with: $(share "$on_cpu" "$off_cpu" "$on_wall")% of one core."

# kernel callstacks: what each system call pays, from the wall time of dd's one-byte reads and
# writes (2 x DD_N calls), without topsprof, and under a topsprof whose tracepoints follow dd
# (filter all, system-wide) or do not (filter current, attached to a sleeping process); the
# median of 5 each
DD_N=${BENCH_DD_CALLS:-200000}
dd_ms() {
	local t0=$EPOCHREALTIME
	dd if=/dev/zero of=/dev/null bs=1 count="$DD_N" 2>/dev/null
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}
dd_median() { for _ in 1 2 3 4 5; do dd_ms; done | sort -g | sed -n 3p; }
dd_under() { # topsprof options...: dd's median wall ms while that topsprof collects
	local log pid med
	log=$(mktemp)
	"$TOPSPROF" --quiet --debug --runtime-lib "$OUT/sim/lib/libtopsrt.so.1" --duration 120 \
		--kernel-callstack "$@" 2>"$log" &
	pid=$!
	until grep -q "kernel callstacks: tracepoints .* attached" "$log"; do
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; return 1; }
		sleep 0.1
	done
	med=$(dd_median)
	kill -INT "$pid"
	wait "$pid" || true
	rm -f "$log"
	echo "$med"
}
sleep 600 &
sleeper=$!
# each against dd alone just before it, so that a drift in the machine's speed falls on both
base_f=$(dd_median)
followed=$(dd_under --system-wide --kernel-callstack-filter all)
base_u=$(dd_median)
unfollowed=$(dd_under --attach-pid "$sleeper")
kill "$sleeper"
per_call() { awk -v a="$1" -v b="$2" -v n="$DD_N" 'BEGIN { printf "%.0f", (a - b) * 1e6 / (2 * n) }'; }
echo "Kernel callstacks, the tracepoint path: dd's $((2 * DD_N)) one-byte system calls take" \
	"${followed} ms followed against ${base_f} ms alone ($(ratio "$followed" "$base_f")x," \
	"$(per_call "$followed" "$base_f") ns a call), and ${unfollowed} ms against ${base_u} ms when" \
	"topsprof follows other processes ($(ratio "$unfollowed" "$base_u")x," \
	"$(per_call "$unfollowed" "$base_u") ns a call)."
# the sampling program's own cost, from the kernel's BPF run-time statistics
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo none)
if [ "$stats_was" = none ]; then
	echo "The sampling program's own cost: this kernel has no kernel.bpf_stats_enabled."
	exit 0
fi
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; rm -rf "$TOPS_SIM_DRIVER_DIR"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
t0=$EPOCHREALTIME
dbg=$("$TOPSPROF" --quiet --debug --cpu-profiling-callstack "$BIN/cpu_hot" -n "$ROUNDS" 2>&1 >/dev/null) ||
	{ echo "bench: the CPU sampling run failed: $dbg" >&2; exit 1; }
t1=$EPOCHREALTIME
runs=$(sed -n 's/.*CPU sampling program: \([0-9]*\) runs, \([0-9]*\) ns each.*/\1/p' <<<"$dbg")
each=$(sed -n 's/.*CPU sampling program: \([0-9]*\) runs, \([0-9]*\) ns each.*/\2/p' <<<"$dbg")
echo "The sampling program itself: ${runs} runs of ${each} ns on average (stack walks included)," \
	"$(awk -v r="$runs" -v e="$each" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", r * e / ((b - a) * 1e9) * 100 }')% of one core."
