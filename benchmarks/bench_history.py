"""History recording while stepping, measured side by side in one run (a ratio, not a timed test).

A compiled torch function (a few tensors on the value stack and in the locals) is stepped one instruction per
stop (`s`, answered from the test thread as a front end does), first with history recording off
(``history_limit=0``), then on (the defaults: 10,000 stops, 4 MiB), alternating rounds; printed: the median µs per
step of each and their ratio (target, DESIGN.md: ≤ 2×), then the history's size and memory estimate at the end.
A third line steps with the recorder bounded to 50 stops, so every stop also evicts one. Then `s N` (N
instructions, one stop): µs per instruction run through with ``history every`` off and on (each instruction then
gets a summary of its value stack and locals, as at a stop).

Usage: python benchmarks/bench_history.py [--steps 600] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dynadbg.core.commands import CommandLine
from dynadbg.core.session import Session
from dynadbg.core.listeners import QueueListener


def f(x, y, w):
    a = torch.sin(x) + torch.cos(y)
    b = a @ w - y
    c = (b * 2).relu()
    return (c @ c.T).sum() + a.mean() + b.std()


X, Y, W = torch.randn(16, 16), torch.randn(16, 16), torch.randn(16, 16)
CF = torch.compile(f, backend="eager")


def stepped(steps: int, **history: int) -> tuple[float, Session]:
    """µs per step (stop to stop, `s` each) over `steps` steps through calls of the compiled f."""

    def program() -> None:
        for _ in range(100_000):
            CF(X, Y, W)

    listener = QueueListener()
    session = Session(listener, break_on=("entry",), **history)
    commands = CommandLine(session)
    session.start_callable(program)
    kind, _ = listener.events.get(timeout=120)
    assert kind == "stop"
    for _ in range(20):  # warm-up
        commands.execute("s")
        listener.events.get(timeout=120)
    t0 = time.perf_counter()
    for _ in range(steps):
        commands.execute("s")
        kind, _ = listener.events.get(timeout=120)
        assert kind == "stop"
    us = (time.perf_counter() - t0) / steps * 1e6
    session.quit()
    session.wait(timeout=30)
    return us, session


def ran_through(count: int, every: bool) -> float:
    """µs per instruction of one `s count` through calls of the compiled f (`history_every` off or on)."""

    def program() -> None:
        for _ in range(100_000):
            CF(X, Y, W)

    listener = QueueListener()
    session = Session(listener, break_on=("entry",), history_every=every)
    commands = CommandLine(session)
    session.start_callable(program)
    kind, _ = listener.events.get(timeout=120)
    assert kind == "stop"
    commands.execute("s 200")  # warm-up
    listener.events.get(timeout=120)
    t0 = time.perf_counter()
    commands.execute(f"s {count}")
    kind, _ = listener.events.get(timeout=300)
    us = (time.perf_counter() - t0) / count * 1e6
    assert kind == "stop"
    session.quit()
    session.wait(timeout=30)
    return us


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    CF(X, Y, W)  # compile outside the measurement
    off: list[float] = []
    on: list[float] = []
    evicting: list[float] = []
    last: Session | None = None
    for _ in range(args.rounds):
        off.append(stepped(args.steps, history_limit=0)[0])
        us, last = stepped(args.steps)
        on.append(us)
        evicting.append(stepped(args.steps, history_limit=50)[0])
    base, rec, ev = statistics.median(off), statistics.median(on), statistics.median(evicting)
    print(f"torch {torch.__version__}, {args.steps} steps per round, {args.rounds} rounds, median µs per step")
    print(f"{'history off (history_limit=0)':<44} {base:9.1f} µs   1.00×")
    print(f"{'history on (10,000 stops, 4 MiB)':<44} {rec:9.1f} µs   {rec / base:.2f}×   (target ≤ 2×)")
    print(f"{'history on, 50 stops (evicts at every stop)':<44} {ev:9.1f} µs   {ev / base:.2f}×")
    plain_n = statistics.median(ran_through(args.steps * 10, False) for _ in range(args.rounds))
    every_n = statistics.median(ran_through(args.steps * 10, True) for _ in range(args.rounds))
    print(f"{'s N, history every off':<44} {plain_n:9.1f} µs per instruction   1.00×")
    print(f"{'s N, history every on':<44} {every_n:9.1f} µs per instruction   {every_n / plain_n:.2f}×")
    if last is not None:
        h = last.history
        print(f"history after {args.steps + 21} stops: {len(h)} kept, {h.nbytes / 1024:.1f} KiB estimated "
              f"({h.nbytes / max(len(h), 1):.0f} bytes per stop)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
