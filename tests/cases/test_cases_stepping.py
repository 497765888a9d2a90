"""Stepping every generated instruction of the real programs of the corpora (tests/programs, and ../shared/cases
when present; see corpus.py) changes nothing.

Each case runs twice in fresh processes (forked from servers that have imported torch, see forkrun.py), side by
side: plainly, and under the debugger with `s 1000000` at every stop (`step_all.py`: every instruction of every
generated code object is traced, its stack depth tracked — and on Python 3.11 checked against the live stack top
at every instruction). The program's stdout must be identical (lines with timings masked), the exit status the
same, the interpreter must not crash, and at least one instruction of generated code must have been stepped.

The same run checks the teaching engine on everything Dynamo generated (step_all.py is the corpus's one stepping
driver): at every stepped instruction the slots' provenance agrees with the depth and names instructions that
pushed and ran; every generated instruction has a role, every opcode and every guard type in the guard trees an
explanation.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from corpus import CASES, case_path
from forkrun import ForkServers

STEP_ALL = Path(__file__).resolve().parent / "step_all.py"
TIMEOUT_S = 600
_TIMING = re.compile(r"\s*\d+(\.\d+)?\s*(us|µs|ms|s)/call")
#: what each run has imported when its program starts (a plain run: torch, at the program's first line and first
#: torch.compile), imported once by its fork server
PLAIN_PRELOAD = ["torch", "torch._dynamo"]
STEP_PRELOAD = ["torch", "torch._dynamo", "dynadbg.core.commands", "dynadbg.core.listeners", "dynadbg.core.session",
                "dynadbg.core.format"]

pytestmark = [
    pytest.mark.slow,
]


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("TORCH_LOGS", None)
    return env


@pytest.fixture(scope="module")
def both(request, fork_servers: ForkServers):
    """case -> (plain run, stepped run) for every case a selected test of this module names; all started together
    the first time a test needs one."""
    selected = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec is not None and "case" in callspec.params:
            if callspec.params["case"] not in selected:
                selected.append(callspec.params["case"])
    pool = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2)))
    env = _env()

    def run(preload: list[str], args: list[str]) -> Future:
        return pool.submit(fork_servers.run, preload, env, args, cwd=str(Path(args[-1]).parent), timeout=TIMEOUT_S)

    futures = {}
    for c in selected:
        path = str(case_path(c))
        futures[c] = (run(PLAIN_PRELOAD, [path]), run(STEP_PRELOAD, [str(STEP_ALL), path]))
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _mask(text: str) -> str:
    return _TIMING.sub("<timing>", text)


@pytest.mark.parametrize("case", CASES)
def test_stepping_every_instruction_leaves_output_identical(both, case: str) -> None:
    plain, stepped = (f.result() for f in both[case])
    assert stepped.returncode >= 0, f"the interpreter died with signal {-stepped.returncode}\n{stepped.stderr[-3000:]}"
    summary = json.loads(stepped.stderr.strip().splitlines()[-1])
    assert summary["traceback"] is None, summary["traceback"]
    assert stepped.returncode == plain.returncode == summary["status"]
    assert _mask(stepped.stdout) == _mask(plain.stdout)
    assert summary["traced_instructions"] > 50, summary
    assert summary["depth_mismatches"] == [], "tracked stack depth disagreed with the live stack"
    assert summary["stepped"] == summary["traced_instructions"] and summary["codes"] > 0, summary
    assert summary["provenance_problems"] == [], "slot provenance disagreed with the live stack"
    assert summary["unknown"] == [], "instructions of generated code with no role"
    assert summary["unexplained"] == [], "opcodes in generated code with no explanation"
    assert summary["guard_types_unexplained"] == [], "guard types in the tree with no explanation"
