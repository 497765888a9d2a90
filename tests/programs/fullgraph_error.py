"""``fullgraph=True`` turns a graph break into an error: ``torch.compile(..., fullgraph=True)`` on a function that
prints raises ``Unsupported`` from the first call instead of splitting the graph. The program catches it and
runs the function eagerly."""

import torch


def noisy(x):
    y = x * 2
    print("inside noisy")
    return y + 1


f = torch.compile(noisy, backend="eager", fullgraph=True)
try:
    f(torch.ones(2))
    print("compiled without error")
except Exception as exc:  # noqa: BLE001 - torch._dynamo.exc.Unsupported
    print("fullgraph error:", type(exc).__name__)
print("eager:", noisy(torch.ones(2)).tolist())
