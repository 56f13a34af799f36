#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Drive the GCU runtime from Python through ctypes, as Python frameworks do: memory, copies,
memset, a kernel from a module (topsModuleLoad), events. Checks its results.
usage: ctypes_app.py [path/to/libtopsrt.so.1]
Without a path the runtime is loaded by name (LD_LIBRARY_PATH, ld.so.cache), as frameworks do."""
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = sys.argv[1] if len(sys.argv) > 1 else "libtopsrt.so.1"
MODULE = os.path.join(HERE, "..", "lib", "libsample_kernels.so")

rt = ctypes.CDLL(LIB)
rt.topsGetErrorName.restype = ctypes.c_char_p
c_void_pp = ctypes.POINTER(ctypes.c_void_p)


def check(err, what):
    if err != 0:
        sys.exit(f"ctypes_app: {what}: {rt.topsGetErrorName(err).decode()}")


n = 1024
nbytes = n * 4
x = (ctypes.c_float * n)(*[float(i) for i in range(n)])
y = (ctypes.c_float * n)(*[1.0] * n)
dx, dy = ctypes.c_void_p(), ctypes.c_void_p()
check(rt.topsMalloc(ctypes.byref(dx), ctypes.c_size_t(nbytes)), "topsMalloc")
check(rt.topsMalloc(ctypes.byref(dy), ctypes.c_size_t(nbytes)), "topsMalloc")
check(rt.topsMemcpy(dx, x, ctypes.c_size_t(nbytes), 1), "topsMemcpy HtoD")
check(rt.topsMemset(dy, 0, ctypes.c_size_t(nbytes)), "topsMemset")
check(rt.topsMemcpy(dy, y, ctypes.c_size_t(nbytes), 1), "topsMemcpy HtoD")

module, func = ctypes.c_void_p(), ctypes.c_void_p()
check(rt.topsModuleLoad(ctypes.byref(module), MODULE.encode()), "topsModuleLoad")
check(rt.topsModuleGetFunction(ctypes.byref(func), module, b"saxpy"), "topsModuleGetFunction")

start, stop = ctypes.c_void_p(), ctypes.c_void_p()
check(rt.topsEventCreate(ctypes.byref(start)), "topsEventCreate")
check(rt.topsEventCreate(ctypes.byref(stop)), "topsEventCreate")
check(rt.topsEventRecord(start, None), "topsEventRecord")

a = ctypes.c_float(3.0)
count = ctypes.c_ulong(n)
params = (ctypes.c_void_p * 4)(ctypes.addressof(a), ctypes.addressof(dx),
                               ctypes.addressof(dy), ctypes.addressof(count))
check(rt.topsModuleLaunchKernel(func, 1, 1, 1, 64, 1, 1, 0, None, params, None),
      "topsModuleLaunchKernel")
check(rt.topsEventRecord(stop, None), "topsEventRecord")
check(rt.topsEventSynchronize(stop), "topsEventSynchronize")
ms = ctypes.c_float()
check(rt.topsEventElapsedTime(ctypes.byref(ms), start, stop), "topsEventElapsedTime")

out = (ctypes.c_float * n)()
check(rt.topsMemcpy(out, dy, ctypes.c_size_t(nbytes), 2), "topsMemcpy DtoH")
bad = [i for i in range(n) if out[i] != 3.0 * i + 1.0]
for p in (dx, dy):
    check(rt.topsFree(p), "topsFree")
check(rt.topsModuleUnload(module), "topsModuleUnload")
if bad:
    sys.exit(f"ctypes_app: {len(bad)} wrong results, first at {bad[0]}")
if not ms.value > 0:
    sys.exit(f"ctypes_app: elapsed time {ms.value} ms")
print(f"ctypes_app: PASSED (saxpy took {ms.value:.3f} ms of device time)")
