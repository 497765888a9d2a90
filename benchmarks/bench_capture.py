"""Compile-time overhead of the capture hooks, measured side by side in one run (a ratio, not a timed test).

One workload — a model of BLOCKS blocks (Linear, LayerNorm, GELU) with a graph break in the middle, called with
two values of an int argument (a recompile of both halves) — is compiled from scratch (``torch._dynamo.reset()``)
ROUNDS times without and ROUNDS times with a `Capture` installed (recording only: no callbacks, no hit counting),
alternating, after one discarded warm-up of each. Prints the median CPU seconds of each and their ratio, and —
because a shared machine makes whole-compile timings noisy — the time spent inside the hooks themselves (each
hook's own time minus the time of the torch function it wraps, the guard-filter-entry recorder's included), as a
share of the plain compile time.
Target (DESIGN.md): capture ≤ 1.10× plain compile time.

Usage: python benchmarks/bench_capture.py [--blocks 24] [--rounds 5] [--backend eager]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dynadbg.core import compat
from dynadbg.core.capture import Capture
from dynadbg.core.filter_entries import FilterEntryLog


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.lin(x))) + x


class Net(torch.nn.Module):
    def __init__(self, blocks: int, width: int = 16) -> None:
        super().__init__()
        self.first = torch.nn.ModuleList(Block(width) for _ in range(blocks // 2))
        self.second = torch.nn.ModuleList(Block(width) for _ in range(blocks - blocks // 2))

    def forward(self, x, scale: int):
        for blk in self.first:
            x = blk(x)
        torch._dynamo.graph_break()
        for blk in self.second:
            x = blk(x) * scale
        return x.sum()


class TimedCapture(Capture):
    """A Capture whose hooks add the time they spend outside the wrapped torch function to `spent`."""

    spent = 0.0


def _timed(factory_name: str):
    factory = getattr(Capture, factory_name)

    def make(self: TimedCapture, orig):
        inner = [0.0]

        def timed_orig(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return orig(*args, **kwargs)
            finally:
                inner[0] += time.perf_counter() - t0

        replacement = factory(self, timed_orig)

        def outer(*args, **kwargs):
            t0, before = time.perf_counter(), inner[0]
            try:
                return replacement(*args, **kwargs)
            finally:
                TimedCapture.spent += (time.perf_counter() - t0) - (inner[0] - before)

        return outer

    return make


for _name in [n for n in vars(Capture) if n.startswith("_make_")]:
    setattr(TimedCapture, _name, _timed(_name))


class TimedFilterEntryLog(FilterEntryLog):
    """The capture's guard-filter-entry recorder (a patched ``CheckFunctionManager.build_guards``, which also
    ties each compile to its torch.compile call site), its own time added to `TimedCapture.spent`."""

    def _make_build_guards(self, orig):
        inner = [0.0]

        def timed_orig(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return orig(*args, **kwargs)
            finally:
                inner[0] += time.perf_counter() - t0

        replacement = super()._make_build_guards(timed_orig)

        def outer(*args, **kwargs):
            t0, before = time.perf_counter(), inner[0]
            try:
                return replacement(*args, **kwargs)
            finally:
                TimedCapture.spent += (time.perf_counter() - t0) - (inner[0] - before)

        return outer


def _timed_capture() -> TimedCapture:
    cap = TimedCapture()
    cap.filter_entries = TimedFilterEntryLog(on_build=cap.callsites.note_compile)
    return cap


def compile_once(net: Net, x: torch.Tensor, backend: str, capture: bool) -> tuple[float, int]:
    """CPU seconds (this process; other load on the machine does not count) to compile and run the workload from a clean Dynamo state; number of frames captured."""
    torch._dynamo.reset()
    cap = _timed_capture().install() if capture else None
    try:
        compiled = torch.compile(net, backend=backend, dynamic=False)
        t0 = time.process_time()
        compiled(x, 1)
        compiled(x, 2)
        elapsed = time.process_time() - t0
    finally:
        if cap is not None:
            cap.uninstall()
    return elapsed, (len(cap.frames()) if cap is not None else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backend", default="eager")
    args = ap.parse_args()
    compat.load()
    torch.manual_seed(0)
    net = Net(args.blocks)
    x = torch.randn(4, 16)
    compile_once(net, x, args.backend, False)  # warm-up: lazy imports, first-use caches
    compile_once(net, x, args.backend, True)
    plain: list[float] = []
    hooked: list[float] = []
    TimedCapture.spent = 0.0
    frames = 0
    for i in range(args.rounds):
        order = (False, True) if i % 2 == 0 else (True, False)
        for with_capture in order:
            seconds, n = compile_once(net, x, args.backend, with_capture)
            (hooked if with_capture else plain).append(seconds)
            frames = max(frames, n)
    p, h = statistics.median(plain), statistics.median(hooked)
    print(f"workload: {args.blocks} blocks, backend={args.backend}, 1 graph break, 1 recompile per half, "
          f"{frames} frames captured")
    print(f"plain torch.compile   median {p:.3f} s  (runs: {', '.join(f'{v:.3f}' for v in plain)})")
    print(f"with Capture          median {h:.3f} s  (runs: {', '.join(f'{v:.3f}' for v in hooked)})")
    print(f"compile-time ratio    {h / p:.3f}x  (target <= 1.10x)")
    per_run = TimedCapture.spent / args.rounds
    print(f"time inside the hooks {per_run * 1e3:.1f} ms per run = {per_run / p * 100:.2f}% of the plain compile time")


if __name__ == "__main__":
    main()
