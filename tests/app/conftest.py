"""Fixtures for TUI tests: the fake engine on the import path, no blinking cursor, a settle helper."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Input

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking input cursor makes screenshots flaky; keep it on."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


async def settle(pilot) -> None:  # noqa: ANN001
    """Wait until the app's workers finished and every posted message was handled."""
    app = pilot.app
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
