#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CPU and memory utilization as a user sees it: a sim app that keeps two threads busy shows the
# CPU it had, as the app itself measures it (its own CPU clock over its own run: cpu_ms= and
# wall_ms=; the CPUs may be shared with other work, so nothing assumes they were idle), the host at
# least the app's part of all of its CPUs; short-lived threads count; the series cover the run, as
# long as the app says it ran, at the asked frequency, from a 'topsprof start' on when collection
# starts off; memory is read for the app and the host; the Perfetto trace has them as counters,
# the vpd as counter rows, and a profile or raw data import prints the same summary.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v sqlite3 >/dev/null || die "sqlite3 is missing (scripts/install-deps.sh installs it)"

expect_between() { # what value low high
	checks=$((checks + 1))
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }' ||
		die "$1 is '$2', wanted $3 to $4"$'\n'"$out"
}
# section ROW FIELD: field FIELD of the row whose last field is ROW, in section SECTION
field() {
	sed -n "/ $1 utilization:/,/^==[0-9]*==\$/p" <<<"$out" |
		awk -v n="$2" -v f="$3" '$NF == n { v = $f; sub(/%$/, "", v); print v; exit }'
}
samples() {
	sed -n "/ $1 utilization:/{n;s/^==[0-9]*==  *\([0-9]*\) samples at \([0-9]*\) Hz.*/\1 \2/p}" \
		<<<"$out"
}
ncpus=$(nproc)

# --- two threads busy for 1 s, sampled at 20 Hz ------------------------------------------------
# the app's own account of its CPU time over its run, in % of one CPU
app_pct() {
	sed -n 's/.*cpu_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p' <<<"$out" |
		awk '{ printf "%.1f", $1 * 100 / $2 }'
}
# the sampled average agrees with it within a tenth, and a little
expect_near() { # what sampled own
	checks=$((checks + 1))
	awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= b / 10 + 3) }' ||
		die "$1: sampled $2%, the app says $3%"$'\n'"$out"
}
# own NAME: a figure the app printed about itself (cpu_ms, wall_ms, start_s, end_s)
own() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$out" | head -1; }
# per_run HZ [SLACK]: the samples at HZ over the app's run as it measured it (wall_ms), and
# SLACK% of them either way (20 unless given): "low high"
per_run() {
	awk -v w="$(own wall_ms)" -v hz="$1" -v s="${2:-20}" \
		'BEGIN { n = w / 1000 * hz; printf "%.1f %.1f\n", n * (1 - s / 100), n * (1 + s / 100) }'
}

run "$TOPSPROF" --print-app-log --cpu-utilization --memory-utilization --utilization-frequency 20 \
	--export-chrome-trace "$TMP/trace.json" --export-profile "$TMP/run.topsprof" \
	--export-rawdata "$TMP/run.raw" \
	"$BIN/cpu_hot" 1000
expect_rc 0
expect_out "CPU utilization:"
expect_out "Memory utilization:"
expect_out "a process's share is of one CPU, the host's of all $ncpus"
read -r n hz <<<"$(samples CPU)"
checks=$((checks + 1))
[ "$hz" = 20 ] || die "frequency $hz, wanted 20"$'\n'"$out"
# 20 a second over the ~1 s the app says it ran
expect_between "CPU samples at 20 Hz over the app's wall_ms=$(own wall_ms)" "$n" $(per_run 20)
# two threads running flat out: what CPU they got, as the app measured it; never more than its
# two threads could take (on a machine with two CPUs or more)
want=$((ncpus >= 2 ? 2 : 1))
pct=$(app_pct)
expect_between "cpu_hot average CPU %" "$(field CPU cpu_hot 2)" 0 $((want * 100 + 2))
expect_near "cpu_hot average CPU %" "$(field CPU cpu_hot 2)" "$pct"
# the busiest sample at least the app's own average (less expect_near's slack); never more than
# every CPU could give
expect_between "cpu_hot max CPU %" "$(field CPU cpu_hot 3)" \
	"$(awk -v b="$pct" 'BEGIN { print b - b / 10 - 3 }')" $((ncpus * 100))
# the host, whose CPUs the app's threads were on, at least the app's part of all of them
expect_between "host average CPU %" "$(field CPU host 2)" \
	"$(awk -v b="$pct" -v n="$ncpus" 'BEGIN { b /= n; print b - b / 10 - 3 }')" 100
rss=$(field Memory cpu_hot 3)
checks=$((checks + 1))
[[ "$rss" =~ ^[0-9.]+(KB|MB)$ ]] || die "cpu_hot max RSS '$rss'"$'\n'"$out"
checks=$((checks + 1))
[[ "$(field Memory host 2)" =~ ^[0-9.]+(MB|GB)$ ]] || die "host memory in use"$'\n'"$out"
live=$out

# the Perfetto trace: CPU % and memory counters of the app and of the host, over the run as long as
# the app says it ran
python3 - "$TMP/trace.json" "$(own wall_ms)" <<'PY' || die "trace counters"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
wall_us = float(sys.argv[2]) * 1000
cpu = [e for e in ev if e["ph"] == "C" and e["name"] == "CPU %"]
mem = [e for e in ev if e["ph"] == "C" and e["name"] == "memory (MB)"]
host = [e for e in ev if e["ph"] == "M" and e["args"].get("name") == "host"]
assert host, "no host process"
hp = host[0]["pid"]
app = [e for e in cpu if e["pid"] != hp]
# 20 Hz for the app, 10 Hz for the host (/proc/stat counts in 10 ms ticks), over the run
assert len(app) >= 0.8 * wall_us / 50000, (len(app), wall_us)
assert len([e for e in cpu if e["pid"] == hp]) >= 0.8 * wall_us / 100000, (len(cpu), wall_us)
assert all(0 <= e["args"]["of one CPU"] <= 100 * 64 for e in app)
assert all("rss" in e["args"] and "vsz" in e["args"] for e in mem if e["pid"] != hp)
ts = sorted(e["ts"] for e in app)
# the series cover the run: from its start to its end, 50 ms apart
assert ts[0] < 150000 and ts[-1] > wall_us - 150000, (ts[0], ts[-1], wall_us)
assert max(b - a for a, b in zip(ts, ts[1:])) < 150000
PY
checks=$((checks + 1))

# an import of the profile, or of the raw data, prints the same summary
for imp in "--import-profile $TMP/run.topsprof" "--import-rawdata $TMP/run.raw"; do
	run "$TOPSPROF" $imp
	expect_rc 0
	checks=$((checks + 1))
	diff <(sed -n '/CPU utilization:/,/RUNTIME activities:/p' <<<"$live" | sed 's/^==[0-9]*==//') \
		<(sed -n '/CPU utilization:/,/RUNTIME activities:/p' <<<"$out" | sed 's/^==[0-9]*==//') ||
		die "$imp: the utilization differs"
done

# --- threads that begin and end between two samples still count ----------------------------------
run "$TOPSPROF" --print-app-log --cpu-utilization "$BIN/cpu_hot" -s 1000
expect_rc 0
expect_near "short-lived threads' average CPU %" "$(field CPU cpu_hot 2)" "$(app_pct)"

# --- collection stopped at start, then started from another terminal: samples from then on ------
# (from when 'topsprof start' was given to when the app says its run ended, 50 a second: at least
# from when it had returned, at most from just before it was given, with 20% either way)
"$TOPSPROF" --print-app-log --profile-from-start off --session-new utiltest --cpu-utilization \
	--utilization-frequency 50 "$BIN/cpu_hot" 1500 >"$TMP/bg.out" 2>&1 &
bg=$!
# 0.7 s into the app's run: from when it is exec'd (topsprof itself may take a while to start)
for _ in $(seq 200); do [ "$(ps -o comm= --ppid "$bg")" = cpu_hot ] && break; sleep 0.05; done
sleep 0.7
t_asked=$EPOCHREALTIME
"$TOPSPROF" start --session utiltest >/dev/null 2>&1 || die "topsprof start failed"
t_done=$EPOCHREALTIME
wait "$bg" || die "the run that was started late failed: $(cat "$TMP/bg.out")"
out=$(cat "$TMP/bg.out")
read -r n hz <<<"$(samples CPU)"
read -r lo hi < <(awk -v a="$t_asked" -v d="$t_done" -v s="$(own start_s)" -v e="$(own end_s)" 'BEGIN {
	if (a < s) a = s
	if (d < s) d = s
	printf "%.1f %.1f\n", (e - d) * 50 * 0.8 - 1, (e - a) * 50 * 1.2 + 1 }')
expect_between "samples at 50 Hz after a start given $(awk -v a="$t_asked" -v s="$(own start_s)" \
	'BEGIN { printf "%.2f", a - s }') s into the app's run of $(own wall_ms) ms" "$n" "$lo" "$hi"
checks=$((checks + 1))
awk -v n="$n" -v w="$(own wall_ms)" 'BEGIN { exit !(n < w / 1000 * 50 * 0.9) }' ||
	die "$n samples at 50 Hz after a late start: as many as the whole run's"$'\n'"$out"

# --- system-wide: the host, and each process seen using a GCU, from when it was seen: an app busy
# for 0.8 s before its first GCU call shows what it did after, as it says itself ---------------
"$TOPSPROF" --system-wide --duration 5 --api-mode trace --cpu-utilization --memory-utilization \
	--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" >"$TMP/sw.out" 2>&1 &
sw=$!
for _ in $(seq 100); do grep -q "TOPSPROF is profiling every process" "$TMP/sw.out" && break; sleep 0.05; done
own=$("$BIN/cpu_hot" -p 800 1500) || die "cpu_hot failed: $own"
wait "$sw" || die "the system-wide run failed: $(cat "$TMP/sw.out")"
out=$(cat "$TMP/sw.out")
expect_out "CPU utilization:"
checks=$((checks + 1))
[ -n "$(field CPU host 2)" ] && [ -n "$(field Memory cpu_hot 3)" ] ||
	die "system-wide: no series of cpu_hot or of the host"$'\n'"$out"
expect_near "cpu_hot's average CPU %, system-wide" "$(field CPU cpu_hot 2)" "$(out=$own app_pct)"

# --- 10 Hz, memory only, into a vpd: counter rows that cover the run ----------------------------
# (5 samples over the ~0.5 s the app says it ran, and 2 either way)
run "$TOPSPROF" --print-app-log --memory-utilization --utilization-frequency 10 \
	--export-visual-profiler "$TMP/vpd" "$BIN/cpu_hot" 500
expect_rc 0
expect_out "Memory utilization:"
checks=$((checks + 1))
! grep -q "CPU utilization:" <<<"$out" || die "CPU utilization without --cpu-utilization"
read -r n hz <<<"$(samples Memory)"
read -r lo hi < <(awk -v w="$(own wall_ms)" 'BEGIN { n = w / 100; print n - 2, n + 2 }')
expect_between "memory samples at 10 Hz over the app's wall_ms=$(own wall_ms)" "$n" "$lo" "$hi"
vpd=$(ls "$TMP"/vpd/*.vpd)
q() { sqlite3 "$vpd" "$1"; }
expect_between "rss rows" "$(q "SELECT COUNT(*) FROM counter WHERE name='rss_bytes'")" "$lo" "$hi"
checks=$((checks + 1))
[ "$(q "SELECT COUNT(*) FROM counter WHERE name='cpu_percent'")" = 0 ] || die "cpu rows"
checks=$((checks + 1))
[ "$(q "SELECT COUNT(*) FROM counter WHERE name='vsz_bytes' AND value < (SELECT MIN(value) FROM
	counter WHERE name='rss_bytes')")" = 0 ] || die "a virtual size below the RSS"
expect_between "host rows" "$(q "SELECT COUNT(*) FROM counter WHERE name='host_memory_in_use_bytes'")" "$lo" "$hi"
run "$TOPSPROF" --import-profile "$vpd"
expect_rc 0
expect_out "Memory utilization:"
expect_out "cpu_hot"
# two runs merged: each process its series, one host series (the first file's)
"$TOPSPROF" --quiet --memory-utilization --utilization-frequency 10 \
	--export-visual-profiler "$TMP/vpd" "$BIN/cpu_hot" 500 || die "the second vpd run failed"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 0
run "$TOPSPROF" --import-profile "$TMP/merged.vpd"
expect_rc 0
rows=$(sed -n '/ Memory utilization:/,/^==[0-9]*==$/p' <<<"$out")
checks=$((checks + 1))
[ "$(grep -c ' cpu_hot$' <<<"$rows")" = 2 ] && [ "$(grep -c ' host$' <<<"$rows")" = 1 ] ||
	die "the merged file's series"$'\n'"$out"
read -r n hz <<<"$(samples Memory)"
expect_between "the merged samples of one run at 10 Hz over 0.5 s" "$n" "$lo" "$hi"

# --- bad requests ---------------------------------------------------------------------------------
run "$TOPSPROF" --utilization-frequency 0 --cpu-utilization "$BIN/cpu_hot" 10
expect_rc 2
run "$TOPSPROF" --utilization-frequency 10 "$BIN/cpu_hot" 10
expect_rc 0
expect_err "--utilization-frequency has no effect without --cpu-utilization or --memory-utilization"
done_ok
