#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Signals as without topsprof: a signal sent to the whole process group (kill -- -PGID, as a
# terminal's Ctrl-C or a batch system's SIGTERM to the job) reaches the application once, one
# sent to topsprof and the application each (a batch system's SIGTERM to every pid) once, and one
# sent to topsprof alone (SIGUSR1 too) once; signals that topsprof was started ignoring (nohup)
# stay ignored in the application; a signal before the application runs (before it is forked,
# or while it is held, to topsprof alone or to the whole group) ends topsprof with that signal
# and the application never runs; with --duration, one sent to topsprof alone during the report
# or after it still reaches the application, which topsprof waits for and exits as; topsprof
# refuses to run in a pid namespace other than the host's.
. "$E2E_DIR/lib.sh"
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v python3 >/dev/null || die "python3 is missing (scripts/install-deps.sh installs it)"
command -v setsid >/dev/null || skip "no setsid (util-linux)"
RT=(--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1")

# the application: counts SIGINT, SIGTERM and SIGUSR1, says how it found SIGHUP, runs for $1
# seconds; prints to stdout, or to the file $2
cat >"$TMP/app.py" <<'PY'
import signal, sys, time
out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
n = {signal.SIGINT: 0, signal.SIGTERM: 0, signal.SIGUSR1: 0}
def count(sig, frame):
    n[sig] += 1
for s in n:
    signal.signal(s, count)
hup = "ignored" if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN else "default"
print("ready hup=%s" % hup, file=out, flush=True)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    time.sleep(0.01)
print("INT=%d TERM=%d USR1=%d" % (n[signal.SIGINT], n[signal.SIGTERM], n[signal.SIGUSR1]),
      file=out, flush=True)
PY

# start topsprof in a process group of its own (as a shell's job) with SIGINT and SIGQUIT at
# their defaults (as from a terminal: a script's background job ignores them); $tp its pid
# the job's signals at their defaults, as a terminal's job has them: a background job ignores INT
# and QUIT, and a test run under nohup ignores HUP
start_job() { # log, extra topsprof options...
	local log=$1
	shift
	env --default-signal=INT,QUIT,HUP setsid "$TOPSPROF" "${RT[@]}" --print-app-log "$@" \
		python3 "$TMP/app.py" 3 >"$log" 2>&1 &
	tp=$!
	wait_ready "$log"
}
wait_ready() { # log [pattern]
	for _ in $(seq 200); do
		grep -qs "${2:-^ready}" "$1" && return 0
		sleep 0.05
	done
	die "never saw '${2:-^ready}': $(cat "$1")"
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
expect_out "INT=1 TERM=1 USR1=0"

# --- a signal to topsprof alone is meant for the application: once --------------------------------
start_job "$TMP/alone.log"
kill -INT "$tp"
sleep 0.3
kill -TERM "$tp"
finish_job "$TMP/alone.log" "signals to topsprof"
expect_out "INT=1 TERM=1 USR1=0"

# --- one sent to each pid in turn (a batch system's SIGTERM to every process of a job) arrives
# once: the application got it from the same sender
start_job "$TMP/each.log"
app=$(cat /proc/"$tp"/task/*/children)
[ -n "$app" ] || die "no application under topsprof $tp"
kill -TERM "$tp" "$app"
finish_job "$TMP/each.log" "SIGTERM to each pid"
expect_out "INT=0 TERM=1 USR1=0"

# --- SIGUSR1 (not only INT, TERM, HUP, QUIT) to topsprof alone is forwarded, and topsprof,
# not killed by it, still reports
start_job "$TMP/usr1.log"
kill -USR1 "$tp"
finish_job "$TMP/usr1.log" "SIGUSR1 to topsprof"
expect_out "INT=0 TERM=0 USR1=1"
expect_out "RUNTIME activities:"

# --- ignored at start (nohup) stays ignored: a hangup of the whole group harms nobody -------------
(
	trap '' HUP
	exec env --default-signal=INT,QUIT setsid "$TOPSPROF" "${RT[@]}" --print-app-log \
		python3 "$TMP/app.py" 1.5
) >"$TMP/nohup.log" 2>&1 &
tp=$!
wait_ready "$TMP/nohup.log"
kill -HUP -- -"$tp"
finish_job "$TMP/nohup.log" "SIGHUP ignored"
expect_out "ready hup=ignored"
expect_out "INT=0 TERM=0 USR1=0"

# and without nohup, SIGHUP is the application's to take, at its default
start_job "$TMP/hup.log"
kill -HUP -- -"$tp"
wait "$tp"
rc=$?
out=$(cat "$TMP/hup.log")
expect_out "ready hup=default"
expect_rc $((128 + 1)) "the application dies of SIGHUP, topsprof as it"

# --- with --duration the application may run on after the report: a signal sent to topsprof
# alone then is still the application's (forwarded), and topsprof, waiting for its end, exits as
# it did. Before: topsprof, back at the default dispositions, died of it (143) and the
# application ran on without it, counting nothing.
start_job "$TMP/after.log" --duration 0.5
wait_ready "$TMP/after.log" "RUNTIME activities:"
sleep 0.2
kill -TERM "$tp"
finish_job "$TMP/after.log" "SIGTERM to topsprof after the report"
expect_out "INT=0 TERM=1 USR1=0"
# ... one the application dies of: topsprof exits as it did
start_job "$TMP/after-hup.log" --duration 0.5
wait_ready "$TMP/after-hup.log" "RUNTIME activities:"
kill -HUP "$tp"
wait "$tp"
rc=$?
out=$(cat "$TMP/after-hup.log")
expect_rc $((128 + 1)) "the application dies of the forwarded SIGHUP, topsprof as it"
expect_out "the application was killed by signal 1"
checks=$((checks + 1))
! grep -q '^INT=' <<<"$out" || die "the application outlived the SIGHUP: $out"

# ... and one sent while topsprof writes its report: report.py holds topsprof's stdout, a pipe
# that it fills once the header is through, so that topsprof blocks in the report's first write;
# SIGTERM to topsprof alone there, then the pipe is read to its end. The application counts it
# (before: not forwarded) and the report is whole (the write goes on after the handler).
cat >"$TMP/report.py" <<'PY'
import fcntl, os, signal, subprocess, sys, time

# report.py LOG APPOUT CMD...: CMD's stderr to LOG, its stdout on a pipe (LOG.pipe: what was
# read); the signal once CMD blocks writing to the full pipe and APPOUT says the application is
# ready; prints CMD's exit as a shell does
log, appout, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]


def fail(msg):
    sys.stderr.write("report.py: %s\n" % msg)
    sys.exit(2)


def blocked_in_write(pid):
    # wchan: the function a thread sleeps in; "0" where the kernel cannot tell (x86 before 5.16,
    # without frame pointers): then its kernel stack says
    try:
        with open("/proc/%d/wchan" % pid) as f:
            w = f.read()
        if w.strip() not in ("", "0"):
            return w.endswith("pipe_write")
        with open("/proc/%d/stack" % pid) as f:
            return "pipe_write+" in f.read()
    except OSError:
        return False


def ready():
    try:
        with open(appout) as f:
            return f.read().startswith("ready")
    except OSError:
        return False


r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
logf = open(log, "wb")
p = subprocess.Popen(cmd, stdout=w, stderr=logf, start_new_session=True)
tp = p.pid
got = bytearray()
os.set_blocking(r, False)
deadline = time.monotonic() + 60
def step():
    global got
    if time.monotonic() > deadline:
        p.kill()
        fail("topsprof never got to the point wanted")
    if p.poll() is not None:
        fail("topsprof ended (%d) before the point wanted" % p.returncode)
    try:
        got += os.read(r, 65536)
    except BlockingIOError:
        pass
    time.sleep(0.002)
while b"\n" not in got:  # the header, printed before the application is released
    step()
# through an open file description of its own: O_NONBLOCK on w would be topsprof's stdout's too
fill = os.open("/proc/self/fd/%d" % w, os.O_WRONLY | os.O_NONBLOCK)
try:
    while True:
        os.write(fill, b"\n" * 512)
except BlockingIOError:
    pass
os.close(fill)
os.close(w)
os.set_blocking(r, True)
while not (blocked_in_write(tp) and ready()):
    if time.monotonic() > deadline or p.poll() is not None:
        p.kill()
        fail("topsprof never blocked in its report")
    time.sleep(0.002)
os.kill(tp, signal.SIGTERM)
time.sleep(0.2)  # the handler has run, the write waits on
while True:
    b = os.read(r, 65536)
    if not b:
        break
    got += b
rc = p.wait()
logf.close()
with open(log + ".pipe", "wb") as f:
    f.write(got)
print(128 - rc if rc < 0 else rc)
PY
rc=$(python3 "$TMP/report.py" "$TMP/report.log" "$TMP/report.app" env --default-signal=INT,QUIT \
	"$TOPSPROF" "${RT[@]}" --duration 1 python3 "$TMP/app.py" 3 "$TMP/report.app") ||
	die "SIGTERM during the report: $(cat "$TMP/report.log")"
out=$(cat "$TMP/report.log" "$TMP/report.log.pipe" "$TMP/report.app")
expect_rc 0 "the application exits 0, topsprof as it"
expect_out "INT=0 TERM=1 USR1=0"
expect_out "RUNTIME activities:"

# --- topsprof runs in the host's pid namespace only: its BPF programs see global pids ---------
if command -v unshare >/dev/null && unshare --pid --fork --mount-proc true 2>/dev/null; then
	run unshare --pid --fork --mount-proc "$TOPSPROF" "${RT[@]}" true
	expect_rc 1 "in a pid namespace of its own"
	expect_err "topsprof: error: topsprof runs in a pid namespace other than the host's: profiles must be taken from the host's pid namespace"
	expect_lines err 1
else
	echo "note: no unshare --pid (util-linux): the pid namespace case is not tested"
fi

# --- a signal before the application runs ends topsprof with it -----------------------------------
# step.py stops topsprof at a known point: one of its outputs is a 4 KB pipe that it keeps full
# but when it lets topsprof on, so that topsprof waits, blocked in a write, where the test wants
# it; there it sends the signal, then reads the pipe to its end and prints topsprof's exit as a
# shell does.
cat >"$TMP/step.py" <<'PY'
import fcntl, os, subprocess, sys, time

# step.py MODE SIG LOG CMD...: runs CMD (topsprof) in a session of its own; LOG gets the output
# not on the pipe, LOG.pipe what was read from the pipe. MODE:
#   prefork: stderr on the pipe, full, emptied and filled again at each write topsprof blocks in
#            (with --debug: its lines and libbpf's while the BPF objects load), so that it
#            blocks at every write or nearly: the signal comes once topsprof has its handlers in
#            place and no child yet. Exit 3 when it forked first all the same (no write of its
#            between the two: the test says it skipped that case)
#   held, held-group: stdout on the pipe, full beforehand: topsprof blocks on the header it
#            prints between forking the application and releasing it; the signal comes while
#            its child is held (not yet exec'd, waiting in read), to topsprof alone or to its
#            whole process group (a terminal's Ctrl-C)
mode, sig, log, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]


def fail(msg):
    sys.stderr.write("step.py: %s\n" % msg)
    sys.exit(2)


def proc(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            return f.read()
    except OSError:
        return ""


def blocked_in(pid, where):
    # pipe_write, anon_pipe_write (Linux 6.16+), ...; in any of its threads (the collectors
    # open on threads of their own, and speak from there under --debug)
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return False
    return any(waits_in(pid, t, where) for t in tids)


def waits_in(pid, tid, where):
    # wchan: the function a thread sleeps in; "0" where the kernel cannot tell (x86 before 5.16,
    # without frame pointers): then its kernel stack says
    w = proc(pid, "task/%s/wchan" % tid)
    if w.strip() not in ("", "0"):
        return w.endswith(where)
    return where + "+" in proc(pid, "task/%s/stack" % tid)


def children(pid):
    return [int(c) for c in proc(pid, "task/%d/children" % pid).split()]


def catches(pid, s):
    for line in proc(pid, "status").splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (s - 1) & 1)
    return False


def fill(w):  # the pipe full: the next write to it blocks
    # through an open file description of its own: O_NONBLOCK on w would be topsprof's too
    nb = os.open("/proc/self/fd/%d" % w, os.O_WRONLY | os.O_NONBLOCK)
    try:
        while True:
            os.write(nb, b"\n" * 512)
    except BlockingIOError:
        pass
    os.close(nb)


r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
fill(w)
logf = open(log, "wb")
out, err = (logf, w) if mode == "prefork" else (w, logf)
p = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
if mode != "prefork":
    os.close(w)
tp = p.pid
got = bytearray()
deadline = time.monotonic() + 60
while True:
    if time.monotonic() > deadline:
        p.kill()
        fail("topsprof never got to the point wanted")
    if p.poll() is not None:
        fail("topsprof ended (%d) before the point wanted" % p.returncode)
    if not blocked_in(tp, "pipe_write"):
        time.sleep(0.001)
        continue
    kids = children(tp)
    if mode == "prefork":
        if kids:
            p.kill()
            sys.stderr.write("step.py: topsprof forked before it blocked with its handlers in "
                             "place\n")
            sys.exit(3)
        if catches(tp, sig):
            break
    elif kids:
        kid = kids[0]
        if os.readlink("/proc/%d/exe" % kid) != os.readlink("/proc/%d/exe" % tp):
            fail("the application was released before topsprof printed its header")
        for _ in range(5000):  # the held child resets its signals, then waits
            if blocked_in(kid, "pipe_read"):
                break
            time.sleep(0.001)
        else:
            fail("the held child never waited for its release")
        break
    got += os.read(r, 4096)  # let topsprof on to its next write
    if mode == "prefork":
        fill(w)
if mode == "prefork":
    os.close(w)
if mode == "held-group":
    os.killpg(tp, sig)
else:
    os.kill(tp, sig)
while True:
    b = os.read(r, 65536)
    if not b:
        break
    got += b
rc = p.wait()
logf.close()
with open(log + ".pipe", "wb") as f:
    f.write(got)
print(128 - rc if rc < 0 else rc)
PY
early() { # mode signal name
	rc=$(python3 "$TMP/step.py" "$1" "$2" "$TMP/$1.log" env --default-signal=INT,QUIT \
		"$TOPSPROF" "${RT[@]}" --debug --print-app-log python3 "$TMP/app.py" 3)
	case $? in
	0) ;;
	3) skipped="$3: topsprof wrote nothing between its handlers and the fork to stop it at"
		return 1 ;;
	*) die "$1: $(cat "$TMP/$1.log")" ;;
	esac
	out=$(cat "$TMP/$1.log" "$TMP/$1.log.pipe")
	checks=$((checks + 3))
	[ "$rc" = $((128 + $2)) ] || die "$3: exit $rc, wanted $((128 + $2)): $out"
	grep -q "^topsprof: error: interrupted by signal $2 (.*) before .* started$" <<<"$out" ||
		die "$3: no 'interrupted by signal $2' line: $out"
	! grep -q '^ready' <<<"$out" || die "$3: the application ran: $out"
}
# before it is forked: the handlers are in place, no child yet
skipped=
if early prefork 15 "SIGTERM before the application is forked"; then
	checks=$((checks + 1))
	! grep -q "debug: holding" <<<"$out" || die "the application was forked after the signal: $out"
fi
# while it is held: to topsprof alone (the held child is ended without running anything) ...
early held 15 "SIGTERM to topsprof while the application is held"
# ... and to the whole group, as Ctrl-C in a terminal: the held child dies of it too
early held-group 2 "SIGINT to the group while the application is held"
expect_out "debug: holding"

# --quiet is quiet even when the application dies of a signal: the exit status says it
run "$TOPSPROF" "${RT[@]}" --quiet sh -c 'kill -TERM $$'
expect_rc 143
checks=$((checks + 1))
[ -z "$out$err" ] || die "--quiet printed:"$'\n'"$out"$'\n'"$err"
# every other case passed: a case that could not be set up is said as the test's skip
[ -z "$skipped" ] || skip "$skipped ($checks other checks passed)"
done_ok
