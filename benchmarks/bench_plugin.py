"""Overhead of the pytest plugin on a suite that never recompiles, side by side in one run (a ratio, not a timed
test).

A generated suite of TESTS tests (default 50), each compiling its own small model (two Linear layers, a GELU, a
module attribute and an int argument: 20-30 guards) with the eager backend and calling it CALLS times with the same
inputs (no recompile, no graph break), is run in a child pytest ROUNDS times without the plugin active and ROUNDS
times with ``--dynadbg-max-recompiles 0 --dynadbg-max-graph-breaks 0``, alternating, after one discarded warm-up
of each. Each child measures the CPU time of its own test loop (``pytest_runtestloop``: setup, call and teardown
of every test; torch is imported before the loop in both modes and runs on one thread), so interpreter start-up
does not dilute the ratio and other work on a shared machine disturbs it less than wall time would. Prints the
median CPU seconds of each mode and their ratio. Target (DESIGN.md): plugin active ≤ 1.05× the suite without it.

Usage: python benchmarks/bench_plugin.py [--tests 50] [--rounds 3] [--calls 20] [--json-too]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

CONFTEST = textwrap.dedent('''
    import os, time
    import pytest
    import torch  # imported before the timed loop in both modes

    torch.set_num_threads(1)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(session):
        start = time.process_time()
        try:
            return (yield)
        finally:
            with open(os.environ["BENCH_OUT"], "w") as fh:
                fh.write(str(time.process_time() - start))
''')

TEST = textwrap.dedent('''
    import torch


    class Model{n}(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 8)
            self.b = torch.nn.Linear(8, 8)
            self.scale = {n} % 3 + 1

        def forward(self, x, k):
            return self.b(torch.nn.functional.gelu(self.a(x))) * self.scale + k


    def test_model_{n}():
        torch.manual_seed({n})
        model = torch.compile(Model{n}(), backend="eager")
        x = torch.randn(4, 8)
        first = model(x, 2)
        for _ in range({calls}):
            assert torch.equal(model(x, 2), first)
''')


def make_suite(directory: str, tests: int, calls: int) -> None:
    with open(os.path.join(directory, "conftest.py"), "w") as fh:
        fh.write(CONFTEST)
    with open(os.path.join(directory, "pytest.ini"), "w") as fh:
        fh.write("[pytest]\n")
    for n in range(tests):
        with open(os.path.join(directory, f"test_m{n:03d}.py"), "w") as fh:
            fh.write(TEST.format(n=n, calls=calls))


def run_suite(directory: str, extra: list[str]) -> float:
    out = os.path.join(directory, "elapsed.txt")
    env = dict(os.environ, BENCH_OUT=out, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", *extra],
                          cwd=directory, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the suite failed ({' '.join(extra) or 'plugin inactive'}):\n{proc.stdout[-3000:]}")
    with open(out) as fh:
        return float(fh.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--json-too", action="store_true", help="also time the plugin writing every test's JSON report")
    args = ap.parse_args()
    active = ["--dynadbg-max-recompiles", "0", "--dynadbg-max-graph-breaks", "0"]
    modes = {"without plugin": [], "plugin active": active}
    with tempfile.TemporaryDirectory() as tmp:
        if args.json_too:
            modes["plugin + JSON"] = active + ["--dynadbg-json", os.path.join(tmp, "reports")]
        make_suite(tmp, args.tests, args.calls)
        for extra in modes.values():  # warm-up (file-system caches, .pyc files), discarded
            run_suite(tmp, extra)
        times: dict[str, list[float]] = {m: [] for m in modes}
        for _ in range(args.rounds):
            for mode, extra in modes.items():
                times[mode].append(run_suite(tmp, extra))
    base = statistics.median(times["without plugin"])
    print(f"suite: {args.tests} compiled tests, {args.calls + 1} calls each, never recompiling; "
          f"median of {args.rounds} rounds (CPU seconds of the test loop)")
    for mode, values in times.items():
        med = statistics.median(values)
        print(f"  {mode:<16} {med:7.2f} s   ratio {med / base:5.3f}x   (rounds: {', '.join(f'{v:.2f}' for v in values)})")
    print("target: plugin active <= 1.05x")


if __name__ == "__main__":
    main()
