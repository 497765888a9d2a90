"""For the report summary tests: one graph break in a helper two calls below a compiled function (torch logs it
for each of the 4 frames on the way down) and an int argument that recompiles once."""

import torch


def warn_once(x):
    print("warning: once")
    return x


def inner(x):
    return warn_once(x * 2) + 1


def middle(x):
    return inner(x * 3) - 1


@torch.compile(backend="eager")
def outer(x):
    return middle(x + 1) * 2


@torch.compile(backend="eager")
def scale(x, n):
    return x * n + 1


x = torch.ones(3)
outer(x)
outer(x)
scale(x, 2)
scale(x, 3)
print("done")
