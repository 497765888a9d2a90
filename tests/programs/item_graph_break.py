"""``int(tensor)`` inside a compiled function breaks the graph (a Tensor.item() call). The int goes to the
resume function on the value stack (``___stack0``); its first entry takes it as a constant, the next value
recompiles once, and then it is symbolic."""

import torch


def span(v):
    n = int(v[1] - v[0])
    return v * n


f = torch.compile(span, backend="eager")
for k in range(1, 5):
    v = torch.tensor([0, k])
    assert f(v).tolist() == span(v).tolist()
print("ok: spans")
