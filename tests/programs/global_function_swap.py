"""A module-level helper the compiled function calls is rebound to another function: the guard on the
helper's code object fails and torch recompiles, so the result follows the new helper."""

import torch


def finish(t):
    return t + 1


def run(x):
    return finish(x * 2)


f = torch.compile(run, backend="eager", fullgraph=True)
x = torch.ones(2)
assert f(x).tolist() == [3.0, 3.0]


def finish(t):  # noqa: F811 - the rebinding is the point
    return t - 1


assert f(x).tolist() == [1.0, 1.0]
print("ok: new helper used")
