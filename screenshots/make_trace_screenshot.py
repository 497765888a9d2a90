"""Make the README's Trace-view screenshot from the real app: ``python screenshots/make_trace_screenshot.py``.

Runs ``tests/programs/item_graph_break.py`` (``.item()`` breaks the graph) under the real engine with
``--break-on trace-break`` in `DebuggerApp`, headless at 120x40, waits for the graph-break trace stop (inside
Dynamo's tracing, at the breaking ``CALL`` with its operands) and writes ``trace-break.svg`` next to this file:
the status line, the Trace view with its Break pane, the source pane on the traced line. Shares the `Driver` of
``make_screenshots.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_screenshots import Driver, finish, quiet_torch, run_driven  # noqa: E402

PROGRAM = HERE.parent / "tests" / "programs" / "item_graph_break.py"


async def drive(driver: Driver) -> None:
    from dynadbg.core.model import StopKind

    app, pilot = driver.app, driver.pilot
    screen = app.main_screen
    await driver.until(lambda: screen.is_mounted and bool(screen.query("#command")), "the main screen")
    screen.console.input.cursor_blink = False
    await driver.until(lambda: app.stopped and app.last_stop.kind is StopKind.TRACE_BREAK, "the trace-break stop")
    await driver.until(lambda: screen.source.filename == str(PROGRAM) and screen.source.virtual_size.height > 1,
                       "the traced file in the source pane")
    await driver.shoot("trace-break")
    await pilot.press("q")


def main() -> int:
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    quiet_torch()
    app = DebuggerApp(lambda listener: Session(listener, break_on={"trace-break"}),
                      lambda session: session.start_script(str(PROGRAM), []))
    errors = run_driven(app, drive, HERE, (120, 40), 120.0)
    return finish(app, errors, "make_trace_screenshot")


if __name__ == "__main__":
    raise SystemExit(main())
