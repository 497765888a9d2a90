"""Shared fixtures: a clean Dynamo state for every test, and the location of ../shared/cases."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))


def cases_dir() -> Path | None:
    """The shared real-program cases (../shared/cases beside the checkout), or $DYNADBG_CASES."""
    env = os.environ.get("DYNADBG_CASES")
    for cand in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "cases"]:
        if cand.is_dir():
            return cand
    return None


@pytest.fixture(autouse=True)
def _reset_dynamo():
    """Each test starts and ends with empty Dynamo caches (only when torch is already imported)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
