"""One program in two versions: `before` calls scale with one int, `after` with two (a new recompile)."""

import sys

import torch


@torch.compile(backend="eager")
def scale(x, n):
    return x * n


def main(version):
    x = torch.ones(3)
    scale(x, 2)
    scale(x, 2)
    if version == "after":
        scale(x, 5)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "before")
