"""Exit status of a program under ``dynadbg run --plain`` over many runs (a count, not a timed test).

Runs PROGRAM (default: tests/programs/optimizer_scheduler.py, an AdamW + OneCycleLR step compiled with
inductor) RUNS times in a row, each in a fresh process, ``dynadbg run --plain -c c PROGRAM``, and counts the
runs whose exit status is not 0 — in particular 134, the abort ``terminate called without an active
exception`` that the process used to end with about one run in six when it exited while the debugger's
program thread was still finishing. Prints one line per failing run and a summary line.

Usage: python benchmarks/stress_exit.py [--runs 50] [--timeout 300] [--program PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--program", default=str(ROOT / "tests" / "programs" / "optimizer_scheduler.py"))
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("TORCH_LOGS", None)
    failures: dict[int, int] = {}
    started = time.monotonic()
    for n in range(1, args.runs + 1):
        try:
            proc = subprocess.run([sys.executable, "-m", "dynadbg", "run", "--plain", "-c", "c", args.program],
                                  capture_output=True, text=True, timeout=args.timeout, env=env, cwd=str(ROOT))
            rc = proc.returncode
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            rc, tail = -999, f"timed out after {args.timeout:.0f} s"
        if rc != 0:
            failures[rc] = failures.get(rc, 0) + 1
            print(f"run {n}: rc {rc}: {tail[-200:]}", flush=True)
    bad = sum(failures.values())
    print(f"{args.runs} runs of {Path(args.program).name} under dynadbg run --plain: {bad} with rc != 0 "
          f"{dict(sorted(failures.items())) if failures else ''} in {time.monotonic() - started:.0f} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
