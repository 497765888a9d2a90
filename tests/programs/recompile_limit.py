"""A per-compile recompile limit: ``torch.compile(f, recompile_limit=2)``. Every call passes a new int, so
every call misses; after two entries torch stops compiling ``f`` and runs the later calls eagerly (it logs
``hit config.recompile_limit (2)``). The debugger must report limit 2 (not the global 8), and the timeline must
list the misses served eagerly after the limit too."""

import torch


def shift(x, n):
    return x + n


def main():
    f = torch.compile(shift, backend="eager", dynamic=False, recompile_limit=2)
    for n in range(5):
        assert f(torch.zeros(2), n).sum().item() == 2 * n
    print("ok: 5 calls right")


if __name__ == "__main__":
    main()
