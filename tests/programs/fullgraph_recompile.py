"""A ``fullgraph=True`` function called with a new int each time (``dynamic=False``): every call after the first
recompiles. Torch raises "found no compiled frames" when a fullgraph call runs no compiled frame under the
default stance, so every choice at its recompile stop has to keep that from happening, as it says."""

import torch


def scale(x, n):
    return x * n


def main():
    cscale = torch.compile(scale, backend="eager", fullgraph=True, dynamic=False)
    for n in (1, 2, 3):
        print(n, cscale(torch.ones(2), n).tolist())


if __name__ == "__main__":
    main()
