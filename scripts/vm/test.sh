#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# make vm-test / make vm-matrix: the kernel-side e2e tests inside a VM for each kernel named
# (scripts/vm/run.sh), one summary line per kernel at the end; non-zero when any kernel's run
# failed. Without qemu it says so and skips (exit 0) unless VM_REQUIRE=1.
# usage: scripts/vm/test.sh KERNEL...   (5.10, 6.1, 6.12)
#   VM_TESTS: the e2e tests to run (names without test_ and .sh). The default, scope kernel kmd
#     gcusim cpu (the API probes' scope, which differs by kernel: uprobe_multi links, single
#     uprobes with a pid, or on the files; kernel callstacks on the tracepoints and on real
#     modules' functions, the simulated KMD with GCU records and API tracing of the samples, CPU
#     stacks), keeps one kernel's run under 6 minutes here (TCG on 2 cores: about 5 min); `all`
#     adds api, gcu, signals and session (about 15 min a kernel: each topsprof run takes 5-10 s
#     in the VM). VM_TIMEOUT: run.sh's.
#   LOG_DIR: where each kernel's output is kept (as vm-K.log)
set -u
here=$(cd "$(dirname "$0")" && pwd)
tests=${VM_TESTS:-scope kernel kmd gcusim cpu}
[ "$tests" = all ] && tests="api scope kernel kmd gcusim cpu gcu signals session" && export VM_TIMEOUT=${VM_TIMEOUT:-1800}
[ $# -gt 0 ] || set -- 6.1

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "vm-test: SKIPPED: qemu-system-x86_64 is not installed (scripts/install-deps.sh installs" \
		"qemu-system-x86): no kernel was tested"
	[ -n "${VM_REQUIRE:-}" ] && exit 1
	exit 0
fi

list=()
for t in $tests; do
	[ -e "$here/../../tests/e2e/test_$t.sh" ] || { echo "vm-test: no test tests/e2e/test_$t.sh" >&2; exit 1; }
	list+=("/topsprof/tests/e2e/test_$t.sh")
done

results=() failed=0 retried=()
for k in "$@"; do
	echo "==== vm-test: kernel $k: ${tests}"
	log=$(mktemp) all=$(mktemp)
	start=$EPOCHREALTIME
	for attempt in 1 2; do
		"$here/run.sh" --kernel "$k" -- env TOPSPROF=/topsprof/build/topsprof \
			OUTPUT=/topsprof/build TOPSPROF_E2E_MODULES=1 TOPSPROF_E2E_EMULATED=1 \
			bash /topsprof/tests/e2e/run.sh "${list[@]}" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
		cat "$log" >>"$all"
		# a VM that hung, died or never started (QEMU's or the kernel's, not a test's failure)
		# gets one more try, said in the summary; the first one's report is in the log kept
		[ "$rc" -eq 124 ] || [ "$rc" -eq 125 ] || break
		[ $attempt = 1 ] && echo "vm-test: kernel $k: the VM hung, died or did not start (exit $rc): once more" &&
			retried+=("$k (exit $rc)")
	done
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	summary=$(grep -E '^e2e: [0-9]+ passed' "$log" | tail -n 1)
	if [ -n "${LOG_DIR:-}" ]; then
		mkdir -p "$LOG_DIR" && cp "$all" "$LOG_DIR/vm-$k.log"
	fi
	rm -f "$log" "$all"
	if [ "$rc" -eq 0 ]; then
		results+=("  ok    $k (${secs}s): ${summary#e2e: }")
	else
		failed=$((failed + 1))
		results+=("  FAIL  $k (exit $rc, ${secs}s): ${summary:-no e2e summary}")
	fi
done
echo "==== vm-test summary"
printf '%s\n' "${results[@]}"
[ ${#retried[@]} -eq 0 ] || echo "  (run again after the VM hung, died or did not start: ${retried[*]})"
[ $failed -eq 0 ]
