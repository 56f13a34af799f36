#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Install the Debian 12 packages that building and testing topsprof need. Idempotent and quiet:
# when everything is present it prints nothing and returns at once; otherwise it names what it
# installs on stderr. `--check` only reports what is missing (exit 1 when something is).
set -euo pipefail

PACKAGES=(
	make gcc pkg-config clang llvm clang-format libclang-rt-14-dev
	libbpf-dev bpftool libelf-dev zlib1g-dev liblzma-dev g++ binutils xz-utils libcjson-dev libcmocka-dev libsqlite3-dev sqlite3
	python3 openmpi-bin libc6-dbg
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] || missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${1:-}" = "--check" ]; then
	echo "missing packages: ${missing[*]}" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
		exit 1
	}
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
	exit 1
fi
