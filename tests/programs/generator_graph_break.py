"""A generator inlined into the compiled function, and a graph break inside it: ``forward`` iterates ``scaled``,
a generator Dynamo traces inlined (its ``YIELD_VALUE`` hands each value back to the loop), and ``.item()`` in the
generator's body breaks the graph. Dynamo cannot resume inside an inlined generator, so the whole loop runs
eagerly and the generator's frame is not compiled on its own (a generator frame is skipped)."""

import torch


def scaled(t, n):
    for i in range(n):
        k = t[i].item()
        yield t * (k + i)


def forward(x):
    y = x + 1
    total = torch.zeros_like(y)
    for part in scaled(y, 2):
        total = total + part
    return total.relu()


f = torch.compile(forward, backend="eager")
x = torch.arange(3.0)
out = f(x)
assert torch.allclose(out, forward(x))
print("ok:", out.tolist())
