"""A graph break three inlined calls deep: ``forward`` calls ``scale``, which calls ``shift``, which calls
``count`` where ``.item()`` breaks the graph. Dynamo traces the helpers inlined, finds the break at depth 3,
restarts, and on the re-trace runs the whole ``scale(...)`` call eagerly; each helper is then compiled as a
frame of its own when it runs."""

import torch


def count(t):
    n = t.sum().item()
    return t + n


def shift(t):
    u = t + 1
    return count(u)


def scale(t):
    return shift(t * 2)


def forward(x):
    y = x.sin()
    z = scale(y)
    return z.cos()


f = torch.compile(forward, backend="eager")
x = torch.ones(3)
out = f(x)
assert torch.allclose(out, forward(x))
print("ok:", [round(v, 4) for v in out.tolist()])
