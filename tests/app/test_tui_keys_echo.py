"""Issue 21, what two newcomers noticed at 80x24: a key that sends a command leaves that command in the console
(``s`` leaves ``> step``), as a typed line does, and only once."""

from __future__ import annotations

import asyncio

import textwrap

import pytest
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import counter_recompile_scenario
from waiting import until

from dynadbg.core.commands import spelled_out

SMALL = (80, 24)


def _echoes(app) -> list[str]:  # noqa: ANN001
    """The console's command lines (``> step``), oldest first, without the ``> ``."""
    return [strip.text[2:].rstrip() for strip in app.main_screen.console.log_widget.lines
            if strip.text.startswith("> ")]


def test_a_verb_is_spelled_out_as_the_word_it_abbreviates() -> None:
    assert [spelled_out(line) for line in ("s", "n", "r", "c", "cont", "b 12", "u", "q")] == \
        ["step", "next", "return", "continue", "continue", "break 12", "up", "quit"]
    # a verb that abbreviates nothing, a decision, an unknown line: as they are
    assert [spelled_out(line) for line in ("until 12", "eager", "drop g3", "ll", "watch x", "frobnicate 1")] == \
        ["until 12", "eager", "drop g3", "ll", "watch x", "frobnicate 1"]


async def test_s_n_t_c_at_a_stop_leave_step_next_until_continue_in_the_console() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for key in ("s", "n", "f11"):
            await pilot.press(key)
            await settle(pilot)
        cursor = app.main_screen.bytecode.cursor_instruction.index
        await pilot.press("t")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert _echoes(app) == ["step", "next", "step", f"until {cursor}", "continue"]


async def test_a_steps_echo_is_logged_after_its_status_line_shows_the_new_instruction() -> None:
    """Logged at the keypress, the echo's repaint went out in the frame that carried the step's status line, and
    Textual repaints the bounding box of a frame's changes: the whole screen, 33 ms to the new instruction in a
    real terminal instead of 4 (bench_tui_terminal.py). The echo waits for the status line's own frame."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        console = app.main_screen.console
        seen: list[tuple[str, object]] = []
        write = console._write

        def recording(text, component):  # noqa: ANN001, ANN202
            seen.append((str(text), app.main_screen.status.stop))
            return write(text, component)

        console._write = recording  # type: ignore[method-assign]
        before = app.last_stop
        await pilot.press("s")
        await settle(pilot)
        assert app.last_stop is not before
        assert [stop for text, stop in seen if text == "> step"] == [app.last_stop]


async def test_a_typed_command_is_logged_once_as_typed() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("colon", "s", "enter")
        await settle(pilot)
        await pilot.press(*"next", "enter")
        await settle(pilot)
        assert _echoes(app) == ["s", "next"]
        # `:` pressed again while typing (the narration says "press : first") is not part of the command
        await pilot.press("colon", *"next", "enter")
        await settle(pilot)
        await pilot.press("colon", "enter")          # only `:`: nothing runs (not the last command again)
        await settle(pilot)
        assert _echoes(app) == ["s", "next", "next"]


async def test_the_palettes_step_is_logged_as_step() -> None:
    from textual.command import CommandPalette

    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), 10, poll=lambda: pilot.pause(0.02))
        await pilot.press(*"Step: Step into")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(pilot, lambda: app.main_screen is app.screen, 10, poll=lambda: pilot.pause(0.02))
        await settle(pilot)
        assert _echoes(app) == ["step"]


async def test_a_recompile_stops_key_logs_its_decision_once() -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        assert _echoes(app) == ["eager"]


async def test_keys_pressed_once_the_program_ended_log_nothing() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        presses = 0
        while app.phase != "exited" and presses < 50:
            await pilot.press("c")
            await settle(pilot)
            presses += 1
        assert app.phase == "exited"
        assert _echoes(app) == ["continue"] * presses
        await pilot.press("s", "c")        # no stop to go on from: no command was sent, none is logged
        await settle(pilot)
        assert _echoes(app) == ["continue"] * presses


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
async def test_on_the_real_engine_s_then_c_leave_step_and_continue(tmp_path) -> None:  # noqa: ANN001
    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(script), []))
    poll = lambda: asyncio.sleep(0.01)  # noqa: E731
    async with app.run_test(size=SMALL) as pilot:
        await until(pilot, lambda: app.phase in ("stopped", "exited"), 120, poll=poll)
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.ENTRY
        await pilot.press("s")
        await until(pilot, lambda: app.phase == "stopped" and app.last_stop.kind is StopKind.STEP and app.settled,
                    60, poll=poll)
        assert _echoes(app) == ["step"]
        await pilot.press("c")
        await until(pilot, lambda: app.phase == "exited", 60, poll=poll)
        assert _echoes(app) == ["step", "continue"]
        await pilot.press("q")


async def test_a_digit_on_an_empty_command_line_is_the_view_key() -> None:
    """Lessons say "key 8" while the learner types in the console: a newcomer's 8 landed in the command line. A
    digit on an empty line opens that view (no command starts with a digit); after a letter it is typed."""
    from dynadbg.tui.views import View

    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        console = app.main_screen.console
        console.input.focus()
        await pilot.press("8")
        await settle(pilot)
        assert app.main_screen.active_view is View.STDERR and console.input.value == ""
        console.input.focus()
        await pilot.press("1")
        await settle(pilot)
        assert app.main_screen.active_view is View.BYTECODE
        console.input.focus()
        await pilot.press("l", "space", "2")
        await settle(pilot)
        assert console.input.value == "l 2" and app.main_screen.active_view is View.BYTECODE
