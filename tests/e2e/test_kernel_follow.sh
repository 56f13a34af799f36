#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Kernel callstacks, which threads are followed, as a user sees it: a running process attached
# to (--attach-pid) is followed from then on, and so are the children it forks, whichever way
# "followed?" is kept (per CPU, the default, or in task storage with TOPSPROF_TASK_STORAGE=1),
# and --debug says which; --debug says whether the kernel tells a futex wait on the driver's
# memory (bpf_find_vma, Linux 5.17+), and without it (TOPSPROF_NO_FIND_VMA=1 takes that path
# here) the futex calls are still counted, none as the driver's.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
unset TOPSPROF_TASK_STORAGE TOPSPROF_NO_FIND_VMA

[ "$(id -u)" = 0 ] || skip "needs root for BPF"

kernel() { sed -n '/ KERNEL activities:/,/^==[0-9]*==$/p' <<<"$out"; }

# --- attached to a running shell: its waits for the sleeps it forks, and theirs -----------------
sh -c 'while :; do sleep 0.05; done' &
app=$!
trap 'kill $app 2>/dev/null; rm -rf "$TMP"' EXIT
for how in "kept per CPU, by thread and generation of the set" \
	"kept in its task storage (TOPSPROF_TASK_STORAGE=1)"; do
	case $how in *TASK_STORAGE*) export TOPSPROF_TASK_STORAGE=1 ;; esac
	run timeout 60 "$TOPSPROF" --debug --kernel-callstack --attach-pid "$app" --duration 1 \
		--runtime-lib "$OUTPUT/sim/lib/libtopsrt.so.1"
	unset TOPSPROF_TASK_STORAGE
	expect_rc 0
	expect_err "kernel callstacks: whether a thread is followed: $how"
	expect_out "in wait4, sh (pid $app)"
	checks=$((checks + 1))
	kernel | grep -qE "in clock_nanosleep, sleep \(pid [0-9]+\)$" ||
		die "($how) no wait of the shell's children:"$'\n'"$out"
	# (a sleep that ended before topsprof read its name shows as ?)
	checks=$((checks + 1))
	! kernel | grep -E ') .* \(pid [0-9]+\)$' | grep -vE ", (sh|sleep|\?) \(pid [0-9]+\)$" ||
		die "($how) waits of processes not followed:"$'\n'"$out"
done
kill "$app"
wait "$app" 2>/dev/null

# --- the futex check on the driver's memory, and the kernel without bpf_find_vma ---------------
run "$TOPSPROF" --debug --kernel-callstack "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "kernel callstacks: futex waits on the driver's memory told by bpf_find_vma"
expect_out "futex (driver)"
run env TOPSPROF_NO_FIND_VMA=1 "$TOPSPROF" --debug --kernel-callstack "$BIN/simpleElemwiseAdd"
expect_rc 0
expect_err "kernel callstacks: no bpf_find_vma in this kernel (Linux 5.17+): futex waits are not told apart as the driver's"
checks=$((checks + 1))
kernel | grep -qE ' futex$' || die "no futex calls without bpf_find_vma:"$'\n'"$out"
checks=$((checks + 1))
! kernel | grep -q 'futex (driver)' || die "futex (driver) without bpf_find_vma:"$'\n'"$out"
# the driver's files are still told
expect_out "(driver)"
done_ok
