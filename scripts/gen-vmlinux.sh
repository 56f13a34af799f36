#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Regenerate vmlinux/<arch>/vmlinux.h from a kernel's BTF (default: the running kernel).
# usage: scripts/gen-vmlinux.sh [BTF_FILE] [ARCH]
set -euo pipefail
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-x86}
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/vmlinux/$arch/vmlinux.h"
[ -r "$btf" ] || { echo "gen-vmlinux: no BTF at $btf (kernel built without CONFIG_DEBUG_INFO_BTF?)" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "gen-vmlinux: bpftool not found; run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
bpftool btf dump file "$btf" format c > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "gen-vmlinux: wrote $out from $btf ($(uname -r))"
