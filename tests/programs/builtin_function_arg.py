"""A builtin function passed as an argument: ``apply(x, operator.add)`` then ``apply(x, operator.mul)``. Dynamo
inlines the function and guards its identity (an ``ID_MATCH`` leaf); torch's filter entry calls it BUILTIN_MATCH
on 2.13/2.14 and ID_MATCH on 2.15, so a ``guard_filter_fn`` must name the type the entries give it."""

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
