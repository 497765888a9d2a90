"""The watches pane: expressions added with ``watch EXPR`` in the console, evaluated by the engine at every stop."""

from __future__ import annotations

import asyncio

import textwrap
import time

import pytest
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture

from dynadbg.tui.watches_view import WatchesView

SIZE = (120, 40)


async def _type(pilot, line: str) -> None:  # noqa: ANN001
    await pilot.press("colon", *line, "enter", "escape")
    await settle(pilot)


def _row(pane: WatchesView, expr: str) -> str:
    return next(line.plain for line in pane.lines if f" {expr} " in line.plain or line.plain.rstrip().endswith(expr))


async def test_watches_show_values_mark_changes_and_errors() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.main_screen.query_one(WatchesView)
        assert not pane.display  # no watches: the pane takes no room
        await _type(pilot, "watch n")
        await _type(pilot, "watch y")
        assert pane.display
        assert "1. n" in _row(pane, "n") and "3" in _row(pane, "n")
        # a name not bound yet: its error is shown in the pane, the program is not stopped for it
        assert "NameError: name 'y' is not defined" in _row(pane, "y")
        error_style = pane.get_component_rich_style("watches--error", partial=True)
        y_line = next(line for line in pane.lines if "NameError" in line.plain)
        assert any(span.style == error_style for span in y_line.spans)
        for _ in range(11):  # past STORE_FAST y (index 10)
            await pilot.press("s")
            await settle(pilot)
        assert "Tensor[4, 4] float32 cpu" in _row(pane, "y")
        assert _row(pane, "y").startswith("*")  # changed since the stop before (was an error)
        assert not _row(pane, "n").startswith("*")  # n stayed 3
        await pilot.press("s")
        await settle(pilot)
        assert not _row(pane, "y").startswith("*")  # the same value as one stop ago
        assert "set_step()" in app.session.sent and "add_watch(y)" in app.session.sent


async def test_unwatch_removes_the_row_and_the_empty_pane_hides() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.main_screen.query_one(WatchesView)
        await _type(pilot, "watch x")
        assert pane.display and "Tensor[4, 4]" in _row(pane, "x")
        await _type(pilot, "unwatch 1")
        assert not pane.display
        await _type(pilot, "unwatch 7")
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
        assert "no watch 7" in log


PROGRAM = textwrap.dedent(
    """
    import torch

    def f(x, n):
        y = x * n
        return y + 1

    cf = torch.compile(f, backend="eager")
    print("result", float(cf(torch.ones(3), 2).sum()))
    """
)


@pytest.mark.slow
async def test_watches_on_the_real_engine(tmp_path) -> None:  # noqa: ANN001
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(script), []))
    async with app.run_test(size=SIZE) as pilot:
        start = time.monotonic()
        while app.phase not in ("stopped", "exited") and time.monotonic() - start < 120:
            await asyncio.sleep(0.01)
        await settle(pilot)
        assert app.phase == "stopped"
        pane = app.main_screen.query_one(WatchesView)
        await _type(pilot, "watch x.sum()")
        await _type(pilot, "watch n * 10")
        await _type(pilot, "watch zzz")
        await settle(pilot)
        assert pane.display
        assert "tensor(3.)" in _row(pane, "x.sum()")  # a 0-d tensor shows its value
        assert "20" in _row(pane, "n * 10")
        assert "NameError" in _row(pane, "zzz")
        await pilot.press("s")
        start = time.monotonic()
        while (app.phase != "stopped" or app.stops_seen < 2) and time.monotonic() - start < 30:
            await asyncio.sleep(0.01)
        await settle(pilot)
        assert "20" in _row(pane, "n * 10") and not _row(pane, "n * 10").startswith("*")
        await pilot.press("q")
