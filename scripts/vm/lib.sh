# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The VM test bed's shared part, sourced by scripts/vm/run.sh and scripts/vm/test.sh: which Debian
# suite carries which kernel, the cache of kernel packages, and the initramfs.
#
# Cache: VM_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/topsprof-vm), one directory per suite:
#   SUITE/apt/       the private apt configuration and lists (scripts/lib/deb-apt.sh)
#   SUITE/debs/      the kernel image package and its headers' packages, as downloaded
#   SUITE/root/      the image package extracted: boot/vmlinuz-ABI, lib/modules/ABI
#   SUITE/abi        the kernel's ABI name (6.1.0-57-amd64), written last: the cache is complete
# A complete cache is used as it is, without the network; VM_REFRESH=1 looks for a newer kernel.

vm_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM_CACHE=${VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topsprof-vm}

vm_say() { echo "vm: $*" >&2; }
vm_die() {
	echo "vm: $*" >&2
	exit 1
}

# vm_suite KERNEL: the Debian suite for 5.10, 6.1, 6.12 (or a suite's own name)
vm_suite() {
	case $1 in
	5.10 | bullseye) echo bullseye ;;
	6.1 | bookworm) echo bookworm ;;
	6.12 | trixie) echo trixie ;;
	*) vm_die "unknown kernel '$1' (known: 5.10 bullseye, 6.1 bookworm, 6.12 trixie)" ;;
	esac
}

# vm_fetch SUITE: makes sure the suite's newest amd64 kernel is in the cache; prints its directory.
# The headers are fetched too (for building modules against the kernel) but not required.
vm_fetch() {
	local suite=$1 dir=$VM_CACHE/$1 abi pkg deb hdrs
	if [ -s "$dir/abi" ] && [ -z "${VM_REFRESH:-}" ]; then
		echo "$dir"
		return
	fi
	command -v dpkg-deb >/dev/null || vm_die "dpkg-deb not found"
	mkdir -p "$dir/debs"
	(
		. "$vm_top/scripts/lib/deb-apt.sh"
		[ -n "${VM_REFRESH:-}" ] && export DEB_APT_MAX_AGE=0
		deb_apt_setup "$dir/apt" amd64 "$suite" || exit 1
		# the metapackage's candidate names the suite's newest kernel
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
		[ -n "$pkg" ] || { echo "vm: no linux-image-amd64 in $suite" >&2; exit 1; }
		abi=${pkg#linux-image-}
		[ -s "$dir/abi" ] && [ "$(cat "$dir/abi")" = "$abi" ] && exit 0
		vm_say "fetching $pkg ($suite) into $dir"
		rm -rf "$dir/debs" "$dir/root" "$dir/abi"
		mkdir -p "$dir/debs"
		(cd "$dir/debs" && apt-get -qq download "$pkg" >&2) || exit 1
		# the headers, for kbuild: linux-headers-ABI and what it needs of linux-headers-*, linux-kbuild-*
		hdrs=$(apt-cache depends "linux-headers-$abi" 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-\(headers\|kbuild\)-[^ <>]*\)$/\1/p')
		(cd "$dir/debs" && apt-get -qq download "linux-headers-$abi" $hdrs >&2) ||
			vm_say "warning: the headers of $abi could not be fetched (not needed yet)"
		deb=$(ls "$dir/debs/$pkg"_*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || { echo "vm: $pkg was not downloaded" >&2; exit 1; }
		dpkg-deb -x "$deb" "$dir/root" || exit 1
		[ -e "$dir/root/boot/vmlinuz-$abi" ] || { echo "vm: $deb has no boot/vmlinuz-$abi" >&2; exit 1; }
		echo "$abi" >"$dir/abi"
	) || vm_die "could not fetch the $suite kernel"
	echo "$dir"
}

# vm_copy ROOT PATH...: copies each file into ROOT at the same path, symbolic links as links
# together with what they point to
vm_copy() {
	local root=$1 f t
	shift
	for f in "$@"; do
		[ -e "$root$f" ] || [ -L "$root$f" ] && continue
		mkdir -p "$root$(dirname "$f")"
		if [ -L "$f" ]; then
			cp -P "$f" "$root$f"
			t=$(readlink "$f")
			[ "${t#/}" = "$t" ] && t=$(dirname "$f")/$t
			vm_copy "$root" "$t"
		else
			cp "$f" "$root$f"
		fi
	done
}

# vm_copy_libs ROOT FILE...: the shared libraries the ELF files need (ldd), with the loader; those
# inside the repository's tree are part of it and not copied
vm_copy_libs() {
	local root=$1
	shift
	local libs
	libs=$(for f in "$@"; do
		LC_ALL=C ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
	done | sort -u | grep -v "^$vm_top/")
	# shellcheck disable=SC2086
	[ -n "$libs" ] && vm_copy "$root" $libs
	return 0
}

# the host commands the e2e tests use (GNU ones where busybox's differ: env --default-signal,
# grep -P, sed, awk, find, stat, timeout...); busybox supplies the rest (su, mount helpers, init)
VM_HOST_PACKAGES=(coreutils bash dash grep sed mawk findutils diffutils procps util-linux mount
	sqlite3 file strace bpftool)
VM_HOST_EXTRA=(/usr/bin/ldd /usr/bin/readelf /usr/bin/getconf /usr/bin/python3
	/usr/share/misc/magic.mgc)
# util-linux's su and login need PAM; busybox's do not
VM_HOST_SKIP='/(su|runuser|login|sulogin|nologin|agetty|mkswap|swapon|swapoff|fsck[^/]*|mkfs[^/]*)$'

# vm_merged_usr ROOT: an empty ROOT with /bin, /sbin, /lib, /lib64 links into /usr as on the host.
# Every archive of the initramfs has them: the kernel would replace a link with a directory of
# the same name that a later archive brings (and lose the loader)
vm_merged_usr() {
	local d
	rm -rf "$1"
	mkdir -p "$1"/usr/{bin,sbin,lib,lib64}
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$1/$d"
	done
}

# vm_initramfs_host ROOT: the tree every kernel shares and no build changes: busybox, the host
# commands, python3, the users, /init
vm_initramfs_host() {
	local root=$1 f elfs=() py
	vm_merged_usr "$root"
	mkdir -p "$root"/{proc,sys,dev,tmp,run,etc,root,topsprof}
	chmod 1777 "$root/tmp"

	local files
	files=$(for p in "${VM_HOST_PACKAGES[@]}"; do
		dpkg -L "$p" 2>/dev/null | grep -E '^/(usr/)?s?bin/[^/]+$|^/usr/lib/x86_64-linux-gnu/coreutils/'
	done | grep -vE "$VM_HOST_SKIP" | sed -E 's,^/(s?bin)/,/usr/\1/,')
	for f in $files "${VM_HOST_EXTRA[@]}"; do
		[ -e "$f" ] && vm_copy "$root" "$f"
	done
	ln -sf dash "$root/usr/bin/sh"
	[ -e "$root/usr/bin/awk" ] || ln -s mawk "$root/usr/bin/awk"

	# python3 and its standard library (without what no test imports: Tk, IDLE, lib2to3...)
	py=$(readlink -f /usr/bin/python3)
	if [ -x "$py" ]; then
		local lib=/usr/lib/$(basename "$py")
		tar -C /usr/lib -cf - --exclude=tkinter --exclude=idlelib --exclude=turtledemo \
			--exclude=lib2to3 --exclude=ensurepip --exclude=pydoc_data --exclude='config-*' \
			--exclude=site-packages --exclude=dist-packages "$(basename "$lib")" |
			tar -C "$root/usr/lib" -xf -
		elfs+=("$lib"/lib-dynload/*.so)
	else
		vm_say "warning: no python3 on the host: the tests that need it fail in the VM"
	fi

	# busybox for every command the host's packages did not supply
	[ -x /bin/busybox ] || vm_die "busybox not found (scripts/install-deps.sh installs busybox-static)"
	file -L /bin/busybox | grep -q 'statically linked' ||
		vm_die "/bin/busybox is not static (install busybox-static)"
	cp /bin/busybox "$root/usr/bin/busybox"
	local a
	for a in $(/bin/busybox --list-full | sed -E 's,^(s?bin)/,usr/\1/,'); do
		[ -e "$root/$a" ] || [ -e "$root/usr/bin/${a##*/}" ] || [ -e "$root/usr/sbin/${a##*/}" ] ||
			ln -s /usr/bin/busybox "$root/$a"
	done

	for f in "$root"/usr/bin/* "$root"/usr/sbin/*; do
		[ -L "$f" ] || elfs+=("${f#"$root"}")
	done
	vm_copy_libs "$root" "${elfs[@]}"
	# the C library's debug file (libc6-dbg), found by build-id as on the host: its local
	# functions (start_thread) are named from it
	local id
	for f in "$root"/usr/lib/x86_64-linux-gnu/*.so*; do
		[ -L "$f" ] && continue
		id=$(readelf -n "$f" 2>/dev/null | sed -n 's/.*Build ID: *//p')
		[ -n "$id" ] && [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
			vm_copy "$root" "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	done

	cat >"$root/etc/passwd" <<-EOF
		root:x:0:0:root:/root:/bin/bash
		topsprof-e2e:x:1000:1000::/tmp:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
	EOF
	cat >"$root/etc/group" <<-EOF
		root:x:0:
		topsprof-e2e:x:1000:
		nogroup:x:65534:
	EOF
	printf 'passwd: files\ngroup: files\nshadow: files\n' >"$root/etc/nsswitch.conf"
	printf '/bin/sh\n/bin/bash\n/bin/dash\n' >"$root/etc/shells"
	ln -s /proc/self/mounts "$root/etc/mtab"
	echo vm >"$root/etc/hostname"
	install -m 0755 "$vm_top/scripts/vm/init" "$root/init"
}

# vm_host_stamp: what the host tree is made of: these scripts and the host's installed packages
vm_host_stamp() {
	cat "$vm_top/scripts/vm/lib.sh" "$vm_top/scripts/vm/init" /var/lib/dpkg/status /bin/busybox |
		md5sum | cut -d' ' -f1
}

# vm_initramfs_product ROOT: the product, the sim and the tests as built (no objects) at
# /topsprof, with the shared libraries they need from the host
vm_initramfs_product() {
	local root=$1 f elfs=()
	vm_merged_usr "$root"
	mkdir -p "$root/topsprof"
	(cd "$vm_top" && find build -path build/vm -prune -o -path build/test-logs -prune -o \
		-type f ! -name '*.o' ! -name '*.d' ! -name '*.a' -print -o -type l -print |
		grep -vE '^build/(obj|simtest|bpf|bpf-arm64|skel|fuzz|bench)/' |
		tar -cf - -T - tests/e2e sim/include) | tar -C "$root/topsprof" -xf -
	while IFS= read -r f; do
		elfs+=("$f")
	done < <(find "$root/topsprof/build" -type f -perm -u+x)
	vm_copy_libs "$root" "${elfs[@]}"
}

# vm_initramfs_kernel ROOT KDIR: the kernel's modules that VM_MODULES names (default brd loop
# null_blk tun dummy, for the kernel callstack tests) with what they depend on, decompressed, and
# their modules.dep
vm_initramfs_kernel() {
	local root=$1 kdir=$2 abi m f dep
	abi=$(cat "$kdir/abi")
	local src=$kdir/root/lib/modules/$abi dst=$root/usr/lib/modules/$abi
	# trixie's packages are merged-/usr
	[ -d "$src" ] || src=$kdir/root/usr/lib/modules/$abi
	vm_merged_usr "$root"
	mkdir -p "$dst"
	local todo=(${VM_MODULES-brd loop null_blk tun dummy}) seen=" "
	while [ ${#todo[@]} -gt 0 ]; do
		m=${todo[0]}
		todo=("${todo[@]:1}")
		case $seen in *" $m "*) continue ;; esac
		seen+="$m "
		f=$(find "$src/kernel" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n 1)
		if [ -z "$f" ]; then
			# built in, or unknown to this kernel
			grep -q "/$m.ko" "$src/modules.builtin" 2>/dev/null || vm_say "warning: no module $m in $abi"
			continue
		fi
		local rel=${f#"$src/"}
		rel=${rel%.xz}
		rel=${rel%.zst}
		mkdir -p "$dst/$(dirname "$rel")"
		case $f in
		*.xz) xz -dc "$f" >"$dst/$rel" ;;
		*.zst) zstd -qdc "$f" >"$dst/$rel" ;;
		*) cp "$f" "$dst/$rel" ;;
		esac
		# the .modinfo section's depends= (busybox modinfo wants a modules.dep)
		dep=$(tr '\0' '\n' <"$dst/$rel" | sed -n 's/^depends=//p' | head -n 1 | tr ',' ' ')
		for d in $dep; do todo+=("$d"); done
	done
	# the simulated KMD, where it could be built for this kernel (vm_build_kmd)
	if [ -n "${VM_KMD:-}" ] && [ -e "$VM_KMD" ]; then
		mkdir -p "$dst/extra"
		cp "$VM_KMD" "$dst/extra/gcusim.ko"
	fi
	cp "$src/modules.builtin" "$src/modules.order" "$dst/" 2>/dev/null
	/bin/busybox depmod -b "$root" "$abi" 2>/dev/null || vm_say "warning: depmod failed for $abi"
}

# vm_build_kmd KDIR OUT: sim/kmd's gcusim.ko (the simulated KMD) built against the kernel's
# headers, which are extracted into the cache once, as OUT/gcusim.ko; 1 with a warning when it
# cannot be built here (the module's tests then skip). Debian's headers name their common part
# by the path they install to, and carry the options of the compiler and pahole the kernel was
# built with: 6.12's (trixie) are gcc 14's and pahole 1.26's, and their tools are linked against
# glibc 2.38 (scripts/vm/kcc, vm_kbuild_runnable and the pahole options below bridge them).
vm_build_kmd() {
	local kdir=$1 out=$2 abi hdr d
	abi=$(cat "$kdir/abi")
	hdr=$kdir/headers/usr/src/linux-headers-$abi
	rm -rf "$out"
	if [ ! -e "$kdir/headers/.done" ]; then
		rm -rf "$kdir/headers"
		mkdir -p "$kdir/headers"
		for d in "$kdir"/debs/linux-headers-*.deb "$kdir"/debs/linux-kbuild-*.deb; do
			[ -e "$d" ] && dpkg-deb -x "$d" "$kdir/headers"
		done
		[ -e "$hdr/Makefile" ] || { vm_say "warning: no headers for $abi: gcusim.ko not built"; return 1; }
		sed -i "s#/usr/src/#$kdir/headers/usr/src/#" "$hdr/Makefile"
		vm_kbuild_runnable "$kdir" || return 1
		touch "$kdir/headers/.done"
	fi
	# the module's BTF (fentry on its functions) needs pahole and the kernel's own BTF, which
	# kbuild takes from the objtree's vmlinux: the image's, decompressed once
	if command -v pahole >/dev/null && [ ! -s "$hdr/vmlinux" ]; then
		vm_extract_vmlinux "$kdir/root/boot/vmlinuz-$abi" "$hdr/vmlinux" ||
			vm_say "warning: no vmlinux out of $abi's image: gcusim.ko without BTF (kprobes only)"
	fi
	command -v pahole >/dev/null ||
		vm_say "warning: no pahole (scripts/install-deps.sh installs dwarves): gcusim.ko without BTF (kprobes only)"
	# kbuild builds in the module's directory: a copy, with the device code it includes
	mkdir -p "$out/sim"
	cp -r "$vm_top/sim/kmd" "$vm_top/sim/driver" "$out/sim/"
	# (the module resolves no BTF ids: Debian's kbuild has no resolve_btfids; the kernel's
	# pahole options are those of the pahole that built it, newer than Debian 12's 1.24)
	if ! make -C "$hdr" M="$out/sim/kmd" GCUSIM_TOP="$vm_top" CC="$vm_top/scripts/vm/kcc" \
		RESOLVE_BTFIDS=true PAHOLE_FLAGS=--btf_gen_floats MODULE_PAHOLE_FLAGS= \
		modules >"$out/build.log" 2>&1 || [ ! -e "$out/sim/kmd/gcusim.ko" ]; then
		vm_say "warning: gcusim.ko does not build against $abi here: $(grep -m1 -iE 'error|not found' "$out/build.log")"
		return 1
	fi
	cp "$out/sim/kmd/gcusim.ko" "$out/gcusim.ko"
}

# vm_kbuild_runnable KDIR: the kernel's kbuild tools (fixdep, modpost, objtool...) made to run
# here. A newer suite's are linked against its newer glibc: those that do not start on this host
# are run through that suite's own dynamic loader and libraries (fetched once into
# KDIR/tools-root), by a wrapper in the binary's place.
vm_kbuild_runnable() {
	local kdir=$1 f bad=() suite said
	while IFS= read -r f; do
		[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = 177ELF ] || continue
		# (its status is the loader's failure, or the tool's own answer: not looked at)
		said=$("$f" --version </dev/null 2>&1 || true)
		grep -q 'GLIBC_[0-9.]*. not found' <<<"$said" && bad+=("$f")
	done < <(find "$kdir/headers/usr/lib" -type f -perm -u+x)
	[ ${#bad[@]} -eq 0 ] && return 0
	suite=$(basename "$kdir")
	if [ ! -e "$kdir/tools-root/.done" ]; then
		rm -rf "$kdir/tools-root" "$kdir/tools-debs"
		mkdir -p "$kdir/tools-root" "$kdir/tools-debs"
		(
			. "$vm_top/scripts/lib/deb-apt.sh"
			deb_apt_setup "$kdir/apt" amd64 "$suite" || exit 1
			cd "$kdir/tools-debs" && apt-get -qq download libc6 libelf1t64 zlib1g libzstd1 \
				libssl3t64 libcrypt1 >&2
		) || { vm_say "warning: $suite's libraries for its kbuild tools could not be fetched"; return 1; }
		for f in "$kdir"/tools-debs/*.deb; do dpkg-deb -x "$f" "$kdir/tools-root"; done
		touch "$kdir/tools-root/.done"
	fi
	local root=$kdir/tools-root libs ld
	libs=$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu
	ld=$(find "$root" -name 'ld-linux-x86-64.so.2' | head -n 1)
	[ -n "$ld" ] || { vm_say "warning: no dynamic loader in $suite's libc6"; return 1; }
	for f in "${bad[@]}"; do
		mv "$f" "$f.bin"
		printf '#!/bin/sh\n# %s, run with its own suite'"'"'s loader and libraries (vm_kbuild_runnable)\nexec %s --library-path %s %s "$@"\n' \
			"$(basename "$f")" "$ld" "$libs" "$f.bin" >"$f"
		chmod +x "$f"
	done
	vm_say "$suite's kbuild tools run with its own glibc: ${#bad[@]} of them"
}

# vm_extract_vmlinux IMAGE OUT: the ELF vmlinux inside a compressed kernel image (bzImage: the
# payload begins at its compressor's magic), with its .BTF section
vm_extract_vmlinux() {
	local img=$1 out=$2 magic tool off
	for magic in '\xfd7zXZ\x00:xz -dc' '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dc'; do
		tool=${magic#*:}
		for off in $(LC_ALL=C grep -abo -P "${magic%%:*}" "$img" 2>/dev/null | cut -d: -f1); do
			tail -c +$((off + 1)) "$img" | $tool >"$out.tmp" 2>/dev/null
			if [ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = 177ELF ]; then
				mv "$out.tmp" "$out"
				return 0
			fi
		done
	done
	rm -f "$out.tmp"
	return 1
}

# vm_cpio DIR FILE: DIR as an uncompressed newc archive (the kernel unpacks it fastest under TCG)
vm_cpio() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | /bin/busybox cpio -o -H newc 2>/dev/null) >"$2"
}
