#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The API tracing benchmark (make bench): ns per call of one cheap runtime call (apibench),
# untraced, under the bare counting uprobe+uretprobe pair (the kernel's floor), and under
# topsprof in statistics and trace mode; on the plain runtime and the -fcf-protection one
# (functions begin with endbr64), where probing the first byte costs a single-step. All in one
# run, as ratios against the bare pair; the median of 5 runs for each. Then the highest call rate
# traced with no lost event at the default buffer size. Prints a Markdown table.
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
