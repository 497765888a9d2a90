"""An exception raised by a call that generated code makes (a function Dynamo does not trace), after a graph
break, and caught by the program. Stepping into it stops on the exception at the faulting instruction: the
value stack there holds only what is live — not the call's consumed operands, nor a dead slot above them."""

import torch


@torch._dynamo.disable
def check(v):
    if v.sum() > 0:
        raise ValueError("positive input")
    return v


def guarded(x, bias):
    y = x * 2
    print("before check")
    return bias + check(y) * 3


def main():
    f = torch.compile(guarded, backend="eager")
    print("first:", f(-torch.ones(2), 1.0).tolist())     # check passes: every resume function runs once
    try:
        f(torch.ones(2), 1.0)
    except ValueError as exc:
        print("caught:", exc)


if __name__ == "__main__":
    main()
