"""Two functions, each compiled by its own ``torch.compile`` call, call one helper that graph-breaks on a print.
Torch keys a logged break by its type and user line, and forgets its keys whenever a ``torch.compile`` call makes
a new callback: the recompile of ``f`` (a new size) logs the break as a duplicate, ``g``'s first call (after its
own ``torch.compile``) logs it in full again. A debugger that keys by place alone calls both duplicates."""

import torch


def helper(x):
    print("helper sees", tuple(x.shape))
    return x + 1


def f(x):
    return helper(x * 2)


def g(x):
    return helper(x - 1)


def main():
    cf = torch.compile(f, backend="eager", dynamic=False)
    print(cf(torch.ones(2)).tolist())
    print(cf(torch.ones(3)).tolist())
    cg = torch.compile(g, backend="eager", dynamic=False)
    print(cg(torch.ones(2)).tolist())


if __name__ == "__main__":
    main()
