"""Stepping back in the TUI: `[` and `]` walk the recorded stops, read-only and marked as history (fake engine)."""

from __future__ import annotations

from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture

from dynadbg.tui.bytecode_view import BytecodeView
from dynadbg.tui.locals_view import LocalsView
from dynadbg.tui.stack_view import StackView
from dynadbg.tui.status_line import StatusLine


def rendered(widget) -> str:  # noqa: ANN001
    from dynadbg.tui.lines_view import LinesView

    return widget.text if isinstance(widget, LinesView) else str(widget.render())


async def test_brackets_walk_the_history_marked_and_a_step_returns_to_the_present() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.main_screen
        stack, status = screen.query_one(StackView), screen.query_one(StatusLine)
        seen = []
        for _ in range(3):
            seen.append((screen.query_one(BytecodeView).current, rendered(stack), rendered(screen.query_one(LocalsView))))
            await pilot.press("s")
            await settle(pilot)
        present = (screen.query_one(BytecodeView).current, rendered(stack))
        await pilot.press("left_square_bracket", "left_square_bracket")
        await settle(pilot)
        line = rendered(status)
        assert "HISTORY 2/4" in line and "any step: back to the present" in line
        # the panes show the recorded stop: its marker, its value stack, its locals
        assert screen.query_one(BytecodeView).current == seen[1][0]
        assert rendered(stack) == seen[1][1]
        assert rendered(screen.query_one(LocalsView)) == seen[1][2]
        assert stack.border_subtitle == "recorded: history 2/4" and screen.has_class("-history")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "HISTORY 3/4" in rendered(status)
        # a step from history goes back to the present first, then runs one instruction from there
        await pilot.press("s")
        await settle(pilot)
        assert "HISTORY" not in rendered(status) and not screen.has_class("-history")
        assert screen.query_one(BytecodeView).current == present[0] + 1
        assert app.session.sent[-1].startswith("set_step(")


async def test_back_with_nothing_recorded_says_so_and_changes_nothing() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = rendered(app.main_screen.query_one(StatusLine))
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert rendered(app.main_screen.query_one(StatusLine)) == before
        log = app.main_screen.console.log_widget
        assert "no history recorded" in "\n".join(line.text for line in log.lines)
