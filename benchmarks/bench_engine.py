"""Engine overhead, measured side by side in one run (ratios, not timed tests).

Prints, for a compiled function called CALLS times (after warm-up), the median µs per call:
  * plain torch.compile (no debugger),
  * with a dynadbg session attached and continuing (no breakpoints, no active stops),
  * the same with exception stops on (the default): the compiled wrapper's exit hook, no tracing,
  * with a breakpoint set in another generated code object (never hit),
and µs per stepped instruction (`s 1000000` through the same calls: decode, depth tracking, stop checks).
Targets (DESIGN.md): attached ≤ 1.05×, breakpoint elsewhere ≤ 1.2×.

Usage: python benchmarks/bench_engine.py [--calls 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core"))
from helpers import drive  # noqa: E402


def f(x, y):
    a = torch.sin(x) + torch.cos(y)
    b = a * 2 - y
    return (b @ b.T).sum() + a.mean()


def g(x):
    return x.relu() + 1


X, Y = torch.randn(8, 8), torch.randn(8, 8)
CF = torch.compile(f, backend="eager")
CG = torch.compile(g, backend="eager")


def timed_calls(n: int) -> float:
    """µs per call of the compiled f over n calls."""
    CF(X, Y)
    t0 = time.perf_counter()
    for _ in range(n):
        CF(X, Y)
    return (time.perf_counter() - t0) / n * 1e6


def attached(n: int, commands: list[str], break_on: tuple[str, ...]) -> tuple[float, int]:
    out: list[float] = []

    def program() -> None:
        CG(X)  # gives the breakpoint case a stop in another code object
        out.append(timed_calls(n))

    run = drive(lambda s: s.start_callable(program), commands, break_on=break_on)
    assert run.result is not None and run.result.status == 0, run.result
    return out[0], run.session.traced_instructions


def stepped(n: int) -> float:
    out: list[float] = []
    box: dict[str, int] = {}

    def program() -> None:
        CG(X)
        t0 = time.perf_counter()
        for _ in range(n):
            CF(X, Y)
        out.append(time.perf_counter() - t0)

    run = drive(lambda s: s.start_callable(program), ["s 100000000"], break_on=("entry",))
    box["n"] = run.session.traced_instructions
    return out[0] / max(box["n"], 1) * 1e6


def exit_hook_cost(n: int = 200000) -> float:
    """µs per compiled call that exception stops add (torch's wrapper calls the hook and its cleanup), best of 7:
    a figure that machine load barely moves, unlike the side-by-side ratios."""
    import threading

    from helpers import QueueListener

    from dynadbg.core.session import Session

    session = Session(QueueListener(), break_on=("exception",))
    session._worker_ident = threading.get_ident()  # noqa: SLF001 - as if on the program's thread
    hook = session._exit_hook  # noqa: SLF001
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            hook()()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = args.calls
    timed_calls(50)  # compile f and warm up outside any session
    CG(X)
    plain, att, exc, bp = [], [], [], []
    for _ in range(args.rounds):  # interleaved so machine noise hits all three alike
        plain.append(timed_calls(n))
        att.append(attached(n, [], ())[0])
        us, traced = attached(n, [], ("exception",))
        assert traced == 0  # exception stops cost no tracing
        exc.append(us)
        us, traced = attached(n, ["b 3", "break-on entry off", "c"], ("entry",))
        assert traced >= 1  # g's frame was traced up to its entry stop; f never was
        bp.append(us)
    step_us = stepped(max(n // 10, 20))
    p, a, b = statistics.median(plain), statistics.median(att), statistics.median(bp)
    e = statistics.median(exc)
    print(f"calls per round: {n}, rounds: {args.rounds}, python {sys.version.split()[0]}, torch {torch.__version__}")
    print(f"{'plain torch.compile':<44} {p:8.2f} µs/call   1.000x")
    print(f"{'dynadbg attached, continuing':<44} {a:8.2f} µs/call   {a / p:5.3f}x   (target ≤ 1.05)")
    print(f"{'attached, continuing, exception stops on':<44} {e:8.2f} µs/call   {e / p:5.3f}x   (target ≤ 1.05)")
    hook = exit_hook_cost()
    print(f"{'  of which the exit hook alone':<44} {hook:8.2f} µs/call   {hook / p:6.2%} of a plain call")
    print(f"{'dynadbg, breakpoint in another code object':<44} {b:8.2f} µs/call   {b / p:5.3f}x   (target ≤ 1.2)")
    print(f"{'stepping every instruction (s N)':<44} {step_us:8.2f} µs per stepped instruction")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
