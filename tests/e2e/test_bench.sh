#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# make bench's smoke test: a quick run (BENCH_QUICK=1: tiny counts, two rounds) of
# scripts/bench/run.sh has the shape the README's table comes from: the kernel and hypervisor
# lines first; every row of every series present, each either measured (a median and a min-max
# that parse as numbers, min <= median <= max, a ratio where it has a baseline) or skipped with
# its reason said before the tables (a peer not installed: "bpftrace: not installed, row
# skipped"); no run failed; the helpers' series said left out or absent. No timing is judged:
# the figures are for people, as ratios taken in one run.
. "$E2E_DIR/lib.sh"
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
RUN=$E2E_DIR/../../scripts/bench/run.sh
for f in bare apibench libinterpose.so; do
	[ -e "$OUTPUT/bench/$f" ] || die "$OUTPUT/bench/$f is missing (make e2e builds it)"
done

run env BENCH_QUICK=1 BENCH_LIMIT_S=60 "$RUN" "$OUTPUT"
expect_rc 0 "the quick benchmark"

# the machine, first
checks=$((checks + 1))
[ "$(sed -n 1p <<<"$out")" = "kernel: $(uname -r) ($(uname -m))" ] ||
	die "the first line is not the kernel: $(sed -n 1p <<<"$out")"
checks=$((checks + 1))
grep -Eq '^hypervisor: [^ ]' <<<"$(sed -n 2p <<<"$out")" ||
	die "the second line does not name the hypervisor: $(sed -n 2p <<<"$out")"
expect_out "rounds: 2, interleaved"

# the series and their rows, as the README's table has them
for s in "### API call cost" "### Bystanders" "### The stress app end to end" \
	"### A launcher: sh starting" "### Start-up and detach" "### All $(nproc) cores calling" \
	"### CPU sampling, utilization sampling, kernel callstacks"; do
	expect_out "$s"
done
rows=$(grep '^| ' <<<"$out" | grep -v '^| measure |')
title() { awk -F' [|] ' -v t="$1" '{ sub(/^[|] /, "") } index($1, t) == 1 { print; n++ } END { exit n != 1 }' <<<"$rows"; }
for rt in plain endbr64; do
	for t in untraced "LD_PRELOAD interposer" "bare uprobe+uretprobe pair" bpftrace ltrace \
		"topsprof statistics mode" "topsprof trace mode"; do
		checks=$((checks + 1))
		title "$rt: $t" >/dev/null || die "no one row '$rt: $t':"$'\n'"$rows"
	done
done
for t in "endbr64: bare pair at the first byte" "no topsprof running" \
	"topsprof profiling an idle sleep it launched" "topsprof --attach-pid an idle sleep" \
	"topsprof profiling an idle sleep, probes on the file" "sh and its apibench children alone" \
	"under topsprof, scoped probes" "under topsprof, probes on the file" "alone" "under topsprof (statistics mode)" "under topsprof --api-mode trace" \
	"/bin/true alone" "topsprof /bin/true" "topsprof start-up" "topsprof detach" "topsprof --attach-pid detach" \
	"bpftrace (a uprobe pair) -c /bin/true" "single uprobes (TOPSPROF_NO_UPROBE_MULTI=1)" \
	"single uprobes: start-up" "single uprobes: detach" "calls per second traced" "events lost" \
	"cpu_hot -n" "the same with --cpu-profiling-callstack" "topsprof's own CPU ms, without" \
	"topsprof's own CPU ms, with sampling" "the sampling program's own runs" \
	"topsprof's CPU ms watching sleep" "the same with --cpu-utilization" "dd, " \
	"dd followed by --kernel-callstack" "dd not followed"; do
	checks=$((checks + 1))
	title "$t" >/dev/null || die "no one row '$t':"$'\n'"$rows"
done

# every row measured or skipped with a reason said before the tables; every figure a number
bad=$(awk -F' [|] ' '
	function num(v) { return v ~ /^[0-9]+([.][0-9]+)?$/ }
	{ sub(/^[|] /, ""); sub(/ ?[|]$/, "") }
	$2 ~ /^skipped: ./ { next }
	!num($2) { print "no median: " $0; next }
	{ n = split($3, mm, / - /) }
	n != 2 || !num(mm[1]) || !num(mm[2]) { print "no min - max: " $0; next }
	mm[1] + 0 > $2 + 0 || $2 + 0 > mm[2] + 0 { print "median outside min - max: " $0; next }
	$4 != "" && $4 !~ /^[0-9]+([.][0-9]+)?x [^ ]/ { print "not a ratio: " $0 }' <<<"$rows")
checks=$((checks + 1))
[ -z "$bad" ] || die "$bad"
while read -r reason; do
	checks=$((checks + 1))
	grep -qxF -- "$reason" <<<"$(sed '/^### /,$d' <<<"$out")" ||
		die "'$reason' is not said before the tables:"$'\n'"$out"
done < <(awk -F' [|] ' '$2 ~ /^skipped: / { sub(/^skipped: /, "", $2); print $2 }' <<<"$rows" | sort -u)
if ! command -v bpftrace >/dev/null; then
	expect_out "bpftrace: not installed, row skipped"
fi
if ! command -v ltrace >/dev/null; then
	expect_out "ltrace: not installed, row skipped"
fi
# the rows a ratio is about have one
for t in "plain: topsprof statistics mode" "endbr64: topsprof trace mode" \
	"topsprof profiling an idle sleep it launched" "topsprof --attach-pid an idle sleep"; do
	checks=$((checks + 1))
	title "$t" | awk -F' [|] ' '$4 ~ /^[0-9.]+x / { ok = 1 } END { exit !ok }' ||
		die "row '$t' has no ratio: $(title "$t")"
done
expect_out "Comparisons (of the medians):"
expect_out "- a bystander's call while topsprof profiles another process (launch) / alone: "
expect_out "- scoped probes: a new process of the profiled tree (its links, its hold where needed): "

# the helpers' series: a quick run leaves them out, and says so; or says they are absent
for h in kcalls scale; do
	if [ -e "$E2E_DIR/../../scripts/bench/$h.sh" ]; then
		expect_out "not measured in a quick run (scripts/bench/$h.sh)"
	else
		expect_out "scripts/bench/$h.sh is absent: not measured"
	fi
done

# no run failed
checks=$((checks + 1))
grep -qF "bench: 0 failed runs" <<<"$out" ||
	die "runs failed:"$'\n'"$(grep -F ' failed: ' <<<"$err")"$'\n'"$out"
checks=$((checks + 1))
! grep -q "failed in every round" <<<"$out" || die "a row failed in every round:"$'\n'"$out$err"

# the 10M-event series' shape, at 20000 events and one round: each row measured, SQLite's floor
# beside the vpd export, their ratio
SCALE=$E2E_DIR/../../scripts/bench/scale.sh
if [ -e "$SCALE" ] && [ -x /usr/bin/time ]; then
	run env BENCH_SCALE_EVENTS=20000 BENCH_SCALE_ROUNDS=1 "$SCALE" "$OUTPUT"
	expect_rc 0 "scale.sh at 20000 events"
	for t in "summary from a profile" "summary from raw data" "raw data to vpd" \
		"SQLite alone: the vpd's api_call rows" "to CSV GCU trace" "profile to Chrome trace"; do
		checks=$((checks + 1))
		grep -F "$t" <<<"$out" | grep -Eq '[|] 2[0-9],?[0-9]{3} [|] [0-9.]+ [(][0-9.]+-[0-9.]+[)] s [|]' ||
			die "scale.sh: no measured row '$t':"$'\n'"$out"
	done
	checks=$((checks + 1))
	grep -Eq '^raw data to vpd / SQLite alone inserting its api_call rows: [0-9.]+ s / [0-9.]+ s = [0-9.]+x$' <<<"$out" ||
		die "scale.sh: no ratio of the vpd export to SQLite alone:"$'\n'"$out"
fi

done_ok
