"""Shared fixtures: a clean Dynamo state for every test, and the location of ../shared/cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))


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
