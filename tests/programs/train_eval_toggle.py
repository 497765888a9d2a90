"""Switching between ``train()`` and ``eval()`` every call: the guard on the dropout's ``training`` flag fails
once, then the two entries serve the two modes."""

import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):
        return self.drop(self.lin(x))


torch.manual_seed(0)
m = Head()
cm = torch.compile(m, backend="eager")
x = torch.randn(2, 4)
for step in range(4):
    m.train(step % 2 == 0)
    y = cm(x)
    if not m.training:
        assert torch.allclose(y, m(x))
print("ok: eval outputs match")
