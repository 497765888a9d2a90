"""The guard pane at 10,000+ guards: building the tree, filling the pane, `f` to the next failing guard, Ctrl+F.

A real guard tree: a ModuleList of nn.Linear with an nn.BatchNorm1d every `--every`-th layer is compiled in
train() (backend="eager"), then the tree of its cache entry is built for a call in eval(), so each BatchNorm's
``.training`` guard fails (the train/eval recompile a user meets). Prints, each as median (and p95 / max where
there are many samples):

* engine: the tree built with every leaf evaluated (`guards.entry_guard_tree`, what a stop's guard fetch does),
  and `guard_failures.failure_index` on it (the counts and paths, once per tree);
* TUI (the app on the fake engine, the real tree handed to its screen as a finished fetch does): first paint of
  the tree; keypress → repaint for ``f`` through every failing guard and round again (the cursor on the next one),
  beside a plain cursor Down in the same pane (the ratio is the figure to read); Ctrl+F on and off.

Figures are wall-clock on this machine; the screen refreshes at 60 Hz, so each keypress figure includes up to one
frame of waiting. Never a timed test.

Usage: python benchmarks/bench_guard_nav.py [--layers 1250] [--every 56] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "app"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tui import DisplayWatch, summary  # noqa: E402
from fake_app import make_app  # noqa: E402
from fake_scenarios import forward_scenario  # noqa: E402
from textual import events  # noqa: E402

from dynadbg.core import compat  # noqa: E402
from dynadbg.core.guard_failures import failure_index  # noqa: E402
from dynadbg.core.guards import entry_guard_tree  # noqa: E402
from dynadbg.core.model import GuardTree  # noqa: E402

SIZE = (140, 45)


class Net(torch.nn.Module):
    def __init__(self, layers: int, every: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [torch.nn.BatchNorm1d(4) if i % every == every - 1 else torch.nn.Linear(4, 4) for i in range(layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def real_tree(layers: int, every: int, rounds: int) -> tuple[GuardTree, list[float], list[float]]:
    compat.load()
    net, x = Net(layers, every), torch.randn(3, 4)
    torch.compile(net, backend="eager")(x)
    entry = compat.cache_entries(Net.forward.__code__)[0]
    net.eval()
    builds, indexes = [], []
    tree = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        tree = entry_guard_tree(entry, {"self": net, "x": x})
        builds.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        failure_index(tree)
        indexes.append(time.perf_counter() - t0)
    assert tree is not None
    return tree, builds, indexes


async def bench_pane(tree: GuardTree, rounds: int) -> dict[str, list[float]]:
    scenario = forward_scenario()
    scenario.guard_tree = None
    app = make_app(scenario)
    out: dict[str, list[float]] = {"fill": [], "jump": [], "down": [], "filter on": [], "filter off": []}
    async with app.run_test(size=SIZE) as pilot:
        while app.phase != "stopped":
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        watch = DisplayWatch(app)
        view = app.main_screen.guard_tree
        driver = app._driver  # noqa: SLF001 - keys enter as a terminal's would

        async def key(name: str, check) -> float:  # noqa: ANN001
            t0 = time.perf_counter()
            driver.send_message(events.Key(name, name if len(name) == 1 else None))
            t1 = await watch.until(check)
            await pilot.pause()
            return t1 - t0

        for _ in range(rounds):
            app.main_screen.guards = None
            await pilot.pause(0.05)
            t0 = time.perf_counter()
            app.main_screen.guards = tree
            out["fill"].append(await watch.until(lambda: view.guards is tree) - t0)
            await pilot.pause(0.05)
        view.focus()
        await pilot.pause()
        paths = view.failures.paths
        for i in range(len(paths) + 1):
            want = paths[(view.failing_position + 1) % len(paths)].leaf
            out["jump"].append(await key("f", lambda want=want: view.cursor_node is not None
                                         and view.cursor_node.data is want))
            line = view.cursor_line
            out["down"].append(await key("down", lambda line=line: view.cursor_line == line + 1))
        out["filter on"].append(await key("ctrl+f", lambda: view.failing_only))
        out["filter off"].append(await key("ctrl+f", lambda: not view.failing_only))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=1250)
    parser.add_argument("--every", type=int, default=56, help="a BatchNorm1d every N layers (its guard fails)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tree, builds, indexes = real_tree(args.layers, args.every, args.rounds)
    index = failure_index(tree)
    print(f"{args.layers} layers: {tree.leaf_count:,} leaf guards, {len(tree.failing)} failing "
          f"({len(index.paths)} located), torch {torch.__version__}")
    print(f"engine: tree built, every leaf evaluated  median {statistics.median(builds) * 1e3:7.1f} ms")
    print(f"engine: failure_index (counts, paths)     median {statistics.median(indexes) * 1e3:7.2f} ms")
    out = asyncio.run(bench_pane(tree, args.rounds))
    print(f"TUI, {SIZE[0]}x{SIZE[1]}, fake engine, this real tree:")
    print("  " + summary("first paint of the tree   ", out["fill"]))
    print("  " + summary(f"f: next failing ({len(out['jump'])} jumps)", out["jump"]))
    print("  " + summary("Down: cursor one line     ", out["down"]))
    print("  " + summary("Ctrl+F on                 ", out["filter on"]))
    print("  " + summary("Ctrl+F off                ", out["filter off"]))
    ratio = statistics.median(out["jump"]) / statistics.median(out["down"])
    print(f"  f / Down (medians): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
