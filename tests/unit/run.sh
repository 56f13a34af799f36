#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Unit suite: runs every cmocka binary given, each to the end even when one fails. A test fails
# when it exits non-zero, and also when it passes but lets libbpf speak to the user: libbpf's
# messages (and its hints, such as "try raising 'ulimit -l'") belong under --debug only.
# A binary that runs past UNIT_TIMEOUT seconds (300) is stopped and fails. LOG_DIR keeps the
# output of each failing binary, named. Ends with 'unit: N passed, N failed'.
set -u
logs=${LOG_DIR:-}
[ -n "$logs" ] && mkdir -p "$logs"
pass=0 fail=0
for t in "$@"; do
	name=$(basename "$t")
	log=$(mktemp)
	echo "== $t"
	timeout -k 10 "${UNIT_TIMEOUT:-300}" "$t" >"$log" 2>&1
	rc=$?
	[ $rc = 124 ] || [ $rc = 137 ] && echo "timed out after ${UNIT_TIMEOUT:-300} s" >>"$log"
	cat "$log"
	why=
	[ $rc -ne 0 ] && why="exit $rc"
	[ -z "$why" ] && grep -q '^libbpf: ' "$log" && why="libbpf messages printed by a passing test"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		kept=
		[ -n "$logs" ] && cp "$log" "$logs/$name.log" && kept=" (log: $logs/$name.log)"
		echo "FAIL $name: $why$kept"
	fi
	rm -f "$log"
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
