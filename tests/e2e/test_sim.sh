#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The simulated GCU as an application and a profiler see it: every sample runs to success on
# its own; a reader in another process (gcu-records) sees the records of a known workload, with
# the model's exact durations; the libraries look like a vendor's.
. "$E2E_DIR/lib.sh"
SIM=$OUTPUT/sim
BIN=$SIM/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META

# --- every sample, no profiler ----------------------------------------------------------------
for app in simpleElemwiseAdd simpleElemwiseAdd_static "stress -n 50" topstx_ranges dlopen_app \
	fork_app "ctypes_app.py $SIM/lib/libtopsrt.so.1"; do
	run $BIN/$app
	expect_rc 0 "$app"
	case $app in stress*) expect_out "errors=0" ;; *) expect_out "PASSED" ;; esac
done
run $BIN/stress -n 30 -t 3 -s 3
expect_rc 0
expect_out "stress: threads=3 streams=3 devices=2 launches=90 copies=180 errors=0"

# --- records seen by another process ----------------------------------------------------------
rec() { # activities app...
	local act=$1
	shift
	"$BIN/gcu-records" -a "$act" -o "$TMP/rec" "$@" >"$TMP/app" 2>"$TMP/rec.err" ||
		die "gcu-records $*: $(cat "$TMP/rec.err")"
	grep '^dev=.* kind=' "$TMP/rec" >"$TMP/rec.lines" || true
}
field() { # name: the values of field name=, one a line
	sed -n "s/^\(.* \)\{0,1\}$1=\([^ ]*\).*/\2/p" "$TMP/rec.lines"
}

rec operator,memcpy "$BIN/simpleElemwiseAdd"
got=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(kind|dur_ns|bytes|copy)=/) printf "%s ", $i; sub(/.* name=/, ""); print }' "$TMP/rec.lines")
want="kind=kernel dur_ns=13440 bytes=0 copy=- warm_up()
kind=memcpy dur_ns=333500 bytes=4000000 copy=HtoD -
kind=memcpy dur_ns=333500 bytes=4000000 copy=HtoD -
kind=kernel dur_ns=56610000 bytes=0 copy=- scalar_add(float*, float*, float*, unsigned long)
kind=kernel dur_ns=8550000 bytes=0 copy=- vector_add(float*, float*, float*, unsigned long)
kind=memcpy dur_ns=333500 bytes=4000000 copy=DtoH -
kind=memcpy dur_ns=333500 bytes=4000000 copy=DtoH -"
[ "$got" = "$want" ] || die "simpleElemwiseAdd records:"$'\n'"$got"$'\n'"wanted:"$'\n'"$want"
grep -q '^dev=0 overflow=0$' "$TMP/rec" || die "overflow: $(cat "$TMP/rec")"
# in launch order, one after the other on its stream
field start | sort -n -c || die "records out of order"
[ "$(field launch | tr '\n' ' ')" = "1 2 3 4 5 6 7 " ] || die "launch ids: $(field launch)"

# activities select what is recorded
rec operator "$BIN/simpleElemwiseAdd"
[ "$(field kind | sort -u)" = kernel ] || die "operator only: $(field kind | sort -u)"
rec memcpy "$BIN/simpleElemwiseAdd"
[ "$(field kind | sort -u)" = memcpy ] || die "memcpy only: $(field kind | sort -u)"
# CDTE/SDTE: only with profile meta, and collecting them slows kernels by the model's 5%
rec all "$BIN/simpleElemwiseAdd"
[ "$(field engine | sort -u | tr '\n' ' ')" = "compute odte " ] || die "DTE without profile meta"
ENFLAME_GENERATE_PROFILE_META=true rec all "$BIN/simpleElemwiseAdd"
[ "$(grep -c engine=cdte "$TMP/rec.lines")" = 2 ] || die "CDTE records: $(cat "$TMP/rec.lines")"
[ "$(grep -c engine=sdte "$TMP/rec.lines")" = 2 ] || die "SDTE records"
grep -q 'kind=kernel .*dur_ns=59440500 .*name=scalar_add' "$TMP/rec.lines" || die "DTE overhead"

# many threads, streams, devices: every command recorded once, in order on each stream, with
# no two commands of one engine overlapping
rec operator,memcpy "$BIN/stress" -n 100 -t 4 -s 2
grep -q 'launches=400 copies=800 errors=0' "$TMP/app" || die "stress: $(cat "$TMP/app")"
[ "$(wc -l <"$TMP/rec.lines")" = 1200 ] || die "stress records: $(wc -l <"$TMP/rec.lines")"
[ "$(field launch | sort -n -u | wc -l)" = 1200 ] || die "launch ids are not unique"
[ "$(field dev | sort -u | tr '\n' ' ')" = "0 1 " ] || die "stress used devices $(field dev | sort -u)"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	end = f["start"] + f["dur_ns"] * 1.5;
	ks = f["dev"] " " f["stream"]; ke = f["dev"] " " f["engine"];
	if (f["start"] < last_s[ks]) { print "stream out of order: " $0; bad = 1 }
	last_s[ks] = f["start"];
	e[ke] = e[ke] " " f["start"] ":" f["dur_ns"] }
	END { exit bad }' "$TMP/rec.lines" || die "stress ordering"
for dev in 0 1; do
	for eng in compute odte; do
		grep "dev=$dev .*engine=$eng " "$TMP/rec.lines" | sed -n 's/.* start=\([0-9]*\) dur_ns=\([0-9]*\).*/\1 \2/p' |
			sort -n | awk -v hz=$((1500000000 + dev * 25000000)) \
			'{ if (NR > 1 && $1 < prev_end - 2) { print "overlap at " $1; exit 1 } prev_end = $1 + $2 * hz / 1e9 }' ||
			die "GCU $dev $eng runs two commands at once"
	done
done

# TOPS_VISIBLE_DEVICES picks the GCU
TOPS_VISIBLE_DEVICES=1 rec operator,memcpy "$BIN/stress" -n 10 -t 2
[ "$(field dev | sort -u)" = 1 ] || die "TOPS_VISIBLE_DEVICES=1 used GCUs $(field dev | sort -u)"
grep -q 'devices=1 ' "$TMP/app" || die "stress saw more than one device"

# processes of a tree each record with their own pid
rec operator,memcpy "$BIN/fork_app" 2
[ "$(field pid | sort -u | wc -l)" = 3 ] || die "fork_app pids: $(field pid | sort -u)"

# --- libraries as a vendor ships them ---------------------------------------------------------
readelf -d "$SIM/lib/libtopsrt.so.1" | grep -q 'SONAME.*\[libtopsrt.so.1\]' || die "libtopsrt SONAME"
readelf -d "$SIM/lib/libtopstx.so.1" | grep -q 'SONAME.*\[libtopstx.so.1\]' || die "libtopstx SONAME"
other=$(nm -D --defined-only "$SIM/lib/libtopsrt.so.1" | awk '$3 !~ /^(tops|__topsRegisterKernel|TOPSRT_)/')
[ -z "$other" ] || die "libtopsrt exports more than the API: $other"
other=$(nm -D --defined-only "$SIM/lib/libtopstx.so.1" | awk '$3 !~ /^(topstx|TOPSTX_)/')
[ -z "$other" ] || die "libtopstx exports more than the API: $other"
for f in topsMalloc topsLaunchKernel topsMemcpyAsync topsStreamSynchronize; do
	objdump -d --disassemble=$f "$SIM/lib-cet/libtopsrt.so.1" | grep -A1 "<$f>:" | grep -q endbr64 ||
		die "$f in the CET build does not begin with endbr64"
	objdump -d --disassemble=$f "$SIM/lib/libtopsrt.so.1" | grep -A1 "<$f>:" | grep -q endbr64 &&
		die "$f in the plain build begins with endbr64"
done
nm "$BIN/simpleElemwiseAdd_static" | grep -q ' T topsLaunchKernel$' || die "static app lacks the runtime"
readelf -d "$BIN/simpleElemwiseAdd_static" | grep -q libtopsrt && die "static app links libtopsrt.so"
readelf -d "$BIN/dlopen_app" | grep -q 'NEEDED.*libtopsrt' && die "dlopen_app links libtopsrt.so"
LD_LIBRARY_PATH=$SIM/lib run "$BIN/ctypes_app.py"
expect_rc 0 "ctypes_app.py loading the runtime by name"
readelf -d "$BIN/simpleElemwiseAdd" | grep -q 'RUNPATH.*\$ORIGIN/../lib' || die "samples lack RUNPATH"
done_ok
