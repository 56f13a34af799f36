#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# End-to-end suite: runs every tests/e2e/test_*.sh (or those named) against the built topsprof.
# A test passes with exit 0, skips with exit 77 (it must say why), fails otherwise.
# Ends with the line 'N passed, N failed, N skipped'. With LOG_DIR set, a failing test's log is
# kept there as NAME.log. A test that runs past E2E_TIMEOUT seconds (600) is stopped and fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TOPSPROF=${TOPSPROF:-$here/../../build/topsprof}
export OUTPUT=${OUTPUT:-$here/../../build}
export E2E_DIR=$here

pass=0 fail=0 skip=0 failed=()
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=("$here"/test_*.sh)
for t in "${tests[@]}"; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	log=$(mktemp)
	start=$EPOCHREALTIME
	timeout -k 10 "${E2E_TIMEOUT:-600}" bash "$t" >"$log" 2>&1
	rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && echo "timed out after ${E2E_TIMEOUT:-600} s" >>"$log"
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	*)
		fail=$((fail + 1))
		failed+=("$name")
		echo "FAIL $name (exit $rc, ${secs}s)"
		sed 's/^/    | /' "$log"
		[ -n "${LOG_DIR:-}" ] && mkdir -p "$LOG_DIR" && cp "$log" "$LOG_DIR/$name.log" &&
			echo "    (log kept: $LOG_DIR/$name.log)"
		;;
	esac
	rm -f "$log"
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
