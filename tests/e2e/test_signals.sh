#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Signals as without topsprof: a signal sent to the whole process group (kill -- -PGID, as a
# terminal's Ctrl-C or a batch system's SIGTERM to the job) reaches the application once, and one
# sent to topsprof alone reaches it once too; signals that topsprof was started ignoring (nohup)
# stay ignored in the application; a signal while the application is being started ends
# topsprof with that signal.
. "$E2E_DIR/lib.sh"
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v python3 >/dev/null || die "python3 is missing (scripts/install-deps.sh installs it)"
command -v setsid >/dev/null || skip "no setsid (util-linux)"
RT=(--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1")

# the application: counts SIGINT and SIGTERM, says how it found SIGHUP, runs for $1 seconds
cat >"$TMP/app.py" <<'PY'
import signal, sys, time
n = {signal.SIGINT: 0, signal.SIGTERM: 0}
def count(sig, frame):
    n[sig] += 1
for s in n:
    signal.signal(s, count)
hup = "ignored" if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else "default"
print("ready hup=%s" % hup, flush=True)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    time.sleep(0.01)
print("INT=%d TERM=%d" % (n[signal.SIGINT], n[signal.SIGTERM]), flush=True)
PY

# start topsprof in a process group of its own (as a shell's job) with SIGINT and SIGQUIT at
# their defaults (as from a terminal: a script's background job ignores them); $tp its pid
start_job() { # log, extra topsprof options...
	local log=$1
	shift
	env --default-signal=INT,QUIT setsid "$TOPSPROF" "${RT[@]}" --print-app-log "$@" \
		python3 "$TMP/app.py" 3 >"$log" 2>&1 &
	tp=$!
	for _ in $(seq 200); do
		grep -qs '^ready' "$log" && return 0
		sleep 0.05
	done
	die "the application never started: $(cat "$log")"
}
finish_job() { # log what
	wait "$tp" || die "$2: topsprof exited $?: $(cat "$1")"
	out=$(cat "$1")
}

# --- a signal to the whole group arrives once --------------------------------------------------
start_job "$TMP/group.log"
kill -INT -- -"$tp"
sleep 0.3
kill -TERM -- -"$tp"
finish_job "$TMP/group.log" "group signals"
expect_out "INT=1 TERM=1"

# --- a signal to topsprof alone is meant for the application: once --------------------------------
start_job "$TMP/alone.log"
kill -INT "$tp"
sleep 0.3
kill -TERM "$tp"
finish_job "$TMP/alone.log" "signals to topsprof"
expect_out "INT=1 TERM=1"

# --- ignored at start (nohup) stays ignored: a hangup of the whole group harms nobody -------------
(
	trap '' HUP
	exec env --default-signal=INT,QUIT setsid "$TOPSPROF" "${RT[@]}" --print-app-log \
		python3 "$TMP/app.py" 1.5
) >"$TMP/nohup.log" 2>&1 &
tp=$!
for _ in $(seq 200); do
	grep -qs '^ready' "$TMP/nohup.log" && break
	sleep 0.05
done
kill -HUP -- -"$tp"
finish_job "$TMP/nohup.log" "SIGHUP ignored"
expect_out "ready hup=ignored"
expect_out "INT=0 TERM=0"

# and without nohup, SIGHUP is the application's to take, at its default
start_job "$TMP/hup.log"
kill -HUP -- -"$tp"
wait "$tp"
rc=$?
out=$(cat "$TMP/hup.log")
expect_out "ready hup=default"
expect_rc $((128 + 1)) "the application dies of SIGHUP, topsprof as it"

# --- a signal before the application runs ends topsprof with it -----------------------------------
"$TOPSPROF" "${RT[@]}" --print-app-log python3 "$TMP/app.py" 3 >"$TMP/early.log" 2>&1 &
tp=$!
kill -TERM "$tp"
wait "$tp"
rc=$?
out=$(cat "$TMP/early.log")
checks=$((checks + 1))
[ $rc = 143 ] || die "SIGTERM while starting: exit $rc, wanted 143: $out"
done_ok
