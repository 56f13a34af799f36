# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# What the benchmark scripts (run.sh, kcalls.sh, scale.sh) share: the machine's hypervisor as they
# print it, the median, min and max of a series, and GNU time for peak RSS (an optional package of
# scripts/install-deps.sh: the rows that need it are skipped without).
BENCH_TIME=/usr/bin/time

# the hypervisor, as /sys/hypervisor, dmesg or the CPU flag name it
bench_hypervisor() {
	local line
	if [ -r /sys/hypervisor/type ]; then
		echo "$(cat /sys/hypervisor/type) (/sys/hypervisor/type)"
		return
	fi
	line=$(dmesg 2>/dev/null | grep -m1 -o 'Hypervisor detected: .*' || true)
	if [ -n "$line" ]; then
		echo "${line#Hypervisor detected: } (dmesg: \"$line\")"
	elif grep -qw hypervisor /proc/cpuinfo; then
		echo "unnamed (the CPU flag 'hypervisor' is set; neither dmesg nor /sys/hypervisor names it)"
	else
		echo "none found (no 'hypervisor' CPU flag, nothing in dmesg or /sys/hypervisor)"
	fi
}

# "median min max" of the numbers on stdin (blank- or line-separated); nothing when there are none
median_min_max() {
	tr -s ' \t' '\n' | grep . | sort -g | awk '{ v[NR] = $1 }
		END { if (!NR) exit; m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			print m, v[1], v[NR] }'
}
