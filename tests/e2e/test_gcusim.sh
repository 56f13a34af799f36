#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The simulated KMD (sim/kmd: gcusim.ko, /dev/gcuN) under unchanged applications: the runtime
# takes the driver when /dev/gcu0 exists, which queues the commands (the device model runs in the
# kernel) and records them; topsprof reads the GCU records through the device nodes and reports
# the same GCU activities as for the same work on the user-space device; with
# --kernel-callstack-filter kmd --kmd-module gcusim the module's functions appear with their
# calls, time and stacks, the runtime's blocking waits asleep inside the driver; device memory
# is counted by the driver across processes and comes back when a process is killed; the module
# unloads afterwards and gives its memory back. It loads a kernel module, so it runs in the VM
# test bed (make vm-test sets TOPSPROF_E2E_MODULES=1; scripts/vm/run.sh builds gcusim.ko against
# each kernel's headers) and is skipped elsewhere.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT TOPS_SIM_DRIVER_DIR LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF and modules"
[ -n "${TOPSPROF_E2E_MODULES:-}" ] ||
	skip "loads the gcusim kernel module: runs in the VM test bed (make vm-test), or with TOPSPROF_E2E_MODULES=1"
[ -n "$(find "/lib/modules/$(uname -r)" -name 'gcusim.ko*' 2>/dev/null)" ] ||
	skip "gcusim.ko was not built for this kernel ($(uname -r)): scripts/vm/run.sh says why"
vmalloc_kb() { sed -n 's/^VmallocUsed: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
# no earlier run's probes still being released (topsprof-detach frees BPF memory as it goes), and
# VmallocUsed still for half a second: what moves around the module is then the module's
detached() { for _ in $(seq 60); do pgrep -x topsprof-detach >/dev/null || break; sleep 0.5; done; }
settled_kb() {
	local a b
	detached
	b=$(vmalloc_kb)
	for _ in $(seq 20); do
		a=$b
		sleep 0.5
		b=$(vmalloc_kb)
		[ "$a" = "$b" ] && break
	done
	echo "$b"
}
before=$(settled_kb)
modprobe gcusim || die "modprobe gcusim failed"
trap 'rmmod gcusim 2>/dev/null; rm -rf "$TMP"' EXIT
checks=$((checks + 1))
[ -c /dev/gcu0 ] && [ -c /dev/gcu1 ] && [ ! -e /dev/gcu2 ] || die "gcusim made: $(ls /dev/gcu* 2>&1)"
loaded=$(vmalloc_kb)

section() { sed -n "/ $1 activities:/,/^==[0-9]*==\$/p" <<<"$out" | sed 's/^==[0-9]*== *//'; }
# entry NAME: the Calls of the KERNEL activities row NAME
calls() {
	section KERNEL | awk -v name="$1" '/%/ { n = split($0, f, / +/); rest = f[6]
		for (i = 7; i <= n; i++) rest = rest " " f[i]
		if (rest == name) print f[3] }'
}

# --- the driver: GCU records through /dev/gcuN, the module's functions with their waits --------
run "$TOPSPROF" --kernel-callstack --kernel-callstack-filter kmd --kmd-module gcusim --debug \
	--print-app-log "$BIN/simpleElemwiseAdd"
expect_rc 0 "on the driver"
expect_err "in /dev (the kernel driver's device nodes)"
expect_out "PASSED" # the app checks its own results
gcu_rows() { section GCU | grep -v -e '^Total Time' -e '^$'; }
# alike A B: the same GCU rows (names and calls) in A and B, their times within 0.2% (topsprof
# aligns each run's device clock on its own), in any order (rows of equal time come either way)
alike() {
	awk 'function ns(t) {
			if (t ~ /ns$/) return t + 0
			if (t ~ /us$/) return t * 1e3
			if (t ~ /ms$/) return t * 1e6
			return t * 1e9
		}
		/%/ { n = split($0, f, / +/); name = f[7]; for (i = 8; i <= n; i++) name = name " " f[i]
			key = name SUBSEP f[3]
			if (FNR == NR) { a[key] = ns(f[2]); na++ } else { b[key] = ns(f[2]); nb++ } }
		END {
			if (na != nb || !na) exit 1
			for (k in a) {
				if (!(k in b)) exit 1
				d = a[k] - b[k]; if (d < 0) d = -d
				if (d > a[k] * 0.002 + 1) exit 1
			}
		}' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}
driver_gcu=$(gcu_rows)
checks=$((checks + 1))
grep -q "vector_add" <<<"$driver_gcu" || die "no GCU kernels through the driver:"$'\n'"$out"
ioctls=$(calls "ioctl (driver)")
in_ioctl=$(calls "gcusim_ioctl [gcusim] (driver)")
in_wait=$(calls "gcusim_wait [gcusim] (driver)")
checks=$((checks + 1))
[ -n "$ioctls" ] && [ "$ioctls" = "$in_ioctl" ] && [ -n "$in_wait" ] && [ "$in_wait" -ge 1 ] &&
	[ "$in_wait" -le "$in_ioctl" ] ||
	die "ioctls into the driver: $ioctls, gcusim_ioctl $in_ioctl, gcusim_wait $in_wait:"$'\n'"$out"
# the kernels' names put in the device's table by the driver: each of the app's three once
checks=$((checks + 1))
[ "$(calls "gcusim_name [gcusim] (driver)")" = 3 ] ||
	die "gcusim_name called $(calls "gcusim_name [gcusim] (driver)") times for 3 kernels:"$'\n'"$out"
# every command queued by the driver (gcusim_submit: the device model runs in the kernel)
submits=$(calls "gcusim_submit [gcusim] (driver)")
commands=$(section GCU | sed -n 's/.*Total Calls \([0-9]*\).*/\1/p')
checks=$((checks + 1))
[ -n "$commands" ] && [ "$submits" = "$commands" ] ||
	die "gcusim_submit called ${submits:-0} times for ${commands:-no} GCU commands:"$'\n'"$out"
# a blocking call of the app asleep in the driver: off CPU, in gcusim_wait, under its API call
checks=$((checks + 1))
section KERNEL | awk '/off CPU/ { s = 1; w = 0; next } /^[0-9]+\)/ { s = 0 }
		s && /^gcusim_wait \[gcusim\]$/ { w = 1 }
		s && w && /^tops(StreamSynchronize|DeviceSynchronize|Memcpy[A-Za-z]*) \(user\)$/ { found = 1 }
		END { exit !found }' ||
	die "no wait asleep in gcusim_wait under a blocking runtime call:"$'\n'"$out"
# fentry where the module has BTF (pahole built it) and the kernel loads fentry
if [ -e /sys/kernel/btf/gcusim ] && grep -q "fentry/fexit programs loaded" <<<"$err"; then
	checks=$((checks + 1))
	grep -q "fentry on [1-9][0-9]* functions" <<<"$err" ||
		die "gcusim has BTF and fentry loads, but no function took it:"$'\n'"$(grep 'kernel callstacks' <<<"$err")"
fi
echo "driver: $ioctls ioctls into gcusim, $submits commands queued, $in_wait waits in gcusim_wait; $(grep -o 'fentry on [0-9]* functions, kprobes on [0-9]*' <<<"$err")"

# --- the same work on the user-space device: the same GCU activities ---------------------------
run env TOPS_SIM_DRIVER_DIR="$TMP/driver" "$TOPSPROF" --print-app-log "$BIN/simpleElemwiseAdd"
expect_rc 0 "on the user-space device"
expect_out "PASSED"
checks=$((checks + 1))
alike "$driver_gcu" "$(gcu_rows)" ||
	die "the GCU activities differ: driver"$'\n'"$driver_gcu"$'\n'"user-space device"$'\n'"$(section GCU)"

# --- the other samples: the same GCU activities on the driver as on the user-space device -----
# stress from threads on several streams (on one device: on two, which command runs where varies
# from run to run, and with it the rounding of the two clocks), children that fork and exec, the
# runtime linked in statically, CDTE/SDTE records
for app in "stress -n 40 -t 3 -s 2" "fork_app 2" "simpleElemwiseAdd_static" \
	"ENFLAME_GENERATE_PROFILE_META=true simpleElemwiseAdd"; do
	read -r -a words <<<"$app"
	envs=() cmd=()
	for w in "${words[@]}"; do
		if [ ${#cmd[@]} -eq 0 ] && [[ $w == *=* ]]; then envs+=("$w"); else cmd+=("$w"); fi
	done
	cmd[0]=$BIN/${cmd[0]}
	run env "${envs[@]}" "$TOPSPROF" --enable-activities all "${cmd[@]}"
	expect_rc 0 "$app on the driver"
	on_driver=$(gcu_rows)
	run env "${envs[@]}" TOPS_SIM_DRIVER_DIR="$TMP/driver" "$TOPSPROF" --enable-activities all \
		"${cmd[@]}"
	expect_rc 0 "$app on the user-space device"
	checks=$((checks + 1))
	alike "$on_driver" "$(gcu_rows)" ||
		die "$app: the GCU activities differ: driver"$'\n'"$on_driver"$'\n'"user-space device"$'\n'"$(gcu_rows)"
	echo "$app: $(grep -c '%' <<<"$on_driver") GCU rows alike"
done

# --- device memory, counted by the driver for every process, given back when a process ends ---
# (topsprof's runs leave their single uprobes, and the fentry links on gcusim, to a
# topsprof-detach process: the module is unloaded once it is done)
detached
rmmod gcusim && modprobe gcusim mem_mb=8 || die "reloading gcusim with mem_mb=8 failed"
# stress -t 1 -s 1 -e N takes two buffers of 4N bytes: 8 MB fit, 10 MB do not
run "$BIN/stress" -n 1 -t 1 -s 1 -e 1048576
expect_rc 0 "8 MB of the driver's 8 MB"
run "$BIN/stress" -n 1 -t 1 -s 1 -e 1310720
expect_rc 1 "10 MB of the driver's 8 MB"
expect_err "topsErrorOutOfMemory"
# a process that holds 6 MB leaves 2 MB to the others, until it is killed
"$BIN/stress" -n 100000000 -t 1 -s 1 -e 786432 >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
	run "$BIN/stress" -n 1 -t 1 -s 1 -e 786432
	[ "$rc" != 0 ] && break
	sleep 0.2
done
checks=$((checks + 1))
[ "$rc" = 1 ] && grep -q topsErrorOutOfMemory <<<"$err" ||
	die "6 MB more while another process holds 6 MB of 8: exit $rc"$'\n'"$err"
kill -9 "$holder"
wait "$holder" 2>/dev/null
run "$BIN/stress" -n 1 -t 1 -s 1 -e 786432
expect_rc 0 "6 MB once the killed process's memory came back"

# --- unloading: nothing holds the module, and its regions' memory goes back -------------------
# (topsprof-detach frees BPF memory as it goes: measured once it is done)
held=$(settled_kb)
rmmod gcusim || die "rmmod gcusim failed: $(lsmod | grep gcusim)"
after=$(vmalloc_kb)
echo "VmallocUsed: $before kB before gcusim, $loaded kB loaded, $held kB before rmmod, $after kB after"
checks=$((checks + 1))
[ $((loaded - before)) -ge 10000 ] && [ $((held - after)) -ge 10000 ] ||
	die "gcusim's two regions (10.6 MB) not taken or not given back: VmallocUsed $before kB before, $loaded kB loaded, $held kB before rmmod, $after kB after"
done_ok
