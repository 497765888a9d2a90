"""``if t.sum() > 0`` on a tensor: a data-dependent branch breaks the graph; the generated code picks one of
two resume functions by the eager value."""

import torch


def gate(a, b):
    c = a * 2
    if b.sum() > 0:
        return c + b
    return c - b


f = torch.compile(gate, backend="eager")
a = torch.ones(3)
assert torch.equal(f(a, torch.ones(3)), gate(a, torch.ones(3)))
assert torch.equal(f(a, -torch.ones(3)), gate(a, -torch.ones(3)))
print("ok: both branches")
