"""A grad-mode context manager object made before a graph break and entered after it: the resume function
rebuilds it, and grad mode set before the break stays set after it."""

import torch


def scaled(x):
    ctx = torch.set_grad_enabled(False)
    y = x * 3
    print("between graphs")
    with ctx:
        z = y + 1
    return z


x = torch.ones(2, requires_grad=True)
out = torch.compile(scaled, backend="eager")(x)
torch.set_grad_enabled(True)
assert not out.requires_grad
print("ok: no grad")
