"""A small conv net with two BatchNorm layers switched from train() to eval() under torch.compile: the second
call misses on every ``.training`` flag, on the grad mode (the eval call runs under ``torch.no_grad()``) and on
the int ``scale`` (automatic dynamic makes it symbolic in the new entry, so dropping its guard is harmless).
Imported by the tests (stable code objects) and run as a script in a child process for the plain results."""

import json
import sys

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(4)

    def forward(self, x, scale):
        y = torch.relu(self.bn1(self.conv(x)))
        return torch.relu(self.bn2(self.conv2(y))).mean(dim=(1, 2, 3)) * scale


def run(results, scales=(1, 2, 3)):
    """A training call, then an eval call without grad, then another training call, with ``scale`` from `scales`
    (all equal: only the mode guards fail): outputs appended as lists of floats (eval output depends on the
    running statistics, train output on the batch's own)."""
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(2, 3, 6, 6)
    cm = torch.compile(net, backend="eager")
    net.train()
    results.append(cm(x, scales[0]).tolist())
    net.eval()
    with torch.no_grad():
        results.append(cm(x, scales[1]).tolist())
    net.train()
    results.append(cm(x * 2, scales[2]).tolist())


if __name__ == "__main__":
    out: list = []
    run(out, tuple(int(a) for a in sys.argv[1:]) or (1, 2, 3))
    json.dump(out, sys.stdout)
