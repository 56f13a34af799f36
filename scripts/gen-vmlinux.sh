#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF (default: the running kernel).
# usage: scripts/gen-vmlinux.sh [BTF_FILE] [ARCH] [FROM]
# FROM, when given, says at the top of the header which kernel the BTF is of (another machine's,
# another architecture's: scripts/gen-vmlinux-deb.sh passes the Debian package).
set -euo pipefail
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-x86}
from=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/vmlinux/$arch/vmlinux.h"
[ -r "$btf" ] || { echo "gen-vmlinux: no BTF at $btf (kernel built without CONFIG_DEBUG_INFO_BTF?)" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "gen-vmlinux: bpftool not found; run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
	[ -z "$from" ] || printf '/* vmlinux.h for %s: %s */\n' "$arch" "$from"
	bpftool btf dump file "$btf" format c
} > "$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "gen-vmlinux: wrote $out from $btf (${from:-$(uname -r)})"
