#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Kernel callstacks as a user sees them on this machine's tracepoint path: simpleElemwiseAdd's
# blocking calls wait in the driver (futex on the device's memory) with their kernel and user
# stacks; each filter takes what it says (current: the app only; all: other processes too; kmd:
# only calls into the driver; a function list: only stacks through those functions); --debug says
# what the kernel offered; the profile file and the vpd carry the section; bad names are refused.
# The filters that take other processes are checked against the vpd, which has every stack: the
# report shows the top 10, and on a busy machine other processes' waits may outrank the app's.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v sqlite3 >/dev/null || die "sqlite3 is missing (scripts/install-deps.sh installs it)"

kernel() { sed -n '/ KERNEL activities:/,/^==[0-9]*==$/p' <<<"$out"; }
# the stack headers: "N) time off CPU, ... (pid P)"
stack_pids() { kernel | sed -n 's/.*) .* (pid \([0-9]*\))$/\1/p' | sort -u; }
app_pid() { sed -n '1s/^==\([0-9]*\)==.*/\1/p' <<<"$out"; }
# a process that waits on other processes' behalf while the app runs: 'all' must see it
start_other() {
	(while :; do sleep 0.02; done) &
	other=$!
}
stop_other() { kill "$other" 2>/dev/null; wait "$other" 2>/dev/null; }
# run_bg CMD...: as run, and $tp the pid of CMD (topsprof's own, for the filters that take every
# process but topsprof: other topsprof processes, such as other tests', are taken)
run_bg() {
	"$@" >"$TMP/out" 2>"$TMP/err" &
	tp=$!
	wait "$tp"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}
# app_wait_ns VPD: the time of the app's longest-waiting stack in the driver's futex, from
# topsStreamSynchronize through futex_wait, in VPD (every stack the run kept); empty if none
app_wait_ns() {
	sqlite3 "$1" "SELECT total_ns FROM stack WHERE pid = $(app_pid) AND comm = 'simpleElemwiseA'
		AND kind = 'kernel-wait' AND entry = 'futex' AND driver = 1 AND count >= 1
		AND instr(';' || frames || ';', ';futex_wait_[k];')
		AND instr(';' || frames || ';', ';topsStreamSynchronize;') ORDER BY total_ns DESC LIMIT 1"
}
# expect_app_wait VPD: the app's wait in the driver is among the stacks kept (VPD), and the report
# shows it, or else shows ten stacks of at least its time (it is not in the top 10 then)
expect_app_wait() {
	local ns tenth
	ns=$(app_wait_ns "$1")
	checks=$((checks + 1))
	[ -n "$ns" ] || die "$1 lacks the app's wait in futex (driver):"$'\n'"$(sqlite3 "$1" \
		"SELECT pid, comm, kind, entry, driver, count, frames FROM stack WHERE pid = $(app_pid)")"
	checks=$((checks + 1))
	grep -qF "in futex (driver), simpleElemwiseA (pid $(app_pid))" <<<"$out" && return
	tenth=$(kernel | sed -n 's/^==[0-9]*==     10) \([0-9.]*\)\([a-z]*\) .*/\1 \2/p')
	awk -v t="$tenth" -v ns="$ns" 'BEGIN {
		split(t, a, " "); u = a[2] == "s" ? 1e9 : a[2] == "ms" ? 1e6 : a[2] == "us" ? 1e3 : 1
		exit !(t != "" && a[1] * u >= ns * 0.995) }' ||
		die "the report lacks the app's wait in futex (driver) ($ns ns), and its 10th stack is of '$tenth'"$'\n'"$out"
	echo "note: the app's wait in futex (driver) ($ns ns) is outranked by ten others (the 10th: $tenth)"
}

# --- current (the default): the app's system calls and waits, and nothing else -----------------
run "$TOPSPROF" --kernel-callstack --debug --export-profile "$TMP/k.topsprof" \
	--export-rawdata "$TMP/k.raw" "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_out "KERNEL activities:"
expect_out "through tracepoints (raw_syscalls, sched_switch); filter current"
# the blocking synchronizations whose device work has not ended yet sleep in the driver: at least
# one (scalar_add runs for 56 ms), at most one per synchronization the app made (how many find
# their work done depends on how busy the host is)
line=$(kernel | grep ' futex (driver)$')
syncs=$(sed -n '/RUNTIME activities:/,$ s/.* \([0-9][0-9]*\) .* topsStreamSynchronize$/\1/p' <<<"$out" |
	head -n 1)
futexes=$(awk '{ print $4 }' <<<"$line")
checks=$((checks + 1))
[ -n "$syncs" ] && [ -n "$futexes" ] && [ "$futexes" -ge 1 ] && [ "$futexes" -le "$syncs" ] ||
	die "futex (driver) calls: '$line', of $syncs synchronizations"$'\n'"$out"
expect_out "in futex (driver), simpleElemwiseA (pid $(app_pid))"
# its stack, innermost first: the kernel's wait, then the runtime call that waited
top=$(kernel | sed -n '/ 1) /,/ 2) /p')
for f in schedule futex_wait __x64_sys_futex "topsStreamSynchronize (user)" "main (user)"; do
	checks=$((checks + 1))
	grep -qF -- "           $f" <<<"$top" || die "the top stack lacks $f"$'\n'"$top"
done
checks=$((checks + 1))
! grep -q bpf_prog_ <<<"$top" || die "the program's own frames are shown"$'\n'"$top"
checks=$((checks + 1))
[ "$(stack_pids)" = "$(app_pid)" ] || die "current shows pids $(stack_pids)"$'\n'"$out"
# what the kernel offered, probed at start
expect_err "kernel callstacks: tracepoints sys_enter, sys_exit, sched_switch attached"
expect_err "kernel callstacks: KMD module enflame: not loaded"
checks=$((checks + 1))
grep -qE "kernel callstacks: kprobe/kretprobe programs loaded \(verifier passed\)|fentry/fexit programs loaded" \
	<<<"$err" || die "neither kprobe nor fentry programs were verified"$'\n'"$err"
# fentry tried; before Linux 5.15 (no bpf_get_func_ip) not, and said why
checks=$((checks + 1))
if printf '%s\n' 5.15 "$(uname -r)" | sort -V -C; then
	grep -q "kernel callstacks: fentry/fexit programs" <<<"$err" ||
		die "fentry/fexit not tried on $(uname -r)"$'\n'"$err"
else
	grep -q "kernel callstacks: fentry/fexit not tried: no bpf_get_func_ip" <<<"$err" ||
		die "fentry/fexit: not tried, and not said why, on $(uname -r)"$'\n'"$err"
fi
expect_err "kernel callstacks: driver file $TMP/driver/gcu0"
live=$out

# the profile file and the raw data bring the section back as it was
for imp in "--import-profile $TMP/k.topsprof" "--import-rawdata $TMP/k.raw"; do
	run "$TOPSPROF" $imp
	expect_rc 0
	checks=$((checks + 1))
	diff <(sed 's/^==[0-9]*==//' <<<"$live" | sed -n '/KERNEL activities:/,/RUNTIME activities:/p') \
		<(sed 's/^==[0-9]*==//' <<<"$out" | sed -n '/KERNEL activities:/,/RUNTIME activities:/p') ||
		die "$imp: KERNEL activities differ"
done

# --- all: other processes too ---------------------------------------------------------------------
start_other
run_bg "$TOPSPROF" --kernel-callstack --kernel-callstack-filter all \
	--export-visual-profiler "$TMP/vpd" "$BIN/simpleElemwiseAdd"
stop_other
expect_rc 0
expect_out "; filter all"
vpd=$(ls "$TMP"/vpd/*.vpd | head -1)
# the app's wait in the driver, with its stack (in the report when it is in the top 10)
expect_app_wait "$vpd"
checks=$((checks + 1))
[ "$(stack_pids | grep -vcx "$(app_pid)")" -gt 0 ] || die "all shows no other process"$'\n'"$out"
# every process but this topsprof: none of its waits, in the report or among all the stacks kept
checks=$((checks + 1))
! kernel | grep -q "(pid $tp)\$" || die "all shows topsprof's own waits (pid $tp)"$'\n'"$out"
checks=$((checks + 1))
[ "$(sqlite3 "$vpd" "SELECT COUNT(*) FROM stack WHERE pid = $tp")" = 0 ] ||
	die "$vpd has topsprof's own waits (pid $tp)"
checks=$((checks + 1))
[ "$(sqlite3 "$vpd" "SELECT COUNT(*) FROM stack WHERE kind='kernel-wait' AND entry='futex'
	AND driver=1 AND frames LIKE '%futex_wait%'")" -ge 1 ] || die "no kernel stack rows in $vpd"
checks=$((checks + 1))
[ "$(sqlite3 "$vpd" "SELECT COUNT(DISTINCT pid) FROM stack WHERE kind LIKE 'kernel-%'")" -gt 1 ] ||
	die "the vpd lacks the other processes' stacks"
# the vpd brings the section back as it was, the app's wait with it
live=$out
run "$TOPSPROF" --import-profile "$vpd"
expect_rc 0
checks=$((checks + 1))
diff <(sed 's/^==[0-9]*==//' <<<"$live" | sed -n '/KERNEL activities:/,/RUNTIME activities:/p') \
	<(sed 's/^==[0-9]*==//' <<<"$out" | sed -n '/KERNEL activities:/,/RUNTIME activities:/p') ||
	die "--import-profile $vpd: KERNEL activities differ"

# --- kmd: only what went through the driver --------------------------------------------------------
start_other
run "$TOPSPROF" --kernel-callstack --kernel-callstack-filter kmd "$BIN/simpleElemwiseAdd"
stop_other
expect_rc 0
expect_out "; filter kmd"
entries=$(kernel | awk '/Time\(%\)/ { on = 1; next } /Top kernel stacks/ { on = 0 } on')
checks=$((checks + 1))
[ -n "$entries" ] && ! grep -v '(driver)$' <<<"$entries" | grep -q . ||
	die "kmd shows calls that did not enter the driver"$'\n'"$out"
expect_out "futex (driver)"
checks=$((checks + 1))
[ "$(stack_pids)" = "$(app_pid)" ] || die "kmd shows pids $(stack_pids)"$'\n'"$out"

# --- a function list: only stacks through them -------------------------------------------------
run "$TOPSPROF" --kernel-callstack --kernel-callstack-filter futex_wait \
	--export-visual-profiler "$TMP/vpdf" "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_out "; filter futex_wait"
vpd=$(ls "$TMP"/vpdf/*.vpd | head -1)
expect_app_wait "$vpd"
nstacks=$(kernel | grep -c ') .* (pid ')
nthrough=$(kernel | awk '/\) .* \(pid / { n++; s[n] = 0 } /^==[0-9]*==           futex_wait$/ { s[n] = 1 }
	END { t = 0; for (i = 1; i <= n; i++) t += s[i]; print t }')
checks=$((checks + 1))
[ "$nstacks" -ge 1 ] && [ "$nstacks" = "$nthrough" ] ||
	die "$nthrough of $nstacks stacks go through futex_wait"$'\n'"$out"
# and so do those the report leaves out
checks=$((checks + 1))
[ "$(sqlite3 "$vpd" "SELECT COUNT(*) FROM stack WHERE kind = 'kernel-wait'
	AND NOT instr(';' || frames || ';', ';futex_wait_[k];')")" = 0 ] ||
	die "$vpd has waits not through futex_wait:"$'\n'"$(sqlite3 "$vpd" "SELECT pid, comm, frames
		FROM stack WHERE kind = 'kernel-wait' AND NOT instr(';' || frames || ';', ';futex_wait_[k];')")"

# --- bad requests ------------------------------------------------------------------------------
run "$TOPSPROF" --kernel-callstack --kernel-callstack-filter no_such_function_here \
	"$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "no kernel function 'no_such_function_here' in /proc/kallsyms"
expect_lines err 1
run "$TOPSPROF" --kernel-callstack --kmd-module other --debug "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "kernel callstacks: KMD module other: not loaded"
run "$TOPSPROF" --kernel-callstack-filter all "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "--kernel-callstack-filter has no effect without --kernel-callstack"
checks=$((checks + 1))
! grep -q "KERNEL activities:" <<<"$out" || die "KERNEL activities without --kernel-callstack"
done_ok
