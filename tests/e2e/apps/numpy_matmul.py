# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A CPU-bound job on Debian's own python3 and numpy (OpenBLAS), all built without frame
# pointers: matrix products from a Python function, for SECONDS of CPU time (default 1.5), by the
# process's own CPU clock so that a busy machine gives the same work. Prints how many it did.
import sys
import time

import numpy as np


def train_step(x):
    return x @ x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    a = np.random.rand(256, 256)
    n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        train_step(a)
        n += 1
    print("numpy_matmul: %d products, cpu_s=%.2f" % (n, time.process_time() - t0))


main()
