#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# GCU records as a user sees them: the manual's example with the model's exact durations, the
# GCU trace, memcpy rows, each activity on and off, per-GCU blocks, joins of every record to its
# API call under load, clock alignment under drift, activities as JSON, the queries.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH \
	TOPS_SIM_CLOCK_DRIFT_PPB

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

gcu_rows() { sed -n '/GCU activities/,/Accumulate Time/p' <<<"$out" | grep -E '%' | sed 's/^==[0-9]*==//'; }

# --- the manual's example (3.1): the three kernels, exactly ------------------------------------
run "$TOPSPROF" --enable-activities operator "$BIN/simpleElemwiseAdd"
expect_rc 0
want="       86.86%  56.61ms      1  56.61ms  56.61ms  56.61ms scalar_add(float*, float*, float*, unsigned long)
       13.12%   8.55ms      1   8.55ms   8.55ms   8.55ms vector_add(float*, float*, float*, unsigned long)
        0.02%  13.44us      1  13.44us  13.44us  13.44us warm_up()"
[ "$(gcu_rows)" = "$want" ] || die "GCU activities:"$'\n'"$(gcu_rows)"$'\n'"wanted:"$'\n'"$want"
grep -qE '^==[0-9]+==     Accumulate Time 65.17ms, Total Calls 3$' <<<"$out" || die "GCU totals: $out"
grep -qE '^==[0-9]+==     Total Time [0-9.]+(ns|us|ms|s)$' <<<"$out" || die "Total Time: $out"
# the section order of the manual: GCU, CPU, RUNTIME
order=$(grep -oE '(GCU|CPU|RUNTIME) activities' <<<"$out" | tr '\n' ',')
[ "$order" = "GCU activities,CPU activities,RUNTIME activities," ] || die "sections: $order"

# --- the GCU trace (3.2) ----------------------------------------------------------------------
run "$TOPSPROF" --enable-activities operator --print-gcu-trace "$BIN/simpleElemwiseAdd"
expect_rc 0
grep -qE '^==[0-9]+==      Start   Duration                        Node Name Name$' <<<"$out" ||
	die "trace header: $out"
trace=$(sed -n '/GCU trace:/,/Accumulate/p' <<<"$out" | grep -vE 'GCU trace|Accumulate' | sed 's/^==[0-9]*==//')
[ "$(awk '{ print $NF }' <<<"$trace" | tr '\n' ' ')" = "warm_up() long) long) " ] || die "trace order: $trace"
grep -qE '^     0\.00ns    13\.44us {34}warm_up\(\)$' <<<"$trace" || die "trace row: $trace"
grep -qE '^ +[0-9.]+ms    56\.61ms {34}scalar_add' <<<"$trace" || die "trace row: $trace"
expect_out "Accumulate Time 65.17ms, Total Calls 3"
grep -q "RUNTIME activities" <<<"$out" && die "--print-gcu-trace alone prints only the trace"

# --- memcpy rows (333.50 us of device time: 333.49 us of host time at the 20 ppm of GCU 0), and
# each activity on and off ---------------------------------------------------------------------
run "$TOPSPROF" "$BIN/simpleElemwiseAdd"
expect_out "[Memcpy HtoD 4.00MB]"
expect_out "[Memcpy DtoH 4.00MB]"
[ "$(gcu_rows | grep -c 'Memcpy HtoD 4.00MB')" = 1 ] || die "HtoD row"
grep -qE ' 2 +333\.49us +333\.49us +333\.49us \[Memcpy HtoD 4\.00MB\]$' <<<"$(gcu_rows)" ||
	die "HtoD row: $(gcu_rows)"
expect_out "Total Calls 7"
run "$TOPSPROF" --enable-activities MEMCPY "$BIN/simpleElemwiseAdd"
[ "$(gcu_rows | grep -c Memcpy)" = 2 ] && ! gcu_rows | grep -q _add || die "memcpy only: $(gcu_rows)"
run "$TOPSPROF" --enable-activities all "$BIN/simpleElemwiseAdd"
expect_err "ENFLAME_GENERATE_PROFILE_META=true"
gcu_rows | grep -q Memcpy_ && die "DTE records without profile meta"
ENFLAME_GENERATE_PROFILE_META=true run "$TOPSPROF" --enable-activities operator,memcpy_cdte \
	"$BIN/simpleElemwiseAdd"
[ -z "$err" ] || die "warning with profile meta: $err"
[ "$(gcu_rows | grep -c 'Memcpy_cdte')" = 2 ] || die "CDTE rows: $(gcu_rows)"
gcu_rows | grep -q 'Memcpy_sdte' && die "SDTE was not asked for"
grep -q ' 59\.44ms .*scalar_add' <<<"$(gcu_rows)" || die "collecting DTE slows kernels: $(gcu_rows)"
ENFLAME_GENERATE_PROFILE_META=true run "$TOPSPROF" --enable-activities Memcpy_sdte \
	"$BIN/simpleElemwiseAdd"
[ "$(gcu_rows | grep -c .)" = 2 ] && [ "$(gcu_rows | grep -c Memcpy_sdte)" = 2 ] ||
	die "SDTE only: $(gcu_rows)"

# --- per GCU, on two devices --------------------------------------------------------------------
run "$TOPSPROF" --print-summary-per-gcu "$BIN/stress" -n 30 -t 4 -s 1
expect_rc 0
for d in 0 1; do
	block=$(sed -n "/GCU activities, device $d:/,/Total Time/p" <<<"$out")
	grep -qE ' 60 .* stress_scale' <<<"$block" || die "device $d block: $block"
	grep -q 'Memcpy HtoD 16.38KB' <<<"$block" || die "device $d memcpy: $block"
done
expect_out "RUNTIME activities:"
run "$TOPSPROF" --print-gcu-summary "$BIN/stress" -n 10 -t 2
expect_out "GCU activities:"
grep -q "RUNTIME activities" <<<"$out" && die "--print-gcu-summary prints only the GCU section"

# --- every record joined to its call, under load ------------------------------------------------
TOPS_SIM_DEVICE_COUNT=4 TOPS_SIM_DRIVER_DIR=$TMP/driver4 run "$TOPSPROF" --debug --print-gcu-trace \
	--quiet "$BIN/stress" -n 150 -t 8 -s 3
expect_rc 0
expect_err "joined 3600 of 3600 GCU records to API calls; 0 calls without a record"
grep -q "could not be joined" <<<"$err" && die "unjoined: $err"
ENFLAME_GENERATE_PROFILE_META=true run "$TOPSPROF" --debug --api-mode trace --quiet \
	--enable-activities all "$BIN/fork_app" 2
expect_err "joined 21 of 21 GCU records"

# --- clock alignment under drift ----------------------------------------------------------------
# a device clock 1000 ppm fast: its 56.61 ms of ticks pass in 56.55 ms of host time, and every
# record still falls after the call that launched it
TOPS_SIM_CLOCK_DRIFT_PPB=1000000 TOPS_SIM_DRIVER_DIR=$TMP/drift run "$TOPSPROF" --debug \
	--enable-activities operator --api-mode trace "$BIN/simpleElemwiseAdd"
grep -q ' 56\.55ms .*scalar_add' <<<"$(gcu_rows)" || die "drift: $(gcu_rows)"
expect_err "joined 3 of 3 GCU records"
TOPS_SIM_CLOCK_DRIFT_PPB=-1000000 TOPS_SIM_DRIVER_DIR=$TMP/drift2 run "$TOPSPROF" --debug \
	--print-gcu-trace --quiet "$BIN/stress" -n 2000 -t 2 -s 2
expect_err "joined 12000 of 12000 GCU records"

# --- activities as JSON (4.4) ------------------------------------------------------------------
run "$TOPSPROF" --export-activities "$TMP/act.json"
expect_rc 0
python3 - "$TMP/act.json" <<'PY' || die "activity tree: $(cat "$TMP/act.json")"
import json, sys
t = json.load(open(sys.argv[1]))
leaves = []
def walk(n):
    assert "type" in n
    if n["type"] == "activity":
        leaves.append((n["name"], n["isCheck"]))
    for k in n.get("children", []):
        walk(k)
walk(t)
assert sorted(leaves) == [("Memcpy", True), ("Memcpy_cdte", False), ("Memcpy_sdte", False),
                          ("Operator", True)], leaves
PY
run "$TOPSPROF" --export-activities "$TMP/act.json"
expect_rc 1
expect_err "exists (use --force-overwrite to replace it)"
run "$TOPSPROF" --export-activities "$TMP/act.json" --force-overwrite
expect_rc 0
# edit: Memcpy off, so only kernels remain
python3 -c "
import json, sys
t = json.load(open('$TMP/act.json'))
for n in t['children'][0]['children']:
    if n['name'] == 'Memcpy': n['isCheck'] = False
json.dump(t, open('$TMP/act.json', 'w'))"
run "$TOPSPROF" --import-activities "$TMP/act.json" "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_out "Total Calls 3"
gcu_rows | grep -q Memcpy && die "imported: Memcpy was unchecked"
printf '{"type":"root","children":[{"type":"x","children":[{"type":"activity","name":"Kernel","isCheck":true}]}]}' >"$TMP/bad.json"
run "$TOPSPROF" --import-activities "$TMP/bad.json" "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_lines err 1
expect_err "$TMP/bad.json: \$.children[0].children[0].name: unknown activity 'Kernel'"
printf '{"type": "root",\n "children": [}' >"$TMP/bad2.json"
run "$TOPSPROF" --import-activities "$TMP/bad2.json" "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_err "not valid JSON at line 2"

# --- the queries (4.2, --query-trace) -----------------------------------------------------------
run "$TOPSPROF" --query-trace
expect_rc 0
[ "$out" = $'==== Trace Domains:\n    runtime,topstx,topsprofiler' ] || die "query-trace: $out"
run "$TOPSPROF" --query-trace "$BIN/topstx_ranges"
expect_out $'==== Custom topstx Domains:\n    Preprocess,Training'

# --- a device another profiler reads too: both get every record -------------------------------
# (the other reader reads from before the run to after it however slow the machine: it has
# enabled the devices when its command starts, and its command waits for the run's end)
"$BIN/gcu-records" -o "$TMP/other.rec" sh -c \
	"touch '$TMP/other.ready'; while [ ! -e '$TMP/other.done' ]; do sleep 0.1; done" &
other=$!
while [ ! -e "$TMP/other.ready" ] && kill -0 $other 2>/dev/null; do sleep 0.1; done
run "$TOPSPROF" --enable-activities operator "$BIN/simpleElemwiseAdd"
touch "$TMP/other.done"
wait $other
expect_rc 0
expect_out "Accumulate Time 65.17ms, Total Calls 3"
[ "$(grep -c 'kind=kernel' "$TMP/other.rec")" = 3 ] || die "the other reader: $(cat "$TMP/other.rec")"
done_ok
