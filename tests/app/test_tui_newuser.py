"""What a second first-time user still tripped over, each replayed with the keys they pressed (the fake engine):
views that would not maximise, an 80x24 screen that hid the source, the help's keys and the footer's Help / Quit,
focus nobody could see, view keys and Escape that lost the view, the Recompile view that stayed shut."""

from __future__ import annotations

import asyncio

import io
import sys
from dataclasses import replace

import pytest
import waiting
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import counter_recompile_scenario
from svg_text import squeeze, svg_rows
from rich.console import Console
from textual.widgets import Input, RichLog

from dynadbg.core.model import StackArg, StopKind

SMALL = (80, 24)

#: view key → the pane id it opens and the widget that takes the focus
VIEWS = {"1": ("tab-bytecode", "bytecode"), "2": ("tab-orig", "orig-bytecode"), "3": ("tab-graph", "graph"),
         "4": ("tab-entries", "entries"), "5": ("tab-stop", "stop-detail"), "6": ("tab-diff", "diff"),
         "7": ("tab-recompile", "recompile"), "8": ("tab-stderr", "stderr")}


def _text(renderable, width: int) -> str:  # noqa: ANN001
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_every_view_key_opens_and_focuses_its_view_and_z_maximises_it() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.main_screen
        for key, (pane, widget_id) in VIEWS.items():
            await pilot.press(key)
            await settle(pilot)
            assert screen.views.active == pane and app.focused.id == widget_id, (key, app.focused)
            small = app.focused.size
            await pilot.press("z")
            await pilot.pause()
            assert screen.maximized is app.focused, key  # the view itself, not the tab container
            assert app.focused.size.height > small.height and app.focused.size.width > small.width, key
            await pilot.press("z")
            await pilot.pause()
            assert screen.maximized is None and screen.views.active == pane


async def test_at_80x24_the_source_help_and_quit_keys_and_the_helps_key_column_fit() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.main_screen
        source = screen.query_one("#source")
        assert source.display and source.region.height >= 3
        keys = {k.action: k for k in screen.query("FooterKey")}
        for action in ("dbg('help')", "dbg('quit')"):
            assert keys[action].region.right <= SMALL[0] and keys[action].region.width > 0, action
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        text = _text(body.query_one("Static").content, body.content_region.width)
        rows = {line.split()[0] for line in text.splitlines() if line.strip()}
        assert not any(row.startswith("…") for row in rows), text  # no key cut to an ellipsis
        for keys_shown in ("s / F11", "c / F5", "b / F9", "Ctrl+C"):
            assert keys_shown in text, keys_shown


async def test_at_80x24_a_long_stderr_line_wraps_instead_of_showing_only_its_prefix() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        warning = ("W1130 14:30:25.661000 14369 torch/_dynamo/variables/tensor.py:1759] [0/0] Graph break from "
                   "`Tensor.item()`, consider setting: torch._dynamo.config.capture_scalar_outputs = True")
        print(warning, file=sys.stderr)
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        log = app.main_screen.query_one("#stderr", RichLog)
        shown = "".join(strip.text for strip in log.lines)
        assert "capture_scalar_outputs=True" in shown.replace(" ", "")  # the message, not only torch's prefix
        assert all(strip.cell_length <= log.scrollable_content_region.width for strip in log.lines)


async def test_every_tab_stop_shows_that_it_has_the_focus() -> None:
    """Each focus stop looks different focused and unfocused (border, background or the active tab's colour)."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)

        def look(widget):  # noqa: ANN001, ANN202
            if type(widget).__name__ == "ContentTabs":
                widget = widget.query_one("Tab.-active")
            return (widget.styles.border, widget.styles.background, widget.styles.color)

        seen = set()
        for _ in range(10):
            widget = app.focused
            if widget in seen:
                break
            seen.add(widget)
            focused = look(widget)
            app.set_focus(None)
            await pilot.pause()
            assert look(widget) != focused, f"{widget!r} looks the same with and without the focus"
            widget.focus()
            await pilot.pause()
            await pilot.press("tab")
            await pilot.pause()
        assert len(seen) >= 7


async def test_escape_in_the_console_keeps_the_open_view() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("colon")
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await pilot.press("escape")
        await pilot.pause()
        assert app.main_screen.views.active == "tab-stop" and app.focused.id == "stop-detail"


async def test_at_80x24_the_consoles_footer_shows_the_keys_that_work_there_and_how_to_leave(tmp_path) -> None:  # noqa: ANN001
    """In the console a letter types into the input: the footer shows the keys that still work there (F10 steps
    over) and Esc/Tab, which leave it for the panes, where the letter keys work and show again."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)

        def footer_row() -> str:
            shot = tmp_path / "screen.svg"
            shot.write_text(app.export_screenshot(), encoding="utf-8")
            return squeeze(svg_rows(shot)[-1])

        assert "sStep" in footer_row() and "Esc/Tab" not in footer_row()
        await pilot.press("colon")
        await settle(pilot)
        assert isinstance(app.focused, Input)
        row = footer_row()
        assert "F11Step" in row and "F10Next" in row and "F5Cont" in row and "F9Break" in row, row
        assert "Esc/Tabforletterkeys" in row and "sStep" not in row, row
        assert all(part.region.right <= SMALL[0] for part in app.main_screen.query("KeysFooter > *"))
        before = app.main_screen.bytecode.current
        await pilot.press("f10")
        await settle(pilot)
        assert app.main_screen.bytecode.current != before and isinstance(app.focused, Input)
        await pilot.press("escape")
        await settle(pilot)
        assert "sStep" in footer_row() and "Esc/Tab" not in footer_row()


async def test_at_80x24_the_footer_shows_t_until_beside_the_stepping_keys(tmp_path) -> None:  # noqa: ANN001
    """Issue 21: at 80 columns the footer was cut before ``t`` (run to the cursor), which lesson 1 asks for. The
    stepping keys come first now, ``t Until`` among them, all on screen; ``t`` sends ``until`` to the cursor's
    instruction (the fake engine then stops at its scenario's next stop, wherever the cursor is)."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        shot = tmp_path / "screen.svg"
        shot.write_text(app.export_screenshot(), encoding="utf-8")
        row = squeeze(svg_rows(shot)[-1])
        assert row.startswith("?HelpqQuitsStepnNexttUntilcContrReturnbBreak"), row
        keys = {k.action: k for k in app.main_screen.query("FooterKey")}
        until = keys["dbg('until')"]
        assert until.region.width > 0 and until.region.right <= SMALL[0]
        assert all(part.region.right <= SMALL[0] for part in app.main_screen.query("KeysFooter > *"))
        app.main_screen.bytecode.action_cursor_to(4)
        await pilot.press("t")
        await settle(pilot)
        log = [strip.text.rstrip() for strip in app.main_screen.console.log_widget.lines]
        assert log[-1] == "> until 4" and app.last_stop.seq > 0, log


async def test_in_the_console_its_cursor_is_steady_and_the_bytecode_cursor_row_stays_marked() -> None:
    """Typing a command that names an instruction (``until 4``, ``b 4``): the console's cursor does not blink, and
    the bytecode pane still marks the row its cursor is on (dimmer than while it has the focus), apart from the
    current instruction's row and the plain rows."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.bytecode
        await pilot.press("down", "down")
        await settle(pilot)

        def background(index: int) -> set[object]:
            line = bytecode.render_line(bytecode.row_of(index) - bytecode.scroll_offset.y)
            return {segment.style.bgcolor for segment in line if segment.style is not None}

        cursor, current = bytecode.cursor, bytecode.current
        plain = next(i for i in range(len(bytecode.code.instructions))
                     if i not in (cursor, current) and i not in bytecode.related)
        focused_cursor = background(cursor)
        await pilot.press("colon")
        await settle(pilot)
        assert isinstance(app.focused, Input) and not app.focused.cursor_blink
        assert bytecode.cursor == cursor != current
        assert background(cursor) != background(plain), "the cursor row looks like any other row"
        assert background(cursor) != background(current) and background(cursor) != focused_cursor


async def test_every_recompile_stop_opens_the_recompile_view_even_from_entries() -> None:
    scenario = counter_recompile_scenario()
    recompile, entry = scenario.stops
    scenario.stops = [replace(entry, seq=1), replace(recompile, seq=2), replace(entry, seq=3),
                      replace(recompile, seq=4), replace(entry, seq=5)]
    app = make_app(scenario)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.main_screen
        for _ in range(2):
            await pilot.press("4")  # the user reads the cache entries ...
            await settle(pilot)
            assert screen.views.active == "tab-entries"
            await pilot.press("c")  # ... and goes on to the next recompile
            await settle(pilot)
            assert app.last_stop.kind is StopKind.RECOMPILE
            assert screen.views.active == "tab-recompile"
            await pilot.press("R")
            await settle(pilot)
            assert app.last_stop.kind is StopKind.ENTRY


async def test_at_80x24_the_recompile_views_code_keeps_whole_names() -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        view = app.main_screen.recompile_view
        assert app.main_screen.views.active == "tab-recompile"
        text = _text(view.content, view.scrollable_content_region.width)
        assert 'torch.compiler.set_stance("eager_on_recompile")' in text, text
        assert "torch._dynamo.config.allow_unspec_int_on_nn_module" in text, text  # the name whole


async def test_the_recompile_view_names_a_stack_argument_and_suggests_capture_scalar_outputs() -> None:
    scenario = counter_recompile_scenario()
    scenario.recompile_record = replace(
        scenario.recompile_record, scalar_break=True,
        stack_args=(StackArg("___stack0", 0, "forward", True, 26, "peak", "h.abs().max().item()"),))
    app = make_app(scenario)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.main_screen.recompile_view
        text = _text(view.content, 200)
        assert "___stack0 is peak in forward: the value of `h.abs().max().item()` (line 26)" in text
        assert "torch._dynamo.config.capture_scalar_outputs = True" in text


@pytest.mark.slow
async def test_the_real_demo_from_the_keyboard_alone_at_80x24() -> None:
    """The bundled demo on the real engine, keys only, at 80x24: a guard's detail, Original scrolled, the full
    log and the Stop view maximised and restored, torch's warning read whole in the Stderr view, both recompile
    stops opening their view (the second from the Entries view) and saying what ``___stack0`` is."""

    from dynadbg.core.model import LeafGuardView
    from dynadbg.core.session import Session
    from dynadbg.demos import demo_path
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.bytecode_view import BytecodeView
    from dynadbg.tui.guard_tree_view import GuardTreeView

    async def until(pilot, condition, timeout: float = 120.0) -> None:  # noqa: ANN001
        await waiting.until(pilot, condition, timeout, poll=lambda: asyncio.sleep(0.01))

    async def tab_to(pilot, test) -> None:  # noqa: ANN001
        for _ in range(12):
            if test(app.focused):
                return
            await pilot.press("tab")
            await pilot.pause()
        raise AssertionError(f"never focused (now {app.focused!r})")

    async def go_on(pilot) -> None:  # noqa: ANN001
        await pilot.press("c")
        await until(pilot, lambda: app.phase in ("stopped", "exited") and not app.engine_busy)

    path = demo_path(None)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(path), []))
    async with app.run_test(size=SMALL) as pilot:
        await until(pilot, lambda: app.phase in ("stopped", "exited"))
        screen = app.main_screen
        assert app.last_stop.kind is StopKind.ENTRY and screen.query_one("#source").display
        # a guard's detail
        tree = screen.query_one(GuardTreeView)
        await until(pilot, lambda: tree.guards is not None, 60)
        await tab_to(pilot, lambda w: w is tree)
        await pilot.press("home")
        for _ in range(40):
            await pilot.press("down")
            node = tree.cursor_node
            if isinstance(node.data, LeafGuardView):
                break
            if node.allow_expand and not node.is_expanded:
                await pilot.press("enter")
        if not tree.cursor_node.is_expanded:
            await pilot.press("enter")
        await pilot.pause()
        assert any(f"id {tree.cursor_node.data.id}" in str(c.label) for c in tree.cursor_node.children)
        # Original, focused by its key and scrolled a page
        await pilot.press("2")
        original = screen.query_one("#orig-bytecode", BytecodeView)
        await until(pilot, lambda: original.code is not None, 30)
        assert app.focused is original
        await pilot.press("pagedown")
        await pilot.pause()
        assert original.scroll_offset.y > 0
        # the full log: maximised and restored
        await tab_to(pilot, lambda w: isinstance(w, RichLog) and w.id == "log")
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.console.log_widget
        await pilot.press("escape")
        await pilot.pause()
        assert screen.maximized is None
        # a long stderr line (as torch's graph-break warnings are; torch says each once per process, so the test
        # writes its own), whole, in the Stderr view
        long_line = "W1130 warning from the program: " + " ".join(f"word{i}" for i in range(40)) + " END"
        print(long_line, file=sys.stderr)
        await pilot.press("8")
        await settle(pilot)
        stderr = screen.query_one("#stderr", RichLog)
        assert app.focused is stderr
        await until(pilot, lambda: "END" in "".join(strip.text for strip in stderr.lines))
        shown = "".join(strip.text for strip in stderr.lines).replace(" ", "")
        assert long_line.replace(" ", "") in shown
        # on to the resume function: its Stop view, maximised and restored
        await go_on(pilot)
        assert app.last_stop.selected_frame.code.name.startswith("torch_dynamo_resume_in_forward")
        await pilot.press("5")
        await settle(pilot)
        assert app.focused.id == "stop-detail"
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is app.focused
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        # the first recompile (scale 1 -> 2) opens its view; no size changed, so no M
        while app.phase == "stopped" and app.last_stop.kind is not StopKind.RECOMPILE:
            await go_on(pilot)
        assert screen.views.active == "tab-recompile" and app.focused.id == "recompile"
        assert not app.check_action("dbg", ("dynamic",))
        await pilot.press("R")
        await until(pilot, lambda: app.phase in ("stopped", "exited") and not app.engine_busy)
        # the user opens the Entries view; the resume function's recompile still opens the Recompile view
        await pilot.press("4")
        await settle(pilot)
        while app.phase == "stopped" and app.last_stop.kind is not StopKind.RECOMPILE:
            await go_on(pilot)
        assert app.last_stop.kind is StopKind.RECOMPILE
        assert screen.views.active == "tab-recompile"
        await until(pilot, lambda: screen.recompile_view.record is not None, 30)
        text = _text(screen.recompile_view.content, 200)
        assert "___stack0 is peak in forward" in text and "capture_scalar_outputs = True" in text
        assert "⟳ torch_dynamo_resume_in_forward_at_26 is about to recompile" in text  # not MLP.torch_dynamo_...
        await pilot.press("q")


NESTED = '''
import torch

def g(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2

def f(x):
    y = x.sin()
    return 3 + g(y)

print(torch.compile(f, backend="eager")(torch.ones(3)))
'''


@pytest.mark.slow
async def test_after_u_the_callers_stack_pane_and_status_line_are_the_callers(tmp_path) -> None:  # noqa: ANN001
    """``u`` from g's entry to f, which waits in its call of g: the stack pane shows the 3 under that call (said
    to be below the pending call), not ``?``; the status line shows f's compile, not g's."""

    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.stack_view import StackView

    script = tmp_path / "nested.py"
    script.write_text(NESTED)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(script), []))
    async with app.run_test(size=(120, 40)) as pilot:
        async def until(condition) -> None:  # noqa: ANN001
            await waiting.until(pilot, condition, 120, poll=lambda: asyncio.sleep(0.01))

        await until(lambda: app.phase == "stopped")
        await pilot.press("c")
        await until(lambda: app.phase == "stopped" and not app.engine_busy and len(app.last_stop.frames) == 2)
        inner_compile = app.last_stop.compile_id
        await pilot.press("u")
        await until(lambda: app.last_stop.selected == 0 and not app.engine_busy)
        screen = app.main_screen
        stack = screen.query_one(StackView)
        text = stack.text
        assert "?" not in text and "3" in text and "below the pending call" in text, text
        status = str(screen.query_one("#status").render())
        caller = app.last_stop.selected_frame
        assert caller.code.name == "f" and f"compile {inner_compile}" not in status, status
        assert "compile 0/0" in status and inner_compile == "1/0", status
        await pilot.press("q")


async def test_the_bytecode_cursor_row_is_marked_in_the_gutter_without_colour() -> None:
    """The cursor's row, away from the current instruction, carries ``›`` in the gutter (read without colour, as a
    screen reader or a monochrome terminal shows it); on the current instruction's row ``▶`` stays."""
    from dynadbg.tui.bytecode_view import CURSOR_MARK

    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.bytecode

        def gutter(index: int) -> str:
            return bytecode.render_line(bytecode.row_of(index) - bytecode.scroll_offset.y).text[:2]

        current = bytecode.current
        assert bytecode.cursor == current and gutter(current)[1] == "▶"
        await pilot.press("down", "down")
        await settle(pilot)
        cursor = bytecode.cursor
        assert cursor != current
        assert gutter(cursor)[1] == CURSOR_MARK and gutter(current)[1] == "▶"
        marks = [gutter(i)[1] for i in range(len(bytecode.code.instructions))
                 if 0 <= bytecode.row_of(i) - bytecode.scroll_offset.y < bytecode.scrollable_content_region.height]
        assert marks.count(CURSOR_MARK) == 1
        await pilot.press("colon")           # typing in the console: the mark stays
        await settle(pilot)
        assert gutter(cursor)[1] == CURSOR_MARK
