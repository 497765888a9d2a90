"""Stepping every generated instruction of the real programs of the corpora (tests/programs, and ../shared/cases
when present; see corpus.py) changes nothing.

Each case runs twice in subprocesses, side by side: plainly, and under the debugger with `s 1000000` at every
stop (`step_all.py`: every instruction of every generated code object is traced, its stack depth tracked — and
on Python 3.11 checked against the live stack top at every instruction). The program's stdout must be identical
(lines with timings masked), the exit status the same, the interpreter must not crash, and at least one
instruction of generated code must have been stepped.

The same run checks the teaching engine on everything Dynamo generated (step_all.py is the corpus's one stepping
driver): at every stepped instruction the slots' provenance agrees with the depth and names instructions that
pushed and ran; every generated instruction has a role, every opcode and every guard type in the guard trees an
explanation.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import pytest

from corpus import CASES, case_path

STEP_ALL = Path(__file__).resolve().parent / "step_all.py"
TIMEOUT_S = 600
_TIMING = re.compile(r"\s*\d+(\.\d+)?\s*(us|µs|ms|s)/call")

pytestmark = [
    pytest.mark.slow,
]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("TORCH_LOGS", None)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=str(Path(args[-1]).parent),
        env=env,
    )


@lru_cache(maxsize=None)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2)))


_futures: dict[str, object] = {}


def _both(case: str):
    """(plain run, stepped run) of `case`; all cases are started together the first time one is needed."""
    if not _futures:
        for c in CASES:
            path = str(case_path(c))
            _futures[c] = (_pool().submit(_run, [path]), _pool().submit(_run, [str(STEP_ALL), path]))
    plain, stepped = _futures[case]
    return plain.result(), stepped.result()  # type: ignore[attr-defined]


def _mask(text: str) -> str:
    return _TIMING.sub("<timing>", text)


@pytest.mark.parametrize("case", CASES)
def test_stepping_every_instruction_leaves_output_identical(case: str) -> None:
    plain, stepped = _both(case)
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
