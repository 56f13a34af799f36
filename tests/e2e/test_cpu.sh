#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CPU call stack sampling as a user sees it: a sim app with known hot functions on two threads
# has them at the top of CPU activities with the expected shares and whole stacks; the folded
# export is what flamegraph.pl reads and agrees with the report; the frequency is honoured;
# kernel frames are named; a short-lived app's frames still resolve, and an app's in another mount
# namespace; stacks travel through the profile file and raw data; bad requests say so.
# What is counted is measured against the app's own account of its CPU time (its CPU clock, and
# per loop and per thread its threads' clocks: proc_ms=, hot_ms=, warm_ms=, main_ms=, worker_ms=),
# never against what idle CPUs give: the CPUs may be shared with other work. cpu_hot -c runs by
# its threads' CPU clocks, so the work and its shares are the same however busy the machine is.
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
# own NAME: a figure the app printed about itself (cpu_ms, wall_ms: its CPU time and how long it
# ran, from main on; proc_ms: its whole CPU time, exec and loading too; hot_ms, warm_ms, main_ms,
# worker_ms)
own() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$out" | head -1; }
# q, the share of its two threads' time the app ran: cpu_ms / wall_ms / 2 (1 on idle CPUs)
app_q() {
	awk -v c="$(own cpu_ms)" -v w="$(own wall_ms)" -v t=$(($(nproc) < 2 ? $(nproc) : 2)) \
		'BEGIN { q = w > 0 ? c / w / t : 0; if (q > 1) q = 1; printf "%.4f\n", q }'
}
# How far a count strays: the sampler is a cpu-clock event on every CPU that counts the app's
# threads when it finds one running, so it follows the app's CPU time, not the clock; on CPUs
# shared with other work each sample is a draw of whether the app is on that CPU just then. So E
# samples expected spread by sqrt(E * (1 - q)), and a share s of them by sqrt(s * (1 - s) *
# (1 - q) / E); on idle CPUs (q = 1) the count is exact but for a sample at each end of each CPU's
# run. A period of a whole number of scheduler ticks (the default 100 Hz, and 10 Hz, with
# CONFIG_HZ 100, 250 or 1000) samples in lockstep with the tick, where the scheduler switches
# tasks: on shared CPUs every sample falls at the same phase of the tick, and a run's count
# strays further. Measured on this 2-CPU VM (CONFIG_HZ 250) with two CPU hogs, other work, and a
# load average of up to 9 (q 0.11 to 0.5): counts within 3.1 spreads at 97 and 99 Hz (50 runs),
# 4 at 100 Hz; hot_loop's share within 5 points at 99 Hz, 19 points off once at 100 Hz.
#
# In the VM test bed (TOPSPROF_E2E_EMULATED=1: QEMU's TCG, each vCPU a thread of the host's) the
# guest's clocks run on while the host has a vCPU's thread descheduled, and the guest counts that
# time as the app's CPU time, which no sampler's timer saw: 197 samples against 217.8 +-19.4 once
# on a host with two CPU hogs. There the count is held to 25% of E, which still tells the
# frequency from half or twice it; the spreads above are the host's.
#
# expect_samples HZ [lockstep]: the samples at HZ are those of the CPU time the app says it had,
# E = proc_ms / 1000 * HZ, within 4 spreads and 2 samples ('lockstep': and 30% of E * (1 - q))
expect_samples() {
	local n e tol
	n=$(samples)
	checks=$((checks + 1))
	grep -qE "^==[0-9]+==  *[0-9]+ samples at $1 Hz$" <<<"$out" || die "not sampled at $1 Hz"$'\n'"$out"
	read -r e tol < <(awk -v c="$(own proc_ms)" -v q="$(app_q)" -v hz="$1" -v lockstep="${2:-}" \
		-v emulated="${TOPSPROF_E2E_EMULATED:-}" 'BEGIN {
		e = c / 1000 * hz
		tol = 4 * sqrt(e * (1 - q)) + 2
		if (lockstep != "") tol += 0.3 * e * (1 - q)
		if (emulated == 1 && tol < 0.25 * e) tol = 0.25 * e
		printf "%.1f %.1f\n", e, tol
	}')
	checks=$((checks + 1))
	awk -v n="$n" -v e="$e" -v t="$tol" 'BEGIN { d = n - e; if (d < 0) d = -d; exit !(n != "" && e > 0 && d <= t) }' ||
		die "$n samples at $1 Hz; the app's proc_ms=$(own proc_ms) (q $(app_q)) give $e +-$tol"$'\n'"$out"
	echo "$n samples at $1 Hz; the app's proc_ms=$(own proc_ms) (q $(app_q)) give $e +-$tol"
}
# expect_share WHAT PERCENT OWN BELOW ABOVE [KERNEL]: PERCENT (of the samples) is the app's OWN ms
# in % of its proc_ms, less BELOW (and KERNEL) to plus ABOVE points, or 4 spreads of the share if
# more. KERNEL: the points of a loop's samples in the kernel (its total % less its self %): what
# the kernel ran in the loop's thread meanwhile (interrupts, softirqs, the clock's system calls),
# which the thread's clock counts as the loop's but which is not the loop's own
expect_share() {
	local want lo hi
	read -r want lo hi < <(awk -v a="$(own "$3")" -v c="$(own proc_ms)" -v n="$(samples)" \
		-v q="$(app_q)" -v b="$4" -v t="$5" -v k="${6:-0}" 'BEGIN {
		if (a == "" || c <= 0 || n <= 0) exit
		s = a / c
		sp = 400 * sqrt(s * (1 - s) * (1 - q) / n)
		if (b < sp) b = sp
		if (t < sp) t = sp
		printf "%.2f %.2f %.2f\n", 100 * s, b + k, t
	}')
	checks=$((checks + 1))
	awk -v v="$2" -v w="$want" -v lo="$lo" -v hi="$hi" \
		'BEGIN { exit !(v != "" && w != "" && v >= w - lo && v <= w + hi) }' ||
		die "$1 is '$2'; the app's $3=$(own "$3") of proc_ms=$(own proc_ms) give $want% (-$lo +$hi)"$'\n'"$out"
	echo "$1 is $2; the app's $3=$(own "$3") of proc_ms=$(own proc_ms) give $want% (-$lo +$hi)"
}

# --- two threads, 1 s of CPU each: 80% in hot_loop, 20% in warm_loop -----------------------------
# at 99 Hz, a frequency no multiple of the tick's period (see expect_samples)
run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --cpu-profiling-frequency 99 \
	--export-folded "$TMP/cpu.folded" "$BIN/cpu_hot" -c 1000
expect_rc 0
expect_out "CPU activities:"
expect_out "Self(%)     Self  Total(%)    Total  Function"
# ~2 s of CPU at 99 Hz
expect_samples 99
top=$(sed -n '/Self(%)/{n;p;q}' <<<"$out" | awk '{ print $NF }')
checks=$((checks + 1))
[ "$top" = hot_loop ] || die "top function is '$top', wanted hot_loop"$'\n'"$out"
# each function's share of the samples is its share of the app's CPU time, as the app measured
# each loop (hot_ms, warm_ms) and each thread (main_ms, worker_ms) by its thread's CPU clock
kernel_part() { awk -v s="$(cpu_field "$1" 2)" -v t="$(cpu_field "$1" 4)" 'BEGIN { print t - s }'; }
expect_share "hot_loop self %" "$(cpu_field hot_loop 2)" hot_ms 10 10 "$(kernel_part hot_loop)"
expect_share "warm_loop self %" "$(cpu_field warm_loop 2)" warm_ms 8 10 "$(kernel_part warm_loop)"
# main and worker have no samples of their own: where many functions have one sample each (the
# loader's and the kernel's while the app starts, many more under QEMU's TCG), the report's 20
# rows, by self time, leave them out; their totals are then the folded file's
folded_total() {
	awk -v f="$1" '{ n = $NF; all += n; sub(/ [0-9]+$/, ""); k = split($0, a, ";")
		for (i = 1; i <= k; i++) if (a[i] == f) { s += n; break } }
		END { if (all > 0) printf "%.2f\n", 100 * s / all }' "$TMP/cpu.folded"
}
total_of() { local v; v=$(cpu_field "$1" 4); echo "${v:-$(folded_total "$1")}"; }
expect_share "main total %" "$(total_of main)" main_ms 10 10
expect_share "worker total %" "$(total_of worker)" worker_ms 10 10
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

# --- the same app built as distributions build theirs, without frame pointers: its stacks are
# unwound by the call frame information, each whole to its thread's entry (_start, or clone3 for a
# thread), with no caller made up; walked by frame pointers alone (fp), the same stacks stop short
# and take the bits of whatever is where a frame pointer would be for callers ------------------
run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --cpu-profiling-frequency 99 \
	--export-folded "$TMP/nofp.folded" "$BIN/cpu_hot_nofp" -c 1000
expect_rc 0
expect_samples 99
cp "$TMP/nofp.folded" "$TMP/cpu.folded" # what folded_total reads
expect_share "hot_loop self % (no frame pointers)" "$(cpu_field hot_loop 2)" hot_ms 10 10 \
	"$(kernel_part hot_loop)"
expect_share "main total % (no frame pointers)" "$(total_of main)" main_ms 10 10
expect_share "worker total % (no frame pointers)" "$(total_of worker)" worker_ms 10 10
# every stack of the app's own code whole: main's from _start through the C library's start, the
# worker's from clone3 and start_thread (named by libc6-dbg's debug file, or by .dynsym)
checks=$((checks + 1))
grep -qE '^cpu_hot_nofp;_start;[^ ]*;main;hot_loop [0-9]+$' "$TMP/nofp.folded" &&
	grep -qE '^cpu_hot_nofp;clone3?;[^ ]*;worker;hot_loop [0-9]+$' "$TMP/nofp.folded" ||
	die "no whole stacks of main;hot_loop and worker;hot_loop:"$'\n'"$(cat "$TMP/nofp.folded")"
# and of all the samples (the loader's and exit's too), at least 95% reach an entry; the report
# says how many were cut and why
# (a thread's stack from clone3 goes on in start_thread: clone3 alone is its parent inside the
# system call, whose CFI glibc ends before it; the dynamic loader's _start, where its own symbols
# are missing, as in the VM test bed, is "[unknown] ld-linux...")
whole=$(awk '{ n = $NF; all += n }
	/^cpu_hot_nofp;(_start|clone3?;start_thread|\[unknown\] ld-linux[^;]*);/ { w += n }
	END { if (all > 0) printf "%.2f\n", 100 * w / all }' "$TMP/nofp.folded")
checks=$((checks + 1))
awk -v w="$whole" 'BEGIN { exit !(w != "" && w >= 95) }' ||
	die "only $whole% of the stacks reach a thread's entry:"$'\n'"$out"$'\n'"$(cat "$TMP/nofp.folded")"
echo "no frame pointers: $whole% of the samples' stacks reach a thread's entry"
# no caller made up: the loops are called by main and worker alone, and those (where the stack
# goes on past them) by the C library
checks=$((checks + 1))
bad=$(grep -E '(hot|warm)_loop' "$TMP/nofp.folded" | grep -vE ';(main|worker);(hot|warm)_loop[; ]' || true)
[ -z "$bad" ] || die "a loop called by another than main or worker:"$'\n'"$bad"
checks=$((checks + 1))
bad=$(grep -E '^cpu_hot_nofp;.+;(main|worker);' "$TMP/nofp.folded" |
	grep -vE '^cpu_hot_nofp;(_start;.*;main|clone3?;start_thread;worker);' || true)
[ -z "$bad" ] || die "main or worker called by another than the C library's start:"$'\n'"$bad"
# the report's cut share is the rest, to one sample: a new thread's first instructions, in
# clone3 before start_thread, reach its entry, and read as its parent's cut stack does
cut=$(sed -n 's/^==[0-9]*==  *\([0-9.]*\)% of the samples have user stacks cut short:$/\1/p' <<<"$out")
checks=$((checks + 1))
awk -v w="$whole" -v c="${cut:-0}" -v n="$(samples)" \
	'BEGIN { d = c + w - 100; if (d < 0) d = -d; exit !(n > 0 && d <= 100 / n + 0.1) }' ||
	die "the report's cut share ('$cut') is not the rest of $whole%"$'\n'"$out"
# frame pointers alone: stacks cut, and said to be
run "$TOPSPROF" --cpu-profiling-callstack --cpu-profiling-unwind fp \
	--export-folded "$TMP/nofp-fp.folded" "$BIN/cpu_hot_nofp" -c 300
expect_rc 0
expect_out "have user stacks that stop short of a thread's entry"
checks=$((checks + 1))
! grep -qE '^cpu_hot_nofp;_start;[^ ]*;main;hot_loop [0-9]+$' "$TMP/nofp-fp.folded" ||
	die "frame pointers walked a binary without them to its entry?"$'\n'"$(cat "$TMP/nofp-fp.folded")"
run "$TOPSPROF" --cpu-profiling-callstack --cpu-profiling-unwind lbr "$BIN/cpu_hot" 10
expect_rc 2
expect_err "'lbr' is not dwarf or fp"

# nothing overwritten without --force-overwrite
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/cpu.folded" "$BIN/cpu_hot" 10
expect_rc 1
expect_err "--export-folded"
run "$TOPSPROF" --cpu-profiling-callstack --export-folded "$TMP/cpu.folded" --force-overwrite \
	"$BIN/cpu_hot" 10
expect_rc 0

# --- the frequency: 19 Hz gives 19 samples per second of the app's CPU time ----------------------
# (not 10: 10 Hz samples in lockstep with the tick, see expect_samples; 3 s of CPU, so that the
# count tells 19 Hz from half or twice that on shared CPUs too)
run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --cpu-profiling-frequency 19 \
	"$BIN/cpu_hot" -c 1500
expect_rc 0
expect_out "samples at 19 Hz"
expect_samples 19

# the stacks travel in the profile file and the raw data: a folded file from either import is the
# live one. Sampled at the default frequency, 100 Hz
run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --export-folded "$TMP/live.folded" \
	--export-profile "$TMP/cpu.topsprof" --export-rawdata "$TMP/cpu.raw" "$BIN/cpu_hot" -c 500
expect_rc 0
expect_samples 100 lockstep
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
		 exec '$TMP/nsroot/bin/cpu_hot' -c 300"
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
		 exec '$TMP/nsroot2/bin/cpu_hot' -c 60000" >/dev/null 2>&1 &
	app=$!
	# (-c: hot_loop and warm_loop in turns, however late the attach: under QEMU's TCG, 5 s of
	# hot_loop then warm_loop had reached warm_loop by then; killed below)
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

# --- a wrapper busy for more than a second (past the age at which a process's mappings are read at
# every poll) that then execs a short app, as `sh -c '...; exec app'` does: the new image is read
# at its first sample, not when the wrapper's mappings are next due (they were before, and the
# app's frames were named from the wrapper's, under its name, in 3 runs of 4 here)
run "$TOPSPROF" --cpu-profiling-callstack --runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" \
	--export-folded "$TMP/exec.folded" bash -c \
	"while [ \$SECONDS -lt 2 ]; do :; done; exec '$BIN/cpu_hot' -c 200"
expect_rc 0
checks=$((checks + 1))
grep -qE '^cpu_hot;.*;main;hot_loop [0-9]+$' "$TMP/exec.folded" ||
	die "the app the wrapper exec'd is not named:"$'\n'"$(cat "$TMP/exec.folded")"

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
