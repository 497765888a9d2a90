"""``fullgraph=True`` turns a graph break into an error: ``torch.compile(..., fullgraph=True)`` on a function that
prints raises ``Unsupported`` from the first call instead of splitting the graph. The program catches it and
runs that function eagerly; ``quiet``, compiled with ``fullgraph=True`` too, has no graph break and compiles to one
graph."""

import torch


def noisy(x):
    y = x * 2
    print("inside noisy")
    return y + 1


def quiet(x):
    return (x * 2 + 1).sum()


f = torch.compile(noisy, backend="eager", fullgraph=True)
try:
    f(torch.ones(2))
    print("compiled without error")
except Exception as exc:  # noqa: BLE001 - torch._dynamo.exc.Unsupported
    print("fullgraph error:", type(exc).__name__)
print("eager:", noisy(torch.ones(2)).tolist())
q = torch.compile(quiet, backend="eager", fullgraph=True)
print("quiet:", [q(torch.full((2,), float(k))).item() for k in range(3)])
