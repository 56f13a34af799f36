#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# API tracing as a user sees it: exact call counts of known workloads in both collection modes,
# children, exec, threads, late dlopen, the runtime linked in, Python ctypes, topstx ranges with
# domains and truncation, the app's output and exit status, lost events under a tiny buffer.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
LIB=$OUTPUT/sim/lib
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

# calls NAME: the Calls column of NAME in the last report
calls() {
	awk -v n="$1" '$NF == n && $(NF-4) ~ /^[0-9]+$/ { print $(NF-4) }' <<<"$out"
}
total_calls() {
	sed -n 's/.*RUNTIME_TOTAL//; /Accumulate Time/ { s/.*Total Calls \([0-9]*\).*/\1/p; q }' <<<"$(sed -n '/RUNTIME activities/,$p' <<<"$out")"
}
expect_calls() { # name count
	checks=$((checks + 1))
	[ "$(calls "$1")" = "$2" ] || die "$1: $(calls "$1") calls, wanted $2"$'\n'"$out"
}
expect_total() {
	checks=$((checks + 1))
	[ "$(total_calls)" = "$1" ] || die "total calls $(total_calls), wanted $1"$'\n'"$out"
}

# --- the manual's example, both collection modes give the same counts --------------------------
for mode in stats trace; do
	run "$TOPSPROF" --api-mode $mode "$BIN/simpleElemwiseAdd"
	expect_rc 0
	expect_out "TOPSPROF is profiling process"
	expect_out "command: $BIN/simpleElemwiseAdd"
	expect_out "process profile data[==========================================] 100%"
	expect_out "RUNTIME activities:"
	expect_out "GCU activities:"
	expect_calls topsStreamSynchronize 5
	expect_calls topsMemcpyAsync 4
	expect_calls topsLaunchKernel 3
	expect_calls topsMalloc 4
	expect_calls topsFree 4
	expect_calls __topsRegisterKernel 3
	expect_calls topsStreamCreate 1
	expect_calls topsStreamDestroy 1
	expect_calls topsSetDevice 1
	# topsStreamCreate calls topsStreamCreateWithFlags inside the runtime: not the app's call
	[ -z "$(calls topsStreamCreateWithFlags)" ] || die "a call from inside the runtime was counted"
	expect_total 26
	# every line of the report carries the profiled process's id
	pid=$(sed -n 's/^==\([0-9]*\)== TOPSPROF is profiling.*/\1/p' <<<"$out")
	bad=$(grep -v -e "^==$pid==" -e '^process profile data' -e '^$' <<<"$out" || true)
	[ -z "$bad" ] || die "lines without ==$pid==: $bad"
	# the app's output is not shown without --print-app-log
	grep -q "simpleElemwiseAdd: PASSED" <<<"$out$err" && die "the app's output leaked"
	# the sync waits for the 56.61 ms kernel, less what the app took to reach it after the
	# launch (milliseconds where every probe is emulated): the longest call proves timing is real
	max=$(awk '$NF == "topsStreamSynchronize" { print $(NF-1) }' <<<"$out")
	[[ "$max" == [3-9]?.*ms || "$max" == [1-9]??.*ms ]] || die "topsStreamSynchronize max $max"
done

# the report layout: column header, sections, totals lines
run "$TOPSPROF" "$BIN/simpleElemwiseAdd"
grep -qE '^==[0-9]+==      Time\(%\)     Time  Calls      Avg      Min      Max  Name$' <<<"$out" ||
	die "column header: $out"
grep -qE '^==[0-9]+==     Accumulate Time [0-9.]+(ns|us|ms|s), Total Calls 26$' <<<"$out" ||
	die "totals line: $out"
grep -qE '^==[0-9]+==     does not contain cpu kernel data\.$' <<<"$out" || die "CPU section"
grep -qE '^==[0-9]+==      *[0-9]+\.[0-9]{2}% +[0-9]+\.[0-9]{2}(ns|us|ms|s) +3 ' <<<"$out" ||
	die "row format: $out"

# --- the app's output and exit status ---------------------------------------------------------
run "$TOPSPROF" --print-app-log "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_out "simpleElemwiseAdd: PASSED"
run "$TOPSPROF" "$BIN/stress" -x
expect_rc 2 "the app's exit status"
run "$TOPSPROF" --print-app-log "$BIN/stress" -x
expect_rc 2
expect_err "usage:"
run "$TOPSPROF" --quiet "$BIN/simpleElemwiseAdd"
expect_rc 0
[ -z "$out" ] || die "--quiet printed: $out"

# a signal sent to topsprof reaches the app; the report still comes, then topsprof dies the same
"$TOPSPROF" "$BIN/stress" -n 100000 >"$TMP/sig.out" 2>"$TMP/sig.err" &
tp=$!
# once the application runs (its start-up takes seconds on a kernel without uprobe_multi)
for _ in $(seq 600); do pgrep -P $tp -x stress >/dev/null && break; sleep 0.1; done
pgrep -P $tp -x stress >/dev/null || die "the application did not start in 60 s: $(cat "$TMP/sig.err")"
sleep 0.5
kill -TERM $tp
wait $tp
rc=$?
[ $rc = 143 ] || die "killed app: topsprof exit $rc, wanted 143: $(cat "$TMP/sig.err")"
grep -q "RUNTIME activities:" "$TMP/sig.out" || die "no report after SIGTERM: $(cat "$TMP/sig.out")"
grep -q "killed by signal 15" "$TMP/sig.err" || die "cause not shown: $(cat "$TMP/sig.err")"

# statistics from every CPU: no minimum of 0 (a CPU's slot of a per-CPU entry starts zeroed)
run "$TOPSPROF" --api-mode stats "$BIN/stress" -n 40 -t 1 -s 1 -c
expect_rc 0
expect_calls topsLaunchKernel 40
grep -E ' (topsLaunchKernel|topsStreamSynchronize|topsMemcpyAsync)$' <<<"$out" | grep -q ' 0\.00ns ' &&
	die "a minimum of 0: $out"

# --- process trees, threads, late loading, linked-in runtime, Python ---------------------------
run "$TOPSPROF" "$BIN/stress" -n 20 -t 4 -s 2
expect_rc 0
expect_total 414 # 4 threads x 103 calls, and topsGetDeviceCount and the registration
expect_calls topsLaunchKernel 80
expect_calls topsStreamSynchronize 88
run "$TOPSPROF" --api-mode trace "$BIN/stress" -n 15 -t 3 -s 3
expect_total $((3 * (1 + 3 + 6 + 6 + 15 * 4 + 3 + 3 + 6 + 6) + 2))
run "$TOPSPROF" "$BIN/fork_app" 2
expect_rc 0
expect_total 37 # parent 6, forked child 5, exec'd simpleElemwiseAdd 26
expect_calls topsLaunchKernel 5
run "$TOPSPROF" --debug "$BIN/dlopen_app" 200
expect_rc 0
expect_total 7
expect_err "runtime $BIN/../lib/libtopsrt.so.1"
run "$TOPSPROF" "$BIN/simpleElemwiseAdd_static"
expect_rc 0
expect_total 26
run "$TOPSPROF" --debug "$BIN/simpleElemwiseAdd_static"
expect_err "(linked in)"
LD_LIBRARY_PATH=$LIB run "$TOPSPROF" "$BIN/ctypes_app.py"
expect_rc 0
expect_total 18
expect_calls topsModuleLaunchKernel 1
expect_calls topsModuleLoad 1

# --- kernels without uprobe_multi (before 6.6): one uprobe per function, the same counts ---------
TOPSPROF_NO_UPROBE_MULTI=1 run "$TOPSPROF" --debug --api-mode trace "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "probed (one uprobe each" # (and where the kernel has no attach cookies: ", entries through stubs")
expect_total 26
expect_calls topsStreamSynchronize 5
# their slow release (the kernel serializes it) is left to a child that outlives topsprof: it
# holds none of the run's files, pipes or terminal (so $(...) above did not wait for it), only
# BPF objects and perf events, and it does release them
releaser=$(sed -n 's/.*single uprobes are released by process \([0-9]*\), in the background.*/\1/p' <<<"$err")
[ -n "$releaser" ] || die "the single uprobes not released in the background: $err"
if [ -d /proc/"$releaser"/fd ]; then
	[ "$(cat /proc/"$releaser"/comm 2>/dev/null)" = topsprof-detach ] ||
		[ ! -e /proc/"$releaser" ] || die "process $releaser is not the releaser"
	# each descriptor's target; one closed meanwhile (it is releasing them) reads as nothing
	others=$(for f in /proc/"$releaser"/fd/*; do readlink "$f"; done 2>/dev/null |
		grep -vE '^anon_inode:(bpf|btf|\[perf_event\])' | grep -vx /dev/null)
	[ -z "$others" ] || die "the releaser holds more than BPF objects: $others"
else
	echo "the releaser had ended before it could be looked at"
fi
# the releaser of the run whose --debug log is $err has ended within 60 s (the next runs, and
# other tests, find the library without probes)
released() {
	local pid
	pid=$(sed -n 's/.*single uprobes are released by process \([0-9]*\), in the background.*/\1/p' <<<"$err")
	[ -n "$pid" ] || die "the single uprobes not released in the background: $err"
	for _ in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	die "the releaser still runs after 60 s"
}
released
# scoped to the first process (with attach cookies): its children held while the probes go on
# the files; the parent's calls after that counted once, though both its probes and the files'
# take them
TOPSPROF_NO_UPROBE_MULTI=1 run "$TOPSPROF" --debug --api-mode trace "$BIN/fork_app" 2
expect_rc 0
expect_total 37
if grep -qF "API probes: scoped to the first process followed" <<<"$err"; then
	expect_err "is the second followed: on the probed files from now on"
fi
released
TOPSPROF_NO_UPROBE_MULTI=1 run "$TOPSPROF" --debug --api-mode stats "$BIN/fork_app" 2
expect_rc 0
expect_total 37
released

# --- the runtime built with -fcf-protection: probes go after endbr64 ---------------------------
LD_LIBRARY_PATH=$OUTPUT/sim/lib-cet run "$TOPSPROF" --debug --print-api-summary \
	--runtime-lib "$OUTPUT/sim/lib-cet/libtopsrt.so.1" "$BIN/dlopen_app" 1
expect_rc 0
expect_err "probing topsMalloc at $OUTPUT/sim/lib-cet/libtopsrt.so.1+0x"
grep -q "probing topsMalloc at .*lib-cet.*(after endbr64)" <<<"$err" || die "no endbr64 skip: $err"
grep -q "probing topsMalloc at $LIB/.*(after endbr64)" <<<"$err" && die "skipped in the plain build"
expect_total 7

# --- topstx ------------------------------------------------------------------------------------
tx_calls() { awk -v n="$1" 'index($0, " " n) && $(NF) != "" { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { print $(i+2); exit } }' <<<"$(grep -F " $1" <<<"$out")"; }
range_row() { grep -E "^==[0-9]+== +[0-9.]+% .* $1\$" <<<"$out" | head -n 1; }
expect_range() { # name count
	checks=$((checks + 1))
	local row
	row=$(range_row "$1")
	[ -n "$row" ] || die "no range '$1':"$'\n'"$out"
	[ "$(awk '{ print $4 }' <<<"$row")" = "$2" ] || die "range '$1': $row (wanted $2 calls)"
}
run "$TOPSPROF" --topstx-domain-include all "$BIN/topstx_ranges"
expect_rc 0
expect_out "TOPSTX activities:"
expect_range "whole run" 1
expect_range "copy back" 1
expect_range "Training::step" 3
expect_range "Training::forward pass" 3
expect_range "Training::backward pass" 3
expect_range "Preprocess::load data" 1
expect_range "Preprocess::decode" 1
expect_out "Mark Training::step done: 3"
expect_out "Mark checked: 1"
grep -q "still open" <<<"$out" && die "a refused push was taken for a range: $out"
# nesting: an outer range lasts at least as long as what it holds
step=$(range_row "Training::step" | awk '{ print $3 }')
fwd=$(range_row "Training::forward pass" | awk '{ print $3 }')
to_ns() { awk -v t="$1" 'BEGIN { v = t + 0; u = substr(t, length(t) - 1);
	if (u == "us") v *= 1e3; else if (u == "ms") v *= 1e6; else if (t ~ /[0-9]s$/) v *= 1e9; print v }'; }
awk -v a="$(to_ns "$step")" -v b="$(to_ns "$fwd")" 'BEGIN { exit !(a >= b) }' ||
	die "Training::step ($step) shorter than the forward passes inside it ($fwd)"
# custom domains only when included
run "$TOPSPROF" "$BIN/topstx_ranges"
expect_range "whole run" 1
grep -q "Training::" <<<"$out" && die "custom domain without --topstx-domain-include"
run "$TOPSPROF" --topstx-domain-include Training "$BIN/topstx_ranges"
expect_range "Training::step" 3
grep -q "Preprocess::" <<<"$out" && die "Preprocess was not included"
# --trace without topstx: no topstx section data
run "$TOPSPROF" --trace runtime "$BIN/topstx_ranges"
expect_out "does not contain topstx data."
# long messages: cut at --topstx-max-bytes-size and marked; up to 1 MiB whole
name_len() { grep ' long:' <<<"$out" | awk '{ print length($NF) }'; }
run "$TOPSPROF" "$BIN/topstx_ranges" 10000
[ "$(name_len)" = $((4096 + 14)) ] || die "default cut: $(name_len)"
grep -q ' long:abcdefghijklmnopqrstuvwxyz.*\.\.\.\[truncated\]$' <<<"$out" || die "truncation mark"
run "$TOPSPROF" --topstx-max-bytes-size 100B "$BIN/topstx_ranges" 10000
[ "$(name_len)" = 114 ] || die "100B cut: $(name_len)"
run "$TOPSPROF" --topstx-max-bytes-size 1MB "$BIN/topstx_ranges" 1048576
if printf '%s\n' 5.17 "$(uname -r)" | sort -V -C; then
	[ "$(name_len)" = 1048576 ] || die "1 MiB message: $(name_len)"
else # no bpf_loop: 16 KB, said so
	[ "$(name_len)" = $((16384 + 14)) ] || die "1 MiB message, no bpf_loop: $(name_len)"
	expect_err "topstx strings are taken up to 16 KB, not 1024 KB"
fi
run "$TOPSPROF" --topstx-max-bytes-size 1MB "$BIN/topstx_ranges" 5000
[ "$(name_len)" = 5000 ] || die "5000 bytes with a 1MB limit: $(name_len)"

# --- collection off from the start ------------------------------------------------------------
run "$TOPSPROF" --profile-from-start off "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_out "does not contain runtime api data."

# --- lost events: counted exactly and reported ---------------------------------------------------
# eight busy threads on two cores leave the reader behind
run "$TOPSPROF" --api-mode trace --buffer-size 64KB "$BIN/stress" -n 3000 -t 8 -s 1 -e 16
expect_rc 0
lost=$(sed -n 's/.*warning: [0-9]* events lost (\([0-9]*\) calls.*/\1/p' <<<"$err")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || die "no loss reported with a 64KB buffer: $err"
expect_err "raise --buffer-size"
[ $(($(total_calls) + lost)) = $((8 * (3000 * 4 + 12) + 2)) ] ||
	die "seen $(total_calls) + lost $lost calls"
# statistics mode aggregates in the kernel: nothing to lose
run "$TOPSPROF" --api-mode stats --buffer-size 64KB "$BIN/stress" -n 3000 -t 8 -s 1 -e 16
[ -z "$err" ] || die "stats mode: $err"
expect_total $((8 * (3000 * 4 + 12) + 2))

# --- no runtime to be found: one clear error -------------------------------------------------
run "$TOPSPROF" /bin/true
expect_rc 1
expect_lines err 1
expect_err "cannot find the GCU runtime (libtopsrt.so) that '/bin/true' uses"
expect_err "/etc/ld.so.cache"
expect_err "--runtime-lib"
run "$TOPSPROF" ./no-such-app
expect_rc 1
expect_err "cannot run './no-such-app'"
done_ok
