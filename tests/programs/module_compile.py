"""A module compiled in place with ``layer.compile(...)`` (``nn.Module.compile``), whose forward reads a Python
int attribute that changes: every change recompiles. The fix goes on ``layer.compile(...)``."""

import torch


class Shift(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = 1

    def forward(self, x):
        return x + self.offset


def main():
    layer = Shift()
    layer.compile(backend="eager")
    for offset in (1, 2):
        layer.offset = offset
        print(offset, layer(torch.zeros(2)).tolist())


if __name__ == "__main__":
    main()
