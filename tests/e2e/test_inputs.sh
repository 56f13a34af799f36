#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Inputs that cannot hang topsprof (issue 12): a FIFO, a socket or a device given to an importer,
# or found in a merge directory, is refused at once with one line naming it; a merge's errors
# name the member; an error about a very long name keeps its reason visible; --quiet prints
# nothing on a successful run, and still the errors and the warnings of lost data.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH \
	OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID RANK

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v sqlite3 >/dev/null || die "sqlite3 is missing (scripts/install-deps.sh installs it)"

# good inputs of every kind
run "$TOPSPROF" --quiet --export-profile "$TMP/p.prof" --export-rawdata "$TMP/r.raw" \
	"$BIN/simpleElemwiseAdd"
expect_rc 0
run "$TOPSPROF" --quiet --export-visual-profiler "$TMP/vpd" "$BIN/simpleElemwiseAdd"
expect_rc 0
good_vpd=$(ls "$TMP"/vpd/*.vpd | head -n 1)
[ -f "$good_vpd" ] || die "no vpd written"

# what must never be read: a FIFO nobody writes, a socket, devices
mkfifo "$TMP/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/sock"
[ -S "$TMP/sock" ] || die "no socket made"

# refused KIND FILE OPTION... : exit non-zero within a second, one error line naming FILE
refused() {
	local kind=$1 file=$2 start secs
	shift 2
	start=$EPOCHREALTIME
	run timeout 10 "$@"
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	checks=$((checks + 1))
	[ "$rc" -ne 124 ] || die "$*: hung on $file (killed after 10 s)"
	[ "$rc" -ne 0 ] || die "$*: exit status 0 for $file"
	awk -v s="$secs" 'BEGIN { exit !(s < 1) }' || die "$*: took ${secs}s to refuse $file"
	expect_lines err 1
	expect_err "$file: not a regular file ($kind)"
	[ -z "$out" ] || die "$*: printed on stdout: $out"
}

for f in fifo:"a FIFO" sock:"a socket" /dev/null:"a character device" /dev/zero:"a character device"; do
	file=${f%%:*} kind=${f#*:}
	[ "${file#/}" = "$file" ] && file=$TMP/$file
	refused "$kind" "$file" "$TOPSPROF" --import-profile "$file"
	expect_err "topsprof: error: --import-profile: $file: not a regular file"
	refused "$kind" "$file" "$TOPSPROF" --import-rawdata "$file"
	expect_err "topsprof: error: --import-rawdata: $file: not a regular file"
	refused "$kind" "$file" "$TOPSPROF" --import-activities "$file" "$BIN/simpleElemwiseAdd"
	expect_err "topsprof: error: --import-activities: $file: not a regular file"
	# a merge member of each kind, among good files, is named
	rm -rf "$TMP/m" && mkdir "$TMP/m" && cp "$good_vpd" "$TMP/m/a.vpd" && cp "$good_vpd" "$TMP/m/z.vpd"
	case $file in
	*/fifo) mkfifo "$TMP/m/rank3.vpd" ;;
	*/sock) python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/m/rank3.vpd" ;;
	*) mknod "$TMP/m/rank3.vpd" c "$((0x$(stat -c %t "$file")))" "$((0x$(stat -c %T "$file")))" ;;
	esac
	refused "$kind" "$TMP/m/rank3.vpd" "$TOPSPROF" --visual-profiler-merge-from "$TMP/m" \
		--visual-profiler-merge-to "$TMP/merged.vpd"
	expect_err "topsprof: error: --visual-profiler-merge-from: $TMP/m/rank3.vpd: not a regular file"
	[ ! -e "$TMP/merged.vpd" ] || die "a merge that failed left a file"
done
# a symbolic link to a FIFO is the FIFO; a directory is not a file either
ln -s "$TMP/fifo" "$TMP/link.prof"
refused "a FIFO" "$TMP/link.prof" "$TOPSPROF" --import-profile "$TMP/link.prof"
refused "a directory" "$TMP/vpd" "$TOPSPROF" --import-rawdata "$TMP/vpd"
# the merge directory itself a FIFO: refused at once too
run timeout 10 "$TOPSPROF" --visual-profiler-merge-from "$TMP/fifo" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_lines err 1
expect_err "--visual-profiler-merge-from: $TMP/fifo: Not a directory"

# the good files still import and merge
run "$TOPSPROF" --import-profile "$TMP/p.prof"
expect_rc 0
expect_out "Total Calls 26"
run "$TOPSPROF" --import-rawdata "$TMP/r.raw"
expect_rc 0
expect_out "Total Calls 26"
run "$TOPSPROF" --import-profile "$good_vpd"
expect_rc 0
expect_out "Total Calls 26"

# --- a merge's errors name the member ---------------------------------------------------------------
rm -rf "$TMP/m" && mkdir "$TMP/m" && cp "$good_vpd" "$TMP/m/rank0.vpd"
cp "$good_vpd" "$TMP/m/rank3.vpd"
sqlite3 "$TMP/m/rank3.vpd" "DROP TABLE gcu_op"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/m" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_lines err 1
expect_err "--visual-profiler-merge-from: $TMP/m/rank3.vpd: not a topsprof vpd file (no table gcu_op)"
# cut short: SQLite's own complaint, named
head -c 12000 "$good_vpd" >"$TMP/m/rank3.vpd"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/m" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_lines err 1
expect_err "--visual-profiler-merge-from: $TMP/m/rank3.vpd: "
printf 'not a database at all, but long enough' >"$TMP/m/rank3.vpd"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/m" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_err "--visual-profiler-merge-from: $TMP/m/rank3.vpd: not an SQLite (vpd) file"
[ ! -e "$TMP/merged.vpd" ] || die "a merge that failed left a file"
# the same table missing, to an import
cp "$good_vpd" "$TMP/nogcu.vpd"
sqlite3 "$TMP/nogcu.vpd" "DROP TABLE gcu_op"
run "$TOPSPROF" --import-profile "$TMP/nogcu.vpd"
expect_rc 2
expect_err "--import-profile: $TMP/nogcu.vpd: not a topsprof vpd file (no table gcu_op)"

# --- a very long name keeps the reason of its error visible ------------------------------------------
# nested directories up to near PATH_MAX (4096): a file in them still has a name under it
seg=$(printf 'd%.0s' $(seq 200))
long=$TMP
while [ ${#long} -lt 3840 ]; do long=$long/$seg; done
mkdir -p "$long" || die "mkdir -p of a ${#long}-byte path"
missing=$long/$(printf 'm%.0s' $(seq 200)).prof
for opt in --import-profile --import-rawdata; do
	run timeout 10 "$TOPSPROF" $opt "$missing"
	expect_rc 2
	expect_lines err 1
	expect_err ": No such file or directory"
done
run timeout 10 "$TOPSPROF" --import-activities "$missing" "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_err ": No such file or directory"
# a merge directory there, its member of the longest name (their path past PATH_MAX)
member=$(printf 'r%.0s' $(seq 251)).vpd
(cd "$long" && cp "$TMP/nogcu.vpd" "$member") ||
	die "a member of a ${#member}-byte name in a ${#long}-byte directory"
run "$TOPSPROF" --visual-profiler-merge-from "$long" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_lines err 1
expect_err "rrr.vpd: not a topsprof vpd file (no table gcu_op)"
# names longer than any buffer: the name is cut in its middle, the reason whole
huge=$TMP/$(printf 'x%.0s' $(seq 5000))
run "$TOPSPROF" --visual-profiler-merge-from "$huge" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_err "xxx...xxx"
expect_err "xxx: File name too long"
run "$TOPSPROF" --export-csv "$huge" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "xxx...xxx"
expect_err "xxx': the name is too long"
run "$TOPSPROF" --log-file "$huge" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "xxx...xxx"
expect_err "xxx': the name is too long"
run "$TOPSPROF" --buffer-size "$(printf 'z%.0s' $(seq 400))" "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_err "zzz...zzz"
expect_err "zzz' is not a size (e.g. 8MB, 65536)"
run "$TOPSPROF" --enable-activities "Operator,$(printf 'y%.0s' $(seq 400))" "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_err "yyy' (known: Operator, Memcpy, Memcpy_cdte, Memcpy_sdte, all)"

# --- --quiet: nothing on a successful run ------------------------------------------------------------
quiet() { # what: stdout and stderr empty, exit 0
	expect_rc 0 "$1"
	[ -z "$out" ] || die "--quiet, $1: printed on stdout: $out"
	[ -z "$err" ] || die "--quiet, $1: printed on stderr: $err"
}
run "$TOPSPROF" --quiet --export-csv "$TMP/q.csv" --export-chrome-trace "$TMP/q.json" \
	--export-profile "$TMP/q.prof" --export-rawdata "$TMP/q.raw" --enable-activities operator,memcpy \
	--print-gcu-trace --cpu-profiling-callstack --export-folded "$TMP/q.folded" "$BIN/simpleElemwiseAdd"
quiet "a run with exports"
[ -s "$TMP/q.csv" ] && [ -s "$TMP/q.json" ] && [ -s "$TMP/q.prof" ] && [ -s "$TMP/q.raw" ] ||
	die "--quiet wrote no exports"
run "$TOPSPROF" --quiet --export-visual-profiler "$TMP/qvpd" "$BIN/simpleElemwiseAdd"
quiet "a vpd export"
run "$TOPSPROF" --quiet --import-profile "$TMP/q.prof" --export-csv "$TMP/q2.csv"
quiet "an imported profile"
run "$TOPSPROF" --quiet --import-rawdata "$TMP/q.raw"
quiet "imported raw data"
run "$TOPSPROF" --quiet --import-profile "$good_vpd"
quiet "an imported vpd"
run "$TOPSPROF" --quiet --visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/q.vpd"
quiet "a merge"
[ -s "$TMP/q.vpd" ] || die "--quiet merge wrote nothing"
mkdir -p "$TMP/qdump"
run sh -c "cd '$TMP/qdump' && exec '$TOPSPROF' --quiet --debug-dump '$BIN/simpleElemwiseAdd'"
quiet "--debug-dump"
# the report still goes to the log file
run "$TOPSPROF" --quiet --log-file "$TMP/q.log" "$BIN/simpleElemwiseAdd"
quiet "--log-file"
grep -q "process profile data" "$TMP/q.log" && grep -q "TOPSPROF is profiling" "$TMP/q.log" ||
	die "--quiet --log-file: $(cat "$TMP/q.log")"
# --debug asked for by name still prints
run "$TOPSPROF" --quiet --debug "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "topsprof: debug:"
[ -z "$out" ] || die "--quiet --debug: printed on stdout: $out"
# errors and warnings of lost data still show
run "$TOPSPROF" --quiet --buffer-size x "$BIN/simpleElemwiseAdd"
expect_rc 2
expect_err "topsprof: error: --buffer-size: 'x' is not a size"
run "$TOPSPROF" --quiet --export-csv "$TMP/q.csv" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "q.csv: exists (use --force-overwrite"
run "$TOPSPROF" --quiet --api-mode trace --buffer-size 64KB "$BIN/stress" -n 3000 -t 8 -s 1 -e 16
expect_rc 0
[ -z "$out" ] || die "--quiet, losses: printed on stdout: $out"
expect_err "events lost"
expect_err "raise --buffer-size"
done_ok
