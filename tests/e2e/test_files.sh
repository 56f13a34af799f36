#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Files in and out: CSV parsed back with a real CSV parser, the Perfetto trace validated, the
# profile round trip byte for byte for every print option, output names for ranks, overwrite
# refusal, atomic writes under a full disk, the log file, hostile profiles.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

# --- CSV --------------------------------------------------------------------------------------
run "$TOPSPROF" --enable-activities operator --print-gcu-trace --export-csv "$TMP/trace.csv" \
	"$BIN/simpleElemwiseAdd"
expect_rc 0
python3 - "$TMP/trace.csv" <<'PY' || die "trace CSV: $(cat "$TMP/trace.csv")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["Type", "Start", "Duration", "KernelId", "DeviceId", "StreamId", "Name"], rows[0]
body = rows[1:]
assert [r[6] for r in body] == ["warm_up()", "scalar_add(float*, float*, float*, unsigned long)",
                               "vector_add(float*, float*, float*, unsigned long)"], body
assert [r[2] for r in body] == ["13.44us", "56.61ms", "8.55ms"], body
assert body[0][1] == "0.00ns" and all(r[0] == "Operator" for r in body)
ids = [int(r[3]) for r in body]
assert ids == sorted(ids) and len(set(ids)) == 3
assert all(r[4] == "0" and int(r[5]) >= 0 for r in body)
PY
run "$TOPSPROF" --export-csv "$TMP/summary.csv" "$BIN/simpleElemwiseAdd"
expect_rc 0
python3 - "$TMP/summary.csv" <<'PY' || die "summary CSV: $(cat "$TMP/summary.csv")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"], rows[0]
by = {}
for r in rows[1:]:
    by.setdefault(r[0], {})[r[7]] = r
gcu, rt = by["GCU"], by["RUNTIME"]
assert gcu["scalar_add(float*, float*, float*, unsigned long)"][2] == "56.61ms"
assert gcu["[Memcpy HtoD 4.00MB]"][3] == "2"
assert rt["topsStreamSynchronize"][3] == "5" and rt["topsLaunchKernel"][3] == "3"
for section in by.values():
    assert abs(sum(float(r[1]) for r in section.values()) - 100) < 0.1
assert sum(int(r[3]) for r in rt.values()) == 26
PY

# --- the Perfetto trace -------------------------------------------------------------------------
run "$TOPSPROF" --export-chrome-trace "$TMP/trace.json" "$BIN/stress" -n 20 -t 2 -s 2
expect_rc 0
python3 - "$TMP/trace.json" <<'PY' || die "chrome trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
need = {"X": {"name", "ph", "ts", "dur", "pid", "tid", "cat"}, "M": {"name", "ph", "pid", "args"},
        "C": {"name", "ph", "ts", "pid", "args"},
        "s": {"name", "ph", "ts", "pid", "tid", "id", "cat"}, "f": {"name", "ph", "ts", "pid", "tid", "id", "cat", "bp"}}
for e in ev:
    assert need[e["ph"]] <= set(e), e
    assert e.get("ts", 0) >= 0 and e.get("dur", 0) >= 0, e
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
assert starts.keys() == ends.keys() and len(starts) == 2 * 20 * 3, (len(starts), len(ends))
api = [e for e in ev if e["ph"] == "X" and e["cat"] == "runtime"]
gcu = [e for e in ev if e["ph"] == "X" and e["pid"] >= 1000000000]
assert len(api) == 2 * (20 * 4 + 23) + 2, len(api)
assert len(gcu) == 2 * 20 * 3, len(gcu)
# the counters of commands running per device: never below 0, back to 0 at the end
for pid in {e["pid"] for e in ev if e["ph"] == "C"}:
    vals = [e["args"]["commands"] for e in ev if e["ph"] == "C" and e["pid"] == pid]
    assert min(vals) >= 0 and vals[-1] == 0 and max(vals) >= 1, vals
assert any(e["ph"] == "C" for e in ev)
# every flow leaves a launch call and lands inside its GCU slice
for i, s in starts.items():
    f = ends[i]
    assert s["ts"] <= f["ts"] + 0.002, (s, f)
    assert any(g["pid"] == f["pid"] and g["tid"] == f["tid"] and g["ts"] <= f["ts"] <= g["ts"] + g["dur"] for g in gcu)
PY

# --- the profile: an import prints what the run printed --------------------------------------------
for opts in "" "--print-gcu-trace" "--print-api-summary" "--print-summary-per-gcu" "--print-gcu-summary"; do
	rm -f "$TMP/p.prof"
	run "$TOPSPROF" $opts --export-profile "$TMP/p.prof" --topstx-domain-include all "$BIN/topstx_ranges"
	expect_rc 0
	sed 's/^==[0-9]*==//' <<<"$out" >"$TMP/live"
	run "$TOPSPROF" $opts --import-profile "$TMP/p.prof"
	expect_rc 0
	sed 's/^==[0-9]*==//' <<<"$out" >"$TMP/imported"
	cmp -s "$TMP/live" "$TMP/imported" || die "import differs ($opts): $(diff "$TMP/live" "$TMP/imported")"
done
# imported with other options than the run had, and re-exported as CSV
run "$TOPSPROF" --import-profile "$TMP/p.prof" --print-gcu-trace --export-csv "$TMP/re.csv"
expect_rc 0
expect_out "GCU trace:"
head -n 1 "$TMP/re.csv" | grep -q '^Type,Start,Duration,KernelId,DeviceId,StreamId,Name' || die "re.csv"

# hostile profiles: one error line, exit 2, never a crash
head -c 100 "$TMP/p.prof" >"$TMP/bad.trunc"
cp "$TMP/p.prof" "$TMP/bad.flip"
printf '\x55' | dd of="$TMP/bad.flip" bs=1 seek=60 conv=notrunc 2>/dev/null
python3 -c "d = bytearray(open('$TMP/p.prof', 'rb').read()); d[8] = 9; open('$TMP/bad.version', 'wb').write(d)"
: >"$TMP/bad.empty"
cp /etc/passwd "$TMP/bad.kind"
for f in bad.trunc bad.flip bad.version bad.empty bad.kind; do
	run "$TOPSPROF" --import-profile "$TMP/$f"
	expect_rc 2 "$f"
	expect_lines err 1
	expect_err "topsprof: error: --import-profile: $TMP/$f: "
done
expect_err "not a topsprof profile"

# --- raw data: replayed through the same analysis, it reproduces the report --------------------------
for opts in "" "--print-gcu-trace" "--print-summary-per-gcu"; do
	for mode in stats trace; do
		rm -f "$TMP/r.raw"
		run "$TOPSPROF" $opts --api-mode $mode --export-rawdata "$TMP/r.raw" \
			--topstx-domain-include Training "$BIN/topstx_ranges"
		expect_rc 0
		grep -v '^process profile data' <<<"$out" | sed 's/^==[0-9]*==//' >"$TMP/live"
		run "$TOPSPROF" $opts --import-rawdata "$TMP/r.raw"
		expect_rc 0
		grep -v '^process profile data' <<<"$out" | sed 's/^==[0-9]*==//' >"$TMP/replayed"
		cmp -s "$TMP/live" "$TMP/replayed" ||
			die "raw data ($opts, $mode): $(diff "$TMP/live" "$TMP/replayed")"
	done
done
# only a summary asked for: the import keeps no runtime call (said under --debug), and prints what
# an import that keeps every call (for a Chrome trace) prints
run "$TOPSPROF" --debug --import-rawdata "$TMP/r.raw"
expect_rc 0
expect_err "calls not kept (only a summary is asked for)"
grep -v '^process profile data' <<<"$out" | sed 's/^==[0-9]*==//' >"$TMP/summary_only"
run "$TOPSPROF" --debug --import-rawdata "$TMP/r.raw" --export-chrome-trace "$TMP/every.json"
expect_rc 0
# the calls kept, and the memory they hold, said under --debug (HOW-IT-WORKS: memory per event)
checks=$((checks + 1))
grep -Eq '^topsprof: debug: [1-9][0-9]* calls kept, [0-9]+\.[0-9] MB, [0-9]+\.[0-9] bytes a call$' \
	<<<"$err" || die "no 'N calls kept, X MB, Y bytes a call' under --debug: $err"
grep -v '^process profile data' <<<"$out" | sed 's/^==[0-9]*==//' >"$TMP/every_call"
cmp -s "$TMP/summary_only" "$TMP/every_call" ||
	die "summary without the calls: $(diff "$TMP/summary_only" "$TMP/every_call")"
gzip -t "$TMP/r.raw" || die "raw data is not a gzip stream"
head -c 200 "$TMP/r.raw" >"$TMP/raw.trunc"
cp "$TMP/r.raw" "$TMP/raw.flip"
printf '\x55\x55\x55' | dd of="$TMP/raw.flip" bs=1 seek=300 conv=notrunc 2>/dev/null
for f in raw.trunc raw.flip p.prof; do
	run "$TOPSPROF" --import-rawdata "$TMP/$f"
	expect_rc 2 "$f"
	expect_lines err 1
	expect_err "topsprof: error: --import-rawdata: $TMP/$f: "
done

# --- names for ranks; never overwritten; atomic ------------------------------------------------------
RANK=3 run "$TOPSPROF" --quiet --export-csv "$TMP/r%q{RANK}-%h-%p.csv" "$BIN/simpleElemwiseAdd"
expect_rc 0
ls "$TMP"/r3-"$(hostname)"-*.csv >/dev/null 2>&1 || die "%q{RANK}-%h-%p: $(ls "$TMP")"
run "$TOPSPROF" --export-csv "$TMP/r%q{NO_SUCH_VAR}.csv" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "environment variable NO_SUCH_VAR is not set"
echo keep >"$TMP/exists.csv"
run "$TOPSPROF" --print-app-log --export-csv "$TMP/exists.csv" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "$TMP/exists.csv: exists (use --force-overwrite to replace it)"
grep -q "PASSED" <<<"$out" && die "the app ran although the output exists"
[ "$(cat "$TMP/exists.csv")" = keep ] || die "overwritten"
run "$TOPSPROF" --force-overwrite --export-csv "$TMP/exists.csv" "$BIN/simpleElemwiseAdd"
expect_rc 0
head -n 1 "$TMP/exists.csv" | grep -q '^Type,' || die "--force-overwrite did not replace it"

# a file that cannot be written: said, and topsprof's exit status says so too
run "$TOPSPROF" --export-csv /nonexistent-dir/x.csv "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "--export-csv: /nonexistent-dir/x.csv: No such file or directory"

# a full disk: the write error names the path, no half file is left
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2>/dev/null; then
	run "$TOPSPROF" --export-chrome-trace "$TMP/small/big.json" "$BIN/stress" -n 200 -t 2
	umount_after=1
	expect_err "--export-chrome-trace: $TMP/small/big.json: No space left on device"
	left=$(ls -A "$TMP/small")
	umount "$TMP/small"
	[ -z "$left" ] || die "left behind on a full disk: $left"
else
	echo "note: cannot mount a tmpfs here; the full-disk case is not run"
fi

# --- the log file ------------------------------------------------------------------------------------
run "$TOPSPROF" --log-file "$TMP/run.log" "$BIN/simpleElemwiseAdd"
expect_rc 0
[ "$(cat "$TMP/run.log")" = "$out" ] || die "log differs from what was printed"
run "$TOPSPROF" --quiet --log-file "$TMP/quiet.log" "$BIN/simpleElemwiseAdd"
[ -z "$out" ] && grep -q "RUNTIME activities" "$TMP/quiet.log" || die "--quiet --log-file"
run "$TOPSPROF" --log-file "$TMP/run.log" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "run.log: exists"
# --- --debug-dump: the raw state in the current directory, enough to replay the run -------------
mkdir -p "$TMP/dump"
(cd "$TMP/dump" && "$TOPSPROF" --debug-dump --quiet --log-file "$TMP/dump.log" \
	"$BIN/simpleElemwiseAdd" 2>"$TMP/dump.err") || die "--debug-dump: $(cat "$TMP/dump.err")"
# --debug-dump is --debug too; --quiet keeps its debug lines for the log file
grep -q "topsprof: debug:" "$TMP/dump.log" || die "--debug-dump is --debug too"
[ ! -s "$TMP/dump.err" ] || die "--debug-dump --quiet printed: $(cat "$TMP/dump.err")"
ls "$TMP"/dump/topsprof-debug-*.raw "$TMP"/dump/topsprof-debug-*.txt >/dev/null || die "dump files"
grep -q "^runtime: .*libtopsrt.so.1" "$TMP"/dump/topsprof-debug-*.txt || die "dump text"
run "$TOPSPROF" --import-rawdata "$(ls "$TMP"/dump/topsprof-debug-*.raw)"
expect_rc 0
expect_out "Total Calls 26"
done_ok
