"""The TUI at a trace stop (compile time, `--break-on trace`) on the real engine: the Trace view opens with the
stop (Dynamo's symbolic stack and locals, the graph and guards so far, the attempts, at a break the Break pane),
the bytecode pane shows the user's code with the instruction Dynamo traces next, and the run keys step Dynamo's
tracing (``s``/``n``/``c``; ``[``/``]`` browse the recorded steps), at 80×24 and 140×45."""

from __future__ import annotations

import asyncio

from pathlib import Path

import pytest
from fake_app import no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from waiting import until
from rich.text import Text

pytestmark = pytest.mark.slow

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
PROGRAM = PROGRAMS / "item_graph_break.py"


async def _until(pilot, condition, timeout: float = 120.0) -> None:  # noqa: ANN001
    await until(pilot, condition, timeout, poll=lambda: pilot.pause(0.05))  # fails the test when it never holds


def _trace_text(app) -> str:  # noqa: ANN001
    """What the Trace view shows, as plain text."""
    content = app.main_screen.trace_view.content
    parts = getattr(content, "renderables", [content])
    return "\n".join(p.plain for p in parts if isinstance(p, Text))


def _assert_marked_row_in_view(app) -> None:  # noqa: ANN001
    """The breaking step's row (``>``) is on the screen a user sees, not scrolled out of the Trace pane."""
    import tempfile

    from svg_text import squeeze, svg_rows

    marked = next(line for line in _trace_text(app).splitlines() if line.startswith(">"))
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "screen.svg"
        shot.write_text(app.export_screenshot(), encoding="utf-8")
        rows = [squeeze(r) for r in svg_rows(shot)]
    assert any(squeeze(marked)[:24] in r for r in rows), rows


def _app(break_on: set[str], program: Path = PROGRAM):  # noqa: ANN202
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    return DebuggerApp(lambda listener: Session(listener, break_on=break_on),
                       lambda session: session.start_script(str(program), []))


async def _run_to_end(app, pilot) -> None:  # noqa: ANN001
    from dynadbg.core.model import StopKind

    for _ in range(12):  # the resume function and the recompile are traced too: a stop each
        if app.phase == "exited":
            break
        seq = app.last_stop.seq
        await pilot.press("c")
        await _until(pilot, lambda: app.phase == "exited" or app.last_stop.seq != seq, 180)
        assert app.phase == "exited" or app.last_stop.kind in (StopKind.TRACE, StopKind.TRACE_BREAK)
    assert app.phase == "exited"


async def test_the_run_keys_step_the_trace_and_the_console_shows_the_symbolic_stack() -> None:
    from dynadbg.core.model import StopKind
    from dynadbg.tui.views import View

    app = _app({"trace"})
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        first = app.last_stop
        assert app.phase == "stopped" and first.kind is StopKind.TRACE
        screen = app.main_screen
        # the stop opens the Trace view; the bytecode pane lists the user's code at the instruction traced next
        assert screen.active_view is View.TRACE
        # the status line says where Dynamo is: compile, attempt, depth, function, line, step, graph so far
        status = screen.status.render().plain
        assert f"TRACE compile {first.trace.step.compile_id} attempt 0 d0 span L" in status
        assert f"step {first.trace.step.ordinal} · " in status and " guards" in status
        text = _trace_text(app)
        assert text.startswith(f"compile 0/0 attempt 0  d0 span line {first.trace.step.line}")
        assert "symbolic stack (TOS last)" in text and "attempts of compile 0/0" in text
        assert "torch's compile lock is held" in text
        assert screen.bytecode.code.name == "span" and not screen.bytecode.code.generated
        assert screen.bytecode.current == first.trace.user_index
        assert "Trace view (key 9)" in "\n".join(s.text for s in screen.console.log_widget.lines)
        await pilot.press("s")
        await _until(pilot, lambda: app.phase == "stopped" and app.last_stop.seq != first.seq)
        second = app.last_stop
        assert second.kind is StopKind.TRACE and second.trace.step.ordinal == first.trace.step.ordinal + 1
        assert f"step {second.trace.step.ordinal} · " in screen.status.render().plain
        assert f"step {second.trace.step.ordinal} " in _trace_text(app).splitlines()[0]
        assert screen.bytecode.current == second.trace.user_index
        # the recorded steps: [ shows the one before (read-only), ] comes back to the live stop
        await pilot.press("left_square_bracket")
        await _until(pilot, lambda: app.last_stop.trace.mark is not None)
        assert "TRACE HISTORY " in screen.status.render().plain
        assert _trace_text(app).startswith("a recorded step (")
        assert app.last_stop.trace.step.ordinal == first.trace.step.ordinal
        await pilot.press("right_square_bracket")
        await _until(pilot, lambda: app.last_stop.trace.mark is None)
        assert app.last_stop.trace.step.ordinal == second.trace.step.ordinal
        app.submit("stack")
        await _until(pilot, lambda: not app.engine_busy)
        log = "\n".join(strip.text for strip in screen.console.log_widget.lines)
        assert "symbolic stack before" in log
        await _run_to_end(app, pilot)
        # away from trace stops the Trace view and its key are not there
        assert app.main_screen.active_view is not View.TRACE
        assert app.check_action("dbg", ("view_trace",)) is False


@pytest.mark.parametrize("size", [(80, 24), (140, 45)])
async def test_a_graph_break_stop_shows_the_break_pane_and_the_keys_go_on(size: tuple[int, int]) -> None:
    from dynadbg.core.model import StopKind
    from dynadbg.tui.views import View

    app = _app({"trace-break"})
    async with app.run_test(size=size) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        stop = app.last_stop
        assert stop.kind is StopKind.TRACE_BREAK and app.main_screen.active_view is View.TRACE
        # the source pane shows the traced line's file (read by the engine at the trace stop)
        source = app.main_screen.source
        lines = len(PROGRAM.read_text().splitlines())
        await _until(pilot, lambda: source.filename == str(PROGRAM) and source.virtual_size.height == lines)
        assert source.lineno == stop.trace.step.line and source.virtual_size.height == lines  # the whole file
        text = _trace_text(app)
        brk = stop.trace.brk
        # the Break pane: where, torch's gb_type and hints, what Dynamo emits for it
        assert "\ngraph break\n" in text and "symbolic stack before CALL (its operands)" in text
        assert f"gb_type: {brk.gb_type}" in text and "capture_scalar_outputs" in text
        assert "is compiled and called first" in text and "resume function" in text
        # the frame actions do not apply inside Dynamo's tracing; stepping and the views do
        assert app.check_action("dbg", ("up",)) is False and app.check_action("dbg", ("breakpoint",)) is False
        assert app.check_action("dbg", ("step",)) is True and app.check_action("dbg", ("view_trace",)) is True
        # a recorded step before the break ([) is no break: no Break pane, no operands caption; ] comes back
        await pilot.press("left_square_bracket")
        await _until(pilot, lambda: app.last_stop.trace.mark is not None)
        earlier = _trace_text(app)
        assert "\ngraph break\n" not in earlier and "(its operands)" not in earlier, earlier
        await pilot.press("right_square_bracket")
        await _until(pilot, lambda: app.last_stop.trace.mark is None)
        assert "\ngraph break\n" in _trace_text(app)
        # the Trace view is a view like any other: 1 goes to the listing, 9 back
        await pilot.press("1")
        await settle(pilot)
        assert app.main_screen.active_view is View.BYTECODE
        await pilot.press("9")
        await settle(pilot)
        assert app.main_screen.active_view is View.TRACE
        await _run_to_end(app, pilot)


async def test_after_a_graph_break_the_trace_view_shows_the_recorded_attempt_with_the_break_marked() -> None:
    """From run time to compile time: at the graph-break stop of a resume function (no trace stop armed: light
    recording only) the Trace tab is there, and `9` shows the attempt that traced the break, the breaking CALL
    marked."""
    from dynadbg.core.model import StopKind
    from dynadbg.tui.views import View

    app = _app({"graph-break"})
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        stop = app.last_stop
        assert stop.kind is StopKind.GRAPH_BREAK and stop.graph_break.traced is not None
        traced = stop.graph_break.traced
        await pilot.press("9")
        await _until(pilot, lambda: "marks the breaking one" in _trace_text(app), 30)
        assert app.main_screen.active_view is View.TRACE
        text = _trace_text(app)
        assert (f"Recorded trace, compile {traced.compile_id} attempt {traced.attempt} (break behind this resume "
                "function)") in text  # the short head at 80 columns
        (marked,) = [line for line in text.splitlines() if line.startswith(">")] or [text]
        assert marked.startswith(f">{traced.ordinal:>4} L9") and "CALL" in marked  # the narrow rows at 80 columns
        _assert_marked_row_in_view(app)
        # the steps arriving while the view is hidden (0 columns wide) are laid out for the width it will have
        await pilot.press("1")
        await pilot.pause()
        steps = await asyncio.to_thread(app.session.trace_steps, traced.compile_id, traced.attempt)
        app.main_screen.trace_view.show_recorded(steps)
        await pilot.press("9")
        await pilot.pause()
        rows = _trace_text(app).splitlines()
        assert any(row.startswith(f">{traced.ordinal:>4} L9") for row in rows), rows
        assert all(len(row) <= 80 for row in rows[2:]), rows  # the steps' rows: none wraps
        # the column header scrolls out to show the breaking row: the border names the columns
        assert str(app.main_screen.trace_view.border_subtitle).startswith("columns: step line instruction nodes")
        # `u` selects the caller (the generated code suspended in the resume call): its listing comes to the front
        seq = app.last_stop.seq
        await pilot.press("u")
        await _until(pilot, lambda: app.last_stop.seq == seq and app.last_stop.selected == len(stop.frames) - 2, 30)
        assert app.main_screen.active_view is View.BYTECODE
        assert app.main_screen.bytecode.code.name == app.last_stop.frames[app.last_stop.selected].code.name
        await pilot.press("q")
        await pilot.pause(0.2)


async def test_the_source_pane_at_a_trace_stop_of_a_script_named_by_a_relative_path() -> None:
    """`dynadbg run tests/programs/x.py` from the checkout: the trace stop's source pane shows the file."""
    import os

    rel = os.path.relpath(PROGRAM)
    app = _app({"trace-break"}, Path(rel))
    async with app.run_test(size=(140, 45)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        stop = app.last_stop
        assert stop.trace is not None
        source = app.main_screen.source
        await _until(pilot, lambda: source.virtual_size.height > 5, 30)
        assert source.virtual_size.height == len(PROGRAM.read_text().splitlines())
        await pilot.press("q")
        await pilot.pause(0.2)


async def test_t_on_a_break_row_of_the_generated_code_opens_the_traced_break() -> None:
    """From a `BREAK` row to compile time: in the caller's generated code (`u` from the resume function's stop),
    `T` with the bytecode cursor on the graph-break row shows the recorded attempt of the compile that generated
    the code, the breaking CALL marked; off a break row it says where the break rows are."""
    from dynadbg.core.model import Role, StopKind
    from dynadbg.tui.views import View

    app = _app({"graph-break"})
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.last_stop.kind is StopKind.GRAPH_BREAK
        seq = app.last_stop.seq
        screen = app.main_screen
        screen.bytecode.focus()
        await pilot.press("u")
        await _until(pilot, lambda: app.last_stop.seq != seq or app.last_stop.selected != -1, 30)
        teaching = app.last_stop.teaching
        assert teaching is not None and teaching.traced_breaks
        rows = {k for k, _ in teaching.traced_breaks}
        assert all(teaching.roles.roles[k].role is Role.GRAPH_BREAK for k in rows)
        await pilot.press("home")
        await pilot.press("T")
        await settle(pilot)
        log = " ".join(" ".join(s.text for s in screen.console.log_widget.lines).split())
        assert f"T works on a graph-break row: here instructions {min(rows)}–{max(rows)}" in log
        for _ in range(60):  # down to the break row, as a user would
            if screen.bytecode.cursor in rows:
                break
            await pilot.press("down")
        assert screen.bytecode.cursor in rows
        await pilot.press("T")
        await _until(pilot, lambda: "marks the breaking one" in _trace_text(app), 30)
        assert screen.active_view is View.TRACE
        traced = teaching.traced_break_at(screen.bytecode.cursor)
        text = _trace_text(app)
        assert (f"Recorded trace, compile {traced.compile_id} attempt {traced.attempt} (break of the bytecode "
                "cursor's row)") in text
        (marked,) = [line for line in text.splitlines() if line.startswith(">")] or [text]
        assert marked.startswith(f">{traced.ordinal:>4} L9") and "CALL" in marked
        _assert_marked_row_in_view(app)
        await pilot.press("q")
        await pilot.pause(0.2)
