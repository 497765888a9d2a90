"""The TUI at a trace stop (compile time, `--break-on trace`) on the real engine: it shows the stop, its run keys
step Dynamo's tracing, and the console answers with the symbolic state. (The Trace view itself comes later.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_app import no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture

pytestmark = pytest.mark.slow

PROGRAM = Path(__file__).resolve().parents[1] / "programs" / "item_graph_break.py"


async def _until(pilot, condition, timeout: float = 120.0) -> None:  # noqa: ANN001
    start = time.monotonic()
    while not condition() and time.monotonic() - start < timeout:
        await pilot.pause(0.05)
    await settle(pilot)


async def test_the_run_keys_step_the_trace_and_the_console_shows_the_symbolic_stack() -> None:
    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    app = DebuggerApp(lambda listener: Session(listener, break_on={"trace"}),
                      lambda session: session.start_script(str(PROGRAM), []))
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        first = app.last_stop
        assert app.phase == "stopped" and first.kind is StopKind.TRACE
        await pilot.press("s")
        await _until(pilot, lambda: app.phase == "stopped" and app.last_stop.seq != first.seq)
        second = app.last_stop
        assert second.kind is StopKind.TRACE and second.trace.step.ordinal == first.trace.step.ordinal + 1
        app.submit("stack")
        await _until(pilot, lambda: not app.engine_busy)
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
        assert "symbolic stack before" in log
        for _ in range(10):  # the resume function and the recompile are traced too: a start stop each
            if app.phase == "exited":
                break
            seq = app.last_stop.seq
            await pilot.press("c")
            await _until(pilot, lambda: app.phase == "exited" or app.last_stop.seq != seq, 180)
            assert app.phase == "exited" or app.last_stop.kind is StopKind.TRACE
        assert app.phase == "exited"
