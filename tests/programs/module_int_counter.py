"""A module bumps a Python int attribute in forward. Module ints are constants to Dynamo: every call fails
the guard on the previous count (``L['self'].counter == N``) and recompiles, one entry per call."""

import torch


class Stepper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.counter = 0

    def forward(self, x):
        self.counter += 1
        return x * self.counter


m = Stepper()
cm = torch.compile(m, backend="eager")
for _ in range(4):
    cm(torch.ones(2))
assert m.counter == 4
print("ok: counter", m.counter)
