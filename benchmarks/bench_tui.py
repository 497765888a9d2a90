"""TUI responsiveness, measured with the fake engine (no torch): step repaint and guard-tree first paint.

Run: ``python benchmarks/bench_tui.py [--steps N] [--leaves N]``. Prints

* keypress → repaint for one step (``s``) in a 2,000-instruction code object: from the key event entering the
  app (as a terminal's would, through the driver) to the end of the first screen update that shows the new
  current instruction, stack and locals; p50 / p95 / max over `--steps` steps (target: p95 ≤ 50 ms);
  also the process CPU time spent per step (less sensitive to other load on the machine);
* first paint of a 20,000-leaf guard tree: from handing the tree to the screen (what a finished
  ``Engine.guard_trees()`` fetch does) to the end of the first screen update showing it; median / max
  (target: ≤ 1 s).

The screen refreshes at Textual's frame rate (60 Hz), so every figure includes up to one frame of waiting.
Figures are wall-clock on this machine; compare them as ratios against the targets, never in tests.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "app"))

from fake_app import make_app  # noqa: E402
from fake_scenarios import big_scenario, guard_tree_of  # noqa: E402
from textual import events  # noqa: E402

SIZE = (120, 40)

#: The program the real-engine TUI benchmarks step through: a stack of `{layers}` Linear layers, compiled
#: (``PROGRAM.format(layers=N)``; the generated code grows with N).
DEEP_PROGRAM = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Deep(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(layers))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = torch.compile(Deep({layers}), backend="eager")
    with torch.no_grad():
        print("out", tuple(model(torch.randn(2, 8)).shape))
    """
)


class DisplayWatch:
    """Calls `check` after every screen update the app makes; resolves a future when it returns True."""

    def __init__(self, app) -> None:  # noqa: ANN001
        self.app = app
        self.waiter: tuple[asyncio.Future, object] | None = None
        original = app._display  # noqa: SLF001

        def display(screen, renderable) -> None:  # noqa: ANN001
            original(screen, renderable)
            if renderable is not None and self.waiter is not None:
                future, check = self.waiter
                if not future.done() and check():
                    future.set_result(time.perf_counter())

        app._display = display  # noqa: SLF001

    async def until(self, check, timeout: float = 10.0) -> float:  # noqa: ANN001
        future = asyncio.get_running_loop().create_future()
        self.waiter = (future, check)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self.waiter = None


async def bench_steps(steps: int, teach: bool = False) -> tuple[list[float], list[float]]:
    scenario = big_scenario(2000, steps=steps + 1, teach=teach)
    app = make_app(scenario)
    times: list[float] = []
    cpu: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while app.phase != "stopped":
            await pilot.pause(0.01)
        await pilot.pause(0.3)
        watch = DisplayWatch(app)
        screen = app.main_screen
        bytecode = screen.bytecode
        assert bytecode.code is not None and len(bytecode.code.instructions) == 2000
        if teach:  # the role gutter and headers shown, and the Explain pane open (one more query per stop)
            app.action_dbg("explain")
            while bytecode.roles is None:
                await pilot.pause(0.01)
        for _ in range(steps):
            stop = app.last_stop
            seq = stop.seq
            c0 = time.process_time()
            t0 = time.perf_counter()
            app._driver.send_message(events.Key("s", "s"))  # noqa: SLF001 - what a terminal key does
            t1 = await watch.until(
                lambda: app.last_stop is not None and app.last_stop.seq == seq + 1
                and bytecode.current == app.last_stop.frame.index and not app.awaiting_resume
            )
            cpu.append(time.process_time() - c0)
            times.append(t1 - t0)
            await pilot.pause()
    return times, cpu


async def bench_guard_tree(leaves: int, rounds: int) -> tuple[list[float], int]:
    app = make_app()
    trees = [guard_tree_of(leaves, fail_at=i * 97 % 500) for i in range(2)]
    times: list[float] = []
    lines = 0
    async with app.run_test(size=SIZE) as pilot:
        while app.phase != "stopped":
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        watch = DisplayWatch(app)
        view = app.main_screen.guard_tree
        for i in range(rounds):
            tree = trees[i % 2]
            t0 = time.perf_counter()
            app.main_screen.guards = tree
            t1 = await watch.until(lambda: view.guards is tree)
            times.append(t1 - t0)
            lines = view.last_line + 1
            await pilot.pause(0.05)
    return times, lines


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(name: str, seconds: list[float]) -> str:
    """`name: p50 … ms  p95 … ms  max … ms` of samples given in seconds (one format for every TUI benchmark)."""
    ms = [v * 1000 for v in seconds]
    if not ms:
        return f"{name}: no samples"
    return f"{name}: p50 {statistics.median(ms):6.1f} ms  p95 {pct(ms, 0.95):6.1f} ms  max {max(ms):6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()

    for teach in (False, True):
        steps, cpu = asyncio.run(bench_steps(args.steps, teach))
        what = "roles, provenance and the Explain pane on" if teach else "no teaching data"
        print(f"fake engine, 2,000-instruction code object, {what}, {len(steps)} steps (target p95 <= 50 ms):")
        print("  " + summary("keypress -> repaint", steps))
        print("  " + summary("CPU per step       ", cpu))

    paints, lines = asyncio.run(bench_guard_tree(args.leaves, args.rounds))
    ms = [t * 1000 for t in paints]
    print(f"guard tree first paint, {args.leaves:,} leaves, {len(ms)} rounds: "
          f"median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms, {lines} tree lines built "
          f"(target <= 1000 ms)")


if __name__ == "__main__":
    main()
