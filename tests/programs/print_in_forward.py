"""Two prints in a module's forward: each breaks the graph, so forward runs as three graphs joined by two
resume functions."""

import torch


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(3, 3)
        self.b = torch.nn.Linear(3, 3)

    def forward(self, x):
        h = self.a(x)
        print("after a")
        h = torch.relu(h)
        print("after relu")
        return self.b(h)


torch.manual_seed(0)
m = Noisy()
x = torch.randn(2, 3)
assert torch.allclose(torch.compile(m, backend="eager")(x), m(x))
print("ok: forward matches")
