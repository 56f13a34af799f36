#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# CPU stacks through binaries we did not build: Debian's python3, numpy (OpenBLAS) and PyTorch,
# built without frame pointers, loading no GCU runtime. The samplers run without the runtime (said
# in one warning); the stacks, unwound by the call frame information, reach the thread's entry
# from the interpreter through numpy into OpenBLAS, and through libtorch's autograd into its
# BLAS; frame pointers alone reach it for none.
. "$E2E_DIR/lib.sh"
export TOPS_SIM_DRIVER_DIR=$TMP/driver
unset TOPS_VISIBLE_DEVICES TOPS_SIM_DEVICE_COUNT LD_LIBRARY_PATH

[ "$(id -u)" = 0 ] || skip "needs root for BPF"
PY=/usr/bin/python3
"$PY" -c 'import numpy' 2>/dev/null || skip "no numpy for $PY (python3-numpy: scripts/install-deps.sh)"
JOB=$E2E_DIR/apps/numpy_matmul.py

# whole FILE: the % of the samples whose stack reaches a thread's entry
whole() {
	awk '{ n = $NF; all += n } /^python3;(_start|clone3?;start_thread);/ { w += n }
		END { if (all > 0) printf "%.2f\n", 100 * w / all }' "$1"
}

run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --export-folded "$TMP/py.folded" \
	"$PY" "$JOB" 1.5
expect_rc 0
expect_out "numpy_matmul: "
expect_err "cannot find the GCU runtime (libtopsrt.so) that '$PY' uses"
expect_err "its calls are not traced, the samplers run"
expect_out "RUNTIME activities:"
w=$(whole "$TMP/py.folded")
echo "dwarf: $w% of the samples reach a thread's entry"
checks=$((checks + 1))
awk -v w="$w" 'BEGIN { exit !(w != "" && w >= 95) }' ||
	die "only $w% of the stacks are whole:"$'\n'"$out"$'\n'"$(cat "$TMP/py.folded")"
# the interpreter's entry, numpy's module and OpenBLAS's product in one whole stack
checks=$((checks + 1))
grep -qE '^python3;_start;.*;Py_BytesMain;.*;_PyEval_EvalFrameDefault;.*_multiarray_umath.*;[a-z_]*gemm_? [0-9]+$' \
	"$TMP/py.folded" ||
	die "no whole stack from _start through the interpreter and numpy into OpenBLAS:"$'\n'"$(cat "$TMP/py.folded")"
# no caller made up: OpenBLAS's product is called through its C interface, numpy's module from
# the interpreter's eval loop
checks=$((checks + 1))
bad=$(grep -E ';dgemm_' "$TMP/py.folded" | grep -vE ';cblas_dgemm;dgemm_' || true)
[ -z "$bad" ] || die "dgemm_ called by another than cblas_dgemm:"$'\n'"$bad"
checks=$((checks + 1))
bad=$(grep -F '_multiarray_umath' "$TMP/py.folded" | grep -vE '_PyEval_EvalFrameDefault;.*_multiarray_umath' || true)
[ -z "$bad" ] || die "numpy's module outside the interpreter's eval loop:"$'\n'"$bad"

# frame pointers alone: cut short, said to be
run "$TOPSPROF" --cpu-profiling-callstack --cpu-profiling-unwind fp \
	--export-folded "$TMP/fp.folded" "$PY" "$JOB" 1
expect_rc 0
expect_out "have user stacks that stop short of a thread's entry"
wf=$(whole "$TMP/fp.folded")
echo "fp: $wf% of the samples reach a thread's entry"
# Debian 12 builds python3 and OpenBLAS without frame pointers (distributions that build with
# them walk these stacks whole either way)
if grep -qx 'VERSION_ID="12"' /etc/os-release && grep -qx 'ID=debian' /etc/os-release; then
	checks=$((checks + 1))
	awk -v w="$wf" 'BEGIN { exit !(w != "" && w < 50) }' ||
		die "frame pointers walked $wf% of the stacks through code without them?"
fi
# --- PyTorch: a training step's backward pass, from the Python line's interpreter frame through
# libtorch's autograd engine into the BLAS; the share of whole stacks is held to 90% here (its
# JIT convolution kernels, oneDNN's, have neither CFI nor frame pointers: 4 to 6% of the samples
# here, counted and said)
if "$PY" -c 'import torch' 2>/dev/null; then
	run "$TOPSPROF" --print-app-log --cpu-profiling-callstack --export-folded "$TMP/torch.folded" \
		"$PY" "$E2E_DIR/apps/torch_train.py" 2
	expect_rc 0
	expect_out "torch_train: "
	w=$(whole "$TMP/torch.folded")
	echo "PyTorch, dwarf: $w% of the samples reach a thread's entry"
	checks=$((checks + 1))
	awk -v w="$w" 'BEGIN { exit !(w != "" && w >= 90) }' ||
		die "only $w% of PyTorch's stacks are whole:"$'\n'"$out"
	checks=$((checks + 1))
	grep -qE '^python3;_start;.*;_PyEval_EvalFrameDefault;.*;THPEngine_run_backward\(.*;torch::autograd::Engine::.*gemm_? [0-9]+$' \
		"$TMP/torch.folded" ||
		die "no whole stack from _start through autograd's backward into a BLAS product:"$'\n'"$(cut -c1-400 "$TMP/torch.folded")"
else
	echo "note: no torch for $PY (python3-torch): the PyTorch case is not run"
fi
done_ok
