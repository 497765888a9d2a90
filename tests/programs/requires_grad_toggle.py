"""A layer's parameters are frozen and unfrozen on alternate steps: the tensor guard on the parameter fails on
requires_grad and torch recompiles once; later steps alternate between the two entries."""

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


torch.manual_seed(0)
net = Net()
cnet = torch.compile(net, backend="eager")
x = torch.randn(3, 4)
for step in range(4):
    for p in net.b.parameters():
        p.requires_grad_(step % 2 == 0)
    cnet(x).sum().backward()
print("ok: steps ran")
