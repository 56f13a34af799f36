#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A second runtime is one file: a topsprof linked with tests/runtime/testrt.c beside TopsRT finds
# libtestrt.so in a program that uses it, probes it, and counts its calls exactly, in both
# collection modes, in the report, the CSV and the Chrome trace; TopsRT programs are profiled as
# before; the product, which has TopsRT alone, does not know libtestrt.so.
. "$E2E_DIR/lib.sh"
T=$OUTPUT/tests/testrt
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
[ -x "$T/topsprof" ] && [ -x "$T/testrt_app" ] || die "missing $T/{topsprof,testrt_app}: make e2e builds them"

# calls NAME: the Calls column of NAME in the last report
calls() {
	awk -v n="$1" '$NF == n && $(NF-4) ~ /^[0-9]+$/ { print $(NF-4) }' <<<"$out"
}
expect_calls() { # name count
	checks=$((checks + 1))
	[ "$(calls "$1")" = "$2" ] || die "$1: '$(calls "$1")' calls, wanted $2"$'\n'"$out"$'\n'"$err"
}

for mode in stats trace; do
	run "$T/topsprof" --print-app-log --api-mode $mode "$T/testrt_app" 1234 17
	expect_rc 0
	expect_out "testrt_app: 1234 launches, 17 syncs"
	expect_out "RUNTIME activities:"
	expect_calls testrtLaunch 1234
	expect_calls testrtSync 17
	expect_out "Total Calls 1251"
done

# what it found, and every file format names its calls
run "$T/topsprof" --debug --export-csv "$TMP/s.csv" --export-chrome-trace "$TMP/t.json" \
	"$T/testrt_app" 50 3
expect_rc 0
expect_err "runtime $T/libtestrt.so.1"
expect_err "functions of $T/libtestrt.so.1 probed"
grep -q 'testrtLaunch' "$TMP/s.csv" || die "the CSV lacks testrtLaunch: $(cat "$TMP/s.csv")"
n=$(grep -o '"name": *"testrtLaunch"' "$TMP/t.json" | wc -l)
[ "$n" = 50 ] || die "the Chrome trace has $n testrtLaunch slices, wanted 50"
checks=$((checks + 2))

# TopsRT beside it: the manual's example counts as with the product
run "$T/topsprof" "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_calls topsStreamSynchronize 5
expect_calls topsLaunchKernel 3
[ -z "$(calls testrtLaunch)" ] || die "testrtLaunch in a TopsRT program: $out"

# neither runtime: both are named
run "$T/topsprof" /bin/true
expect_rc 1
expect_err "cannot find a runtime (libtopsrt.so, libtestrt.so) that '/bin/true' uses"

# the product has TopsRT alone
run "$TOPSPROF" "$T/testrt_app" 5 1
expect_rc 1
expect_err "cannot find the GCU runtime (libtopsrt.so)"
done_ok
