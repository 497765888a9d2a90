"""Two arguments that are the same tensor: compiled on three distinct tensors, then called with ``c`` being
``a``. torch logs ``Duplicate tensors found: ["a", "c"]`` and recompiles; the debugger must name both inputs,
expected "distinct", actual "same storage"."""

import torch


def mix(a, b, c):
    return a * 2 + b - c


def main():
    f = torch.compile(mix, backend="eager")
    a, b, c = torch.ones(3), torch.ones(3), torch.ones(3)
    f(a, b, c)
    f(a, b, a)
    print("ok")


if __name__ == "__main__":
    main()
