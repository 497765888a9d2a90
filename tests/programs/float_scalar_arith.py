"""Two Python floats multiplied before a tensor op: the first compile takes ``a`` as a constant (guard
``a == 0.5``); the second value fails that guard, the recompile treats ``a`` as a symbolic float, and later
values reuse it. One recompile for five values."""

import torch


def decay(p, a, b):
    return p * (a * b)


f = torch.compile(decay, backend="eager", fullgraph=True)
p = torch.ones(4)
for step in range(5):
    a = 0.5 + step / 10
    assert torch.allclose(f(p, a, 2.0), decay(p, a, 2.0))
print("ok: floats agree")
