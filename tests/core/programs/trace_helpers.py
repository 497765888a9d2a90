"""Helpers inlined two deep with no graph break, a loop Dynamo unrolls, and a constant branch: for stepping a
trace with ``n``, ``r`` and ``until``."""

import torch


def inner(t, k):
    u = t * k
    return u + 1


def outer(t):
    acc = t
    for k in (1, 2):
        acc = inner(acc, k)
    if acc.dim() == 1:
        acc = acc - 1
    return acc


def forward(x):
    y = outer(x)
    z = y.relu()
    return z


f = torch.compile(forward, backend="eager")
print("ok:", f(torch.ones(2)).tolist())
