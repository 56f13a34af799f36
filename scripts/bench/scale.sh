#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The 10M-event post-processing series (issue 14): a synthetic raw data file of N API calls
# (build/bench/genevents, through the product's own writer) and the profile made from it (and one
# with a GCU kernel record for each launch, whose GCU trace the CSV row writes), then
# each import and export timed with its maximum resident set (GNU time's %M), ROUNDS rounds
# interleaved; prints a Markdown table of the median (min-max) seconds and MB, and bytes per
# event of the median RSS. BENCH_SCALE_EVENTS sets N (default 10000000), BENCH_SCALE_ROUNDS the
# rounds (default BENCH_ROUNDS, else 5); BENCH_SCALE_100M=1 adds the summary from raw data at
# 100M events (one round: a profile of 100M would need every call in memory).
# Needs no BPF and no root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${1:-build}
TOPSPROF=$OUT/topsprof
GEN=$OUT/bench/genevents
FLOOR=$OUT/bench/sqlfloor
N=${BENCH_SCALE_EVENTS:-10000000}
ROUNDS=${BENCH_SCALE_ROUNDS:-${BENCH_ROUNDS:-5}} # make bench's run.sh gives BENCH_ROUNDS
TIME=$BENCH_TIME

[ -x "$GEN" ] && [ -x "$FLOOR" ] && [ -x "$TOPSPROF" ] || {
	echo "scale: build $GEN, $FLOOR and $TOPSPROF first (make bench)" >&2
	exit 1
}
[ -x "$TIME" ] || {
	echo "scale: SKIP: $TIME (GNU time) is missing" >&2
	exit 0
}
dir=$(mktemp -d /tmp/topsprof-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT

gen() { # N: raw data and profile of N events in $dir; and a profile with a GCU kernel record per
	# launch (3 in 8 calls), for the GCU trace
	"$GEN" "$1" "$dir/ev$1.raw"
	"$TOPSPROF" --quiet --import-rawdata "$dir/ev$1.raw" --export-profile "$dir/ev$1.prof" >/dev/null
	"$GEN" "$1" "$dir/k$1.raw" kernels
	"$TOPSPROF" --quiet --import-rawdata "$dir/k$1.raw" --export-profile "$dir/k$1.prof" >/dev/null
	rm -f "$dir/k$1.raw"
}

# one run: NAME N command...; appends "seconds kb" to $dir/NAME
run() {
	local name=$1 n=$2
	shift 2
	rm -rf "$dir/out"
	mkdir -p "$dir/out"
	if ! "$TIME" -f "%e %M" -o "$dir/t" "$@" >/dev/null 2>"$dir/err"; then
		echo "scale: $name failed:" >&2
		cat "$dir/err" >&2
		exit 1
	fi
	tail -1 "$dir/t" >>"$dir/$name"
	rm -rf "$dir/out"
}

# median (min-max) of column COL of file F, divided by DIV, with FMT
stat() {
	awk -v c="$2" -v d="$3" '{ print $c / d }' "$1" | median_min_max |
		awk -v f="$4" '{ printf f " (" f "-" f ")", $1, $2, $3 }'
}

series() { # N: the rows for N events
	local n=$1 raw=$dir/ev$1.raw prof=$dir/ev$1.prof
	for _ in $(seq "$ROUNDS"); do
		run "sum_prof_$n" "$n" "$TOPSPROF" --quiet --import-profile "$prof" --print-api-summary
		run "sum_raw_$n" "$n" "$TOPSPROF" --quiet --import-rawdata "$raw" --print-api-summary
		[ "$n" -gt 10000000 ] && continue
		run "vpd_$n" "$n" "$TOPSPROF" --quiet --import-rawdata "$raw" \
			--export-visual-profiler "$dir/out"
		run "floor_$n" "$n" "$FLOOR" "$n" "$dir/out/floor.db"
		run "csv_$n" "$n" "$TOPSPROF" --quiet --import-profile "$dir/k$n.prof" \
			--print-gcu-trace --export-csv "$dir/out/t.csv"
		run "chrome_$n" "$n" "$TOPSPROF" --quiet --import-profile "$prof" \
			--export-chrome-trace "$dir/out/t.json"
	done
}

row() { # NAME N what [EVENTS]: the row of N calls, EVENTS events in all (default N)
	local f=$dir/$1_$2 ev=${4:-$2}
	[ -s "$f" ] || return 0
	local kb
	kb=$(sort -g -k2,2 "$f" | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] }')
	echo "| $3 | $(printf "%'d" "$ev") | $(stat "$f" 1 1 "%.2f") s | $(stat "$f" 2 1024 "%.0f") MB |" \
		"$(awk -v k="$kb" -v n="$ev" 'BEGIN { printf "%.1f", k * 1024 / n }') |"
}

gen "$N"
series "$N"
if [ "${BENCH_SCALE_100M:-}" = 1 ]; then
	# raw data only: a profile of 100M (every call kept, about 49 bytes each: 4.9 GB) would
	# take minutes to make and read
	"$GEN" 100000000 "$dir/ev100000000.raw"
	run sum_raw_100000000 100000000 "$TOPSPROF" --quiet --import-rawdata \
		"$dir/ev100000000.raw" --print-api-summary
fi

echo "Kernel $(uname -r); hypervisor: $(bench_hypervisor); $(nproc) CPUs; median (min-max) of" \
	"$ROUNDS rounds"
echo
echo "| post-processing | events | time | max RSS | bytes/event |"
echo "|---|---|---|---|---|"
for n in "$N" 100000000; do
	row sum_prof "$n" "summary from a profile (--import-profile)"
	row sum_raw "$n" "summary from raw data (--import-rawdata)"
	row vpd "$n" "raw data to vpd (--export-visual-profiler)"
	row floor "$n" "SQLite alone: the vpd's api_call rows of these calls (bench/sqlfloor)"
	row csv "$n" "profile of the calls and a GCU kernel record per launch ($(printf "%'d" $((n * 3 / 8)))) to CSV GCU trace (--print-gcu-trace --export-csv)" $((n + n * 3 / 8))
	row chrome "$n" "profile to Chrome trace (--export-chrome-trace)"
done
if [ -s "$dir/vpd_$N" ] && [ -s "$dir/floor_$N" ]; then
	v=$(awk '{ print $1 }' "$dir/vpd_$N" | median_min_max | awk '{ print $1 }')
	f=$(awk '{ print $1 }' "$dir/floor_$N" | median_min_max | awk '{ print $1 }')
	echo
	echo "raw data to vpd / SQLite alone inserting its api_call rows: $v s / $f s" \
		"= $(awk -v v="$v" -v f="$f" 'BEGIN { printf "%.2f", v / f }')x"
fi
