#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The build: nothing to do when nothing changed, header changes rebuild, install lays out files.
. "$E2E_DIR/lib.sh"
top=$(cd "$E2E_DIR/../.." && pwd)

run make -C "$top" -q all
expect_rc 0 "make -q all right after a build: something would be rebuilt"

run make -C "$top" install PREFIX=/usr DESTDIR="$TMP/pkg"
expect_rc 0
[ -x "$TMP/pkg/usr/bin/topsprof" ] || die "install did not lay out usr/bin/topsprof"
run "$TMP/pkg/usr/bin/topsprof" --version
expect_rc 0
expect_out "topsprof 0.1.0"

# libbpf is linked in: the binary does not need libbpf.so on another host
ldd "$TMP/pkg/usr/bin/topsprof" | grep -q 'libbpf\.so' && die "topsprof links libbpf.so dynamically"

# the BPF objects are CO-RE and stripped of DWARF, and their skeletons embed them
for o in "$OUTPUT"/bpf/*.bpf.o; do
	readelf -S "$o" | grep -q '\.BTF\.ext' || die "$o has no .BTF.ext (CO-RE relocations)"
	readelf -S "$o" | grep -q '\.debug_info' && die "$o is not stripped"
	skel="$OUTPUT/skel/$(basename "$o" .bpf.o).skel.h"
	[ -s "$skel" ] || die "no skeleton $skel"
done
done_ok
