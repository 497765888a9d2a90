"""``dynamic=True``: Dynamo traces with symbolic sizes from the first call. ``x`` is a fake tensor of symbolic size
(hint 3), the int ``n`` a symbolic value too, and the branch on ``x.shape[0] > 2`` is decided by the hint and kept
as a symbolic-shape guard; a call with size 5 reuses the entry, a call with size 2 takes the other branch and
recompiles."""

import torch


def widen(x, n):
    y = x * n
    if x.shape[0] > 2:
        y = y + 1
    return y.sum()


f = torch.compile(widen, backend="eager", dynamic=True)
for size in (3, 5, 2):
    x = torch.ones(size)
    assert f(x, 2).item() == widen(x, 2).item()
print("ok: dynamic")
