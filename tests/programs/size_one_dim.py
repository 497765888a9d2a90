"""A batch dimension that is 4, then 1, then 6, compiled with ``dynamic=False``. Torch specialises sizes 0 and 1
(it adds a ``2 <= size`` guard to every dynamic size), so marking the size-1 call's dimension dynamic leaves it
static in the new entry: ``mark_unbacked`` is the tool for a dimension that can be 1."""

import torch


def total(x):
    return x.sum(dim=1)


def main():
    ctotal = torch.compile(total, backend="eager", dynamic=False)
    for batch in (4, 1, 6):
        print(batch, ctotal(torch.ones(batch, 3)).tolist())


if __name__ == "__main__":
    main()
