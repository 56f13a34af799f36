#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Install the Debian 12 packages that building and testing topsprof need. Idempotent and quiet:
# when everything is present it prints nothing and returns at once; otherwise it names what it
# installs on stderr. `--check` only reports what is missing (exit 1 when something is).
# The OPTIONAL packages are the peers `make bench` compares topsprof with and the VM test bed's
# (make vm-test: QEMU, a static busybox, pahole for the simulated KMD's BTF): tried after the
# others, and a failure to install them is a warning, not a failure (the benchmark skips their
# rows, the VM tests skip).
set -euo pipefail

PACKAGES=(
	make gcc pkg-config clang llvm clang-format libclang-rt-14-dev
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev liblzma-dev g++ binutils xz-utils libcjson-dev libcmocka-dev libsqlite3-dev sqlite3
	python3 python3-numpy python3-torch openmpi-bin libc6-dbg strace procps file
)
OPTIONAL=(bpftrace ltrace time qemu-system-x86 busybox-static dwarves)

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
missing=() optional=()
for pkg in "${PACKAGES[@]}"; do
	installed "$pkg" || missing+=("$pkg")
done
for pkg in "${OPTIONAL[@]}"; do
	installed "$pkg" || optional+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0
if [ "${1:-}" = "--check" ]; then
	[ ${#optional[@]} -eq 0 ] || echo "missing optional packages (make bench, make vm-test): ${optional[*]}" >&2
	[ ${#missing[@]} -eq 0 ] && exit 0
	echo "missing packages: ${missing[*]}" >&2
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "install-deps: need root (or sudo) to install: ${missing[*]} ${optional[*]}" >&2
		[ ${#missing[@]} -eq 0 ] && exit 0
		exit 1
	}
	sudo=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
apt_install() { # packages...: apt-get's output goes to $log
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1
}
updated=0
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}" >&2
	if ! { "${sudo[@]}" apt-get update -qq >"$log" 2>&1 && updated=1 && apt_install "${missing[@]}"; }; then
		cat "$log" >&2
		echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
		exit 1
	fi
fi
if [ ${#optional[@]} -gt 0 ]; then
	echo "install-deps: installing the optional ${optional[*]} (make bench's peers, the VM tests)" >&2
	if ! { [ $updated = 1 ] || "${sudo[@]}" apt-get update -qq >"$log" 2>&1; } ||
		! apt_install "${optional[@]}"; then
		sed 's/^/    /' "$log" >&2
		echo "install-deps: warning: could not install the optional ${optional[*]}:" \
			"make bench skips their rows, make vm-test skips" >&2
	fi
fi
exit 0
