#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Visual-profiler files: one per profiled process, the gcu_op/dev contract field tools read,
# import, merge (SQLite reads every vpd through the descriptor topsprof opened: no name opened
# again, no journal looked for, each member of a merge opened once); a distributed run of 4 ranks
# under Open MPI's mpirun, and ranks started the way torch.distributed starts them (RANK in the
# environment), merged into one.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH \
	OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID RANK

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v sqlite3 >/dev/null || die "sqlite3 is missing (scripts/install-deps.sh installs it)"
q() { sqlite3 "$1" "$2"; }

# --- one vpd per process, and the contract ----------------------------------------------------------
run "$TOPSPROF" --quiet --export-visual-profiler "$TMP/vpd" --topstx-domain-include all "$BIN/fork_app" 2
expect_rc 0
n=$(ls "$TMP/vpd"/*.vpd | wc -l)
[ "$n" = 3 ] || die "fork_app: $n vpd files: $(ls "$TMP/vpd")"
now=$(date +%s%N)
for f in "$TMP"/vpd/*.vpd; do
	# column 2 is the name, column 8 the duration in ns; times are epoch ns
	[ "$(q "$f" "SELECT name FROM pragma_table_info('gcu_op') WHERE cid = 1")" = name ] || die "gcu_op col 2"
	[ "$(q "$f" "SELECT name FROM pragma_table_info('gcu_op') WHERE cid = 7")" = duration ] || die "gcu_op col 8"
	[ "$(q "$f" "SELECT group_concat(name) FROM pragma_table_info('dev')")" = "id,row_name,node,category,device,process_id" ] ||
		die "dev columns"
	[ "$(q "$f" "SELECT COUNT(*) FROM gcu_op WHERE end_timestamp - start_timestamp != duration OR
		start_timestamp < $now - 600000000000 OR start_timestamp > $now")" = 0 ] || die "$f: timestamps"
	[ "$(q "$f" "SELECT COUNT(*) FROM gcu_op WHERE view_id NOT GLOB 'dev:[0-9]*,user:[0-9]*'")" = 0 ] || die "view_id"
	# kernels sit on the rows named GCU Kernels, and every op has its launching call
	[ "$(q "$f" "SELECT COUNT(*) FROM gcu_op g JOIN dev d ON g.view_id = 'dev:'||d.id||',user:1'
		WHERE g.type = 'Operator' AND d.row_name != 'GCU Kernels'")" = 0 ] || die "kernel rows"
	[ "$(q "$f" "SELECT COUNT(*) FROM gcu_op g JOIN api_call a ON a.id = g.api_call_id
		WHERE a.start_timestamp <= g.start_timestamp")" = "$(q "$f" "SELECT COUNT(*) FROM gcu_op")" ] ||
		die "$f: GCU ops without their call"
	[ "$(q "$f" "SELECT COUNT(DISTINCT pid) FROM process")" = 1 ] || die "one process per file"
done
# the exec'd simpleElemwiseAdd: its kernels, with the model's durations
f=$(grep -l . "$TMP"/vpd/*.vpd | while read -r v; do [ "$(q "$v" "SELECT COUNT(*) FROM gcu_op")" = 7 ] && echo "$v"; done | head -n 1)
[ -n "$f" ] || die "no vpd holds simpleElemwiseAdd's 7 records"
[ "$(q "$f" "SELECT COUNT(*) FROM gcu_op WHERE name LIKE 'warm_up%' AND duration BETWEEN 13439 AND 13441")" = 1 ] ||
	die "warm_up duration (13.44 us of device time, within a ns of host time)"
[ "$(q "$f" "SELECT COUNT(*) FROM memcpy WHERE direction = 'HtoD' AND bytes = 4000000")" = 2 ] || die "memcpy table"
[ "$(q "$f" "SELECT COUNT(*) FROM api_call WHERE name = 'topsStreamSynchronize'")" = 5 ] || die "api_call"

# --- raw data to vpd: the run's own files. An import writes the first 8 processes' api_call rows
# while it reads the calls (a thread of its own), the others' after: 10 processes cover both --------
run "$TOPSPROF" --quiet --export-rawdata "$TMP/fork.raw" --export-visual-profiler "$TMP/live" \
	"$BIN/fork_app" 9
expect_rc 0
run "$TOPSPROF" --quiet --debug --import-rawdata "$TMP/fork.raw" --export-visual-profiler "$TMP/imp"
expect_rc 0
expect_err " api_call rows of 8 processes written as the calls were read"
[ "$(ls "$TMP/imp")" = "$(ls "$TMP/live")" ] && [ "$(ls "$TMP/live" | wc -l)" = 10 ] ||
	die "raw data to vpd: $(ls "$TMP/imp" | wc -l) files, the run $(ls "$TMP/live" | wc -l)"
# the rows, times less each file's epoch offset (the two runs took theirs apart)
dump() {
	q "$1" "SELECT name, start_timestamp - o, end_timestamp - o, duration, domain, category, tid,
		ret, message FROM api_call, (SELECT value AS o FROM meta
		WHERE key = 'monotonic_to_epoch_ns') ORDER BY id;
	SELECT name, start_timestamp - o, duration, device, stream, view_id, tid, api_call_id, dev_id
		FROM gcu_op, (SELECT value AS o FROM meta WHERE key = 'monotonic_to_epoch_ns') ORDER BY id;
	SELECT * FROM dev ORDER BY id; SELECT * FROM memcpy ORDER BY id;
	SELECT pid, ppid, comm FROM process"
}
for v in "$TMP"/live/*.vpd; do
	[ "$(q "$v" "SELECT COUNT(*) FROM api_call")" -gt 0 ] || die "$v: no calls"
	[ "$(dump "$v")" = "$(dump "$TMP/imp/${v##*/}")" ] || die "${v##*/}: the import's rows differ from the run's"
done
# an import that fails leaves no file, not even those it had begun
head -c $(($(stat -c %s "$TMP/fork.raw") * 3 / 4)) "$TMP/fork.raw" >"$TMP/cut.raw"
run "$TOPSPROF" --quiet --import-rawdata "$TMP/cut.raw" --export-visual-profiler "$TMP/cut"
expect_rc 2
expect_err "truncated or corrupt"
[ -z "$(ls -A "$TMP/cut")" ] || die "a failed import left: $(ls -A "$TMP/cut")"

# --- import a vpd -----------------------------------------------------------------------------
run "$TOPSPROF" --import-profile "$f"
expect_rc 0
expect_out "56.61ms      1  56.61ms  56.61ms  56.61ms scalar_add(float*, float*, float*, unsigned long)"
expect_out "Total Calls 26"
sqlite3 "$TMP/foreign.db" "CREATE TABLE gcu_op(x)"
run "$TOPSPROF" --import-profile "$TMP/foreign.db"
expect_rc 2
expect_err "an SQLite file, but not a topsprof vpd"

# --- merge ------------------------------------------------------------------------------------
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/all.vpd"
expect_rc 0
expect_out "Merged 3 vpd files"
[ "$(q "$TMP/all.vpd" "SELECT COUNT(*) FROM process")" = 3 ] || die "merged processes"
[ "$(q "$TMP/all.vpd" "SELECT COUNT(*) FROM gcu_op")" = 13 ] || die "merged ops"
# every op still points at its own process's dev row and call
[ "$(q "$TMP/all.vpd" "SELECT COUNT(*) FROM gcu_op g JOIN dev d ON d.id = g.dev_id JOIN api_call a
	ON a.id = g.api_call_id WHERE d.process_id = g.process_id AND a.process_id = g.process_id
	AND g.view_id = 'dev:'||d.id||',user:'||g.process_id")" = 13 ] || die "merged ids"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/all.vpd"
expect_rc 1
expect_err "topsprof: error: --visual-profiler-merge-to: $TMP/all.vpd: exists"
expect_lines err 1

# --- SQLite opens no vpd by name: the importer's one descriptor is all it reads -------------------
if command -v strace >/dev/null; then
	asan_options=${ASAN_OPTIONS:-}
	calls=open,openat,openat2,creat,access,faccessat,faccessat2,stat,lstat,newfstatat,statx,readlink
	calls=$calls,readlinkat,unlink,unlinkat,rename,renameat,renameat2,link,linkat,mkdir,mkdirat
	# (LeakSanitizer cannot run under ptrace: off for an ASan build)
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	strace -f -qq -o "$TMP/strace" -e trace=$calls "$TOPSPROF" --quiet --import-profile "$f" ||
		die "the import under strace"
	# the file named once (infile.h: O_PATH, then that inode through /proc/self/fd), nothing
	# beside it (a journal, a WAL) looked for
	checks=$((checks + 1))
	[ "$(grep -cF "\"$f" "$TMP/strace")" = 1 ] && grep -qF "openat(AT_FDCWD, \"$f\", O_RDONLY|O_CLOEXEC|O_PATH)" "$TMP/strace" ||
		die "the import named its file otherwise: $(grep -F "$f" "$TMP/strace")"
	# once named, nothing opened by any name but /proc/self/fd/N (infile's reopen)
	checks=$((checks + 1))
	after=$(sed -n "\|\"$f\"|,\$p" "$TMP/strace" | grep -v "\"$f\"" | grep -E '^[0-9]+ +(open|creat|access|faccess|unlink|rename|link|mkdir)' |
		grep -vE '"/proc/self/fd/[0-9]+"')
	[ -z "$after" ] || die "opened by name after the input: $after"
	# a merge: each member named once, nothing beside it
	strace -f -qq -o "$TMP/strace" -e trace=$calls "$TOPSPROF" --quiet \
		--visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/all3.vpd" ||
		die "the merge under strace"
	for m in "$TMP"/vpd/*.vpd; do
		m=${m##*/}
		checks=$((checks + 1))
		[ "$(grep -cF "\"$m" "$TMP/strace")" = 1 ] || die "member $m named more than once: $(grep -F "$m" "$TMP/strace")"
	done
	[ "$(q "$TMP/all3.vpd" "SELECT COUNT(*) FROM process")" = 3 ] || die "merged under strace"
	export ASAN_OPTIONS=$asan_options
else
	echo "strace is missing: what SQLite opens is not checked"
fi
cp "$TMP/foreign.db" "$TMP/vpd/zz.vpd"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/vpd" --visual-profiler-merge-to "$TMP/all2.vpd"
expect_rc 1
expect_err "$TMP/vpd/zz.vpd: an SQLite file, but not a topsprof vpd"
[ ! -e "$TMP/all2.vpd" ] || die "a merge that failed left a file"

# --- distributed: 4 ranks under mpirun, then merged -----------------------------------------------
if command -v mpirun >/dev/null; then
	run mpirun --allow-run-as-root --oversubscribe -np 4 "$TOPSPROF" --quiet \
		--export-visual-profiler "$TMP/mpi" --export-csv "$TMP/mpi-%q{OMPI_COMM_WORLD_RANK}.csv" \
		"$BIN/simpleElemwiseAdd"
	expect_rc 0
	for r in 0 1 2 3; do
		ls "$TMP/mpi/"*"-rank$r-"*.vpd >/dev/null 2>&1 || die "rank $r vpd: $(ls "$TMP/mpi")"
		[ -s "$TMP/mpi-$r.csv" ] || die "rank $r csv"
	done
	run "$TOPSPROF" --visual-profiler-merge-from "$TMP/mpi" --visual-profiler-merge-to "$TMP/mpi.vpd"
	expect_rc 0
	[ "$(q "$TMP/mpi.vpd" "SELECT COUNT(DISTINCT rank) FROM process")" = 4 ] || die "merged ranks"
	[ "$(q "$TMP/mpi.vpd" "SELECT COUNT(*) FROM gcu_op WHERE api_call_id > 0")" = 28 ] ||
		die "4 ranks x 7 records, each joined"
else
	die "mpirun is missing (scripts/install-deps.sh installs openmpi-bin)"
fi

# ranks as torch.distributed.launch --no-python starts them: RANK, WORLD_SIZE in the environment
for r in 0 1 2 3; do
	RANK=$r WORLD_SIZE=4 "$TOPSPROF" --quiet --export-visual-profiler "$TMP/ddp" "$BIN/simpleElemwiseAdd" &
done
wait
[ "$(ls "$TMP/ddp" | grep -c -- '-rank[0-3]-')" = 4 ] || die "ddp ranks: $(ls "$TMP/ddp")"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/ddp" --visual-profiler-merge-to "$TMP/ddp.vpd"
expect_rc 0
[ "$(q "$TMP/ddp.vpd" "SELECT group_concat(rank) FROM (SELECT rank FROM process ORDER BY rank)")" = "0,1,2,3" ] ||
	die "ddp merged ranks"

# a version 1 file (before stacks and counters) is still imported; merging wants version 2
mkdir -p "$TMP/v1"
cp "$(ls "$TMP"/ddp/*-rank0-*.vpd)" "$TMP/v1/old.vpd"
sqlite3 "$TMP/v1/old.vpd" "UPDATE meta SET value = '1' WHERE key = 'version'"
run "$TOPSPROF" --import-profile "$TMP/v1/old.vpd"
expect_rc 0
expect_out "scalar_add(float*, float*, float*, unsigned long)"
run "$TOPSPROF" --visual-profiler-merge-from "$TMP/v1" --visual-profiler-merge-to "$TMP/v1.vpd"
expect_rc 1
expect_err "vpd version 1: merging takes version 2 files"
done_ok
