# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Helpers for end-to-end tests; source it. Each check prints what it saw when it fails.
set -u
TMP=$(mktemp -d /tmp/topsprof-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
checks=0

die() {
	echo "FAILED: $*" >&2
	exit 1
}

skip() {
	echo "skipped: $*"
	exit 77
}

# run CMD...: sets $rc, $out (stdout) and $err (stderr)
run() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

expect_rc() {
	checks=$((checks + 1))
	[ "$rc" -eq "$1" ] || die "exit status $rc, wanted $1${2:+ ($2)}"$'\n'"stdout: $out"$'\n'"stderr: $err"
}

expect_out() {
	checks=$((checks + 1))
	grep -qF -- "$1" <<<"$out" || die "stdout lacks '$1':"$'\n'"$out"
}

expect_err() {
	checks=$((checks + 1))
	grep -qF -- "$1" <<<"$err" || die "stderr lacks '$1':"$'\n'"$err"
}

expect_lines() { # stream count
	local text n
	text=$([ "$1" = out ] && echo "$out" || echo "$err")
	n=$(printf '%s' "$text" | grep -c '')
	checks=$((checks + 1))
	[ "$n" -eq "$2" ] || die "$1 has $n lines, wanted $2:"$'\n'"$text"
}

done_ok() {
	echo "ok: $checks checks"
	exit 0
}
