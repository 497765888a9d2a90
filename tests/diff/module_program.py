"""A module with two parameter-heavy submodules, a module attribute and a global: guards from every kind of source."""

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.b(self.a(x))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Sequential(Block(), Block())
        self.head = torch.nn.Linear(4, 2)
        self.scale = 2

    def forward(self, x):
        return self.head(self.enc(x)) * self.scale * SCALE


SCALE = 3

if __name__ == "__main__":
    model = torch.compile(Model(), backend="eager")
    model(torch.randn(2, 4))
    model(torch.randn(2, 4))
