# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# A small training loop on Debian's own PyTorch (python3-torch, CPU build, no frame pointers):
# a convolution and a linear layer, forward and backward, for SECONDS of CPU time (default 2),
# by the process's own CPU clock. Prints how many steps it took.
import sys
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(16 * 30 * 30, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 3, 32, 32)
y = torch.randint(0, 10, (16,))


def train_step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2
    n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        train_step()
        n += 1
    print("torch_train: %d steps, cpu_s=%.2f" % (n, time.process_time() - t0))


main()
