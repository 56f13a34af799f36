#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Regenerate vmlinux/<arch>/vmlinux.h for an architecture no machine here runs, from the BTF in a
# Debian kernel image package (CONFIG_DEBUG_INFO_BTF=y): the BPF objects build for it with CO-RE
# against that kernel's types (make bpf-arm64).
# usage: scripts/gen-vmlinux-deb.sh [ARCH [PACKAGE=VERSION | FILE.deb]]
#   default: arm64 linux-image-6.1.0-50-arm64-unsigned=6.1.176-1 (Debian 12, bookworm main),
#   the kernel vmlinux/arm64/vmlinux.h is of; its first line names the package.
# The package is fetched with apt-get download through a private apt configuration (MIRROR,
# default deb.debian.org, suite SUITE, default bookworm, and its security suite), so the host's
# dpkg architectures and apt lists stay as they are. A version the mirror no longer has is on
# snapshot.debian.org (pool/main/l/linux/): pass the .deb file.
# The image is not ELF on arm64 (boot/vmlinuz is a raw Image, gzip'd or not): the .BTF blob is
# found in it by its header (magic 0xeb9f, version 1, 4-byte aligned) and cut out whole.
set -euo pipefail
arch=${1:-arm64}
pkg=${2:-linux-image-6.1.0-50-arm64-unsigned=6.1.176-1}
mirror=${MIRROR:-http://deb.debian.org}
suite=${SUITE:-bookworm}
top=$(cd "$(dirname "$0")/.." && pwd)

case $arch in
arm64) debarch=arm64 ;;
x86) debarch=amd64 ;;
*) echo "gen-vmlinux-deb: no Debian architecture known for $arch" >&2; exit 1 ;;
esac
for tool in dpkg-deb python3 bpftool; do
	command -v $tool >/dev/null || { echo "gen-vmlinux-deb: $tool not found" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -f "$pkg" ]; then
	deb=$(realpath "$pkg")
else
	command -v apt-get >/dev/null || { echo "gen-vmlinux-deb: apt-get not found" >&2; exit 1; }
	. "$top/scripts/lib/deb-apt.sh"
	deb_apt_setup "$work/apt" "$debarch" "$suite"
	mkdir -p "$work/deb"
	echo "gen-vmlinux-deb: fetching $pkg ($debarch) from $mirror" >&2
	(cd "$work/deb" && apt-get -qq download "$pkg" >&2)
	debs=("$work"/deb/*.deb)
	deb=${debs[0]}
fi

name=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
[ "$(dpkg-deb -f "$deb" Architecture)" = "$debarch" ] ||
	{ echo "gen-vmlinux-deb: $deb is not a $debarch package" >&2; exit 1; }
dpkg-deb -x "$deb" "$work/x"
images=("$work"/x/boot/vmlinu[xz]-*)
image=${images[0]}
[ -e "$image" ] || { echo "gen-vmlinux-deb: no boot/vmlinuz-* in $name" >&2; exit 1; }

python3 - "$image" "$work/vmlinux.btf" <<'EOF'
import gzip, struct, sys
data = open(sys.argv[1], 'rb').read()
if data[:2] == b'\x1f\x8b':
    data = gzip.decompress(data)
best = None
i = data.find(b'\x9f\xeb\x01\x00')
while i >= 0:
    # struct btf_header: magic, version, flags, hdr_len, type_off, type_len, str_off, str_len
    if i % 4 == 0 and i + 24 <= len(data):
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from('<5I', data, i + 4)
        size = hdr_len + str_off + str_len
        if (hdr_len >= 24 and type_off == 0 and str_off >= type_len and i + size <= len(data)
                and (best is None or size > best[1])):
            best = (i, size)
    i = data.find(b'\x9f\xeb\x01\x00', i + 1)
if best is None:
    sys.exit('gen-vmlinux-deb: no BTF in ' + sys.argv[1] + ' (CONFIG_DEBUG_INFO_BTF off?)')
open(sys.argv[2], 'wb').write(data[best[0]:best[0] + best[1]])
EOF

"$top/scripts/gen-vmlinux.sh" "$work/vmlinux.btf" "$arch" \
	"the BTF of Debian $name $version ($debarch), by scripts/gen-vmlinux-deb.sh"
