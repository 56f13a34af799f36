#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# topstx strings never lost silently (issue 12): messages in pages the application has not
# touched (a .rodata page, a fresh file mapping, a fresh writable memfd mapping) are read by the
# probe where the kernel has sleepable uprobes, else read again by topsprof from read-only
# mappings; one it cannot read safely is counted, warned about and named
# "[unreadable string at 0x...]", never an empty name. The names are compared with what
# sim/samples/topstx_cold says it passed. A message whose page fault blocks (tests/e2e/topstx_uffd.c)
# holds up no one else's events: neither the probe's fault nor topsprof's read again. Kernels
# without attach cookies or bpf_loop (TOPSPROF_NO_COOKIE, TOPSPROF_NO_BPF_LOOP) read them alike.
. "$E2E_DIR/lib.sh"
BIN=$OUTPUT/sim/bin
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
unset TOPSPROF_NO_SLEEPABLE TOPSPROF_NO_UPROBE_MULTI TOPSPROF_NO_COOKIE TOPSPROF_NO_BPF_LOOP

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
[ -x "$BIN/topstx_cold" ] || die "no $BIN/topstx_cold"

# what the app passed: "KIND|NAME|ADDRESS" lines
passed() { sed -n "s/^passed: \([a-z]*\) '\(.*\)' at \(0x[0-9a-f]*\)$/\1|\2|\3/p" <<<"$out"; }
tx_section() { sed -n '/TOPSTX activities:/,/Accumulate Time/p' <<<"$out"; }
has_range() { grep -qE "^==[0-9]+== +[0-9.]+% .* $(sed 's/[][\.*^$]/\\&/g' <<<"$1")\$" <<<"$(tx_section)"; }
has_mark() { grep -qF "Mark $1: 1" <<<"$out"; }

# every message as the app passed it, but those listed (by KIND|NAME) as unreadable: these
# named by their address
expect_names() { # unreadable...
	local kind name addr shown n=0
	while IFS='|' read -r kind name addr; do
		n=$((n + 1))
		shown=$name
		for u in "$@"; do
			[ "$u" = "$kind|$name" ] && shown="[unreadable string at $addr]"
		done
		checks=$((checks + 1))
		if [ "$kind" = range ]; then
			has_range "$shown" || die "no range '$shown':"$'\n'"$out"
		else
			has_mark "$shown" || die "no mark '$shown':"$'\n'"$out"
		fi
	done <<<"$(passed)"
	[ "$n" = 3 ] || die "the app said it passed $n messages, not 3:"$'\n'"$out"
	# never an empty name
	checks=$((checks + 1))
	grep -qE '^==[0-9]+== +[0-9.]+% +[0-9.]+[a-z]+ +[0-9]+ +[0-9.]+[a-z]+ +[0-9.]+[a-z]+ +[0-9.]+[a-z]+ *$' \
		<<<"$(tx_section)" && die "a range without a name:"$'\n'"$out"
	grep -q "Mark : " <<<"$out" && die "a mark without a name:"$'\n'"$out"
	return 0
}

# A message whose page fault blocks for 1.5 s (tests/e2e/topstx_uffd.c, a userfaultfd region) while
# another thread marks once a millisecond: the probe sleeps holding no ring buffer record, so the
# busy marks flow to topsprof meanwhile, none lost (a held record would stop the ring being read:
# a 1 MB ring fills in about 250 ms of them). Needs a C compiler and userfaultfd (as root).
uffd_app() {
	local repo=$E2E_DIR/../..
	[ -x "$TMP/topstx_uffd" ] && return 0
	cc -O2 -pthread -I"$repo/sim/include" "$E2E_DIR/topstx_uffd.c" -L"$OUTPUT/sim/lib" \
		-ltopstx -Wl,-rpath,"$OUTPUT/sim/lib" -o "$TMP/topstx_uffd" 2>"$TMP/cc.err" && return 0
	echo "not tried: the blocking fault (no C compiler: $(head -n 1 "$TMP/cc.err"))"
	return 1
}
uffd_stall() {
	local app=$TMP/topstx_uffd made took
	uffd_app || return 0
	run "$TOPSPROF" --print-app-log --buffer-size 1MB "$app" 1500
	if [ "$rc" != 0 ] && grep -q "userfaultfd\|UFFDIO_REGISTER" <<<"$err$out"; then
		echo "not tried: the blocking fault (no userfaultfd here)"
		return 0
	fi
	expect_rc 0
	expect_out "topstx_uffd: PASSED"
	took=$(sed -n 's/^the uffd mark took \([0-9]*\) ms$/\1/p' <<<"$out")
	checks=$((checks + 1))
	[ "${took:-0}" -ge 1400 ] || die "the probe did not wait for the fault (${took:-?} ms):"$'\n'"$out"
	made=$(sed -n 's/^busy marks: \([0-9]*\)$/\1/p' <<<"$out")
	has_mark "uffd message" || die "no mark 'uffd message':"$'\n'"$out"
	grep -qF "Mark busy mark: $made" <<<"$out" || die "not every busy mark of $made:"$'\n'"$out"$'\n'"$err"
	grep -q "events lost" <<<"$err" && die "events lost while a probe slept: $err"
	return 0
}

# Without sleepable uprobes, the same message in a region made read-only: topsprof reads it again
# (a private read-only mapping), and that read's fault blocks for 2 s. topsprof waits 50 ms for it,
# then counts the string unreadable and goes on reading events: every busy mark arrives, none
# lost (a main loop waiting for the fault would let the 1 MB ring fill in about 250 ms).
uffd_stall_read_again() {
	local app=$TMP/topstx_uffd made addr
	uffd_app || return 0
	run env TOPSPROF_NO_SLEEPABLE=1 "$TOPSPROF" --print-app-log --debug --buffer-size 1MB \
		"$app" 2000 ro
	if [ "$rc" != 0 ] && grep -q "userfaultfd\|UFFDIO_REGISTER" <<<"$err$out"; then
		echo "not tried: the blocking read again (no userfaultfd here)"
		return 0
	fi
	expect_rc 0
	expect_out "topstx_uffd: PASSED"
	made=$(sed -n 's/^busy marks: \([0-9]*\)$/\1/p' <<<"$out")
	addr=$(sed -n "s/^passed: mark 'uffd message' at \(0x[0-9a-f]*\)$/\1/p" <<<"$out")
	checks=$((checks + 1))
	grep -qF "Mark busy mark: $made" <<<"$out" ||
		die "not every busy mark of $made while a read again waited:"$'\n'"$out"$'\n'"$err"
	grep -q "events lost" <<<"$err" && die "events lost while a read again waited: $err"
	has_mark "[unreadable string at $addr]" || die "no mark '[unreadable string at $addr]':"$'\n'"$out"
	expect_err "did not come within 50 ms"
	expect_err "warning: 1 topstx strings could not be read"
	return 0
}

# --- what this kernel offers: sleepable uprobes read all three ---------------------------------
run "$TOPSPROF" --print-app-log --debug "$BIN/topstx_cold" "$TMP"
expect_rc 0
expect_out "topstx_cold: PASSED"
if grep -q "faulted in by the probe (sleepable uprobes)" <<<"$err"; then
	expect_names
	grep -q "could not be read" <<<"$err" && die "a loss with sleepable uprobes: $err"
	expect_err "3 faulted in by the probe, 0 read again from the process"
	# one uprobe per function, as on kernels before 6.6
	run env TOPSPROF_NO_UPROBE_MULTI=1 "$TOPSPROF" --print-app-log "$BIN/topstx_cold" "$TMP"
	expect_rc 0
	expect_names
	[ -z "$err" ] || die "single uprobes: $err"
	uffd_stall
else
	echo "no sleepable uprobes on $(uname -r): strings read again from read-only mappings"
	expect_names "mark|cold writable message"
fi

# --- without sleepable uprobes (before Linux 6.0): read again from read-only mappings ---------
run env TOPSPROF_NO_SLEEPABLE=1 "$TOPSPROF" --print-app-log --debug "$BIN/topstx_cold" "$TMP"
expect_rc 0
# .rodata and the read-only file mapping recovered; the writable mapping counted and named
expect_names "mark|cold writable message"
expect_err "read again by topsprof from read-only mappings"
expect_err "warning: 1 topstx strings could not be read"
expect_err "0 faulted in by the probe, 2 read again from the process"
expect_err "not read again: writable memory"
uffd_stall_read_again

# --- before Linux 5.15 and 5.17: the entry probes' cookies through stubs, strings through a
# bounded loop (and one uprobe each), up to 16 KB (what 5.10's verifier takes): a message of
# 16 KB whole, one of 1 MiB under a 1 MB limit cut at 16 KB, marked and warned about -----------
old=(env TOPSPROF_NO_COOKIE=1 TOPSPROF_NO_BPF_LOOP=1)
run "${old[@]}" "$TOPSPROF" --print-app-log --debug "$BIN/topstx_cold" "$TMP"
expect_rc 0
expect_names "mark|cold writable message"
expect_err "no attach cookies (Linux 5.15+): a stub program per function"
expect_err "no bpf_loop (Linux 5.17+): strings read by a bounded loop"
expect_err "libtopstx.so.1 probed (one uprobe each, entries through stubs,"
long_len() { grep ' long:' <<<"$out" | awk '{ print length($NF) }'; }
run "${old[@]}" "$TOPSPROF" --topstx-max-bytes-size 16KB "$BIN/topstx_ranges" 16384
expect_rc 0
checks=$((checks + 1))
[ "$(long_len)" = 16384 ] && [ -z "$err" ] ||
	die "16 KB message through the bounded loop: $(long_len)"$'\n'"$out"$'\n'"$err"
run "${old[@]}" "$TOPSPROF" --topstx-max-bytes-size 1MB "$BIN/topstx_ranges" 1048576
expect_rc 0
expect_err "this kernel has no bpf_loop (Linux 5.17+): topstx strings are taken up to 16 KB, not 1024 KB"
checks=$((checks + 1))
[ "$(long_len)" = $((16384 + 14)) ] && grep -q ' long:abc.*\.\.\.\[truncated\]$' <<<"$out" ||
	die "1 MiB message through the bounded loop: $(long_len)"$'\n'"$out"

# --- raw data and the profile file replay what was read again, and the loss ---------------------
run env TOPSPROF_NO_SLEEPABLE=1 "$TOPSPROF" --print-app-log --export-rawdata "$TMP/cold.raw" \
	--export-profile "$TMP/cold.topsprof" "$BIN/topstx_cold" "$TMP"
expect_rc 0
live=$out
run "$TOPSPROF" --import-rawdata "$TMP/cold.raw"
expect_rc 0
out="$(grep '^passed: ' <<<"$live")"$'\n'"$out"
expect_names "mark|cold writable message"
expect_err "warning: 1 topstx strings could not be read"
run "$TOPSPROF" --import-profile "$TMP/cold.topsprof"
expect_rc 0
out="$(grep '^passed: ' <<<"$live")"$'\n'"$out"
expect_names "mark|cold writable message"
expect_err "warning: 1 topstx strings could not be read"
done_ok
