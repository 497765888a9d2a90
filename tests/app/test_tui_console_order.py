"""What a newcomer reads in the TUI's console and status line: the program's output in the order it was written
relative to the stops (as line mode prints it), a status line that fits 80 and 140 columns without losing the
stderr count, a Stderr view that wraps at its width when maximised, and a help that names the lesson keys."""

from __future__ import annotations

import re
import sys
import time

import pytest
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture

from dynadbg.core.model import StopKind
from dynadbg.tui.status_line import StatusLine
from forkrun import python

PROGRAM_LINE = re.compile(r"^(scale=\d+: out\[0\] = .*|device: \w+)$")


def _events_of_line_mode(out: str) -> list[str]:
    events = []
    for line in out.splitlines():
        m = re.match(r"^\[(entry|recompile|graph-break|compile|exception)\]", line)
        if m:
            events.append(f"stop {m.group(1)}")
        elif PROGRAM_LINE.match(line):
            events.append(line)
    return events


def _events_of_console(log: str) -> list[str]:
    events = []
    for line in log.splitlines():
        m = re.match(r"^stopped: ([\w-]+)", line)
        if m:
            events.append(f"stop {m.group(1)}")
        elif PROGRAM_LINE.match(line):
            events.append(line)
        elif line.startswith("program exited"):
            events.append("exit")
    return events


@pytest.mark.slow
async def test_the_demos_output_comes_in_the_order_line_mode_prints_it() -> None:
    """`c` at every stop of the demo: the ``scale=1`` lines come before the recompile stop they led to and
    ``scale=2`` before the program's end, in the console as in line mode (they came after, before)."""
    from dynadbg.core.session import Session
    from dynadbg.demos import demo_path
    from dynadbg.tui.app import DebuggerApp

    plain = python(["-m", "dynadbg", "demo", "--plain", "-c", "c; " * 12],
                   timeout=600)
    expected = _events_of_line_mode(plain.stdout)
    assert expected.count("stop recompile") == 2 and sum(e.startswith("scale=") for e in expected) == 3, plain.stdout

    app = DebuggerApp(lambda listener: Session(listener),
                      lambda session: session.start_script(demo_path(None), []))
    async with app.run_test(size=(140, 45)) as pilot:
        deadline = time.monotonic() + 600
        while app.phase != "exited" and time.monotonic() < deadline:
            await pilot.pause(0.02)  # polls a real program (compiling), no fixed wait
            if app.stopped and not app.engine_busy:
                app.submit("c")
        await settle(pilot)
        log = "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)
    seen = _events_of_console(log)
    assert seen[-1] == "exit", log
    assert seen[:-1] == expected, log


def _status(app) -> str:  # noqa: ANN001
    return str(app.main_screen.query_one(StatusLine).render())


@pytest.mark.parametrize("width", [80, 140])
async def test_status_line_fits_and_keeps_the_stderr_count(width: int) -> None:
    """With a long resume-function name and stderr lines, the status line fits the terminal: the least needed
    fields go, the state, the code name, the compile id, the instruction and the stderr count stay."""
    import dataclasses

    from fake_scenarios import forward_scenario

    name = "torch_dynamo_resume_in_forward_at_26"
    scenario = forward_scenario()
    stops = [dataclasses.replace(st, frames=tuple(dataclasses.replace(f, code=dataclasses.replace(
        f.code, name=name)) for f in st.frames)) for st in scenario.stops]
    app = make_app(dataclasses.replace(scenario, stops=stops))
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        status = app.main_screen.query_one(StatusLine)
        status.aliases = {name: "__resume_at_196_3"}
        status.stderr_lines = 14
        status.refresh()
        await pilot.press("s")
        await settle(pilot)
        text = _status(app)
        assert len(text) <= width, text
        # the stderr count never goes; where the code name would be cut it shortens first
        stderr = "stderr: 14 lines (view 8)" if width >= 140 else "stderr 14 (view 8)"
        assert stderr in text and "instr 1/32" in text and "⏸ step" in text, text
        assert name[:10] in text and name[-10:] in text, text  # cut in the middle, if at all: both ends show
        assert "compile 0/0" in text, text
        if width >= 140:
            assert "(= __resume_at_196_3)" in text, text


async def test_stderr_view_wraps_at_its_width_when_maximised() -> None:
    """A long stderr line written while the view is small wraps again at the maximised width (it stayed wrapped
    at about 80 columns)."""
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        long = "W1201 torch/_dynamo/convert_frame.py " + " ".join(f"word{k:03d}" for k in range(60))
        print(long, file=sys.stderr)
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        view = app.main_screen.stderr
        narrow = max(len(strip.text.rstrip()) for strip in view.lines)
        await pilot.press("z")
        await settle(pilot)
        wide = max(len(strip.text.rstrip()) for strip in view.lines)
        assert wide > narrow + 30, (narrow, wide)
        assert wide <= view.scrollable_content_region.width
        assert view.text == long


@pytest.mark.parametrize("flush", [0.0, 0.05])
async def test_a_line_printed_in_pieces_is_one_console_line(flush: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """`print("result", 9.0)` is four writes; when the console was flushed between them it showed "result" and
    " 9.0" on two lines (seen in CI on the real engine). Complete lines are logged; a begun line waits for its
    end, and is logged as it stands after `PARTIAL_LINE_FLUSH` seconds (a progress bar has no newline)."""
    from dynadbg.tui.app import DebuggerApp

    monkeypatch.setattr(DebuggerApp, "PRINT_FLUSH", flush)  # the tests' own setting (0) and the app's
    monkeypatch.setattr(DebuggerApp, "PARTIAL_LINE_FLUSH", 600.0)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        log = app.main_screen.console.log_widget

        async def lines_once(condition) -> list[str]:  # noqa: ANN001
            for _ in range(2000):
                lines = [strip.text.rstrip() for strip in log.lines]
                if condition(lines):
                    return lines
                await pilot.pause(0.01)
            raise AssertionError(lines)

        sys.stdout.write("first line\nresult")
        lines = await lines_once(lambda lines: "first line" in lines)
        assert "result" not in lines, lines
        sys.stdout.write(" 9.0")
        sys.stdout.write("\n")
        lines = await lines_once(lambda lines: "result 9.0" in lines)
        assert "result" not in lines and " 9.0" not in lines, lines
        app.PARTIAL_LINE_FLUSH = 0.05
        sys.stdout.write("50% done")
        await lines_once(lambda lines: "50% done" in lines)


async def test_help_names_the_lesson_keys() -> None:
    import io

    from rich.console import Console

    from dynadbg.tui.help_screen import HelpScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-body").query_one("Static").content)
        text = console.export_text()
        assert "In a lesson (dynadbg learn)" in text and "F8" in text and "hint" in text


async def test_a_step_is_one_engine_round_trip() -> None:
    """``s`` in the same call: the step itself and nothing else goes to the engine (the stop brings its roles
    and provenance); the stack pane shows who pushed each slot at once."""
    from fake_scenarios import forward_scenario

    from dynadbg.tui.stack_view import StackView

    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(2):
            await pilot.press("s")
            await settle(pilot)
        before = list(app.session.calls)
        await pilot.press("s")
        await settle(pilot)
        assert app.session.calls[len(before):] == ["set_step()"]
        assert app.last_stop.kind is StopKind.STEP and app.last_stop.teaching is not None
        assert "←" in app.main_screen.query_one(StackView).text
