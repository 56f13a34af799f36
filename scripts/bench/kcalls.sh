#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Kernel callstacks' tax on a system call: the ns per call of a getppid loop (sysloop, from its
# own CPU time: what it ran, whatever else the machine ran meanwhile) with no BPF on the
# tracepoints; under tpfloor, empty programs on the same tracepoints (the least any BPF there
# costs on this kernel); under topsprof --kernel-callstack following the loop (launched by it);
# and under topsprof --kernel-callstack following another process (an idle sleep) while the loop
# runs: the case no process of the host may pay much for. Each series is taken in turns within a
# round, over BENCH_ROUNDS rounds (at least 5), and printed as the median and min-max ns per
# call, and as what each adds to the loop alone and to the floor in its round. Then, where the
# kernel has kernel.bpf_stats_enabled, the topsprof runs again with it on (it costs every BPF
# program two clock reads, so not during the first pass): the programs' own time per run.
# Standalone, or from run.sh: OUTPUT (the build dir; or $1), TOPSPROF (default $OUTPUT/topsprof),
# BENCH_ROUNDS, BENCH_QUICK=1 (fewer calls and 3 rounds, for a smoke run; not for figures).
# KCALLS_VARIANTS=1 adds both topsprof series again with TOPSPROF_TASK_STORAGE=1 (the other way
# to keep whether a thread is followed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${1:-${OUTPUT:-build}}
TOPSPROF=${TOPSPROF:-$OUT/topsprof}
LOOP=$OUT/bench/sysloop
FLOOR=$OUT/bench/tpfloor
RTLIB=$OUT/sim/lib/libtopsrt.so.1
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	N=${KCALLS_CALLS:-100000}
	ROUNDS=${BENCH_ROUNDS:-3}
else
	N=${KCALLS_CALLS:-1000000}
	ROUNDS=${BENCH_ROUNDS:-5}
	[ "$ROUNDS" -ge 5 ] || ROUNDS=5
fi

[ "$(id -u)" = 0 ] || { echo "kcalls: needs root for BPF" >&2; exit 1; }
for f in "$TOPSPROF" "$LOOP" "$FLOOR" "$RTLIB"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "kcalls: $f is missing (make bench builds it)" >&2; exit 1; }
done
TMPD=$(mktemp -d /tmp/topsprof-kcalls.XXXXXX)
MAIN=$BASHPID
cleanup() { [ "$BASHPID" != "$MAIN" ] || rm -rf "$TMPD"; }
trap cleanup EXIT
export TOPS_SIM_DRIVER_DIR=$TMPD/driver

ns() { sed -n 's/.* ns_per_call=\([0-9.]*\).*/\1/p'; }
# the programs' own ns a run, from topsprof's --debug (with kernel.bpf_stats_enabled): "enter
# exit switch", kept under the series' TAG
progs() {
	sed -n 's/.*programs: kc_sys_enter [0-9]* runs, \([0-9.]*\) ns each; kc_sys_exit [0-9]* runs, \([0-9.]*\) ns each; kc_switch [0-9]* runs, \([0-9.]*\) ns each.*/\1 \2 \3/p' \
		"$1" >>"$TMPD/progs.${TAG// /_}"
}
alone() { "$LOOP" -n "$N" | ns; }
floor() { "$FLOOR" "$LOOP" -n "$N" | ns; }
followed() {
	"$TOPSPROF" --quiet --debug --print-app-log --kernel-callstack --runtime-lib "$RTLIB" \
		"$LOOP" -n "$N" 2>"$TMPD/ferr" | ns
	progs "$TMPD/ferr"
}
# the loop while a topsprof --kernel-callstack follows only a sleeping process; topsprof ends
# with it (a signal to topsprof would be forwarded to it)
unfollowed() {
	local log=$TMPD/log med sleeper tp
	sleep 3600 &
	sleeper=$!
	"$TOPSPROF" --quiet --debug --kernel-callstack --runtime-lib "$RTLIB" --attach-pid "$sleeper" \
		--duration 600 >/dev/null 2>"$log" &
	tp=$!
	until grep -q "start-up: .* release" "$log"; do
		kill -0 "$tp" 2>/dev/null || { grep -v libbpf "$log" >&2; kill "$sleeper"; return 1; }
		sleep 0.1
	done
	med=$(alone)
	kill "$sleeper"
	wait "$tp" "$sleeper" || true
	progs "$log"
	echo "$med"
}
with_task_storage() { TOPSPROF_TASK_STORAGE=1 "$@"; }

SERIES=(alone floor followed unfollowed)
if [ "${KCALLS_VARIANTS:-0}" = 1 ]; then
	SERIES+=("with_task_storage followed" "with_task_storage unfollowed")
fi
declare -A V
for ((r = 0; r < ROUNDS; r++)); do
	for s in "${SERIES[@]}"; do
		V[$s,$r]=$(TAG=none $s)
		[ -n "${V[$s,$r]}" ] || { echo "kcalls: the '$s' run printed no figure" >&2; exit 1; }
	done
done
# the second pass, with the kernel's BPF run-time statistics on (restored at the end)
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo none)
if [ "$stats_was" != none ]; then
	trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was"; cleanup' EXIT
	sysctl -qw kernel.bpf_stats_enabled=1
	for ((r = 0; r < ROUNDS; r++)); do
		for s in "${SERIES[@]}"; do
			case $s in *followed) TAG=$s $s >/dev/null ;; esac
		done
	done
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
fi

# stats "v1 v2 ...": "median min max"
stats() { median_min_max <<<"$1" | awk '{ printf "%.1f %.1f %.1f\n", $1, $2, $3 }'; }
# series s: its values, or what it adds to the loop alone (or to the floor) in each round
values() { local r; for ((r = 0; r < ROUNDS; r++)); do echo -n "${V[$1,$r]} "; done; }
added() {
	local r
	for ((r = 0; r < ROUNDS; r++)); do
		awk -v a="${V[$1,$r]}" -v b="${V[$2,$r]}" 'BEGIN { printf "%.1f ", a - b }'
	done
}
fmt() { read -r m lo hi <<<"$1"; echo "$m ns ($lo-$hi)"; }
label() {
	case $1 in
	alone) echo "no BPF on the tracepoints" ;;
	floor) echo "empty BPF programs on the tracepoints (tpfloor)" ;;
	followed) echo "topsprof --kernel-callstack, the loop followed" ;;
	unfollowed) echo "topsprof --kernel-callstack following another process" ;;
	"with_task_storage followed") echo "the same, followed, TOPSPROF_TASK_STORAGE=1" ;;
	"with_task_storage unfollowed") echo "the same, not followed, TOPSPROF_TASK_STORAGE=1" ;;
	esac
}

echo "Kernel callstacks' tax on a system call: getppid in a loop, $N calls a run, $ROUNDS rounds" \
	"taken in turns; median (min-max). Linux $(uname -r), hypervisor $(bench_hypervisor), $(nproc) CPUs."
echo
echo "| the loop's system calls | ns a call | added to the loop alone | added to the floor |"
echo "|---|---|---|---|"
for s in "${SERIES[@]}"; do
	if [ "$s" = alone ]; then
		echo "| $(label "$s") | $(fmt "$(stats "$(values "$s")")") | - | - |"
	elif [ "$s" = floor ]; then
		echo "| $(label "$s") | $(fmt "$(stats "$(values "$s")")") | $(fmt "$(stats "$(added "$s" alone)")") | - |"
	else
		echo "| $(label "$s") | $(fmt "$(stats "$(values "$s")")") | $(fmt "$(stats "$(added "$s" alone)")") | $(fmt "$(stats "$(added "$s" floor)")") |"
	fi
done
read -r unf _ < <(stats "$(added unfollowed floor)")
read -r flo _ < <(stats "$(added floor alone)")
echo
echo "A system call of a process topsprof does not follow pays ${unf} ns above the floor of any BPF" \
	"on these tracepoints, which is ${flo} ns here (target: under 50 ns in all; the floor alone" \
	"$(awk -v f="$flo" 'BEGIN { print (f < 50 ? "is under it" : "is above it on this machine") }'))."
if [ "$stats_was" = none ]; then
	echo "The programs' own time: this kernel has no kernel.bpf_stats_enabled."
	exit 0
fi
# column c of the series' program lines: "median min max"
pcol() { [ -s "$TMPD/progs.${1// /_}" ] && awk -v c="$2" '{ print $c }' "$TMPD/progs.${1// /_}" | tr '\n' ' '; }
psum() { [ -s "$TMPD/progs.${1// /_}" ] && awk '{ print $1 + $2 }' "$TMPD/progs.${1// /_}" | tr '\n' ' '; }
echo
echo "The programs' own time (kernel.bpf_stats_enabled, a second pass of $ROUNDS rounds): ns a run," \
	"averaged over every run in the host during each topsprof run; a system call runs sys_enter" \
	"and sys_exit. The kernel's dispatch to them is the floor above."
echo
echo "| series | sys_enter | sys_exit | sched_switch | a system call (enter + exit) |"
echo "|---|---|---|---|---|"
for s in "${SERIES[@]}"; do
	case $s in *followed) ;; *) continue ;; esac
	if [ -z "$(pcol "$s" 1)" ]; then
		echo "| $(label "$s") | no figures (topsprof said none) | | | |"
		continue
	fi
	echo "| $(label "$s") | $(fmt "$(stats "$(pcol "$s" 1)")") | $(fmt "$(stats "$(pcol "$s" 2)")") |" \
		"$(fmt "$(stats "$(pcol "$s" 3)")") | $(fmt "$(stats "$(psum "$s")")") |"
done
