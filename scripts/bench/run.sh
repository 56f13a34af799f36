#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The benchmarks (make bench), in one interleaved run: round 1 of every measure, then round 2, and
# so on (each round in another order), so that a drift in the machine's speed falls on every row
# alike; each row is the median of its rounds with their min-max, and its ratio to its baseline.
# - API call cost, ns per call of one cheap runtime call (apibench: topsPeekAtLastError) on the
#   plain runtime and the -fcf-protection one (functions begin with endbr64): untraced; an
#   LD_PRELOAD interposer that timestamps each call (interpose.c, the baseline eBPF replaces); the
#   bare counting uprobe+uretprobe pair (bare.c, the kernel's floor); bpftrace and ltrace on the
#   same call (skipped, loudly, where they are not installed); topsprof statistics and trace mode.
# - Bystanders: an untraced apibench using the same libtopsrt.so while topsprof profiles another
#   process (launched, or --attach-pid), against the same alone.
# - The stress app end to end; start-up and detach (topsprof --debug, and the wall time of
#   topsprof /bin/true, beside bpftrace's); the highest call rate traced; the costs of CPU
#   sampling, utilization sampling and kernel callstacks.
# - Then the helpers scripts/bench/kcalls.sh and scale.sh (the 10M-event post-processing series),
#   where they exist.
# usage: run.sh [BUILD_DIR]  (default build)
# BENCH_ROUNDS (default 5), BENCH_CALLS (calls a run, default 200000), BENCH_QUICK=1 (tiny counts,
# 2 rounds, slow rows and helpers left out: the smoke test's), BENCH_LIMIT_S (seconds any one
# command may take, default 180), BENCH_BARE=multi|perf (the bare pair's links: uprobe_multi, as
# topsprof attaches where the kernel has them, the default there; or perf_event uprobes).
set -uo pipefail
OUT=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
BIN=$OUT/sim/bin
TOPSPROF=$OUT/topsprof
BARE=$OUT/bench/bare
APIB=$OUT/bench/apibench
INTERPOSE=$(cd "$OUT/bench" 2>/dev/null && pwd)/libinterpose.so
PLAIN_LIB=$(cd "$OUT/sim/lib" 2>/dev/null && pwd)/libtopsrt.so.1
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUNDS=${BENCH_ROUNDS:-2} N=${BENCH_CALLS:-2000} LIMIT=${BENCH_LIMIT_S:-60}
	STRESS_N=200 HOT_N=100 IDLE_S=0.3 DD_N=20000 SPAWN_N=5
else
	ROUNDS=${BENCH_ROUNDS:-5} N=${BENCH_CALLS:-200000} LIMIT=${BENCH_LIMIT_S:-180}
	STRESS_N=5000 HOT_N=1500 IDLE_S=2 DD_N=200000 SPAWN_N=100
fi
LTRACE_N=$((N / 500 > 20 ? N / 500 : 20)) # ptrace: a call costs about 1 ms
FIRST_N=$((N / 10))                        # single-stepped: 20-30 us a call
WORK=$(mktemp -d /tmp/topsprof-bench.XXXXXX)
export TOPS_SIM_DRIVER_DIR=$WORK/driver
mkdir -p "$TOPS_SIM_DRIVER_DIR"
BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo none)
# the idle processes the jobs start (in subshells): ended at exit, whatever happened
SLEEPERS=$WORK/sleepers
cleanup() {
	local p
	[ -e "$SLEEPERS" ] && while read -r p; do kill "$p" 2>/dev/null; done <"$SLEEPERS"
	[ "$BPF_STATS_WAS" = none ] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "bench: needs root for BPF" >&2; exit 1; }
for f in "$TOPSPROF" "$BARE" "$APIB" "$INTERPOSE" "$PLAIN_LIB" "$BIN/stress" "$BIN/cpu_hot"; do
	[ -e "$f" ] || { echo "bench: $f is missing (make bench builds it)" >&2; exit 1; }
done
case ${BENCH_BARE:-} in
'') # as topsprof tells (user/collect/umulti.c): the kernel's BTF names the link
	BARE_KIND=perf
	grep -qa bpf_uprobe_multi_link /sys/kernel/btf/vmlinux 2>/dev/null && BARE_KIND=multi ;;
multi | perf) BARE_KIND=$BENCH_BARE ;;
*) echo "bench: BENCH_BARE is multi or perf, not '$BENCH_BARE'" >&2; exit 2 ;;
esac

# -- the machine -----------------------------------------------------------------------------------

echo "kernel: $(uname -r) ($(uname -m))"
echo "hypervisor: $(bench_hypervisor)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
	"$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "rounds: $ROUNDS, interleaved; $N calls a run$([ "$QUICK" = 1 ] &&
	echo "; a quick run (BENCH_QUICK=1): tiny counts, slow rows left out")"

# -- rows and jobs ---------------------------------------------------------------------------------
# A row is one line of the tables: its section, its baseline row (the ratio's denominator) and its
# title. A job is what one round runs: it prints "ROW VALUE" for each row it measured, or fails
# with the reason on stderr. A row that cannot be measured on this machine is skipped, loudly.

declare -A TITLE SHORT BASE SECT VALS SKIP FAILS
ROWS=() SECTIONS=() JOBS=()
declare -A SECT_TITLE SECT_UNIT
section() { SECTIONS+=("$1"); SECT_TITLE[$1]=$2; SECT_UNIT[$1]=$3; }
row() { ROWS+=("$1"); SECT[$1]=$2; BASE[$1]=$3; TITLE[$1]=$4; SHORT[$1]=${5:-$4}; } # [short name]
job() { JOBS+=("$(printf '%q ' "$@")"); }
skip_rows() { # reason rows...
	local reason=$1 r
	shift
	for r in "$@"; do SKIP[$r]=$reason; done
}

ns_per_call() {
	sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' | grep . ||
		{ echo "no ns_per_call= in its output" >&2; return 1; }
}
lim() { timeout -k 5 "$LIMIT" "$@"; }
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'; }
libdir() { [ "$1" = plain ] && echo "$OUT/sim/lib" || echo "$OUT/sim/lib-cet"; }
# every job's error output goes to $ERR, shown when the job fails
ERR=$WORK/err

j_untraced() { # runtime
	local v
	v=$(LD_LIBRARY_PATH=$(libdir "$1") lim "$APIB" -n "$N" 2>>"$ERR" | ns_per_call) &&
		echo "$1.untraced $v"
}
j_interpose() { # runtime: the interposer must have timestamped every call
	local v
	v=$(LD_PRELOAD=$INTERPOSE LD_LIBRARY_PATH=$(libdir "$1") lim "$APIB" -n "$N" 2>"$WORK/ip" |
		ns_per_call) || return 1
	grep -q "^interpose: $((N + 1)) calls timestamped" "$WORK/ip" ||
		{ echo "the interposer did not see every call: $(cat "$WORK/ip")" >&2; return 1; }
	echo "$1.interpose $v"
}
j_bare() { # runtime where(at-entry|after-endbr64) row calls: every call fired both probes
	local so v
	so=$(libdir "$1")/libtopsrt.so.1
	v=$(LD_LIBRARY_PATH=$(libdir "$1") lim "$BARE" -m "$BARE_KIND" "$so" topsPeekAtLastError "$2" \
		"$APIB" -n "$4" 2>"$WORK/bare" | ns_per_call) || { cat "$WORK/bare" >&2; return 1; }
	grep -q "fired $(($4 + 1))/$(($4 + 1))" "$WORK/bare" ||
		{ echo "the bare pair missed calls: $(cat "$WORK/bare")" >&2; return 1; }
	echo "$1.$3 $v"
}
# bpftrace keeps, as topsprof's statistics mode does, count, total, min and max of the call
# tracefs may have been mounted since the run began (bpftrace_unsafe, below): then no bpftrace
bpftrace_safe() {
	local why
	why=$(bpftrace_unsafe)
	[ -z "$why" ] || { echo "bpftrace not run: $why" >&2; return 1; }
}
j_bpftrace() { # runtime
	local so
	bpftrace_safe || return 1
	so=$(cd "$(libdir "$1")" && pwd)/libtopsrt.so.1
	LD_LIBRARY_PATH=$(libdir "$1") lim bpftrace -e "uprobe:$so:topsPeekAtLastError { @s[tid] = nsecs; }
		uretprobe:$so:topsPeekAtLastError /@s[tid]/ { \$d = nsecs - @s[tid]; @st = stats(\$d);
		@mn = min(\$d); @mx = max(\$d); delete(@s[tid]); }" \
		-c "$(cd "$(dirname "$APIB")" && pwd)/apibench -n $N" 2>>"$ERR" >"$WORK/bt" || return 1
	ns_per_call <"$WORK/bt" >"$WORK/v" || { cat "$WORK/bt" >&2; return 1; }
	grep -q "^@st: count $((N + 1))," "$WORK/bt" ||
		{ echo "bpftrace did not count every call: $(grep @st "$WORK/bt")" >&2; return 1; }
	echo "$1.bpftrace $(cat "$WORK/v")"
}
j_ltrace() { # runtime: ltrace -f, as apibench calls from a thread
	local v
	rm -f "$WORK/lt"
	v=$(LD_LIBRARY_PATH=$(libdir "$1") lim ltrace -f -o "$WORK/lt" -e topsPeekAtLastError "$APIB" \
		-n "$LTRACE_N" 2>>"$ERR" | ns_per_call) || return 1
	[ "$(grep -c 'topsPeekAtLastError(' "$WORK/lt")" = $((LTRACE_N + 1)) ] ||
		{ echo "ltrace did not see every call: $(tail -n 3 "$WORK/lt")" >&2; return 1; }
	echo "$1.ltrace $v"
}
j_topsprof() { # runtime mode(stats|trace)
	local v
	v=$(LD_LIBRARY_PATH=$(libdir "$1") lim "$TOPSPROF" --quiet --print-app-log --api-mode "$2" \
		"$APIB" -n "$N" 2>>"$ERR" | ns_per_call) && echo "$1.$2 $v"
}

# wait until topsprof (its --debug log) has released its application, or has attached. The
# caller empties the log before it starts topsprof in the background: the job's own truncation
# may come after the first look, which would find the last run's line (and the signal that ends
# the run would then come before topsprof handles it: exit 143)
wait_started() { # log pid
	local t0=$SECONDS
	until grep -q "debug: start-up:" "$1"; do
		kill -0 "$2" 2>/dev/null || { echo "topsprof ended before it started: $(tail -n 5 "$1")" >&2; return 1; }
		[ $((SECONDS - t0)) -lt "$LIMIT" ] || { echo "topsprof did not start in ${LIMIT}s" >&2; return 1; }
		sleep 0.05
	done
}
# single uprobes are released by a child that outlives topsprof: wait for the one topsprof's
# --debug log ($1) names, if any (so that the next job does not queue behind it in the kernel),
# and print the ms it took; nothing when there was none
wait_released() { # log
	local pid t0=$EPOCHREALTIME
	pid=$(sed -n 's/.*single uprobes are released by process \([0-9]*\), in the background.*/\1/p' "$1")
	[ -n "$pid" ] || return 0
	while kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
	ms_since "$t0"
}
j_bystander_alone() {
	local v
	v=$(lim "$APIB" -n "$N" 2>>"$ERR" | ns_per_call) && echo "bys.alone $v"
}
# the bystander runs while topsprof profiles an idle sleep it launched, then the sleep is ended
# and topsprof with it. row [VAR=value...]: topsprof's environment
j_bystander_launch() {
	local r=$1 tp sp v rc=0 st
	shift
	: >"$WORK/tp"
	env "$@" timeout -k 5 "$LIMIT" "$TOPSPROF" --quiet --debug --runtime-lib "$PLAIN_LIB" sleep 600 \
		>/dev/null 2>"$WORK/tp" &
	tp=$! # timeout's, topsprof's parent
	if wait_started "$WORK/tp" "$tp"; then
		v=$(lim "$APIB" -n "$N" 2>>"$ERR" | ns_per_call) || rc=1
	else
		rc=1
	fi
	# topsprof ends as its application does: killed by SIGTERM (its status 143). The sleep is
	# looked for until it is one: released at "start-up:", the child may not have run exec yet
	local t0=$SECONDS
	until sp=$(pgrep -P "$(pgrep -P "$tp" | head -n 1)" -x sleep); do
		[ $((SECONDS - t0)) -lt "$LIMIT" ] && kill -0 "$tp" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$sp" ] && kill "$sp"
	wait "$tp"
	st=$?
	[ $st = 143 ] || [ $st = 0 ] || { echo "topsprof (launch) exited $st" >&2; rc=1; }
	wait_released "$WORK/tp" >/dev/null
	[ $rc = 0 ] && echo "$r $v"
}
j_bystander_attach() {
	local tp sp v rc=0
	sleep 600 &
	sp=$!
	echo "$sp" >>"$SLEEPERS"
	# --foreground: the signal goes to topsprof alone, not (twice) to a process group that
	# timeout would share with it
	: >"$WORK/tp"
	timeout --foreground -k 5 "$LIMIT" "$TOPSPROF" --quiet --debug --runtime-lib "$PLAIN_LIB" \
		--attach-pid "$sp" >/dev/null 2>"$WORK/tp" &
	tp=$!
	if wait_started "$WORK/tp" "$tp"; then
		v=$(lim "$APIB" -n "$N" 2>>"$ERR" | ns_per_call) || rc=1
	else
		rc=1
	fi
	# SIGTERM, passed on by timeout, stops the profiling (a background job ignores SIGINT)
	kill -TERM "$tp" 2>/dev/null
	wait "$tp" || { echo "topsprof (--attach-pid) exited $?" >&2; rc=1; }
	kill "$sp"
	wait "$sp" 2>/dev/null
	[ $rc = 0 ] || return 1
	echo "bys.attach $v"
	# its detach, the attached process's links released with it (where scoped)
	v=$(sed -n 's/.*debug: detach: \([0-9.]*\) ms to release every probe.*/\1/p' "$WORK/tp")
	[ -n "$v" ] && echo "attach.detach $v"
}
j_stress() { # row [topsprof options...]: the wall ms of the stress app, alone or under topsprof
	local r=$1 t0
	shift
	t0=$EPOCHREALTIME
	if [ $# -eq 0 ]; then
		lim "$BIN/stress" -n "$STRESS_N" -t 2 >/dev/null 2>>"$ERR" || return 1
	else
		lim "$TOPSPROF" --quiet "$@" "$BIN/stress" -n "$STRESS_N" -t 2 >/dev/null 2>>"$ERR" || return 1
	fi
	echo "$r $(ms_since "$t0")"
}
# a launcher: sh starting SPAWN_N short apibench processes one after another, each a child the
# profiled tree must trace from its first call (held until its probes are in, where scoped)
j_spawn() { # row alone|topsprof [VAR=value...] (topsprof's environment)
	local r=$1 how=$2 t0 loop='i=0; while [ $i -lt "$1" ]; do "$2" -n 100 >/dev/null || exit 1; i=$((i + 1)); done'
	shift 2
	t0=$EPOCHREALTIME
	if [ "$how" = alone ]; then
		lim sh -c "$loop" sh "$SPAWN_N" "$APIB" 2>>"$ERR" || return 1
	else
		lim env "$@" "$TOPSPROF" --quiet --runtime-lib "$PLAIN_LIB" sh -c "$loop" sh "$SPAWN_N" \
			"$APIB" >/dev/null 2>>"$ERR" || return 1
	fi
	echo "$r $(ms_since "$t0")"
}
j_true() {
	local t0=$EPOCHREALTIME
	/bin/true && echo "start.true $(ms_since "$t0")"
}
# topsprof /bin/true: its wall time, and the start-up and detach --debug says
j_topsprof_true() { # prefix [env...]
	local p=$1 t0 v
	shift
	t0=$EPOCHREALTIME
	env "$@" timeout -k 5 "$LIMIT" "$TOPSPROF" --quiet --debug --runtime-lib "$PLAIN_LIB" /bin/true \
		>/dev/null 2>"$WORK/tp" || { tail -n 5 "$WORK/tp" >&2; return 1; }
	v=$(ms_since "$t0")
	echo "$p.wall $v"
	sed -n 's/.*debug: start-up: \([0-9.]*\) ms.*/\1/p' "$WORK/tp" | sed "s/^/$p.startup /" | grep . ||
		{ echo "no start-up line in topsprof --debug" >&2; return 1; }
	sed -n 's/.*debug: detach: \([0-9.]*\) ms.*/\1/p' "$WORK/tp" | sed "s/^/$p.detach /" | grep . ||
		{ echo "no detach line in topsprof --debug" >&2; return 1; }
	awk '/functions of .* probed/ { n += $3 } END { print n }' "$WORK/tp" >"$WORK/$p.functions"
	# how long the kernel takes to release single uprobes, after topsprof's exit
	v=$(wait_released "$WORK/tp")
	[ -z "$v" ] || echo "$p.release $v"
}
j_bpftrace_true() {
	local t0=$EPOCHREALTIME
	bpftrace_safe || return 1
	lim bpftrace -e "uprobe:$PLAIN_LIB:topsPeekAtLastError { @n = count(); }
		uretprobe:$PLAIN_LIB:topsPeekAtLastError { @r = count(); }" -c /bin/true \
		>/dev/null 2>>"$ERR" || return 1
	echo "start.bpftrace $(ms_since "$t0")"
}
# all cores calling, trace mode, the default --buffer-size: calls per second, and lost events
j_rate() {
	local threads line lost rate
	threads=$(nproc)
	line=$(lim "$TOPSPROF" --print-app-log --api-mode trace --print-api-summary "$APIB" -n "$N" \
		-t "$threads" 2>"$WORK/rate") || { tail -n 5 "$WORK/rate" >&2; return 1; }
	lost=$(sed -n 's/.*warning: \([0-9]*\) events lost.*/\1/p' "$WORK/rate")
	rate=$(sed -n 's/.*calls_per_s=\([0-9]*\).*/\1/p' <<<"$line")
	[ -n "$rate" ] || { echo "no calls_per_s= in: $line" >&2; return 1; }
	echo "rate.calls $rate"
	echo "rate.lost ${lost:-0}"
	awk -v want=$((N * threads + 1)) '$NF == "topsPeekAtLastError" { seen = $(NF-4) }
		END { if (seen != want) { print "the report has " seen " calls of " want > "/dev/stderr"; exit 1 } }' <<<"$line"
}
# the live run's memory for the calls it keeps (trace mode, with an export that needs every call):
# topsprof's peak RSS over 10N calls against over N, per call more
peak_kb() { # calls
	rm -f "$WORK/live.csv"
	LD_LIBRARY_PATH=$(libdir plain) lim "$BENCH_TIME" -f %M -o "$WORK/live.kb" "$TOPSPROF" \
		--quiet --api-mode trace --export-csv "$WORK/live.csv" "$APIB" -n "$1" >/dev/null \
		2>>"$ERR" || return 1
	tail -n 1 "$WORK/live.kb"
}
j_livemem() {
	local small big
	[ "$QUICK" = 1 ] || [ ! -x "$BENCH_TIME" ] && return 0
	small=$(peak_kb "$N") && big=$(peak_kb $((10 * N))) || return 1
	echo "live.bytes $(awk -v a="$small" -v b="$big" -v n=$((9 * N)) \
		'BEGIN { printf "%.1f", (b - a) * 1024 / n }')"
}
# CPU sampling at 100 Hz on a busy 2-thread app doing fixed work: the CPU time of the app and of
# topsprof, each by its own clock; with sampling, the sampling program's own cost from the
# kernel's BPF run-time statistics (enabled for this run only)
# (on: user stacks copied and unwound by their CFI, the default; fp: walked by frame pointers in
# the kernel)
j_cpu() { # off|on|fp
	local t0 out rc=0 opts=()
	[ "$1" = on ] && opts=(--cpu-profiling-callstack)
	[ "$1" = fp ] && opts=(--cpu-profiling-callstack --cpu-profiling-unwind fp)
	[ "$1" != off ] && [ "$BPF_STATS_WAS" != none ] && sysctl -qw kernel.bpf_stats_enabled=1
	t0=$EPOCHREALTIME
	out=$(lim "$TOPSPROF" --quiet --debug --print-app-log "${opts[@]}" "$BIN/cpu_hot" -n "$HOT_N" 2>&1) || rc=1
	[ "$1" != off ] && [ "$BPF_STATS_WAS" != none ] && sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_WAS"
	[ $rc = 0 ] || { tail -n 5 <<<"$out" >&2; return 1; }
	awk -v a="$t0" -v b="$EPOCHREALTIME" -v k="$1" '
		/cpu_ms=/ { s = $0; sub(/.*cpu_ms=/, "", s); sub(/[ ,].*/, "", s); app = s }
		/own CPU time:/ { s = $0; sub(/.*own CPU time: /, "", s); sub(/ ms.*/, "", s); own = s }
		/CPU sampling program: [0-9]+ runs/ { s = $0; sub(/.*program: /, "", s); split(s, f, " ")
			runs = f[1]; each = f[3] }
		END { if (app == "" || own == "") exit 1
			printf "cpu.%s.total %.1f\ncpu.%s.own %.1f\n", k, app + own, k, own
			if (runs != "") printf "cpu.prog%s %.3f\n", k == "fp" ? ".fp" : "",
				runs * each / ((b - a) * 1e9) * 100 }' <<<"$out" ||
		{ echo "no cpu_ms= or own CPU time in: $(tail -n 3 <<<"$out")" >&2; return 1; }
}
# utilization sampling costs topsprof's own time (it reads /proc): topsprof's CPU time watching
# an idle app, without and with it at 100 Hz
j_util() { # off|on
	local opts=() out
	[ "$1" = on ] && opts=(--cpu-utilization --memory-utilization)
	out=$(lim "$TOPSPROF" --quiet --debug --runtime-lib "$PLAIN_LIB" "${opts[@]}" sleep "$IDLE_S" 2>&1) ||
		{ tail -n 5 <<<"$out" >&2; return 1; }
	sed -n "s/.*own CPU time: \([0-9.]*\) ms.*/util.$1 \1/p" <<<"$out" | grep . ||
		{ echo "no own CPU time line" >&2; return 1; }
}
# kernel callstacks: dd's one-byte reads and writes (2 x DD_N system calls), alone, and under a
# topsprof whose tracepoints follow dd (--system-wide, filter all) or do not (attached to a
# sleeping process)
dd_ms() {
	local t0=$EPOCHREALTIME
	dd if=/dev/zero of=/dev/null bs=1 count="$DD_N" 2>/dev/null && ms_since "$t0"
}
j_dd() { # alone|followed|unfollowed
	local tp sp= v rc=0 opts=()
	if [ "$1" = alone ]; then
		v=$(dd_ms) && echo "dd.alone $v"
		return
	fi
	if [ "$1" = followed ]; then
		opts=(--system-wide --kernel-callstack-filter all)
	else
		sleep 600 &
		sp=$!
		echo "$sp" >>"$SLEEPERS"
		opts=(--attach-pid "$sp")
	fi
	: >"$WORK/tp"
	timeout --foreground -k 5 "$LIMIT" "$TOPSPROF" --quiet --debug --runtime-lib "$PLAIN_LIB" --kernel-callstack \
		"${opts[@]}" >/dev/null 2>"$WORK/tp" &
	tp=$!
	if wait_started "$WORK/tp" "$tp"; then
		v=$(dd_ms) || rc=1
	else
		rc=1
	fi
	kill -TERM "$tp" 2>/dev/null
	wait "$tp" || { echo "topsprof --kernel-callstack exited $?" >&2; rc=1; }
	[ -n "$sp" ] && kill "$sp" && wait "$sp" 2>/dev/null
	[ $rc = 0 ] && echo "dd.$1 $v"
}

section call "API call cost: ns per call of topsPeekAtLastError, $N calls a run (ltrace: $LTRACE_N)" "ns/call"
for rt in plain cet; do
	name=$([ $rt = plain ] && echo "plain" || echo "endbr64")
	row $rt.untraced call "" "$name: untraced" "untraced"
	row $rt.interpose call $rt.untraced "$name: LD_PRELOAD interposer, 2 timestamps a call"
	row $rt.bare call $rt.untraced "$name: bare uprobe+uretprobe pair ($BARE_KIND)" "bare pair"
	row $rt.bpftrace call $rt.bare "$name: bpftrace (count, sum, min, max)"
	row $rt.ltrace call $rt.bare "$name: ltrace"
	row $rt.stats call $rt.bare "$name: topsprof statistics mode" "topsprof stats"
	row $rt.trace call $rt.bare "$name: topsprof trace mode"
	job j_untraced $rt
	job j_interpose $rt
	job j_bare $rt after-endbr64 bare "$N"
	job j_bpftrace $rt
	job j_ltrace $rt
	job j_topsprof $rt stats
	job j_topsprof $rt trace
done
row cet.first call cet.stats "endbr64: bare pair at the first byte (single-stepped, $FIRST_N calls)"
job j_bare cet at-entry first "$FIRST_N"

section bys "Bystanders: ns per call of an untraced apibench on the same libtopsrt.so" "ns/call"
row bys.alone bys "" "no topsprof running" "alone"
row bys.launch bys bys.alone "topsprof profiling an idle sleep it launched"
row bys.attach bys bys.alone "topsprof --attach-pid an idle sleep"
row bys.single bys bys.alone "single uprobes with the pid of an idle sleep topsprof launched (TOPSPROF_NO_UPROBE_MULTI=1: as before Linux 6.6)"
row bys.file bys bys.alone "topsprof profiling an idle sleep, probes on the file (TOPSPROF_NO_SCOPE=1: as --system-wide, or before Linux 6.6 once the tree has two processes)" "probes on the file"
job j_bystander_alone
job j_bystander_launch bys.launch
job j_bystander_attach
job j_bystander_launch bys.single TOPSPROF_NO_UPROBE_MULTI=1
job j_bystander_launch bys.file TOPSPROF_NO_SCOPE=1

section spawn "A launcher: sh starting $SPAWN_N apibench -n 100 one after another, wall ms" "ms"
row spawn.alone spawn "" "sh and its apibench children alone" "alone"
row spawn.scoped spawn spawn.alone "under topsprof, scoped probes (each child's own made at its fork)" "scoped"
row spawn.file spawn spawn.alone "under topsprof, probes on the file (TOPSPROF_NO_SCOPE=1)" "file-wide"
job j_spawn spawn.alone alone
job j_spawn spawn.scoped topsprof
job j_spawn spawn.file topsprof TOPSPROF_NO_SCOPE=1

section stress "The stress app end to end: stress -n $STRESS_N -t 2, wall ms" "ms"
row stress.alone stress "" "alone"
row stress.stats stress stress.alone "under topsprof (statistics mode)"
row stress.trace stress stress.alone "under topsprof --api-mode trace"
job j_stress stress.alone
job j_stress stress.stats --api-mode stats
job j_stress stress.trace --api-mode trace

section start "Start-up and detach, ms" "ms"
row start.true start "" "/bin/true alone, wall" "/bin/true"
row multi.wall start start.true "topsprof /bin/true, wall"
row multi.startup start "" "topsprof start-up to the app's release (--debug)"
row multi.detach start "" "topsprof detach (--debug)"
row attach.detach start "" "topsprof --attach-pid detach, the process still running (--debug)"
row start.bpftrace start start.true "bpftrace (a uprobe pair) -c /bin/true, wall"
row single.wall start start.true "single uprobes (TOPSPROF_NO_UPROBE_MULTI=1): topsprof /bin/true, wall"
row single.startup start "" "single uprobes: start-up"
row single.detach start "" "single uprobes: detach"
row single.release start "" "single uprobes: their release in the background after topsprof's exit"
job j_true
job j_topsprof_true multi
job j_bpftrace_true
job j_topsprof_true single TOPSPROF_NO_UPROBE_MULTI=1

section rate "All $(nproc) cores calling, trace mode, default --buffer-size" ""
row rate.calls rate "" "calls per second traced"
row rate.lost rate "" "events lost"
row live.bytes rate "" "bytes a call the live run holds, every call kept ($((10 * N)) calls against $N: peak RSS)"
job j_rate
job j_livemem

section cost "CPU sampling, utilization sampling, kernel callstacks" ""
row cpu.off.total cost "" "cpu_hot -n $HOT_N under topsprof: CPU ms, app and topsprof" "without"
row cpu.on.total cost cpu.off.total "the same with --cpu-profiling-callstack (100 Hz)"
row cpu.fp.total cost cpu.off.total "the same with --cpu-profiling-unwind fp (frame pointers)"
row cpu.off.own cost "" "topsprof's own CPU ms, without sampling" "without"
row cpu.on.own cost cpu.off.own "topsprof's own CPU ms, with sampling"
row cpu.prog cost "" "the sampling program's own runs, % of one core (kernel BPF stats)"
row cpu.prog.fp cost "" "the same, --cpu-profiling-unwind fp"
row util.off cost "" "topsprof's CPU ms watching sleep $IDLE_S" "without"
row util.on cost util.off "the same with --cpu-utilization --memory-utilization (100 Hz)"
row dd.alone cost "" "dd, $((2 * DD_N)) one-byte system calls, wall ms, alone" "alone"
row dd.followed cost dd.alone "dd followed by --kernel-callstack (--system-wide, filter all)"
row dd.unfollowed cost dd.alone "dd not followed (topsprof --kernel-callstack --attach-pid another)"
job j_cpu off
job j_cpu on
job j_cpu fp
job j_util off
job j_util on
job j_dd alone
job j_dd followed
job j_dd unfollowed

# -- what this machine cannot measure, said before anything runs -----------------------------------
# bpftrace (libbcc) attaches through the kernel's uprobe PMU, and falls back to writing tracefs
# uprobe_events when that fails; on detach it reads uprobe_events. Tracefs uprobe events once left
# this kernel's event_mutex held (every later uprobe hung): bpftrace runs only where the PMU is
# there and tracefs is not mounted, so that it never gets to them.
bpftrace_unsafe() {
	[ -e /sys/bus/event_source/devices/uprobe/type ] || { echo "the kernel has no uprobe PMU"; return; }
	grep -qE '^[^ ]+ [^ ]+ (tracefs|debugfs) ' /proc/mounts &&
		echo "tracefs or debugfs is mounted, and bpftrace's libbcc would use uprobe_events there"
}
if ! command -v bpftrace >/dev/null; then
	skip_rows "bpftrace: not installed, row skipped (scripts/install-deps.sh installs it)" \
		plain.bpftrace cet.bpftrace start.bpftrace
elif why=$(bpftrace_unsafe) && [ -n "$why" ]; then
	skip_rows "bpftrace: $why: row skipped" plain.bpftrace cet.bpftrace start.bpftrace
fi
[ -x "$BENCH_TIME" ] ||
	skip_rows "GNU time ($BENCH_TIME): not installed, row skipped (scripts/install-deps.sh installs it)" live.bytes
command -v ltrace >/dev/null ||
	skip_rows "ltrace: not installed, row skipped (scripts/install-deps.sh installs it)" plain.ltrace cet.ltrace
if [ "$QUICK" = 1 ]; then
	skip_rows "not measured in a quick run (single uprobes: about 10 s a round)" \
		single.wall single.startup single.detach single.release bys.single
	skip_rows "not measured in a quick run (--kernel-callstack: 2-4 s a run)" dd.followed dd.unfollowed
	skip_rows "not measured in a quick run (at its tiny counts the peak RSS moves more than the calls' memory)" \
		live.bytes
fi
# scripts/bench/kcalls.sh measures kernel callstacks' cost where it exists: dd here otherwise
[ -e "$HERE/kcalls.sh" ] && skip_rows "measured by scripts/bench/kcalls.sh, below" \
	dd.alone dd.followed dd.unfollowed
[ "$BPF_STATS_WAS" = none ] && skip_rows "this kernel has no kernel.bpf_stats_enabled" cpu.prog cpu.prog.fp
for r in "${ROWS[@]}"; do
	[ -n "${SKIP[$r]:-}" ] && echo "${SKIP[$r]}"
done | awk '!seen[$0]++'
# a job whose rows are all skipped is not run
job_rows_skipped() { # job
	case $1 in
	*j_bpftrace*) [ -n "${SKIP[plain.bpftrace]:-}" ] ;;
	*j_ltrace*) [ -n "${SKIP[plain.ltrace]:-}" ] ;;
	*j_topsprof_true\ single*) [ -n "${SKIP[single.wall]:-}" ] ;;
	*j_bystander_launch\ bys.single*) [ -n "${SKIP[bys.single]:-}" ] ;;
	*j_dd\ *followed*) [ -n "${SKIP[dd.followed]:-}" ] ;;
	*j_dd\ alone*) [ -n "${SKIP[dd.alone]:-}" ] ;;
	*) return 1 ;;
	esac
}

# -- the rounds ------------------------------------------------------------------------------------
start_s=$SECONDS
for ((round = 1; round <= ROUNDS; round++)); do
	t0=$SECONDS
	njobs=${#JOBS[@]}
	for ((k = 0; k < njobs; k++)); do
		# each round starts further along the list: no job always follows the same one
		j=${JOBS[$(((k + (round - 1) * 7) % njobs))]}
		job_rows_skipped "$j" && continue
		: >"$ERR"
		jt=$EPOCHREALTIME
		if out=$(eval "$j" 2>>"$ERR"); then
			while read -r r v; do
				[ -n "$r" ] && VALS[$r]+="$v "
			done <<<"$out"
		else
			FAILS[$j]=$((${FAILS[$j]:-0} + 1))
			echo "bench: round $round: $j failed: $(tail -n 5 "$ERR" | tr '\n' ' ')" >&2
		fi
		[ -z "${BENCH_VERBOSE:-}" ] || echo "bench: $j: $(ms_since "$jt") ms" >&2
	done
	echo "bench: round $round of $ROUNDS done in $((SECONDS - t0)) s" >&2
done

# -- the tables ------------------------------------------------------------------------------------
stat_of() { median_min_max <<<"${VALS[$1]:-}"; } # row: "median min max" of its values, or nothing
fmt() { # a figure with 3 digits or more: 14388, 302, 55.2, 5.70, 0.076
	awk -v v="$1" 'BEGIN { if (v == int(v) || v >= 100) printf "%.0f", v
		else if (v >= 10) printf "%.1f", v; else if (v >= 1) printf "%.2f", v; else printf "%.3f", v }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) { print "-"; exit } r = a / b
	if (r >= 100) printf "%.0fx", r; else if (r >= 10) printf "%.1fx", r; else printf "%.2fx", r }'; }
median() { stat_of "$1" | cut -d' ' -f1; }
declare -A MED
for r in "${ROWS[@]}"; do MED[$r]=$(median "$r"); done
echo
for s in "${SECTIONS[@]}"; do
	echo "### ${SECT_TITLE[$s]}"
	echo
	echo "| measure | median${SECT_UNIT[$s]:+ (${SECT_UNIT[$s]})} | min - max | ratio |"
	echo "|---|---|---|---|"
	for r in "${ROWS[@]}"; do
		[ "${SECT[$r]}" = "$s" ] || continue
		title=${TITLE[$r]}
		[ -s "$WORK/${r%%.*}.functions" ] && [[ $r == *.detach ]] &&
			title+=" ($(cat "$WORK/${r%%.*}.functions") functions)"
		if [ -n "${SKIP[$r]:-}" ]; then
			echo "| $title | skipped: ${SKIP[$r]} | | |"
			continue
		fi
		read -r med lo hi < <(stat_of "$r")
		if [ -z "${med:-}" ]; then
			echo "| $title | failed in every round (see above) | | |"
			continue
		fi
		rat=""
		b=${BASE[$r]}
		[ -n "$b" ] && [ -n "${MED[$b]:-}" ] && rat="$(ratio "$med" "${MED[$b]}") ${SHORT[$b]}"
		echo "| $title | $(fmt "$med") | $(fmt "$lo") - $(fmt "$hi") | $rat |"
	done
	echo
done

# the comparisons the targets are about, from the medians
cmp() { # text a b: "text: a/b"
	[ -n "${MED[$2]:-}" ] && [ -n "${MED[$3]:-}" ] && echo "- $1: $(ratio "${MED[$2]}" "${MED[$3]}")"
}
per_call() { awk -v a="$1" -v b="$2" -v n="$DD_N" 'BEGIN { printf "%.0f", (a - b) * 1e6 / (2 * n) }'; }
echo "Comparisons (of the medians):"
for rt in plain cet; do
	name=$([ $rt = plain ] && echo "plain" || echo "endbr64")
	cmp "$name: topsprof statistics mode / bpftrace" $rt.stats $rt.bpftrace
	cmp "$name: topsprof trace mode / bpftrace" $rt.trace $rt.bpftrace
	cmp "$name: ltrace / topsprof statistics mode" $rt.ltrace $rt.stats
	cmp "$name: topsprof statistics mode / the LD_PRELOAD interposer" $rt.stats $rt.interpose
done
cmp "endbr64: the bare pair at the first byte / topsprof statistics mode after endbr64" cet.first cet.stats
cmp "a bystander's call while topsprof profiles another process (launch) / alone" bys.launch bys.alone
cmp "a bystander's call while topsprof profiles another process (--attach-pid) / alone" bys.attach bys.alone
cmp "a bystander's call while topsprof profiles another process (launch, single uprobes) / alone" bys.single bys.alone
if [ -n "${MED[spawn.scoped]:-}" ] && [ -n "${MED[spawn.file]:-}" ]; then
	echo "- scoped probes: a new process of the profiled tree (its links, its hold where needed):" \
		"$(awk -v a="${MED[spawn.scoped]}" -v b="${MED[spawn.file]}" -v n="$SPAWN_N" \
			'BEGIN { printf "%+.2f", (a - b) / n }') ms against the probes on the file"
fi
if [ -n "${MED[dd.followed]:-}" ] && [ -n "${MED[dd.alone]:-}" ]; then
	echo "- kernel callstacks: a followed system call costs $(per_call "${MED[dd.followed]}" "${MED[dd.alone]}") ns"
fi
if [ -n "${MED[dd.unfollowed]:-}" ] && [ -n "${MED[dd.alone]:-}" ]; then
	echo "- kernel callstacks: a system call of a process topsprof does not follow costs" \
		"$(per_call "${MED[dd.unfollowed]}" "${MED[dd.alone]}") ns"
fi
if [ -n "${MED[cpu.on.total]:-}" ] && [ -n "${MED[cpu.off.total]:-}" ]; then
	echo "- CPU sampling at 100 Hz: $(awk -v a="${MED[cpu.on.total]}" -v b="${MED[cpu.off.total]}" \
		'BEGIN { printf "%+.1f", (a - b) * 100 / b }')% CPU time on cpu_hot (app and topsprof)"
fi

# -- the helpers' series ---------------------------------------------------------------------------
hook() { # name what
	local s=$HERE/$1.sh
	echo
	if [ ! -e "$s" ]; then
		echo "$2: scripts/bench/$1.sh is absent: not measured"
	elif [ "$QUICK" = 1 ]; then
		echo "$2: not measured in a quick run (scripts/bench/$1.sh)"
	else
		# its own rounds; half an hour at most, so that a hang cannot hold make bench for good
		BENCH_ROUNDS=$ROUNDS timeout -k 10 1800 bash "$s" "$OUT" ||
			echo "$2: scripts/bench/$1.sh failed (exit $?)"
	fi
}
hook kcalls "Kernel callstacks, system calls followed and not"
hook scale "The 10M-event post-processing series"

failed=0
for j in "${!FAILS[@]}"; do failed=$((failed + FAILS[$j])); done
echo
echo "bench: $failed failed runs; $((SECONDS - start_s)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
