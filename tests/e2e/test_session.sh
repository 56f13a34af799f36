#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Sessions from two terminals' worth of processes: start/stop/cancel change exactly what is
# counted, the list, stale sessions after kill -9, another user refused and unable to block root's
# sessions by taking names first, --reset, Ctrl-C with every BPF link released.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver TOPSPROF_RUN_DIR=$TMP/run
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

total_calls() { sed -n '/RUNTIME activities/,$ { s/.*Total Calls \([0-9]*\).*/\1/p }' "$1" | head -n 1; }
gcu_calls() { sed -n '/GCU activities/,/RUNTIME/ { s/.*Total Calls \([0-9]*\).*/\1/p }' "$1" | head -n 1; }
# wait until the session is listed (topsprof set up and holding the app)
wait_session() {
	for _ in $(seq 100); do
		"$TOPSPROF" --session-list 2>/dev/null | grep -q "^    $1 " && return 0
		sleep 0.05
	done
	die "session $1 never appeared"
}
# ~3 s of calls on an idle machine, so that it still runs while a busy one gets to each step
ROUNDS=60000
LONG=(stress -n $ROUNDS -t 1 -s 1)

# --- off from the start: nothing until start; stop keeps; cancel throws away ------------------------
"$TOPSPROF" --session-new never --profile-from-start off "$BIN/${LONG[@]}" >"$TMP/never.out" 2>&1 &
p=$!
wait_session never
wait $p || die "never: $(cat "$TMP/never.out")"
grep -q "does not contain runtime api data" "$TMP/never.out" || die "collected while off: $(cat "$TMP/never.out")"
grep -q "does not contain gcu kernel data" "$TMP/never.out" || die "device records while off"

"$TOPSPROF" --session-new s1 --profile-from-start off --api-mode trace "$BIN/${LONG[@]}" >"$TMP/s1.out" 2>&1 &
p=$!
wait_session s1
sleep 0.2
run "$TOPSPROF" start
expect_rc 0 "start with one session running"
expect_out "session s1"
run "$TOPSPROF" --session-list
expect_out "s1"
expect_out "collecting"
sleep 0.3
# a client that connects and says nothing holds nobody up: stop is done while it still holds its
# connection (no clock: a slow machine, a VM, takes seconds for what takes milliseconds here)
python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); open(sys.argv[2], 'w').close()
time.sleep(60)" "$(ls "$TMP"/run/0/s1/*.sock)" "$TMP/silent.ready" &
silent=$!
while [ ! -e "$TMP/silent.ready" ] && kill -0 $silent 2>/dev/null; do sleep 0.1; done
run "$TOPSPROF" stop --session s1
expect_rc 0
checks=$((checks + 1))
kill $silent 2>/dev/null || die "stop waited for the silent client to go"
run "$TOPSPROF" --session-list
expect_out "paused"
wait $p
n=$(total_calls "$TMP/s1.out")
[ -n "$n" ] && [ "$n" -gt 100 ] && [ "$n" -lt $((4 * ROUNDS)) ] ||
	die "start/stop: $n calls of $((4 * ROUNDS)): $(cat "$TMP/s1.out")"
g=$(gcu_calls "$TMP/s1.out")
[ -n "$g" ] && [ "$g" -gt 50 ] && [ "$g" -lt $((3 * ROUNDS)) ] || die "device records while on: $g"

"$TOPSPROF" --session-new s2 --api-mode trace "$BIN/${LONG[@]}" >"$TMP/s2.out" 2>&1 &
p=$!
wait_session s2
sleep 0.3
run "$TOPSPROF" --stop --session s2
expect_rc 0
run "$TOPSPROF" --cancel --session s2
expect_rc 0
wait $p
grep -q "does not contain runtime api data" "$TMP/s2.out" || die "cancel kept calls: $(cat "$TMP/s2.out")"

# --- which session: none, one, several ----------------------------------------------------------
run "$TOPSPROF" start
expect_rc 1
expect_err "no session is running"
"$TOPSPROF" --session-new a "$BIN/${LONG[@]}" >/dev/null 2>&1 &
pa=$!
"$TOPSPROF" --session-new b "$BIN/${LONG[@]}" >/dev/null 2>&1 &
pb=$!
wait_session a
wait_session b
run "$TOPSPROF" stop
expect_rc 1
expect_err "2 sessions are running: name one with --session NAME"
run "$TOPSPROF" --session-new a "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "--session-new a: the session exists"
run "$TOPSPROF" --session nosuch "$BIN/simpleElemwiseAdd"
expect_rc 1
expect_err "--session nosuch: no such session"

# another user may not control root's session
if id topsprof-e2e >/dev/null 2>&1 || useradd -M -s /bin/sh topsprof-e2e 2>/dev/null; then
	chmod o+rx "$TMP" "$TMP/run" 2>/dev/null
	run su topsprof-e2e -s /bin/sh -c "TOPSPROF_RUN_DIR='$TMP/run' '$TOPSPROF' stop --session a"
	expect_rc 1
	expect_err "topsprof-e2e may not control session a of root"
else
	echo "note: cannot create a user here; the refusal is not tested"
fi
wait $pa $pb

# another user can neither block nor steer root's sessions: names taken first in the shared
# directory (the default session names, the next pids, and root's namespace) are ignored
if id topsprof-e2e >/dev/null 2>&1; then
	export TOPSPROF_RUN_DIR=$TMP/run2
	mkdir -m 1777 "$TMP/run2"
	next=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
	su topsprof-e2e -s /bin/sh -c "cd '$TMP/run2' && mkdir 0 0.planted \
		\$(seq $next $((next + 1500))) \$(seq -f '%g-0' $next $((next + 1500)))" ||
		die "the other user could not plant directories"
	"$TOPSPROF" "$BIN/${LONG[@]}" >"$TMP/planted.out" 2>&1 &
	p=$!
	[ -d "$TMP/run2/$p" ] || echo "note: topsprof's pid $p is outside the planted names"
	for _ in $(seq 100); do
		run "$TOPSPROF" --session-list
		grep -q "^    $p " <<<"$out" && break
		sleep 0.05
	done
	expect_out "    $p "
	run "$TOPSPROF" stop --session $p
	expect_rc 0 "root's default session amid another user's directories"
	wait $p || die "a run amid another user's directories: $(cat "$TMP/planted.out")"
	checks=$((checks + 1))
	[ -z "$(find "$TMP/run2/0" "$TMP/run2/0.planted" -mindepth 1)" ] ||
		die "root put files in another user's directory: $(ls -lR "$TMP/run2/0")"

	# nor hide root's sessions behind many namespaces of theirs, hang root's list with a FIFO
	# for an info file, pass for root in the list (the owner is the directory's), reach root's
	# terminal with escape codes (in a command line, in a session's name), or have a socket of
	# another process taken for a member's (the member is the process listening on it)
	rm -rf "$TMP/run2/"*
	su topsprof-e2e -s /bin/sh -c "cd '$TMP/run2' && for i in \$(seq 0 79); do
		mkdir \$(id -u).\$i; done" || die "the other user could not make its namespaces"
	uid=$(id -u topsprof-e2e)
	ns=$TMP/run2/$uid
	# the other user's members, each its own process listening: fifo (a FIFO for its info),
	# fake (an info that says root, escape codes in its command), a session named with escape
	# codes; and impostor, a socket named after a live process (pid 1) that another listens on
	su topsprof-e2e -s /bin/sh -c "exec python3 -c '
import os, socket, sys, time
ns = sys.argv[1]
me = str(os.getpid())
os.makedirs(ns, mode=0o755)
socks = []
for name, info in (
        (\"fifo\", None),
        (\"fake\", \"pid=%s\\nuid=0\\nstate=collecting\\ncommand=evil\\033]0;x\\007\\n\" % me),
        (\"evil\\033]0;x\\007\", \"pid=%s\\nstate=collecting\\ncommand=x\\n\" % me),
        (\"impostor\", None)):
    d = os.path.join(ns, name); os.mkdir(d, 0o755)
    if name == \"fifo\": os.mkfifo(os.path.join(d, me + \".info\"))
    elif info: open(os.path.join(d, me + \".info\"), \"w\").write(info)
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(d, (\"1\" if name == \"impostor\" else me) + \".sock\")); s.listen(1)
    socks.append(s)
open(os.path.join(ns, \"ready\"), \"w\").close()
time.sleep(30)' '$ns'" &
	fake=$!
	"$TOPSPROF" --session-new rootsess "$BIN/${LONG[@]}" >"$TMP/hidden.out" 2>&1 &
	p=$!
	# the application released (it runs as itself), the other user's members made
	for _ in $(seq 200); do
		[ -e "$ns/ready" ] && pgrep -P $p -x stress >/dev/null && break
		sleep 0.05
	done
	run timeout 10 "$TOPSPROF" --session-list
	expect_rc 0 "a FIFO for an info file must not stall the list"
	expect_out "    rootsess "
	checks=$((checks + 1))
	grep -E "^    fake .* root " <<<"$out" && die "another user's session listed as root's: $out"
	expect_out "    fake "
	expect_out " topsprof-e2e "
	checks=$((checks + 1))
	! grep -q $'\033' <<<"$out" || die "another user's escape codes reach root's terminal: $out"
	checks=$((checks + 1))
	! grep -q "impostor" <<<"$out" || die "a socket another process listens on is a member: $out"
	run timeout 20 "$TOPSPROF" stop --session impostor
	expect_rc 1
	expect_err "--session impostor: no such session"
	run timeout 20 "$TOPSPROF" stop --session rootsess
	expect_rc 0 "root's session amid 80 namespaces of another user's"
	wait $p || die "a run amid another user's namespaces: $(cat "$TMP/hidden.out")"
	kill $fake 2>/dev/null
	wait $fake 2>/dev/null
	export TOPSPROF_RUN_DIR=$TMP/run
else
	echo "note: cannot create a user here; blocking by another user is not tested"
fi

# --- a topsprof killed with -9 leaves nothing that blocks ----------------------------------------------
"$TOPSPROF" --session-new doomed "$BIN/${LONG[@]}" >/dev/null 2>&1 &
p=$!
wait_session doomed
for _ in $(seq 100); do
	app=$(pgrep -P $p -x stress) && break
	sleep 0.05
done
kill -9 $p
wait $p 2>/dev/null
[ -n "$app" ] && kill "$app" 2>/dev/null
run "$TOPSPROF" --session-list
expect_rc 0
grep -q doomed <<<"$out" && die "a stale session is listed: $out"
run "$TOPSPROF" --session-new doomed "$BIN/simpleElemwiseAdd"
expect_rc 0

# a member whose pid another process has taken since (its socket has no listener) is gone too
mkdir -p "$TMP/run/0/reused"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$TMP/run/0/reused/$$.sock"
echo "pid=$$" >"$TMP/run/0/reused/$$.info"
run "$TOPSPROF" --session-list
checks=$((checks + 1))
! grep -q "^    reused " <<<"$out" || die "a member of a reused pid is listed: $out"
run "$TOPSPROF" --session-new reused "$BIN/simpleElemwiseAdd"
expect_rc 0 "a session name whose only member's pid was taken again"

# --- --reset ------------------------------------------------------------------------------------------
mkdir -p "$TMP/run/0/stale"
echo "pid=999999999" >"$TMP/run/0/stale/999999999.info"
HOME=$TMP touch "$TMP/.trace.topspti.conf"
HOME=$TMP run "$TOPSPROF" --reset
expect_rc 0
expect_out "removed $TMP/.trace.topspti.conf"
[ ! -e "$TMP/run/0/stale" ] || die "--reset left a stale session"
[ ! -e "$TMP/.trace.topspti.conf" ] || die "--reset left the profiler config"

# --- attach to a running process, detach leaving it running and right ---------------------------------
"$BIN/stress" -n 60000 -t 1 -s 1 >"$TMP/app.out" 2>&1 &
app=$!
sleep 0.3
run "$TOPSPROF" --attach-pid $app --duration 0.5 --print-api-summary
expect_rc 0
expect_out "TOPSPROF is profiling process $app (attached)"
n=$(sed -n 's/.*Total Calls \([0-9]*\).*/\1/p' <<<"$out" | head -n 1)
[ -n "$n" ] && [ "$n" -gt 100 ] || die "attached: $n calls: $out"
kill -0 $app 2>/dev/null || die "the attached process did not survive the detach"
"$TOPSPROF" --attach-pid $app >"$TMP/att.out" 2>&1 &
t=$!
sleep 0.4
kill -INT $t
wait $t || die "attach, Ctrl-C: exit $?: $(cat "$TMP/att.out")"
grep -q "RUNTIME activities" "$TMP/att.out" || die "attach, Ctrl-C: no report"
wait $app || die "the attached process failed: $(cat "$TMP/app.out")"
grep -q "errors=0" "$TMP/app.out" || die "the attached process computed wrong: $(cat "$TMP/app.out")"
run "$TOPSPROF" --attach-pid 999999
expect_rc 1
expect_err "--attach-pid 999999: no such process"
# a process the user may not trace: said so, not that it has no GCU runtime
if id topsprof-e2e >/dev/null 2>&1; then
	run su topsprof-e2e -s /bin/sh -c "'$TOPSPROF' --attach-pid 1"
	expect_rc 1
	expect_err "--attach-pid 1: this user may not trace it"
	expect_lines err 1
fi

# --- system-wide: two applications started after it ------------------------------------------------------
"$TOPSPROF" --system-wide --runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" --duration 4 \
	--print-api-summary >"$TMP/sw.out" 2>&1 &
t=$!
# once its probes are in (it says so then: a kernel without uprobe_multi may still be releasing
# the last run's, which holds up new ones for seconds)
for _ in $(seq 1200); do grep -q "TOPSPROF is profiling every process" "$TMP/sw.out" && break; sleep 0.1; done
"$BIN/simpleElemwiseAdd" >/dev/null
"$BIN/dlopen_app" 0 >/dev/null
wait $t || die "system-wide: $(cat "$TMP/sw.out")"
grep -q "TOPSPROF is profiling every process" "$TMP/sw.out" || die "system-wide header"
grep -q "Total Calls 33$" "$TMP/sw.out" || die "system-wide: 26 + 7 calls: $(cat "$TMP/sw.out")"

# --- system-wide over an app already calling: every thread traced -----------------------------------------
# Its four threads call without pause while the probes go in. A call entered between a function's
# entry probe and its return probe would leave the thread's depth counted up for good, and every
# later call of that thread would be taken for a nested one and not reported: the return probes go
# in first. Both kernel paths: uprobe_multi links where the kernel has them, one uprobe each.
for path in multi single; do
	"$BIN/stress" -n 10000000 -t 4 -s 1 -e 16 >/dev/null 2>&1 &
	app=$!
	sleep 0.3
	rm -f "$TMP/busy.json"
	nomulti=()
	[ $path = single ] && nomulti=(TOPSPROF_NO_UPROBE_MULTI=1)
	run env "${nomulti[@]}" "$TOPSPROF" --system-wide \
		--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1" --duration 0.5 \
		--export-chrome-trace "$TMP/busy.json"
	kill $app
	wait $app 2>/dev/null
	expect_rc 0
	threads=$(python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(len({e["tid"] for e in ev if e.get("name") == "topsLaunchKernel" and e.get("pid") == int(sys.argv[2])}))
' "$TMP/busy.json" $app)
	[ "$threads" = 4 ] || die "system-wide over a busy app ($path uprobes): $threads of 4 threads traced"
done

# --- Ctrl-C: the app gets it, the report comes, no BPF program stays loaded ------------------------------
# started as from a terminal: SIGINT at its default (a script's background job ignores it, and
# topsprof keeps what it was started ignoring so for the application)
env --default-signal=INT "$TOPSPROF" --session-new ctrlc "$BIN/${LONG[@]}" >"$TMP/c.out" \
	2>"$TMP/c.err" &
p=$!
wait_session ctrlc
# and the application released: it runs as itself, no longer as topsprof's held child
for _ in $(seq 100); do
	pgrep -P $p -x stress >/dev/null && break
	sleep 0.05
done
# the BPF programs this run holds, from its fds' fdinfo (other runs on the host, another user's or a
# parallel test's, load and free their own meanwhile: only these are this run's to free)
ours=$(cat /proc/$p/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' | sort -u)
[ -n "$ours" ] || die "no BPF program held by topsprof (pid $p) while it runs"
kill -INT $p
wait $p
rc=$?
[ $rc = 130 ] || die "Ctrl-C: exit $rc: $(cat "$TMP/c.err")"
grep -q "RUNTIME activities" "$TMP/c.out" || die "no report after Ctrl-C"
grep -q "killed by signal 2" "$TMP/c.err" || die "cause not shown: $(cat "$TMP/c.err")"
if command -v bpftool >/dev/null; then
	# still loaded after it ended: an fd leaked into the application or into a process that
	# outlived the run (a detach can wait for a probe of another run's that sleeps: up to 9 s)
	for _ in $(seq 30); do
		left=$(for id in $ours; do bpftool prog show id "$id" 2>/dev/null | head -n 1; done)
		[ -z "$left" ] && break
		sleep 0.3
	done
	[ -z "$left" ] || die "BPF programs left loaded: $left"
else
	echo "bpftool not installed: the BPF programs' release after Ctrl-C not checked"
fi
[ -z "$(find "$TMP/run" -mindepth 2)" ] || die "session files left: $(ls -R "$TMP/run")"
done_ok
