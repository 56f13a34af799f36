#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Every file topsprof writes is created safely: symlinks planted at --debug-dump's names or at a
# vpd's name are never followed (nor do they keep the run from starting: the dump goes under
# another name), existing files kept without --force-overwrite, every output's directory checked
# before the application starts, a full disk named, the umask followed, nothing left by a
# SIGKILL, an output directory another user can change said.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
RT=$OUTPUT/sim/lib/libtopsrt.so.1
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH \
	OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID RANK

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
mounts=()
cleanup() {
	for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
# tmpfs DIR OPTIONS: a small file system there, or the test says why it cannot run
tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "$2" tmpfs "$1" || skip "cannot mount a tmpfs ($2) on $1"
	mounts+=("$1")
}

# the application did not run: no header, none of its own output
expect_not_started() {
	checks=$((checks + 1))
	! grep -q "TOPSPROF is profiling" <<<"$out$err" || die "the profiling started: $out$err"
	! grep -q "PASSED" <<<"$out" || die "the application ran: $out"
}

# one line said, beside --debug-dump's debug lines
expect_one_error() {
	local said
	said=$(grep -v "^topsprof: debug: " <<<"$err")
	checks=$((checks + 1))
	[ "$(grep -c '' <<<"$said")" -eq 1 ] || die "more than one line:"$'\n'"$err"
}

# topsprof ARGS... run as the process whose pid was written to $TMP/pid (an exec'd shell), once
# the caller has planted what it wants and written to $TMP/go
wait_pidfile() { # $TMP/pid written, within 20 s
	for _ in $(seq 2000); do
		[ -s "$TMP/pid" ] && return 0
		sleep 0.01
	done
	die "no pid written in 20 s"
}
start_known_pid() {
	rm -f "$TMP/go" "$TMP/pid"
	mkfifo "$TMP/go"
	sh -c 'echo $$ >"$0/pid"; read x <"$0/go"; exec "$@"' "$TMP" "$@" \
		>"$TMP/out" 2>"$TMP/err" &
	bgpid=$!
	wait_pidfile
	pid=$(cat "$TMP/pid")
}
finish_known_pid() {
	echo go >"$TMP/go"
	wait "$bgpid"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# --- --debug-dump: symlinks planted at the names of the next pid --------------------------------
# the run goes on, the dump under topsprof-debug-PID-RANDOM.{raw,txt}, the planted names and
# what they point at untouched; the "wrote" debug line names the files
echo precious >"$TMP/victim"
mkdir -p "$TMP/dump"
cd "$TMP/dump" || die "cd"
# dump_elsewhere: the run went on, its dump beside the planted names, a pair of one random name
dump_elsewhere() {
	local txt raw
	expect_rc 0
	expect_out "PASSED"
	expect_err "topsprof: debug: --debug-dump: topsprof-debug-$pid.{raw,txt} is taken: writing"
	[ "$(cat "$TMP/victim")" = precious ] || die "--debug-dump wrote through a planted symlink"
	txt=$(ls topsprof-debug-"$pid"-*.txt 2>/dev/null)
	raw=${txt%.txt}.raw
	checks=$((checks + 1))
	[ -n "$txt" ] && [ -f "$txt" ] && [ ! -L "$txt" ] && grep -q "^runtime: " "$txt" &&
		[ -f "$raw" ] && [ ! -L "$raw" ] || die "the dump under another name: $(ls -lA)"
	expect_err "topsprof: debug: --debug-dump: wrote $txt and $raw"
	[ -z "$(ls -A | grep '\.tmp$')" ] || die "left behind: $(ls -A)"
}
start_known_pid "$TOPSPROF" --debug-dump --print-app-log "$BIN/simpleElemwiseAdd"
ln -s "$TMP/victim" "topsprof-debug-$pid.txt"
ln -s "$TMP/victim" "topsprof-debug-$pid.raw"
finish_known_pid
dump_elsewhere
[ -L "topsprof-debug-$pid.txt" ] && [ -L "topsprof-debug-$pid.raw" ] || die "the links: $(ls -lA)"
# only the text's name planted: both files go under the other name, as a pair
rm -f topsprof-debug-*
start_known_pid "$TOPSPROF" --debug-dump --print-app-log "$BIN/simpleElemwiseAdd"
ln -s "$TMP/victim" "topsprof-debug-$pid.txt"
finish_known_pid
dump_elsewhere
[ ! -e "topsprof-debug-$pid.raw" ] || die "the raw data under the plain name: $(ls -lA)"
# a directory at the name: the same
rm -rf topsprof-debug-*
start_known_pid "$TOPSPROF" --debug-dump --print-app-log "$BIN/simpleElemwiseAdd"
mkdir "topsprof-debug-$pid.raw"
finish_known_pid
dump_elsewhere
# with --force-overwrite the links themselves are replaced, their target untouched
rm -rf topsprof-debug-*
start_known_pid "$TOPSPROF" --force-overwrite --debug-dump --quiet "$BIN/simpleElemwiseAdd"
ln -s "$TMP/victim" "topsprof-debug-$pid.txt"
ln -s "$TMP/victim" "topsprof-debug-$pid.raw"
finish_known_pid
expect_rc 0
[ "$(cat "$TMP/victim")" = precious ] || die "--force-overwrite wrote through a planted symlink"
[ -f "topsprof-debug-$pid.txt" ] && [ ! -L "topsprof-debug-$pid.txt" ] &&
	grep -q "^runtime: " "topsprof-debug-$pid.txt" || die "the dump text: $(ls -l)"
[ ! -L "topsprof-debug-$pid.raw" ] || die "the dump's raw data"
# an existing dump is kept without --force-overwrite, the new one written beside it
rm -f topsprof-debug-*
start_known_pid "$TOPSPROF" --debug-dump --print-app-log "$BIN/simpleElemwiseAdd"
echo keep >"topsprof-debug-$pid.txt"
finish_known_pid
dump_elsewhere
[ "$(cat "topsprof-debug-$pid.txt")" = keep ] || die "an existing dump was replaced"
# nothing taken: the plain names
rm -f topsprof-debug-*
run "$TOPSPROF" --debug-dump --quiet "$BIN/simpleElemwiseAdd"
expect_rc 0
[ "$(ls -A | grep -c '^topsprof-debug-[0-9]*\.\(raw\|txt\)$')" = 2 ] || die "the plain names: $(ls -A)"
cd "$TMP" || die "cd"

# --- every output's directory checked before the application starts ----------------------------
tmpfs "$TMP/ro" size=64k,ro
for where in "$TMP/missing" "$TMP/ro"; do
	[ "$where" = "$TMP/ro" ] && why="Read-only file system" || why="No such file or directory"
	for opt in export-profile export-csv export-chrome-trace export-folded export-rawdata \
		export-visual-profiler; do
		extra=()
		[ $opt = export-folded ] && extra=(--cpu-profiling-callstack)
		target=$where/out.$opt
		[ $opt = export-visual-profiler ] && [ "$where" = "$TMP/ro" ] && target=$where
		run "$TOPSPROF" --print-app-log "${extra[@]}" --$opt "$target" "$BIN/simpleElemwiseAdd"
		expect_rc 1 "--$opt $target"
		expect_err "--$opt: $target: $why"
		expect_one_error
		expect_not_started
	done
done
# --debug-dump writes in the current directory
(cd "$TMP/ro" && "$TOPSPROF" --debug-dump --print-app-log "$BIN/simpleElemwiseAdd" \
	>"$TMP/out" 2>"$TMP/err")
rc=$?
out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_rc 1
expect_err "--debug-dump: topsprof-debug-"
expect_err ": Read-only file system"
[ "$(grep -c "topsprof: error:" <<<"$err")" = 1 ] || die "one error: $err"
expect_one_error
expect_not_started
# an import writes its exports as well: checked before the profile is read
run "$TOPSPROF" --import-profile /nonexistent.prof --export-csv "$TMP/missing/x.csv"
expect_rc 1
expect_err "--export-csv: $TMP/missing/x.csv: No such file or directory"

# --- a full disk is said as such, with the name; nothing is left -------------------------------
tmpfs "$TMP/full" size=16k
dd if=/dev/zero of="$TMP/full/filler" bs=1k count=64 2>/dev/null
# a profile larger than a stream's buffer: the write fails while the profile is written
run "$TOPSPROF" --quiet --export-profile "$TMP/full/p.prof" "$BIN/stress" -n 200 -t 2
expect_rc 1
expect_err "--export-profile: $TMP/full/p.prof: No space left on device"
expect_one_error
[ "$(ls -A "$TMP/full")" = filler ] || die "left behind on a full disk: $(ls -A "$TMP/full")"
run "$TOPSPROF" --quiet --export-rawdata "$TMP/full/r.raw" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "--export-rawdata: $TMP/full/r.raw: No space left on device"
[ "$(ls -A "$TMP/full")" = filler ] || die "left behind on a full disk: $(ls -A "$TMP/full")"
run "$TOPSPROF" --quiet --export-visual-profiler "$TMP/full/vpd" "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "--export-visual-profiler: $TMP/full/vpd/"
[ "$(ls -A "$TMP/full/vpd")" = "" ] || die "left behind on a full disk: $(ls -A "$TMP/full/vpd")"

# --- the umask, as every Unix tool ---------------------------------------------------------------
mkdir "$TMP/mode"
(
	umask 027
	"$TOPSPROF" --quiet --cpu-profiling-callstack --export-profile "$TMP/mode/p.prof" \
		--export-csv "$TMP/mode/c.csv" --export-chrome-trace "$TMP/mode/t.json" \
		--export-folded "$TMP/mode/f.folded" --export-rawdata "$TMP/mode/r.raw" \
		"$BIN/simpleElemwiseAdd" &&
		"$TOPSPROF" --quiet --export-visual-profiler "$TMP/mode/vpd" "$BIN/simpleElemwiseAdd" &&
		"$TOPSPROF" --visual-profiler-merge-from "$TMP/mode/vpd" \
			--visual-profiler-merge-to "$TMP/mode/all.vpd" >/dev/null
) 2>"$TMP/err" || die "umask 027 runs: $(cat "$TMP/err")"
for f in p.prof c.csv t.json f.folded r.raw all.vpd vpd/*.vpd; do
	checks=$((checks + 1))
	for g in "$TMP"/mode/$f; do
		[ "$(stat -c %a "$g")" = 640 ] || die "$g: mode $(stat -c %a "$g"), wanted 640"
	done
done
[ "$(stat -c %a "$TMP/mode/vpd")" = 750 ] || die "vpd directory: mode $(stat -c %a "$TMP/mode/vpd")"

# --- a vpd whose name a symlink takes while the application runs --------------------------------
mkdir "$TMP/vpdrace"
echo precious >"$TMP/victim"
rm -f "$TMP/go" "$TMP/pid"
mkfifo "$TMP/go"
# the application is a shell that says its pid, waits, then becomes the sample app
"$TOPSPROF" --quiet --export-visual-profiler "$TMP/vpdrace" --runtime-lib "$RT" \
	sh -c 'echo $$ >"$0/pid"; read x <"$0/go"; exec "$1"' "$TMP" "$BIN/simpleElemwiseAdd" \
	>"$TMP/out" 2>"$TMP/err" &
bgpid=$!
wait_pidfile
pid=$(cat "$TMP/pid")
# the application is this pid: its vpd is named after it
ln -s "$TMP/victim" "$TMP/vpdrace/$(hostname)-$pid.vpd"
finish_known_pid
expect_rc 1
# seen when the file is begun ("exists") or when it is put in place ("appeared"): kept either way
expect_err "$TMP/vpdrace/$(hostname)-$pid.vpd: "
expect_err "(use --force-overwrite to replace it)"
[ "$(cat "$TMP/victim")" = precious ] || die "the vpd was written through a symlink"
[ -L "$TMP/vpdrace/$(hostname)-$pid.vpd" ] || die "the planted link was replaced"
[ "$(ls -A "$TMP/vpdrace")" = "$(hostname)-$pid.vpd" ] || die "left behind: $(ls -A "$TMP/vpdrace")"
# with --force-overwrite the link itself is replaced, its target untouched
rm -f "$TMP/go" "$TMP/pid"
mkfifo "$TMP/go"
"$TOPSPROF" --quiet --force-overwrite --export-visual-profiler "$TMP/vpdrace" --runtime-lib "$RT" \
	sh -c 'echo $$ >"$0/pid"; read x <"$0/go"; exec "$1"' "$TMP" "$BIN/simpleElemwiseAdd" \
	>"$TMP/out" 2>"$TMP/err" &
bgpid=$!
wait_pidfile
pid=$(cat "$TMP/pid")
ln -s "$TMP/victim" "$TMP/vpdrace/$(hostname)-$pid.vpd"
finish_known_pid
expect_rc 0
[ "$(cat "$TMP/victim")" = precious ] || die "the vpd was written through a symlink"
[ ! -L "$TMP/vpdrace/$(hostname)-$pid.vpd" ] &&
	[ "$(sqlite3 "$TMP/vpdrace/$(hostname)-$pid.vpd" "SELECT pid FROM process")" = "$pid" ] ||
	die "the forced vpd: $(ls -lA "$TMP/vpdrace")"
# the merged file's name: the same; the error is the output's, said before a member is read
ln -s "$TMP/victim" "$TMP/merged.vpd"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/mode/vpd" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_err "topsprof: error: --visual-profiler-merge-to: $TMP/merged.vpd: exists"
expect_one_error
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/nonexistent" --visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 1
expect_err "topsprof: error: --visual-profiler-merge-to: $TMP/merged.vpd: exists"
[ "$(cat "$TMP/victim")" = precious ] || die "the merge wrote through a symlink"
run "$TOPSPROF" --force-overwrite --visual-profiler-merge-from "$TMP/mode/vpd" \
	--visual-profiler-merge-to "$TMP/merged.vpd"
expect_rc 0
[ "$(cat "$TMP/victim")" = precious ] || die "the merge wrote through a symlink"
[ ! -L "$TMP/merged.vpd" ] && [ "$(sqlite3 "$TMP/merged.vpd" "SELECT COUNT(*) FROM process")" = 1 ] ||
	die "the forced merge"
[ -z "$(ls -A "$TMP" | grep '^\.topsprof-')" ] || die "private directories left: $(ls -A "$TMP")"

# --- a SIGKILL mid-run leaves no file: the outputs have no name until they are complete ----------
mkdir "$TMP/kill"
rm -f "$TMP/pid"
"$TOPSPROF" --quiet --export-rawdata "$TMP/kill/x.raw" --export-csv "$TMP/kill/x.csv" \
	--runtime-lib "$RT" sh -c 'echo $$ >"$0/pid"; exec sleep 30' "$TMP" >"$TMP/out" 2>"$TMP/err" &
bgpid=$!
wait_pidfile
sleep 0.3
kill -9 "$bgpid"
wait "$bgpid" 2>/dev/null
kill "$(cat "$TMP/pid")" 2>/dev/null
checks=$((checks + 1))
[ -z "$(ls -A "$TMP/kill")" ] || die "left behind by a SIGKILL: $(ls -A "$TMP/kill")"

# --- an output directory another user can change: said (they could replace the file once
# written), the run goes on ----------------------------------------------------------------------
mkdir "$TMP/theirs" "$TMP/open" "$TMP/sticky"
chown nobody "$TMP/theirs"
chmod 0777 "$TMP/open"
chmod 1777 "$TMP/sticky"
run "$TOPSPROF" --quiet --export-csv "$TMP/theirs/x.csv" "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "topsprof: warning: --export-csv: $TMP/theirs is writable by user nobody: they can replace the file once written"
expect_lines err 1
[ -s "$TMP/theirs/x.csv" ] || die "the CSV in another user's directory"
run "$TOPSPROF" --quiet --export-visual-profiler "$TMP/open" --export-csv "$TMP/sticky/x.csv" \
	"$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "topsprof: warning: --export-visual-profiler: $TMP/open is writable by others: they can replace the file once written"
expect_lines err 1
[ -s "$TMP/sticky/x.csv" ] && ls "$TMP"/open/*.vpd >/dev/null || die "the outputs: $(ls -lA "$TMP/open" "$TMP/sticky")"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/open" --visual-profiler-merge-to "$TMP/theirs/all.vpd"
expect_rc 0
expect_err "topsprof: warning: --visual-profiler-merge-to: $TMP/theirs is writable by user nobody"
(cd "$TMP/open" && "$TOPSPROF" --quiet --debug-dump "$BIN/simpleElemwiseAdd" >"$TMP/out" 2>"$TMP/err")
rc=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_rc 0
expect_err "topsprof: warning: --debug-dump: . is writable by others"
done_ok
