"""A model compiled while it trains, then evaluated: ``eval()`` under ``torch.no_grad()`` turns grad mode off (the
GLOBAL_STATE guard) and both BatchNorm layers' ``training`` flags to False, and the step count the model keeps in
an int attribute has moved on (``L['self'].steps == 0``): the entry compiled for training fails all of them at
once, and evaluation recompiles."""

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn1 = torch.nn.BatchNorm1d(8)
        self.lin = torch.nn.Linear(8, 8)
        self.bn2 = torch.nn.BatchNorm1d(8)
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return self.bn2(self.lin(self.bn1(x)).relu())


torch.manual_seed(0)
m = Net()
cm = torch.compile(m, backend="eager")
x = torch.randn(4, 8)
cm(x).sum().backward()  # one training step
m.eval()
with torch.no_grad():
    y = cm(x)
assert not y.requires_grad and m.steps == 2
print("ok: evaluated after", m.steps - 1, "training step")
