"""The real-program corpora the tests under tests/cases run: the project's own (tests/programs, always there)
and the shared one (../shared/cases beside the checkout, or $DYNADBG_CASES), used as an extra when present.

A case is named ``"programs/NAME.py"`` or ``"shared/NAME.py"``; each has ``NAME.expected.md`` beside it with
what torch 2.13 logged (recompile reasons, graph breaks, stdout; tests/programs/record_expected.py writes the
project's own). Programs in tests/programs without that file (e.g. the exit stress program) are not cases.
"""

from __future__ import annotations

import os
from pathlib import Path

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "programs"
SHARED_DIR = Path(os.environ.get("DYNADBG_CASES") or Path(__file__).resolve().parents[2].parent / "shared" / "cases")

PROGRAMS = sorted(p.with_suffix("").with_suffix(".py").name for p in PROGRAMS_DIR.glob("*.expected.md"))
SHARED = sorted(p.name for p in SHARED_DIR.glob("[0-9]*.py")) if SHARED_DIR.is_dir() else []
CASES = [f"programs/{n}" for n in PROGRAMS] + [f"shared/{n}" for n in SHARED]


def case_path(case: str) -> Path:
    """The program of `case` (``"programs/aliasing.py"`` → tests/programs/aliasing.py)."""
    corpus, _, name = case.partition("/")
    return (PROGRAMS_DIR if corpus == "programs" else SHARED_DIR) / name


def expected_path(case: str) -> Path:
    """The ``.expected.md`` beside the program of `case`."""
    return case_path(case).with_suffix(".expected.md")


def file_stem(case: str) -> str:
    """`case` as one file name (for per-case output files)."""
    return case.replace("/", "__")
