"""A model of many small submodules compiled whole: one entry whose guard tree covers every submodule's
parameters and flags; calls with the same input hit it, no recompiles."""

import torch


class Stack(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


torch.manual_seed(0)
m = Stack(12)
cm = torch.compile(m, backend="eager")
x = torch.randn(2, 4)
for _ in range(5):
    y = cm(x)
assert torch.allclose(y, m(x))
print("ok: outputs match")
