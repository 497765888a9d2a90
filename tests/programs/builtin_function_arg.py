"""A builtin function passed as an argument: ``apply(x, operator.add)`` then ``apply(x, operator.mul)``. Dynamo
inlines the function it was called with and guards its identity: torch's guard filter entry calls that guard
``BUILTIN_MATCH`` (the tree shows an ``ID_MATCH`` leaf), so a ``guard_filter_fn`` must name ``BUILTIN_MATCH``."""

import operator

import torch


def apply(x, op):
    return op(x, 2) + 1


def main():
    capply = torch.compile(apply, backend="eager")
    x = torch.ones(3)
    print("add", capply(x, operator.add).tolist())
    print("mul", capply(x, operator.mul).tolist())


if __name__ == "__main__":
    main()
