#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CPU and memory utilization as a user sees it: a sim app that keeps two threads busy shows about
# two CPUs' worth, as the app itself measures it, the host about all of its CPUs; short-lived
# threads count; the series cover the run at the asked frequency, from a 'topsprof start' on when
# collection starts off; memory is read for the app and the host; the Perfetto trace has them as
# counters, the vpd as counter rows, and a profile or raw data import prints the same summary.
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
expect_between "CPU samples at 20 Hz over 1 s" "$n" 16 24
# two threads running flat out: two CPUs' worth (on a machine with two or more)
want=$((ncpus >= 2 ? 2 : 1))
expect_between "cpu_hot average CPU %" "$(field CPU cpu_hot 2)" $((want * 60)) $((want * 100 + 2))
expect_near "cpu_hot average CPU %" "$(field CPU cpu_hot 2)" "$(app_pct)"
# never more than every CPU could give
expect_between "cpu_hot max CPU %" "$(field CPU cpu_hot 3)" $((want * 60)) $((ncpus * 100))
expect_between "host average CPU %" "$(field CPU host 2)" $((want * 60 / ncpus)) 100
rss=$(field Memory cpu_hot 3)
checks=$((checks + 1))
[[ "$rss" =~ ^[0-9.]+(KB|MB)$ ]] || die "cpu_hot max RSS '$rss'"$'\n'"$out"
checks=$((checks + 1))
[[ "$(field Memory host 2)" =~ ^[0-9.]+(MB|GB)$ ]] || die "host memory in use"$'\n'"$out"
live=$out

# the Perfetto trace: CPU % and memory counters of the app and of the host, over the run
python3 - "$TMP/trace.json" <<'PY' || die "trace counters"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cpu = [e for e in ev if e["ph"] == "C" and e["name"] == "CPU %"]
mem = [e for e in ev if e["ph"] == "C" and e["name"] == "memory (MB)"]
host = [e for e in ev if e["ph"] == "M" and e["args"].get("name") == "host"]
assert host, "no host process"
hp = host[0]["pid"]
app = [e for e in cpu if e["pid"] != hp]
# 20 Hz for the app, 10 Hz for the host (/proc/stat counts in 10 ms ticks)
assert len(app) >= 16 and len([e for e in cpu if e["pid"] == hp]) >= 8, len(cpu)
assert all(0 <= e["args"]["of one CPU"] <= 100 * 64 for e in app)
assert all("rss" in e["args"] and "vsz" in e["args"] for e in mem if e["pid"] != hp)
ts = sorted(e["ts"] for e in app)
# the series cover the run: from its start to its end, 50 ms apart
assert ts[0] < 150000 and ts[-1] > 850000, (ts[0], ts[-1])
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
"$TOPSPROF" --profile-from-start off --session-new utiltest --cpu-utilization \
	--utilization-frequency 50 "$BIN/cpu_hot" 1500 >"$TMP/bg.out" 2>&1 &
bg=$!
sleep 0.7
"$TOPSPROF" start --session utiltest >/dev/null 2>&1 || die "topsprof start failed"
wait "$bg" || die "the run that was started late failed: $(cat "$TMP/bg.out")"
out=$(cat "$TMP/bg.out")
read -r n hz <<<"$(samples CPU)"
expect_between "samples after a start 0.7 s into a 1.5 s run, at 50 Hz" "$n" 15 45

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
run "$TOPSPROF" --memory-utilization --utilization-frequency 10 \
	--export-visual-profiler "$TMP/vpd" "$BIN/cpu_hot" 500
expect_rc 0
expect_out "Memory utilization:"
checks=$((checks + 1))
! grep -q "CPU utilization:" <<<"$out" || die "CPU utilization without --cpu-utilization"
read -r n hz <<<"$(samples Memory)"
expect_between "memory samples at 10 Hz over 0.5 s" "$n" 3 7
vpd=$(ls "$TMP"/vpd/*.vpd)
q() { sqlite3 "$vpd" "$1"; }
expect_between "rss rows" "$(q "SELECT COUNT(*) FROM counter WHERE name='rss_bytes'")" 3 7
checks=$((checks + 1))
[ "$(q "SELECT COUNT(*) FROM counter WHERE name='cpu_percent'")" = 0 ] || die "cpu rows"
checks=$((checks + 1))
[ "$(q "SELECT COUNT(*) FROM counter WHERE name='vsz_bytes' AND value < (SELECT MIN(value) FROM
	counter WHERE name='rss_bytes')")" = 0 ] || die "a virtual size below the RSS"
expect_between "host rows" "$(q "SELECT COUNT(*) FROM counter WHERE name='host_memory_in_use_bytes'")" 3 7
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
expect_between "the merged samples of one run at 10 Hz over 0.5 s" "$n" 3 7

# --- bad requests ---------------------------------------------------------------------------------
run "$TOPSPROF" --utilization-frequency 0 --cpu-utilization "$BIN/cpu_hot" 10
expect_rc 2
run "$TOPSPROF" --utilization-frequency 10 "$BIN/cpu_hot" 10
expect_rc 0
expect_err "--utilization-frequency has no effect without --cpu-utilization or --memory-utilization"
done_ok
