"""Engine side of the guard-tree target: building the model of a ≥20,000-leaf guard tree.

A ModuleList of 2,500 nn.Linear (about 20,000 leaf guards on torch 2.13) is compiled once; then the tree of its
cache entry is built (`guards.entry_guard_tree`) without inputs (what first paint needs) and with every leaf
evaluated on the call's inputs (what the guard pane shows at a stop). Prints the median and min of a few rounds.
The TUI side (first paint of such a tree) is `bench_tui.py`; the target is ≤ 1 s for both together.

Usage: python benchmarks/bench_guards.py [--modules 2500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dynadbg.core import compat
from dynadbg.core.guards import entry_guard_tree


class Net(torch.nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    compat.load()
    net, x = Net(args.modules), torch.randn(1, 2)
    torch.compile(net, backend="eager")(x)
    entry = compat.cache_entries(Net.forward.__code__)[0]
    inputs = {"self": net, "x": x}
    bare, evaluated = [], []
    tree = None
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        tree = entry_guard_tree(entry)
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        entry_guard_tree(entry, inputs)
        evaluated.append(time.perf_counter() - t0)
    assert tree is not None
    print(f"{args.modules} modules: {tree.leaf_count} leaf guards, torch {torch.__version__}")
    print(f"build, no inputs (first paint)   median {statistics.median(bare) * 1e3:7.1f} ms  min {min(bare) * 1e3:7.1f} ms")
    print(f"build, every leaf evaluated      median {statistics.median(evaluated) * 1e3:7.1f} ms  min {min(evaluated) * 1e3:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
