"""Generators inlined into a compiled function. ``smooth`` iterates ``scaled``, a generator Dynamo traces inlined
(its ``YIELD_VALUE`` hands each value back to the loop): one graph, no break. ``forward`` iterates ``peaks``,
whose ``.item()`` breaks the graph inside the generator; Dynamo cannot resume inside an inlined generator, so it
gives up on the whole frame ("Failed to handle graph break gracefully") and ``forward`` runs eagerly. A
generator's own frame is never compiled on its own."""

import torch


def scaled(t, n):
    for i in range(n):
        yield t * (i + 1)


def peaks(t, n):
    for i in range(n):
        k = t[i].item()
        yield t * (k + i)


def smooth(x):
    total = torch.zeros_like(x)
    for part in scaled(x, 3):
        total = total + part
    return total / 6


def forward(x):
    y = x + 1
    total = torch.zeros_like(y)
    for part in peaks(y, 2):
        total = total + part
    return total.relu()


x = torch.arange(3.0)
s = torch.compile(smooth, backend="eager")
assert torch.allclose(s(x), smooth(x))
f = torch.compile(forward, backend="eager")
out = f(x)
assert torch.allclose(out, forward(x))
print("ok:", s(x).tolist(), out.tolist())
