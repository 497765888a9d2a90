"""Helpers of the TUI tests, benchmarks and screenshots: a `DebuggerApp` on the fake engine, and a settled screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_engine import FakeEngine
from fake_scenarios import Scenario, forward_scenario

try:  # the benchmark and the screenshot script use this module without pytest
    import pytest
except ImportError:  # pragma: no cover
    pass
else:

    @pytest.fixture(autouse=True)
    def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
        """A blinking input cursor makes screenshots flaky: keep it on (import this into a TUI test module)."""
        from textual.widgets import Input

        monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


async def settle(pilot: Any) -> None:
    """Wait until the app is settled (`DebuggerApp.settled`: stopped or ended, no engine call in flight, no program
    output waiting) and every message and zero-delay timer that led there was handled."""
    app = pilot.app
    for _ in range(30_000):  # at most about a minute on a busy machine
        await app.workers.wait_for_complete()
        await pilot.pause()
        if getattr(app, "settled", True) and all(w.is_finished for w in app.workers):
            break
    await pilot.pause()


def make_app(scenario: Scenario | None = None, *, keymap: dict[str, str] | None = None,
             keymap_warnings: Sequence[str] = ()) -> Any:
    """A `DebuggerApp` on a `FakeEngine` replaying `scenario` (default: `forward_scenario()`); the engine is
    ``app.session``."""
    from dynadbg.tui.app import DebuggerApp

    chosen = scenario if scenario is not None else forward_scenario()
    return DebuggerApp(lambda listener: FakeEngine(listener, chosen), lambda session: session.start_callable(None),
                       keymap=keymap, keymap_warnings=tuple(keymap_warnings))
