#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# make test: runs every stage (make TARGET for each argument), each to the end even when an
# earlier one failed, keeps each stage's log in LOG_DIR, and ends with one summary of all stages
# and a non-zero exit when any failed.
set -u
logs=${LOG_DIR:?LOG_DIR: where to keep the logs}
mkdir -p "$logs"
make=${MAKE:-make}
results=() failed=0
for stage in "$@"; do
	log=$logs/$stage.log
	echo "==== stage $stage"
	start=$EPOCHREALTIME
	$make --no-print-directory "$stage" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	if [ "$rc" -eq 0 ]; then
		results+=("  ok    $stage (${secs}s)")
	else
		failed=$((failed + 1))
		results+=("  FAIL  $stage (exit $rc, ${secs}s): $log")
		# the failing tests' own logs, where the stage kept them
		for f in "$logs/$stage"/*.log; do
			[ -e "$f" ] && results+=("          $f")
		done
	fi
done
echo "==== summary"
printf '%s\n' "${results[@]}"
echo "stages: $(($# - failed)) passed, $failed failed"
[ $failed -eq 0 ]
