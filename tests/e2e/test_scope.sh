#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Scoped probes: while topsprof profiles a process (--attach-pid) or an application it launched,
# the runtime's functions carry a breakpoint in the profiled processes alone, never in a
# bystander that maps the same libtopsrt.so (a process outside the profiled tree pays nothing),
# and the breakpoints leave the profiled process when topsprof detaches. A child the application
# forks and that execs a new image is held until its own probes are in: it has them, and so does
# the next generation. A process traced by strace is not held, and nothing stops under it.
# --system-wide (and TOPSPROF_NO_SCOPE=1) puts them in every process. Single uprobes (no
# uprobe_multi) go in the attached process alone. Read
# in the processes' memory (/proc/PID/mem), as the CPU sees it: no timing.
. "$E2E_DIR/lib.sh"
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
[ "$(id -u)" = 0 ] || skip "needs root for BPF"
LIB=$(realpath "$OUTPUT/sim/lib/libtopsrt.so.1")
RT=(--runtime-lib "$LIB")
FN=topsPeekAtLastError
pids=()
cleanup() {
	[ ${#pids[@]} = 0 ] || kill "${pids[@]}" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# a process that maps the runtime and waits; its pid into the variable named $1
sleeper() {
	LD_PRELOAD=$LIB sleep 600 &
	printf -v "$1" %s $!
	pids+=($!)
}

# the first byte of $FN's probe in process $1, as two hex digits; the probe's file offset is
# what topsprof's --debug said it probes (PROBE_OFF)
byte_at() {
	local start end off path line addr
	while read -r line; do
		read -r range _ off _ _ path <<<"$line"
		[ "$path" = "$LIB" ] || continue
		start=$((16#${range%-*}))
		end=$((16#${range#*-}))
		off=$((16#$off))
		if [ $((PROBE_OFF)) -ge "$off" ] && [ $((PROBE_OFF)) -lt $((off + end - start)) ]; then
			addr=$((start + PROBE_OFF - off))
			dd if="/proc/$1/mem" bs=1 skip="$addr" count=1 iflag=skip_bytes 2>/dev/null |
				od -An -tx1 | tr -d ' \n'
			return
		fi
	done <"/proc/$1/maps"
	echo "none"
}

# waits until the file $1 has the line $2 (topsprof's stderr), or topsprof ($3) ended
wait_for() {
	local t0=$SECONDS
	until grep -qF -- "$2" "$1"; do
		kill -0 "$3" 2>/dev/null || die "topsprof ended before '$2':"$'\n'"$(cat "$1")"
		[ $((SECONDS - t0)) -lt 30 ] || die "no '$2' in 30 s:"$'\n'"$(cat "$1")"
		sleep 0.05
	done
}

expect_byte() { # what pid want
	local got
	got=$(byte_at "$2")
	checks=$((checks + 1))
	[ "$got" = "$3" ] || die "$1 (pid $2): the first byte of $FN is $got, wanted $3"
}

# the byte the file has there, and the probe's offset, from a short --debug run
run "$TOPSPROF" --debug "${RT[@]}" --quiet /bin/true
expect_rc 0
PROBE_OFF=$(sed -n "s|.*probing $FN at $LIB+\(0x[0-9a-f]*\).*|\1|p" <<<"$err" | head -n 1)
[ -n "$PROBE_OFF" ] || die "--debug names no probe of $FN:"$'\n'"$err"
ORIG=$(dd if="$LIB" bs=1 skip=$((PROBE_OFF)) count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')
[ "$ORIG" != cc ] || die "the library has an int3 at $FN"
if ! grep -qF "API probes: scoped" <<<"$err"; then
	grep -q "API probes: on the probed files" <<<"$err" || die "--debug does not say the probes' scope:"$'\n'"$err"
	skip "probes are not scoped on this kernel ($(uname -r): no uprobe_multi links, no attach cookies)"
fi

sleeper profiled
sleeper bystander
wait_maps() { # the sleepers have mapped the runtime
	local t0=$SECONDS
	until [ "$(byte_at "$1")" != none ]; do
		[ $((SECONDS - t0)) -lt 10 ] || die "process $1 never mapped $LIB"
		sleep 0.05
	done
}
wait_maps "$profiled"
wait_maps "$bystander"
expect_byte "the profiled process before topsprof" "$profiled" "$ORIG"

# Single uprobes (no uprobe_multi, as before Linux 6.6; attach cookies needed): --attach-pid of
# one process puts them in it alone, with its pid; a launched application's tree, from its first
# child on, has them on the file (its calls are counted in test_api.sh)
single_case() {
	local tp
	"$TOPSPROF" --debug --quiet "${RT[@]}" --attach-pid "$profiled" >/dev/null 2>"$TMP/single" &
	tp=$!
	wait_for "$TMP/single" "debug: start-up:" "$tp"
	if grep -qF "API probes: scoped to the first process followed" "$TMP/single"; then
		expect_byte "the process topsprof --attach-pid profiles with single uprobes" "$profiled" cc
		expect_byte "a bystander of single uprobes" "$bystander" "$ORIG"
	else
		echo "single uprobes are not scoped here: their case left out"
	fi
	kill -TERM "$tp"
	wait "$tp"
}
if grep -qF "API probes: scoped to the first process followed" <<<"$err"; then
	single_case # this kernel's own way: the rest is of uprobe_multi links
	done_ok
fi

# --attach-pid: in the process, not in the bystander; gone from it at the detach
"$TOPSPROF" --debug --quiet "${RT[@]}" --attach-pid "$profiled" >/dev/null 2>"$TMP/attach" &
tp=$!
wait_for "$TMP/attach" "debug: start-up:" "$tp"
expect_byte "the process topsprof --attach-pid profiles" "$profiled" cc
expect_byte "a bystander" "$bystander" "$ORIG"
kill -TERM "$tp"
wait "$tp"
# its links are left to the releaser, which lets them go one grace period later
releaser=$(sed -n 's/.*released by process \([0-9]*\), in the background.*/\1/p' "$TMP/attach")
[ -n "$releaser" ] || die "the attached process's links not left to the releaser:"$'\n'"$(cat "$TMP/attach")"
t0=$SECONDS
while [ "$(byte_at "$profiled")" != "$ORIG" ] && [ $((SECONDS - t0)) -lt 10 ]; do
	sleep 0.01
done
expect_byte "the process topsprof detached from" "$profiled" "$ORIG"

# launched: the shell's child is held at its fork, exec's sleep with the runtime and has the
# probes; so does its own child; the bystander never
cat >"$TMP/tree.sh" <<SH
LD_PRELOAD=$LIB sleep 600 &
echo \$! >"$TMP/child"
bash -c 'LD_PRELOAD=$LIB sleep 600 & echo \$! >"$TMP/grandchild"; wait' &
wait
SH
"$TOPSPROF" --debug --quiet "${RT[@]}" bash "$TMP/tree.sh" >/dev/null 2>"$TMP/launch" &
tp=$!
t0=$SECONDS
until [ -s "$TMP/child" ] && [ -s "$TMP/grandchild" ] &&
	[ "$(byte_at "$(cat "$TMP/child")")" != none ] &&
	[ "$(byte_at "$(cat "$TMP/grandchild")")" != none ]; do
	kill -0 "$tp" 2>/dev/null || die "topsprof ended early:"$'\n'"$(cat "$TMP/launch")"
	[ $((SECONDS - t0)) -lt 30 ] || die "the application's children never mapped $LIB"
	sleep 0.05
done
child=$(cat "$TMP/child")
grandchild=$(cat "$TMP/grandchild")
pids+=("$child" "$grandchild")
expect_byte "the launched application's child" "$child" cc
expect_byte "the launched application's grandchild" "$grandchild" cc
expect_byte "a bystander" "$bystander" "$ORIG"
kill "$child" "$grandchild"
wait "$tp"
rc=$?
checks=$((checks + 1))
[ $rc = 143 ] || [ $rc = 0 ] || die "topsprof exited $rc:"$'\n'"$(cat "$TMP/launch")"
grep -q "warning" "$TMP/launch" && die "warnings:"$'\n'"$(grep warning "$TMP/launch")"
# the ended children's links went to the releaser process, forked before any other thread of
# topsprof's ran (it refuses otherwise: a child of a threaded process may inherit a held lock)
checks=$((checks + 1))
grep -q "probes of the followed processes are released by process [0-9]*, in the background" \
	"$TMP/launch" || die "the ended processes' links were not left to the releaser:"$'\n'"$(cat "$TMP/launch")"

# a traced process is never held (its tracer would take the stop for a signal of its own): under
# strace -f, strace's child (which stops itself for strace to seize it) and the application it
# execs run as without topsprof, and no stop shows in strace's account
if command -v strace >/dev/null; then
	run timeout 60 "$TOPSPROF" "${RT[@]}" strace -f -o "$TMP/strace" "$OUTPUT/sim/bin/fork_app" 2
	expect_rc 0 "fork_app under strace -f under topsprof"
	expect_out "Total Calls"
	checks=$((checks + 1))
	! grep -q "SIGSTOP" "$TMP/strace" || die "strace saw a stop:"$'\n'"$(grep SIGSTOP "$TMP/strace")"
else
	echo "strace is not installed (scripts/install-deps.sh installs it): its case left out"
fi

# the collection over (--duration) before a child of the application execs: the child, held at
# its exec for probes that no longer come, runs on at once, and the application that waits for it
# with it (topsprof, waiting for the application, waited for ever before)
run timeout 60 "$TOPSPROF" "${RT[@]}" --print-app-log --duration 0.3 sh -c \
	"sleep 1; '$OUTPUT/sim/bin/fork_app' 1 >/dev/null; echo child-done"
expect_rc 0 "an application whose child execs after --duration's end"
expect_out "child-done"

# on the file: every process that maps it has the probes
for how in system-wide no-scope; do
	if [ $how = system-wide ]; then
		"$TOPSPROF" --debug --quiet "${RT[@]}" --system-wide >/dev/null 2>"$TMP/$how" &
	else
		TOPSPROF_NO_SCOPE=1 "$TOPSPROF" --debug --quiet "${RT[@]}" --attach-pid "$profiled" \
			>/dev/null 2>"$TMP/$how" &
	fi
	tp=$!
	wait_for "$TMP/$how" "debug: start-up:" "$tp"
	grep -qF "API probes: on the probed files" "$TMP/$how" || die "$how: the probes' scope:"$'\n'"$(cat "$TMP/$how")"
	expect_byte "a bystander with $how" "$bystander" cc
	kill -TERM "$tp"
	wait "$tp"
	expect_byte "the bystander after $how" "$bystander" "$ORIG"
done

# single uprobes (kernels before 6.6, here by TOPSPROF_NO_UPROBE_MULTI=1) with attach cookies
TOPSPROF_NO_UPROBE_MULTI=1 single_case
done_ok
