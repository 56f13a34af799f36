#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Kernel callstacks on a kernel module's own functions (--kernel-callstack-filter kmd
# --kmd-module M), on real modules of the running kernel (null_blk, brd, loop), as a user of the
# filter sees them: the module's functions with their calls (as many as the application's own
# count says), fentry/fexit where BTF describes a function and kprobes elsewhere (kprobes alone
# with TOPSPROF_NO_FENTRY=1), decided per function; the functions no probe can take not tried;
# no BPF trampoline in the stacks; the kernel memory the run takes stated and bounded; a system
# call that reaches the driver through a file the module does not own (a block device) counted as
# the driver's. It loads kernel modules, so it runs in the VM test bed (make vm-test sets
# TOPSPROF_E2E_MODULES=1) and is skipped elsewhere.
. "$E2E_DIR/lib.sh"
LIB=$OUTPUT/sim/lib/libtopsrt.so
unset TOPSPROF_NO_FENTRY

[ "$(id -u)" = 0 ] || skip "needs root for BPF and modules"
[ -n "${TOPSPROF_E2E_MODULES:-}" ] ||
	skip "loads kernel modules (null_blk, brd, loop): runs in the VM test bed (make vm-test), or with TOPSPROF_E2E_MODULES=1"
modprobe null_blk && modprobe brd rd_nr=1 rd_size=8192 && modprobe loop ||
	skip "the kernel modules null_blk, brd and loop cannot be loaded here"
# a direct read's request issued by the reading thread itself: with an I/O scheduler, Linux before
# 5.16 or so hands it to a kworker of kblockd (then not a call of dd's into the driver)
echo none >/sys/block/nullb0/queue/scheduler 2>/dev/null || true
trap 'losetup -D 2>/dev/null; rm -rf "$TMP"' EXIT

# entry NAME: "calls ns" of the KERNEL activities row NAME (times in the report's units)
entry() {
	sed -n '/ KERNEL activities:/,/Top kernel stacks/p' <<<"$out" | awk -v name="$1" '
		function ns(t) {
			if (t ~ /ns$/) return t + 0
			if (t ~ /us$/) return t * 1e3
			if (t ~ /ms$/) return t * 1e6
			return t * 1e9
		}
		{ line = $0; sub(/^==[0-9]+== +/, "", line) }
		line ~ /%/ { n = split(line, f, / +/); rest = f[6]; for (i = 7; i <= n; i++) rest = rest " " f[i]
			if (rest == name) { printf "%d %.0f\n", f[3], ns(f[2]); found = 1 } }
		END { if (!found) print "0 0" }'
}
calls() { entry "$1" | cut -d' ' -f1; }
# a debug line's number after WORDS ("fentry on N functions, kprobes on M")
debug_num() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" <<<"$err" | head -n 1; }
# the frames of the first stack in FUNC (the report's stack listing, innermost first)
stack_of() {
	sed -n "/) .* in $1 /,/^==[0-9]*== *[0-9]*)/p" <<<"$out" | sed '1d;$d' |
		sed 's/^==[0-9]*== *//' | grep -v '^$'
}

# the probes chosen: every function that can be probed is, one way or the other
probes_cover() { # label
	local want fentry kprobes
	want=$(debug_num "loaded,")
	fentry=$(debug_num "fentry on")
	kprobes=$(sed -n 's/.*fentry on [0-9]* functions, kprobes on \([0-9]*\)$/\1/p' <<<"$err")
	checks=$((checks + 1))
	[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$((fentry + kprobes))" = "$want" ] ||
		die "$1: $want functions to probe, fentry on $fentry, kprobes on $kprobes:"$'\n'"$(grep 'kernel callstacks' <<<"$err")"
	! grep -q "could not be probed" <<<"$err" || die "$1: $(grep 'could not be probed' <<<"$err")"
	# libbpf is not made to fail: the functions tried are those the kernel can take
	! grep -i '^topsprof: libbpf.*\(fail\|error\)' <<<"$err" ||
		die "$1: libbpf failed at something"
	checks=$((checks + 1))
}

# the run's kernel memory, said under --debug: tens of MB at most, whatever the functions
memory_bounded() { # label
	local mb
	mb=$(sed -n 's/.*kernel memory: \([0-9.]*\) MB in [0-9]* maps, \([0-9.]*\) MB in.*/\1 \2/p' <<<"$err" |
		awk '{ print $1 + $2 }')
	checks=$((checks + 1))
	[ -n "$mb" ] && awk -v m="$mb" 'BEGIN { exit !(m < 64) }' ||
		die "$1: kernel memory ${mb:-not said} MB:"$'\n'"$(grep 'kernel memory' <<<"$err")"
	echo "$1: kernel memory $mb MB; $(grep -o 'fentry on [0-9]* functions, kprobes on [0-9]*' <<<"$err")"
}

no_trampolines() { # label
	checks=$((checks + 1))
	! grep -q 'bpf_trampoline_\|bpf_prog_' <<<"$out" ||
		die "$1: BPF's frames in the stacks:"$'\n'"$(grep -B3 -A3 'bpf_trampoline_\|bpf_prog_' <<<"$out")"
}

# no frame twice in a row in any stack (these drivers do not recurse): not f; trampoline; f
# the stacks of dd's calls of the driver's functions reach its system call: none ends inside the
# driver (where a kretprobe's trampoline stops the unwinder of Linux before 5.14, topsprof goes on
# in the stack of the driver call it is inside)
whole_in_dd() { # label
	local cut
	cut=$(sed -n '/Top kernel stacks/,$p' <<<"$out" | sed 's/^==[0-9]*== *//' |
		awk '/^[0-9]+\) / { if (dd && !sys) print head; head = $0; dd = /\[null_blk\] \(driver\), dd \(pid/; sys = 0; next }
			/^do_syscall_64$/ { sys = 1 } END { if (dd && !sys) print head }' | head -n 3)
	checks=$((checks + 1))
	[ -z "$cut" ] || die "$1: stacks of dd's driver calls that stop short of its system call: $cut"$'\n'"$out"
}

no_repeats() { # label
	local twice
	twice=$(sed -n '/Top kernel stacks/,$p' <<<"$out" | sed 's/^==[0-9]*== *//' |
		awk 'prev != "" && $0 == prev { print } { prev = $0 }' | head -n 3)
	checks=$((checks + 1))
	[ -z "$twice" ] || die "$1: frames twice in a row in a stack: $twice"$'\n'"$out"
}

# --- null_blk: direct reads of /dev/nullb0, fentry where it serves, then kprobes only ----------
N=300
for path in fentry kprobes; do
	env=()
	# kprobes, and the system call found from the thread's registers, not from its start
	# (taken when the thread left the CPU before it entered the driver)
	[ $path = kprobes ] && env=(TOPSPROF_NO_FENTRY=1 TOPSPROF_NO_SYSCALL_SLOT=1)
	run env "${env[@]}" "$TOPSPROF" --runtime-lib "$LIB" --kernel-callstack \
		--kernel-callstack-filter kmd --kmd-module null_blk --debug --print-app-log -- \
		dd if=/dev/nullb0 of=/dev/null bs=4k count=$N iflag=direct
	expect_rc 0 "null_blk, $path"
	records=$(sed -n 's/^\([0-9]*\)+0 records in$/\1/p' <<<"$err")
	checks=$((checks + 1))
	[ "$records" = $N ] || die "dd read ${records:-nothing}, wanted $N blocks:"$'\n'"$err"
	probes_cover "null_blk, $path"
	memory_bounded "null_blk, $path"
	no_trampolines "null_blk, $path"
	if [ $path = fentry ] && grep -q "fentry/fexit programs loaded" <<<"$err"; then
		checks=$((checks + 1))
		[ "$(debug_num "fentry on")" -gt 0 ] || die "fentry loads here but took no function"
	fi
	if [ $path = kprobes ]; then
		checks=$((checks + 1))
		[ "$(debug_num "fentry on")" = 0 ] || die "TOPSPROF_NO_FENTRY=1 and fentry was used"
		# which kprobes: one kprobe_multi link, or (said why) one each
		checks=$((checks + 1))
		how='in one kprobe_multi link\|kprobe_multi refused.*\|kprobe_multi programs refused.*\|a kprobe each, through stubs'
		grep -q "$how" <<<"$err" ||
			die "kprobes: the path taken is not said:"$'\n'"$(grep 'kernel callstacks' <<<"$err")"
		echo "kprobes: $(grep -o "$how" <<<"$err")"
	fi
	# each direct read is one request the reading thread issues itself (the stacks show
	# blk_mq_try_issue_directly under read): as many as dd read, each in a read into the driver
	checks=$((checks + 1))
	[ "$(calls "null_queue_rq [null_blk] (driver)")" -ge $N ] ||
		die "$path: null_queue_rq called $(calls "null_queue_rq [null_blk] (driver)") times for $N reads:"$'\n'"$out"
	checks=$((checks + 1))
	[ "$(calls "read (driver)")" = $N ] ||
		die "$path: $(calls "read (driver)") reads into the driver for $N (a block device is not the module's file):"$'\n'"$out"
	# a driver function's stack begins with it; one called by another of the driver's (which
	# fentry has under fexit, its trampoline between them) has the caller right after it
	checks=$((checks + 1))
	st=$(stack_of "null_queue_rq \[null_blk\]")
	[ "$(sed -n 1p <<<"$st")" = "null_queue_rq [null_blk]" ] ||
		die "$path: null_queue_rq's stack:"$'\n'"$st"$'\n'"$out"
	checks=$((checks + 1))
	sed -n '/Top kernel stacks/,$p' <<<"$out" | sed 's/^==[0-9]*== *//' |
		awk '/\[null_blk\]$/ && prev ~ /\[null_blk\]$/ && $0 != prev { found = 1 } { prev = $0 }
			END { exit !found }' ||
		die "$path: no stack has a driver function called by another:"$'\n'"$out"
	no_repeats "null_blk, $path"
	whole_in_dd "null_blk, $path"
done

# --- brd: its lowest function has no BTF; fentry is decided per function --------------------
run "$TOPSPROF" --runtime-lib "$LIB" --kernel-callstack --kernel-callstack-filter kmd \
	--kmd-module brd --debug -- dd if=/dev/ram0 of=/dev/null bs=4k count=$N iflag=direct
expect_rc 0 "brd"
probes_cover brd
memory_bounded brd
no_trampolines brd
no_repeats brd
if grep -q "fentry/fexit programs loaded" <<<"$err" && [ -e /sys/kernel/btf/brd ]; then
	checks=$((checks + 1))
	[ "$(debug_num "fentry on")" -gt 0 ] ||
		die "brd: fentry loads here and brd has BTF, but no function took it:"$'\n'"$(grep 'kernel callstacks' <<<"$err")"
fi
checks=$((checks + 1))
[ "$(calls "brd_submit_bio [brd] (driver)")" -ge $N ] ||
	die "brd_submit_bio called $(calls "brd_submit_bio [brd] (driver)") times for $N reads:"$'\n'"$out"

# --- loop: losetup's ioctls, one on loop-control (the module's file), one on /dev/loopN (a ----
# block device): both are calls into the driver, each lasting at least its driver function
truncate -s 8M "$TMP/img"
run "$TOPSPROF" --runtime-lib "$LIB" --kernel-callstack --kernel-callstack-filter kmd \
	--kmd-module loop --debug -- losetup -f --show "$TMP/img"
expect_rc 0 "loop"
probes_cover loop
no_trampolines loop
no_repeats loop
read -r ioctls ioctl_ns < <(entry "ioctl (driver)")
read -r lo lo_ns < <(entry "lo_ioctl [loop] (driver)")
read -r ctl ctl_ns < <(entry "loop_control_ioctl [loop] (driver)")
checks=$((checks + 1))
[ "$lo" -ge 1 ] && [ "$ctl" -ge 1 ] && [ "$ioctls" = $((lo + ctl)) ] ||
	die "loop: $ioctls ioctls into the driver for lo_ioctl $lo + loop_control_ioctl $ctl:"$'\n'"$out"
checks=$((checks + 1))
[ "$ioctl_ns" -ge $((lo_ns + ctl_ns)) ] ||
	die "loop: the ioctls took ${ioctl_ns} ns, less than their driver functions (${lo_ns} + ${ctl_ns}):"$'\n'"$out"
losetup -D
done_ok
