#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# What a profiled process names (a topstx range, its own process name) reaches the terminal of
# the root who runs topsprof as text, never as escape sequences: control characters print as '?'.
. "$E2E_DIR/lib.sh"
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT ENFLAME_GENERATE_PROFILE_META LD_LIBRARY_PATH
[ "$(id -u)" = 0 ] || skip "needs root for BPF"
command -v python3 >/dev/null || die "python3 is missing (scripts/install-deps.sh installs it)"
LIB=$OUTPUT/sim/lib

cat >"$TMP/app.py" <<'PY'
import ctypes, sys, time
libc = ctypes.CDLL(None)
libc.prctl(15, b"x\x1b[31mred", 0, 0, 0)  # PR_SET_NAME
tx = ctypes.CDLL(sys.argv[1] + "/libtopstx.so.1")
tx.topstxRangePushA(b"evil\x1b]0;pwned\x07range")
end = time.monotonic() + 0.6
while time.monotonic() < end:
    pass
tx.topstxRangePop()
PY

run "$TOPSPROF" --runtime-lib "$LIB/libtopsrt.so.1" --cpu-utilization --utilization-frequency 20 \
	python3 "$TMP/app.py" "$LIB"
expect_rc 0
expect_out "evil?]0;pwned?range"
expect_out "x?[31mred"
checks=$((checks + 1))
! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$out$err" || die "control characters printed:"$'\n'"$out"
done_ok
