"""A graph break inside a ``try`` block: Dynamo cannot make a resume function there, so it skips the whole frame
and runs it eagerly. No resume function ever runs: a graph-break stop has to come from the break itself. (Its
result then goes through a second compiled function, which compiles as usual; both run twice.)"""

import torch


def guarded(x):
    y = x * 2
    try:
        print("in try", y.shape)
        z = y + 1
    except RuntimeError:
        z = y
    return z.sum()


def finish(z):
    return z * 10


def main():
    cguarded = torch.compile(guarded, backend="eager")
    cfinish = torch.compile(finish, backend="eager")
    for n in (3, 3):
        print("result", cfinish(cguarded(torch.ones(n))).item())


if __name__ == "__main__":
    main()
