#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Boot a Debian kernel under QEMU (TCG) with the built topsprof, sim and e2e tests in a busybox
# initramfs, run one command in it as root, and return its exit status.
# usage: scripts/vm/run.sh [--kernel K] [--timeout SECS] [--keep] -- CMD [ARG...]
#        scripts/vm/run.sh [--kernel K] --shell
#   K: 5.10 (bullseye), 6.1 (bookworm, the default) or 6.12 (trixie): the suite's newest amd64
#      kernel, fetched once into the cache (scripts/vm/lib.sh: VM_CACHE, VM_REFRESH, MIRROR)
#   CMD runs under bash in /root with the repository at /topsprof (build/, tests/e2e/, sim/include/);
#      its output is shown as it comes. `--shell` gives an interactive shell on the console instead.
#   --timeout: the VM is killed after SECS (default VM_TIMEOUT or 600) and run.sh fails loudly.
#   VM_MODULES: the kernel's modules packed (default: brd loop null_blk tun dummy; modprobe them),
#      and gcusim (sim/kmd, the simulated KMD) where it builds against the kernel's headers.
#   VM_MEM (default 2G), VM_SMP (default 2), VM_APPEND (more kernel parameters).
# Exit: CMD's status; 125 when the VM could not be built or booted, 124 on the timeout.
# Work files (the initramfs, console.log, output.log) are in build/vm/K/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=6.1 timeout=${VM_TIMEOUT:-600} shell= keep=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?--kernel needs a value}; shift 2 ;;
	--kernel=*) kernel=${1#*=}; shift ;;
	--timeout) timeout=${2:?--timeout needs a value}; shift 2 ;;
	--shell) shell=1; shift ;;
	--) shift; break ;;
	-h | --help) sed -n '3,16p' "$0" | sed 's/^# \?//'; exit 0 ;;
	*) echo "vm: unknown option '$1' (see --help)" >&2; exit 125 ;;
	esac
done
[ -n "$shell" ] || [ $# -gt 0 ] || { echo "vm: no command (run.sh --kernel K -- CMD, or --shell)" >&2; exit 125; }
[[ $timeout =~ ^[0-9]+$ ]] || { echo "vm: --timeout '$timeout' is not a number of seconds" >&2; exit 125; }

fail() {
	echo "vm: $*" >&2
	exit 125
}
command -v qemu-system-x86_64 >/dev/null ||
	fail "qemu-system-x86_64 not found (scripts/install-deps.sh installs qemu-system-x86)"
suite=$(vm_suite "$kernel") || exit 125
[ -x "$vm_top/build/topsprof" ] || fail "no build/topsprof: run make first"
# one run of a kernel at a time in this tree: another would rewrite the work files (its
# output.log, whose end marker gives the exit status) under it
mkdir -p "$vm_top/build/vm"
exec {lock}>"$vm_top/build/vm/$suite.lock"
if ! flock -n "$lock"; then
	vm_say "waiting for another run on $suite to end"
	flock "$lock"
fi

kdir=$(vm_fetch "$suite") || exit 125
abi=$(cat "$kdir/abi")
work=$vm_top/build/vm/$suite
mkdir -p "$work"

# the initramfs: four archives one after the other, which the kernel unpacks in turn: the host's
# commands (kept in build/vm/ while the scripts and the host's packages stay as they are), the
# built product and tests, the kernel's modules, the job
t0=$EPOCHREALTIME
stamp=$(vm_host_stamp)
if [ ! -s "$vm_top/build/vm/host.cpio" ] || [ "$(cat "$vm_top/build/vm/host.stamp" 2>/dev/null)" != "$stamp" ]; then
	vm_say "building the initramfs's host part (once)"
	vm_initramfs_host "$work/host" || fail "could not build the initramfs"
	vm_cpio "$work/host" "$work/host.cpio"
	mv "$work/host.cpio" "$vm_top/build/vm/host.cpio"
	echo "$stamp" >"$vm_top/build/vm/host.stamp"
	rm -rf "$work/host"
fi
vm_initramfs_product "$work/product"
vm_cpio "$work/product" "$work/product.cpio"
VM_KMD=
vm_build_kmd "$kdir" "$work/kmd" && VM_KMD=$work/kmd/gcusim.ko
VM_KMD=$VM_KMD vm_initramfs_kernel "$work/modules" "$kdir"
vm_cpio "$work/modules" "$work/modules.cpio"
vm_merged_usr "$work/job"
{
	echo "cd /root"
	printf '%q ' "$@"
	echo
} >"$work/job/job"
vm_cpio "$work/job" "$work/job.cpio"
cat "$vm_top/build/vm/host.cpio" "$work/product.cpio" "$work/modules.cpio" "$work/job.cpio" \
	>"$work/initramfs.cpio"
size=$(du -m "$work/initramfs.cpio" | cut -f1)
vm_say "$abi ($suite), initramfs ${size} MB built in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

qemu=(qemu-system-x86_64 -accel tcg -cpu max,la57=off -smp "${VM_SMP:-2}" -m "${VM_MEM:-2G}"
	-no-reboot -display none -monitor none -nodefaults -vga none
	-kernel "$kdir/root/boot/vmlinuz-$abi" -initrd "$work/initramfs.cpio")
append="console=ttyS0 panic=-1 oops=panic loglevel=4 rdinit=/init ${VM_APPEND:-}"
if [ -n "$shell" ]; then
	exec "${qemu[@]}" -serial mon:stdio -append "$append vm.shell"
fi

rm -f "$work/console.log" "$work/output.log"
: >"$work/output.log"
t0=$EPOCHREALTIME
timeout -k 5 "$timeout" "${qemu[@]}" -serial "file:$work/console.log" -serial "file:$work/output.log" \
	-append "$append" </dev/null &
qpid=$!
# the job's output as it comes, without the serial line's carriage returns
tail -n +1 -f --pid=$qpid "$work/output.log" | sed -u -e 's/\r$//' -e '/^==== VM /d' || true
wait $qpid && qrc=0 || qrc=$?
secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

end=$(tr -d '\r' <"$work/output.log" | sed -n 's/^==== VM END rc=\([0-9]*\) .*/&/p' | tail -n 1)
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "vm: TIMEOUT: the $abi VM was killed after ${timeout} s; the console's end ($work/console.log):" >&2
	tail -n 30 "$work/console.log" | tr -d '\r' | sed 's/^/    | /' >&2
	exit 124
fi
if [ -z "$end" ]; then
	# a kernel that died: its report from the start (the first oops), kept apart from the
	# next run's console
	kept=$work/console.$(date +%Y%m%d-%H%M%S).log
	cp "$work/console.log" "$kept"
	if grep -qE 'BUG:|Oops|general protection|invalid opcode|Kernel panic' "$kept"; then
		echo "vm: the $abi kernel died (qemu exit $qrc, ${secs} s), its report ($kept):" >&2
		tr -d '\r' <"$kept" | grep -m 1 -B 2 -A 45 -E 'BUG:|Oops|general protection|invalid opcode|Kernel panic' |
			sed 's/^/    | /' >&2
	else
		echo "vm: the $abi VM ended (qemu exit $qrc, ${secs} s) without the job's end marker; the console's end ($kept):" >&2
		tail -n 30 "$kept" | tr -d '\r' | sed 's/^/    | /' >&2
	fi
	exit 125
fi
rc=$(sed 's/^==== VM END rc=\([0-9]*\) .*/\1/' <<<"$end")
# a kernel warning or oops during the run is a finding: show it
if grep -qE 'WARNING:|BUG:|Oops|Call Trace:' "$work/console.log"; then
	echo "vm: the kernel complained during the run ($work/console.log):" >&2
	grep -E -A3 'WARNING:|BUG:|Oops' "$work/console.log" | tr -d '\r' | head -n 40 | sed 's/^/    | /' >&2
fi
vm_say "$abi: exit $rc, ${secs} s in the VM (${end#*rc=$rc })"
exit "$rc"
