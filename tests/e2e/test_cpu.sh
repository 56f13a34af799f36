#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CPU call stack sampling as a user sees it: a sim app with known hot functions on two threads
# has them at the top of CPU activities with the expected shares and whole stacks; the folded
# export is what flamegraph.pl reads and agrees with the report; the frequency is honoured;
# kernel frames are named; a short-lived app's frames still resolve, and an app's in another mount
# namespace; stacks travel through the profile file and raw data; bad requests say so.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

# cpu ROW FIELD: a field of function ROW in CPU activities (2: self %, 4: total %)
cpu_field() {
	sed -n '/CPU activities:/,/^==[0-9]*==$/p' <<<"$out" |
		awk -v n="$1" -v f="$2" '$NF == n { v = $f; sub(/%$/, "", v); print v; exit }'
}
samples() {
	sed -n 's/^==[0-9]*==  *\([0-9]*\) samples at \([0-9]*\) Hz$/\1/p' <<<"$out"
}
expect_between() { # what value low high
	checks=$((checks + 1))
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }' ||
		die "$1 is '$2', wanted $3 to $4"$'\n'"$out"
}

# --- two threads, 1 s each: 80% in hot_loop, 20% in warm_loop ----------------------------------
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/cpu.folded" "$BIN/cpu_hot" 1000
expect_rc 0
expect_out "CPU activities:"
expect_out "Self(%)     Self  Total(%)    Total  Function"
# 2 s of CPU at 100 Hz
expect_between samples "$(samples)" 150 220
top=$(sed -n '/Self(%)/{n;p;q}' <<<"$out" | awk '{ print $NF }')
checks=$((checks + 1))
[ "$top" = hot_loop ] || die "top function is '$top', wanted hot_loop"$'\n'"$out"
expect_between "hot_loop self %" "$(cpu_field hot_loop 2)" 70 90
expect_between "warm_loop self %" "$(cpu_field warm_loop 2)" 12 30
expect_between "main total %" "$(cpu_field main 4)" 40 60
expect_between "worker total %" "$(cpu_field worker 4)" 40 60
# frame pointers kept: the stacks are whole, no warning
checks=$((checks + 1))
! grep -q "stop short" <<<"$out" || die "stacks reported truncated:"$'\n'"$out"

# the C library is stripped: its local functions are named from its debug file, found by
# build-id (libc6-dbg, which scripts/install-deps.sh installs)
libc=$(ldd "$BIN/cpu_hot" | awk '/libc.so.6/ { print $3 }')
id=$(readelf -n "$libc" | sed -n 's/.*Build ID: *//p')
if [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
	checks=$((checks + 1))
	grep -qE '^cpu_hot;[^ ]*start_thread;worker;hot_loop [0-9]+$' "$TMP/cpu.folded" ||
		die "libc's start_thread not named from its debug file:"$'\n'"$(cat "$TMP/cpu.folded")"
else
	echo "note: no debug file for $libc (libc6-dbg): its frames stay [unknown]"
fi

# the folded file: "comm;outermost;...;leaf count", summing to the samples
[ -s "$TMP/cpu.folded" ] || die "no folded file"
bad=$(grep -cvE '^[^;]+(;[^;]+)+ [0-9]+$' "$TMP/cpu.folded")
checks=$((checks + 1))
[ "$bad" = 0 ] || die "$bad malformed folded lines:"$'\n'"$(cat "$TMP/cpu.folded")"
total=$(awk '{ s += $NF } END { print s }' "$TMP/cpu.folded")
checks=$((checks + 1))
[ "$total" = "$(samples)" ] || die "folded total $total, report $(samples)"
checks=$((checks + 1))
grep -qE '^cpu_hot;.*;main;hot_loop [0-9]+$' "$TMP/cpu.folded" &&
	grep -qE '^cpu_hot;.*;worker;hot_loop [0-9]+$' "$TMP/cpu.folded" ||
	die "folded stacks lack main;hot_loop or worker;hot_loop:"$'\n'"$(cat "$TMP/cpu.folded")"

# nothing overwritten without --force-overwrite
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/cpu.folded" "$BIN/cpu_hot" 10
expect_rc 1
expect_err "--export-folded"
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/cpu.folded" --force-overwrite \
	"$BIN/cpu_hot" 10
expect_rc 0

# --- the frequency: 10 Hz gives a tenth of the samples ------------------------------------------
run "$TOPSPROF" --cpu-profiling-callstack --cpu-profiling-frequency 10 "$BIN/cpu_hot" 1000
expect_rc 0
expect_out "samples at 10 Hz"
expect_between "samples at 10 Hz" "$(samples)" 12 24

# the stacks travel in the profile file and the raw data: a folded file from either import is the
# live one
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/live.folded" \
	--export-profile "$TMP/cpu.topsprof" --export-rawdata "$TMP/cpu.raw" "$BIN/cpu_hot" 200
expect_rc 0
for imp in "--import-profile $TMP/cpu.topsprof" "--import-rawdata $TMP/cpu.raw"; do
	rm -f "$TMP/imported.folded"
	run "$TOPSPROF" $imp --export-folded "$TMP/imported.folded"
	expect_rc 0
	checks=$((checks + 1))
	cmp -s "$TMP/live.folded" "$TMP/imported.folded" || die "$imp: the folded stacks differ"
done
# an imported profile without stacks: said, and nothing written
run "$TOPSPROF" --export-profile "$TMP/nostacks.topsprof" "$BIN/cpu_hot" 10
expect_rc 0
run "$TOPSPROF" --import-profile "$TMP/nostacks.topsprof" --export-folded "$TMP/nostacks.folded"
expect_rc 1
expect_err "--export-folded: the profile has no CPU call stacks"
checks=$((checks + 1))
[ ! -e "$TMP/nostacks.folded" ] || die "a folded file without stacks"

# --- kernel frames, and a short-lived app: its mappings are read on its first sample ----------
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/stress.folded" \
	"$BIN/stress" -n 12000 -t 2
expect_rc 0
checks=$((checks + 1))
grep -q '_\[k\]' "$TMP/stress.folded" || die "no kernel frames:"$'\n'"$(cat "$TMP/stress.folded")"
checks=$((checks + 1))
grep -qE '^stress;' "$TMP/stress.folded" && grep -qE '(^|;)(main|work|stress_scale)(;| )' "$TMP/stress.folded" ||
	die "the short-lived app's frames are not named:"$'\n'"$(cat "$TMP/stress.folded")"

# --- an app in another mount namespace (as in a container): its files, invisible to the host at
# the paths its mappings name, are read through its root -----------------------------------------
if command -v unshare >/dev/null; then
	mkdir -p "$TMP/nsroot"
	run "$TOPSPROF" --cpu-profiling-callstack --runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" \
		--export-folded "$TMP/ns.folded" unshare -m --propagation private sh -c \
		"mount -t tmpfs none '$TMP/nsroot' && cp -r '$BIN' '$OUTPUT/sim/lib' '$TMP/nsroot/' &&
		 exec '$TMP/nsroot/bin/cpu_hot' 300"
	expect_rc 0
	checks=$((checks + 1))
	[ ! -e "$TMP/nsroot/bin/cpu_hot" ] || die "the namespace's files are visible to the host"
	checks=$((checks + 1))
	grep -qE '^cpu_hot;.*;main;hot_loop [0-9]+$' "$TMP/ns.folded" ||
		die "the namespaced app's frames are not named:"$'\n'"$(cat "$TMP/ns.folded")"
	# the library it mapped deleted, and a FIFO put where its path says "(deleted)": topsprof,
	# attached, reads the mapped file itself and neither waits on the FIFO nor opens it
	mkdir -p "$TMP/nsroot2"
	unshare -m --propagation private sh -c \
		"mount -t tmpfs none '$TMP/nsroot2' && cp -r '$BIN' '$OUTPUT/sim/lib' '$TMP/nsroot2/' ||
		 exit 1
		 (sleep 0.5; rm '$TMP/nsroot2/lib/libtopsrt.so.1' &&
		  mkfifo '$TMP/nsroot2/lib/libtopsrt.so.1 (deleted)') &
		 exec '$TMP/nsroot2/bin/cpu_hot' 5000" >/dev/null 2>&1 &
	app=$!
	sleep 1.5
	run timeout 30 "$TOPSPROF" --attach-pid "$app" --duration 1.5 --cpu-profiling-callstack \
		--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" --export-folded "$TMP/fifo.folded"
	kill "$app" 2>/dev/null
	wait "$app" 2>/dev/null
	expect_rc 0 "a FIFO at a deleted library's path must not stall topsprof"
	checks=$((checks + 1))
	grep -qE '^cpu_hot;.*;main;hot_loop [0-9]+$' "$TMP/fifo.folded" ||
		die "the attached app's frames are not named:"$'\n'"$(cat "$TMP/fifo.folded")"
else
	echo "note: no unshare: the mount namespace cases are not run"
fi

# --- without sampling: the section says so; the export is refused before anything runs -------
run "$TOPSPROF" "$BIN/cpu_hot" 10
expect_rc 0
expect_out "does not contain cpu kernel data."
run "$TOPSPROF" --export-folded "$TMP/none.folded" "$BIN/cpu_hot" 10
expect_rc 1
expect_err "--export-folded: needs --cpu-profiling-callstack"
checks=$((checks + 1))
[ ! -e "$TMP/none.folded" ] && ! grep -q "TOPSPROF is profiling" <<<"$out" ||
	die "ran or wrote despite the error"$'\n'"$out"

done_ok
