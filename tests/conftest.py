"""Shared fixtures: a clean Dynamo state for every test, the session's fork servers (forkrun.py), and the location
of ../shared/cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))


@pytest.fixture(scope="session")
def fork_servers():
    """The session's fork servers (forkrun.py: a fresh process per run without torch's import each time)."""
    import forkrun

    return forkrun.SERVERS


def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the fork servers a test started (forkrun.SERVERS)."""
    forkrun = sys.modules.get("forkrun")
    if forkrun is not None:
        forkrun.SERVERS.close()


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


@pytest.fixture(autouse=True)
def _no_tui_delays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI's delays (the footer's settle time, the "running" flash, gathering the program's output, the edit
    preview's debounce) are 0 here: a TUI test waits until the app is settled, never for a length of time."""
    app = sys.modules.get("dynadbg.tui.app")
    if app is not None:
        for name in ("FOOTER_SETTLE", "RUNNING_SHOWN_AFTER", "PRINT_FLUSH"):
            monkeypatch.setattr(app.DebuggerApp, name, 0.0)
    dialog = sys.modules.get("dynadbg.tui.edit_dialog")
    if dialog is not None:
        monkeypatch.setattr(dialog.EditDialog, "DEBOUNCE", 0.0)
