"""Pilot tests of the TUI against the fake engine (no torch, fast)."""

from __future__ import annotations

import asyncio
import io
import time
from dataclasses import replace

from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_engine import FakeEngine
from fake_scenarios import (
    Scenario,
    crash_scenario,
    forward_scenario,
    guard_tree_of,
    never_compiled_scenario,
    recompile_scenario,
)
from rich.console import Console
from textual.widgets import Input, TabbedContent

from dynadbg.core.model import StopKind
from dynadbg.tui import actions
from dynadbg.tui.bytecode_view import BytecodeView
from dynadbg.tui.guard_tree_view import CHUNK, GuardTreeView
from dynadbg.tui.help_screen import HelpScreen
from dynadbg.tui.locals_view import LocalsView
from dynadbg.tui.screen import MainScreen
from dynadbg.tui.stack_view import StackView
from dynadbg.tui.status_line import StatusLine

SIZE = (120, 40)


def log_text(app) -> str:  # noqa: ANN001
    """Everything in the console log, as plain text."""
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


def rendered(widget) -> str:  # noqa: ANN001
    """The plain text a pane shows (a `LinesView`'s lines, or a render()-based widget's text)."""
    from dynadbg.tui.lines_view import LinesView

    return widget.text if isinstance(widget, LinesView) else str(widget.render())


async def test_first_stop_renders_every_pane() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.main_screen
        bytecode = screen.query_one("#bytecode", BytecodeView)
        assert bytecode.code is not None and bytecode.code.name == "forward"
        assert len(bytecode.code.instructions) == 32
        assert bytecode.current == 0
        assert bytecode.virtual_size.height == 32
        assert "(empty)" in rendered(screen.query_one(StackView))
        locals_text = rendered(screen.query_one(LocalsView))
        assert "x" in locals_text and "Tensor[4, 4] float32 cpu" in locals_text
        tree = screen.query_one(GuardTreeView)
        assert tree.guards is not None and not tree.loading
        # the recorded tree's top level (`fake_scenarios.forward_guard_tree`), every guard passing
        assert [str(c.label).split("  ")[0] for c in tree.root.children] == [
            "✓ LAMBDA_GUARD", "✓ GLOBAL_STATE", "✓ TORCH_FUNCTION_MODE_STACK", "✓ DEFAULT_DEVICE", "✓ G", "✓ L['n']",
            "✓ L['self']", "✓ L['x']"]
        status = rendered(screen.query_one(StatusLine))
        assert "forward" in status and "compile 0/0" in status and "checked 1st of 2 entries" in status
        assert app.phase == "stopped"


async def test_step_three_times_moves_marker_and_changes_stack() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        stack = app.main_screen.query_one(StackView)
        seen = [rendered(stack)]
        for expected in (1, 2, 3):
            await pilot.press("s")
            await settle(pilot)
            assert bytecode.current == expected
            seen.append(rendered(stack))
        assert app.session.sent == ["set_step()"] * 3
        # RESUME leaves the stack empty; LOAD_GLOBAL pushes NULL + the graph function; LOAD_FAST pushes x
        assert seen[0] == seen[1] == "(empty)"
        # bottom first, TOS last and marked (the `stack` command's order)
        assert seen[2].startswith("    [0] NULL") and seen[2].splitlines()[-1].startswith("TOS [1] <graph __compiled_fn_1 of 0/0>")
        assert seen[3].splitlines()[-1].startswith("TOS [2] Tensor[4, 4] float32 cpu")
        assert "instr 3/32" in rendered(app.main_screen.query_one(StatusLine))


async def test_a_step_shows_the_status_line_in_a_frame_before_the_panes(monkeypatch) -> None:  # noqa: ANN001
    """The status line (where the program is now) reaches the terminal in a frame of its own: each frame written
    is recorded with the status line's instruction and the bytecode pane's marker at that moment."""
    from textual.screen import Screen

    app = make_app()
    frames: list[tuple[str, int | None]] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.main_screen.query_one(StatusLine)
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        refresh = Screen._compositor_refresh

        def recorded(screen: Screen) -> None:
            refresh(screen)
            if screen is app.main_screen:
                frames.append((rendered(status), bytecode.current))

        monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
        for expected in (1, 2, 3):
            frames.clear()
            await pilot.press("s")
            await settle(pilot)
            shown = [(f"instr {expected}/32" in text, current) for text, current in frames]
            first = next(k for k, (new_line, _) in enumerate(shown) if new_line)
            # the first frame with the new instruction still has the old marker: the panes come a frame later
            assert shown[first] == (True, expected - 1), frames
            assert shown[-1] == (True, expected), frames


async def test_stack_pane_and_stack_command_list_slots_in_one_order() -> None:
    import re

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("s")
            await settle(pilot)
        pane = rendered(app.main_screen.query_one(StackView)).splitlines()
        app.submit("stack")
        await settle(pilot)
        listed = [ln for ln in log_text(app).splitlines() if re.match(r"\s+\[\d\]", ln)]
        assert [re.search(r"\[(\d)\]", ln).group(1) for ln in pane] == ["0", "1", "2"]
        assert [re.search(r"\[(\d)\]", ln).group(1) for ln in listed] == ["0", "1", "2"]
        assert pane[-1].startswith("TOS") and listed[-1].endswith("<- TOS")


async def test_entries_view_and_status_line_do_not_number_one_entry_two_ways() -> None:
    """The status line gives the serving entry's compile id and its place in torch's lookup order; the Entries view
    names each entry by compile id (no second numbering), newest first, and marks the serving one."""
    import re

    from rich.console import Console as RichConsole

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = rendered(app.main_screen.query_one(StatusLine))
        assert "compile 0/0" in status and "checked 1st of 2 entries" in status
        await pilot.press("4")
        await settle(pilot)
        console = RichConsole(width=200, record=True, file=io.StringIO())
        console.print(app.main_screen.query_one("#entries").content)
        text = console.export_text()
        serving = [ln for ln in text.splitlines() if ln.startswith("▶")]
        assert len(serving) == 1 and serving[0].startswith("▶ entry 0/0"), text
        assert "  entry 0/1" in text
        assert not re.search(r"\d+\. entry", text)
        # newest first, as the `entries` command lists them (and the lessons say)
        assert text.startswith("newest first") and text.index("entry 0/1") < text.index("entry 0/0"), text


async def test_resume_function_global_and_code_names_are_linked() -> None:
    """``__resume_at_38_2`` (the global the Entries view lists) and ``torch_dynamo_resume_in_forward_at_26`` (its
    code's name, which the status line and the frames show) are the same function: the views say so."""
    import dataclasses

    from rich.console import Console as RichConsole

    from dynadbg.core.model import CompilesData

    scenario = forward_scenario()
    first, second = scenario.compiled.entries
    compiled = dataclasses.replace(scenario.compiled, entries=(dataclasses.replace(first, resume_keys=(0xAB,)),
                                                               second))
    resume_frame = dataclasses.replace(scenario.compiled, key=0xAB, name="torch_dynamo_resume_in_forward_at_26")
    scenario = dataclasses.replace(scenario, compiled=compiled)
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.session.compiles = lambda: CompilesData((compiled, resume_frame))
        await pilot.press("4")
        await settle(pilot)
        console = RichConsole(width=200, record=True, file=io.StringIO())
        console.print(app.main_screen.query_one("#entries").content)
        assert "__resume_at_38_2 (= torch_dynamo_resume_in_forward_at_26)" in console.export_text()
        status = app.main_screen.query_one(StatusLine)
        assert status.aliases == {"torch_dynamo_resume_in_forward_at_26": "__resume_at_38_2"}
        # a stop in that resume function: the status line shows both names
        resumed = app.last_stop
        frame = resumed.selected_frame
        renamed = dataclasses.replace(frame, code=dataclasses.replace(frame.code,
                                                                      name="torch_dynamo_resume_in_forward_at_26"))
        app.main_screen.stop = dataclasses.replace(resumed, frames=tuple(
            renamed if f is frame else f for f in resumed.frames), seq=resumed.seq + 1)
        await pilot.pause()
        assert "torch_dynamo_resume_in_forward_at_26 (= __resume_at_38_2)" in rendered(status)


async def test_changed_locals_are_marked() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(7):  # past STORE_FAST graph_out_0 (index 6)
            await pilot.press("s")
            await settle(pilot)
        text = rendered(app.main_screen.query_one(LocalsView))
        assert "*graph_out_0" in text
        assert " x " in text or " x" in text


async def test_help_lists_every_registry_action() -> None:
    app = make_app(keymap={"step": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-body").query_one("Static")
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(body.content)
        plain = console.export_text()
        for action in actions.ACTIONS:
            assert action.description in plain, action.id
            assert action.id in plain
        assert "x" in plain  # the remapped step key
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_footer_and_palette_come_from_the_registry() -> None:
    from dynadbg.tui.commands import ActionCommands

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show}
        # at an entry stop: every footer action but the recompile-stop choices, which only apply at a recompile stop
        assert {a.id for a in actions.ACTIONS if a.footer and a.when != "recompile"} <= shown
        assert not {a.id for a in actions.ACTIONS if a.when == "recompile"} & shown
        provider = ActionCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()]
        assert len(titles) == len(actions.ACTIONS)
        hits = [hit async for hit in provider.search("breakpoint")]
        assert any("Toggle a breakpoint" in (hit.text or "") for hit in hits)


async def test_q_ends_program_and_exits_within_a_second() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        started = time.monotonic()
        await pilot.press("q")
        exited = False
        for _ in range(1500):
            if app.return_code is not None or not app.is_running:  # `App.exit` was called: the app leaves
                exited = True
                break
            await asyncio.sleep(0.002)  # polls the app's exit
        assert exited and time.monotonic() - started < 1.0
    assert app.session.quit_called == 1
    assert app.return_code == 0


async def test_console_error_goes_to_log_and_changes_nothing() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon")
        assert isinstance(app.focused, Input)
        await pilot.press(*"frobnicate", "enter")
        await settle(pilot)
        assert "> frobnicate" in log_text(app)
        assert "unknown command 'frobnicate'" in log_text(app)
        assert app.main_screen.query_one("#bytecode", BytecodeView).current == 0
        assert app.phase == "stopped"


async def test_letters_type_into_the_console_and_escape_leaves_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", "s", "n", "c", "q", "b")
        await settle(pilot)
        box = app.main_screen.console.input
        assert box.value == "sncqb"
        assert app.session.sent == []
        assert app.is_running
        await pilot.press("escape")
        assert isinstance(app.focused, BytecodeView)
        await pilot.press("s")
        await settle(pilot)
        assert app.session.sent == ["set_step()"]


async def test_console_command_output_and_history() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"p n", "enter")
        await settle(pilot)
        assert "> p n" in log_text(app) and "\n3" in log_text(app)
        await pilot.press("up")
        assert app.main_screen.console.input.value == "p n"


async def test_breakpoint_key_toggles_at_cursor() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        await pilot.press("down", "down", "b")
        await settle(pilot)
        assert app.session.sent == ["set_break(2)"]
        assert bytecode.breakpoints == frozenset({2})
        await pilot.press("f9")
        await settle(pilot)
        assert app.session.sent == ["set_break(2)", "clear_break(2)"]
        assert bytecode.breakpoints == frozenset()
        await pilot.press("f11")  # step: the stop snapshot carries the engine's breakpoints
        await settle(pilot)
        assert bytecode.current == 1


async def test_views_are_filled_from_queries() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        views = app.main_screen.query_one("#views", TabbedContent)
        await pilot.press("2")
        await settle(pilot)
        assert views.active == "tab-orig"
        orig = app.main_screen.query_one("#orig-bytecode", BytecodeView)
        assert orig.display and orig.code is not None and not orig.code.generated
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        assert app.session.calls[-3:] == ["original_code()", "graphs()", "entries()"]
        before = len(app.session.calls)
        await pilot.press("3")  # already filled for this stop: no new query
        await settle(pilot)
        assert len(app.session.calls) == before
        await pilot.press("1")
        assert views.active == "tab-bytecode"


async def test_program_that_raises_shows_traceback_and_stays_open() -> None:
    app = make_app(crash_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.is_running and app.phase == "exited"
        log = log_text(app)
        assert "ValueError: boom" in log and "Traceback" in log
        assert "status 1" in rendered(app.main_screen.query_one(StatusLine))
        assert app.main_screen.query_one("#views", TabbedContent).active == "tab-stop"
        await pilot.press("s")  # nothing to step: ignored
        await settle(pilot)
        assert app.session.sent == []
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 1


async def test_typed_quit_after_the_program_finished_leaves_the_app() -> None:
    app = make_app(crash_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.phase == "exited"
        await pilot.press("colon", "s", "enter")
        await settle(pilot)
        await pilot.press("q", "enter")  # the console keeps the focus
        await settle(pilot)
        assert "the program has finished" in log_text(app)  # `s` is refused: nothing to step
        assert app.return_code == 1, log_text(app)  # `q` is not: the app leaves with the program's status


async def test_when_the_program_ends_an_empty_console_gives_up_the_focus_so_q_leaves() -> None:
    """"press q to leave the debugger" holds as said: the program ended after a typed `c`, and `q` alone leaves
    (in the console it would only type a q)."""
    scenario = forward_scenario()
    scenario.stops = scenario.stops[:1]  # one stop: `c` runs the program to its end
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", "c", "enter")
        await settle(pilot)
        assert app.phase == "exited"
        assert app.focused is not app.main_screen.console.input
        await pilot.press("q")
        await settle(pilot)
        assert app.return_code == 0, log_text(app)


async def test_after_the_program_ends_the_stack_pane_says_nothing_of_the_last_stop() -> None:
    scenario = forward_scenario()
    last = scenario.stops[0]
    frame = replace(last.frames[-1], stack_exact=False)  # its slots are a tracked depth: the pane says so
    scenario.stops = [replace(last, frames=(*last.frames[:-1], frame))]
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        stack = app.main_screen.query_one(StackView)
        assert stack.border_subtitle == "tracked depth"
        await pilot.press("c")
        await settle(pilot)
        assert app.phase == "exited"
        assert not stack.border_subtitle


async def test_program_that_never_compiled_says_so() -> None:
    app = make_app(never_compiled_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        log = log_text(app)
        assert "no frame was compiled by torch.compile" in log
        assert "never stopped in compiled code" in log


def _held_running_app():  # noqa: ANN202
    """An app whose program, continued from its first stop, keeps running until interrupted."""
    scenario = forward_scenario()
    scenario.run_after = frozenset({0})
    return make_app(scenario)


async def test_ctrl_c_interrupts_a_running_program() -> None:
    app = _held_running_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.phase == "running"  # (a quick step is never shown as running: RUNNING_SHOWN_AFTER, 0 here)
        assert "running" in rendered(app.main_screen.query_one(StatusLine))
        await pilot.press("s")  # ignored while running: the UI stays responsive and sends nothing
        await settle(pilot)
        assert app.session.sent == ["set_continue()"]
        await pilot.press("ctrl+c")
        for _ in range(20):
            await settle(pilot)
            if app.phase == "stopped":
                break
        assert app.session.interrupted == 1
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.INTERRUPT


async def test_a_long_compile_is_named_on_the_status_line_with_its_time(monkeypatch) -> None:
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.bridge import Bridge

    monkeypatch.setattr(DebuggerApp, "ELAPSED_SHOWN_AFTER", 3.0)
    app = _held_running_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        app.post_message(Bridge.Running("compiling forward (model.py:12)"))  # what the engine says as torch compiles
        await pilot.pause()
        status = app.main_screen.query_one(StatusLine)
        assert "▶ compiling forward (model.py:12)…" in rendered(status)
        app._running_since -= 14  # fourteen seconds into that compile
        app._tick_elapsed()
        await pilot.pause()
        assert "▶ compiling forward (model.py:12), 14 s…" in rendered(status)
        app.post_message(Bridge.Running("running"))  # the compile returned
        await pilot.pause()
        app._tick_elapsed()
        await pilot.pause()
        assert "▶ running…" in rendered(status) and " s…" not in rendered(status)
        await pilot.press("ctrl+c")
        await settle(pilot)


async def test_ctrl_c_while_stopped_does_not_interrupt() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert app.session.interrupted == 0
        assert app.is_running


async def test_up_and_down_select_frames() -> None:
    from dataclasses import replace

    from fake_scenarios import obj

    scenario = forward_scenario()
    first = scenario.stops[0]
    outer = replace(first.frame, index=5, locals=(("caller_only", obj("int", "41")),))
    scenario.stops[0] = replace(first, frames=(outer, first.frame))
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        assert bytecode.current == 0
        fetched = app.session.calls.count("guard_trees()")
        await pilot.press("u")
        await settle(pilot)
        assert app.session.sent[-1] == "select_frame(0)"
        assert bytecode.current == 5
        assert "frame 1 of 2" in rendered(app.main_screen.query_one(StatusLine))
        # the selected frame drives the locals and the guard tree too
        assert "caller_only" in rendered(app.main_screen.query_one(LocalsView))
        assert app.session.calls.count("guard_trees()") == fetched + 1
        await pilot.press("u")  # engine error: nothing changes
        await settle(pilot)
        assert bytecode.current == 5 and "outermost" in log_text(app)
        await pilot.press("d")
        await settle(pilot)
        assert bytecode.current == 0


async def test_small_terminals_do_not_crash() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.main_screen
        assert screen.has_class("-short") and screen.has_class("-narrow")
        source = screen.query_one("#source")
        assert source.display and source.region.height == 5  # the current line and its neighbours stay in sight
        assert screen.query_one("#bytecode").region.height >= 8
        assert screen.query_one(StackView).region.width > 10
        await pilot.press("s")
        await settle(pilot)
        await pilot.resize_terminal(40, 12)
        await settle(pilot)
        await pilot.press("s", "question_mark")
        await settle(pilot)
        await pilot.press("escape")
        await pilot.resize_terminal(20, 5)
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        app.export_screenshot()
    assert app.return_code is None or app.return_code == 0


async def test_40x12_from_the_start() -> None:
    app = make_app()
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await pilot.press("s", "s")
        await settle(pilot)
        assert app.main_screen.query_one("#bytecode", BytecodeView).current == 2
        app.export_screenshot()


async def test_guard_tree_of_20000_leaves_expands_lazily() -> None:
    tree = guard_tree_of(20_000, fail_at=321)
    assert tree.leaf_count == 20_001
    scenario = forward_scenario()
    scenario.guard_tree = tree
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        root = view.root
        # first paint: the root's first chunk, the failing module promoted from beyond it, a "more" node
        assert len(root.children) == CHUNK + 2
        assert "more" in str(root.children[-1].label)
        failing = root.children[-2]
        assert "_modules['321']" in str(failing.label) and failing.is_expanded
        assert "1 failing" in str(root.label)
        assert view.cursor_node is not None and "✗" in str(view.cursor_node.label)
        assert view.last_line < 2 * CHUNK
        # other modules stay collapsed, with no child nodes built
        module = root.children[1]
        assert not module.is_expanded and len(module.children) == 0
        module.expand()
        await pilot.pause()
        assert len(module.children) == len(module.data.leaves) + len(module.data.children)
        more = root.children[-1]
        more.expand()
        await pilot.pause()
        assert len(root.children) == 2 * CHUNK + 2
        assert sum("more" in str(c.label) for c in root.children) == 1


async def test_failing_guard_path_is_expanded() -> None:
    app = make_app(forward_scenario(n_fails=True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.pause()
        view = app.main_screen.query_one(GuardTreeView)
        n_node = next(c for c in view.root.children if "L['n']" in str(c.label))
        assert n_node.is_expanded
        assert view.cursor_node is not None and "EQUALS_MATCH" in str(view.cursor_node.label)
        assert "L['n'] == 3" in str(view.cursor_node.label)
        assert "y = x * self.factor + n" in str(view.cursor_node.label)  # the user line torch records for it


async def test_guard_tree_loading_indicator() -> None:
    scenario = forward_scenario()
    scenario.guard_delay = 1.0
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        while app.phase != "stopped":
            await pilot.pause(0.01)
        await pilot.pause()
        view = app.main_screen.query_one(GuardTreeView)
        assert view.loading
        await settle(pilot)
        assert not view.loading and view.guards is not None


async def test_steps_keep_the_guard_tree() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        first = view.guards
        calls = []
        original = app.session.guard_trees
        app.session.guard_trees = lambda: calls.append(1) or original()
        await pilot.press("s")
        await settle(pilot)
        assert calls == [] and view.guards is first


async def test_keymap_remaps_by_binding_id(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "keys.json"
    path.write_text('{"step": "x", "nope": "y", "next": 3}')
    keymap, warnings = actions.load_keymap(path)
    assert keymap == {"step": "x"}
    assert len(warnings) == 2
    app = make_app(keymap=keymap, keymap_warnings=warnings)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "unknown action 'nope'" in log_text(app)
        await pilot.press("x")
        await settle(pilot)
        assert app.session.sent == ["set_step()"]
        await pilot.press("s")  # no longer bound
        await settle(pilot)
        assert app.session.sent == ["set_step()"]


async def test_a_stepping_key_goes_to_a_panes_own_binding_of_it_first() -> None:
    """A stepping key runs at once from a pane (`DebuggerApp.on_event`), but a pane that binds the key itself
    keeps it, as Textual's order has it: with ``step`` also on Enter, Enter steps in the bytecode pane and opens a
    node in the guard tree (Textual's Tree binds Enter)."""
    app = make_app(keymap={"step": "s,enter"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main_screen.bytecode.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.session.sent == ["set_step()"]
        tree = app.main_screen.query_one(GuardTreeView)
        tree.focus()
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert app.session.sent == ["set_step()"]  # the tree's Enter, not a step
        await pilot.press("s")
        await settle(pilot)
        assert app.session.sent == ["set_step()", "set_step()"]


def test_keymap_from_environment(tmp_path) -> None:  # noqa: ANN001
    assert actions.load_keymap(environ={}) == ({}, [])
    assert actions.load_keymap(environ={"DYNADBG_KEYMAP": '{"continue": "f8"}'}) == ({"continue": "f8"}, [])
    keymap, warnings = actions.load_keymap(environ={"DYNADBG_KEYMAP": "{oops"})
    assert keymap == {} and "not valid JSON" in warnings[0]
    keymap, warnings = actions.load_keymap(environ={"DYNADBG_KEYMAP": str(tmp_path / "missing.json")})
    assert keymap == {} and "cannot read" in warnings[0]


def test_registry_is_consistent() -> None:
    ids = [a.id for a in actions.ACTIONS]
    assert len(ids) == len(set(ids))
    keys = [k for a in actions.ACTIONS for k in a.keys.split(",")]
    assert len(keys) == len(set(keys)), "a key is bound to two actions"
    for key in ("s", "n", "r", "c", "b", "u", "d", "q", "question_mark", "f5", "f9", "f10", "f11", "ctrl+c"):
        assert key in keys
    assert len(actions.bindings()) == len(actions.ACTIONS)
    assert actions.display_keys("s,f11") == "s / F11"
    assert actions.display_keys("ctrl+c") == "Ctrl+C"


async def test_bridge_buffers_until_attached() -> None:
    from dynadbg.tui.bridge import Bridge

    bridge = Bridge()
    scenario = forward_scenario()
    session = FakeEngine(bridge, scenario)
    session.start_callable(None)  # before any app exists

    class Sink:
        def __init__(self) -> None:
            self.messages = []

        def post_message(self, message) -> bool:  # noqa: ANN001
            self.messages.append(message)
            return True

    sink = Sink()
    bridge.attach(sink)
    kinds = [type(m).__name__ for m in sink.messages]
    assert kinds == ["Info", "Running", "Stopped"]
    bridge.on_message("later")
    assert type(sink.messages[-1]).__name__ == "Info"


async def test_scenario_without_guard_tree() -> None:
    scenario = Scenario(forward_scenario().stops[:2])
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        assert view.guards is None and "no guard tree" in str(view.root.label)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert app.phase == "exited"
        assert "status 0" in rendered(app.main_screen.query_one(StatusLine))


async def test_program_output_goes_to_the_log() -> None:
    scenario = forward_scenario()
    scenario.prints = ("hello from the program", "second line")
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "hello from the program\nsecond line" in log_text(app)


async def test_view_query_error_shows_in_the_view() -> None:
    scenario = forward_scenario()
    scenario.graphs = ()
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        view = app.main_screen.query_one("#graph")
        assert "no FX graph was captured" in str(view.content)
        assert "no FX graph was captured" in log_text(app)


def test_run_tui_returns_the_program_exit_status(monkeypatch) -> None:  # noqa: ANN001
    """`run_tui` builds the Session with the app's bridge, starts the program, and returns its status."""
    import dynadbg.core.session as session_module
    from dynadbg.tui.app import DebuggerApp, run_tui

    created = {}

    def fake_session(listener, *, break_on):  # noqa: ANN001, ANN202
        created["break_on"] = set(break_on)
        return FakeEngine(listener, crash_scenario(), break_on=break_on)

    monkeypatch.setattr(session_module, "Session", fake_session)
    monkeypatch.setenv("DYNADBG_KEYMAP", '{"quit": "x"}')
    real_run = DebuggerApp.run

    async def leave(pilot) -> None:  # noqa: ANN001
        await settle(pilot)
        assert pilot.app.keymap == {"quit": "x"}
        await pilot.press("x")

    monkeypatch.setattr(DebuggerApp, "run",
                        lambda self, **kw: real_run(self, headless=True, size=SIZE, auto_pilot=leave))
    assert run_tui(lambda session: session.start_callable(None), break_on={"entry", "compile"}) == 1
    assert created["break_on"] == {"entry", "compile"}


async def test_recompile_stop_shows_its_report() -> None:
    app = make_app(recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        views = app.main_screen.query_one("#views", TabbedContent)
        await pilot.press("c")
        await settle(pilot)
        assert app.last_stop.kind is StopKind.RECOMPILE
        assert views.active == "tab-recompile"  # a recompile stop opens the Recompile view
        detail = app.main_screen.query_one("#recompile")
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(detail.content)
        assert "L['n'] == 3" in console.export_text()
        assert "recompile" in rendered(app.main_screen.query_one(StatusLine))
        await pilot.press("c")
        await settle(pilot)
        assert app.last_stop.kind is StopKind.ENTRY and views.active == "tab-bytecode"
        assert "compile 0/1" in rendered(app.main_screen.query_one(StatusLine))


async def test_ctrl_q_ends_the_program_cleanly() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await settle(pilot)
    assert app.session.quit_called == 1


async def test_collections_skip_the_paused_programs_objects_until_it_runs_on() -> None:
    """While stopped or stepping, the objects alive at the stop sit in the permanent generation (a full collection in
    a torch program takes half a second: it stalled a step); once the program runs on, they are given back."""
    import gc

    scenario = forward_scenario()
    scenario.run_after = frozenset({1})
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert gc.get_freeze_count() > 0
        await pilot.press("s")
        await settle(pilot)
        assert gc.get_freeze_count() > 0  # a quick step keeps them there
        await pilot.press("c")  # held running until interrupted
        await settle(pilot)
        assert app.phase == "running" and gc.get_freeze_count() == 0
        await pilot.press("q")
        await settle(pilot)
    assert gc.get_freeze_count() == 0


async def test_console_commands_show_their_effect_without_the_app_reading_them() -> None:
    """``b 3`` / ``cl 3`` typed in the console: the gutter mark comes from the stop the engine rebuilt."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        await pilot.press("colon", *"b 3", "enter")
        await settle(pilot)
        assert bytecode.breakpoints == frozenset({3})
        assert "set_break(3, None)" in app.session.sent  # the parser called the typed method
        await pilot.press(*"cl 3", "enter")
        await settle(pilot)
        assert bytecode.breakpoints == frozenset()
        await pilot.press(*"u", "enter")
        await settle(pilot)
        assert "outermost" in log_text(app) and bytecode.current == 0


def test_an_actions_command_line_is_what_its_key_counts_as() -> None:
    assert actions.command_line("eager") == "eager" and actions.command_line("view_graph") == "graph"
    assert actions.command_line("until", 12) == "until 12"
    assert actions.command_line("explain") == "explain" and actions.command_line("explain", 7) == "explain 7"
    assert actions.command_line("help") is None           # the UI's own: no command
    assert actions.command_line("edit", 3) is None        # its dialog makes the command (`Action.asks`)
    assert actions.command_line("drop") is None
    assert actions.command_line("trace_break", 4) is None  # `trace steps …`: the key picks the compile itself
    # at a trace stop `why` answers from Dynamo's trace (the Trace view shows it), not what key 7's view shows
    assert actions.command_line("view_recompile", at_trace=True) is None
    assert actions.command_line("continue", at_trace=True) == "c"


async def test_keys_post_the_command_line_they_send() -> None:
    """A front end (`dynadbg learn`) hears each key as the command it sends: ``3`` as ``graph``, ``X`` as
    ``explain IDX`` (not when ``X`` hides the pane again), ``s`` as ``s``."""
    app = make_app()
    heard: list[tuple[str, str, str | None]] = []
    post = app.post_message

    def record(message):  # noqa: ANN001, ANN202
        if isinstance(message, app.ActionDone):
            heard.append(("done", message.action_id, message.command))
        elif isinstance(message, app.ResumeSent):
            heard.append(("resume", message.what, message.command))
        return post(message)

    app.post_message = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cursor = app.main_screen.bytecode.cursor_instruction.index
        for key in ("3", "X", "X", "s"):
            await pilot.press(key)
            await settle(pilot)
    assert heard == [("done", "view_graph", "graph"), ("done", "explain", f"explain {cursor}"),
                     ("resume", "step", "s")]


async def test_whatif_key_logs_every_entry_verdict() -> None:
    app = make_app(forward_scenario(n_fails=True))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        log = log_text(app)
        # the same text typing `whatif` prints
        assert "> whatif" in log and "entry 0/0: FAIL (1 failing guard of 10)" in log
        assert "g5 EQUALS_MATCH   L['n'] == 3" in log
        app.submit("whatif")
        await settle(pilot)
        by_key, typed = log_text(app).split("> whatif")[1:3]
        assert by_key.strip() == typed.strip()



async def test_q_typed_in_the_console_ends_the_program_and_the_app() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("colon", "q", "enter")
        for _ in range(1000):
            await pilot.pause()
            if not app.is_running:
                break
        assert not app.is_running
    assert app.session.quit_called >= 1


async def test_stderr_goes_to_its_own_view_with_a_count_not_to_the_console() -> None:
    """torch's warning lines (the program's stderr) land in the Stderr view (key 8) and the status line counts
    them; the console keeps the debugger's lines and the program's stdout."""
    import sys

    from textual.widgets import RichLog

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        print("W1130 12:00:00.000 torch/_dynamo/convert_frame.py graph break", file=sys.stderr)
        print("Failed to initialize NumPy", file=sys.stderr)
        print("result 42")
        await settle(pilot)
        assert "graph break" not in log_text(app) and "NumPy" not in log_text(app)
        assert "result 42" in log_text(app)
        assert "stderr: 2 lines (view 8)" in rendered(app.main_screen.query_one(StatusLine))
        await pilot.press("8")
        await settle(pilot)
        view = app.main_screen.query_one("#stderr", RichLog)
        assert app.main_screen.views.active == "tab-stderr" and app.focused is view
        text = "\n".join(strip.text for strip in view.lines)
        assert "W1130" in text and "Failed to initialize NumPy" in text


async def test_stop_view_explains_the_graph_break_at_a_resume_function_entry() -> None:
    """Stopped at the entry of a resume function (no ``--break-on graph-break``): the Stop view says which graph
    break made it, where it resumes the original code and what was handed over (`Stop.graph_break`, as line mode
    prints it)."""
    import dataclasses

    from rich.console import Console as RichConsole

    from dynadbg.core.facts import parse_break_reason
    from dynadbg.core.model import BreakContext, GraphBreakView, HandedOver, ResumePoint

    name = "torch_dynamo_resume_in_forward_at_26"
    reason = "Unsupported Tensor.item() call\n  Explanation: Dynamo does not trace it"
    brk = GraphBreakView("0/0", reason, "prog.py", 26, "    k = x.sum().item()", ("__resume_at_38_2",),
                         False, *parse_break_reason(reason))
    scenario = forward_scenario()
    frame = scenario.stops[0].frame
    assert frame is not None
    context = BreakContext(name, "1/0", resumes=ResumePoint("forward", "prog.py", 15, 38, "STORE_FAST", "k", 26),
                           brk=brk, break_compile_id="0/0", break_frame="forward",
                           carried=tuple(HandedOver(n, v) for n, v in frame.locals), globals=("__resume_at_38_2",))
    stops = tuple(dataclasses.replace(st, graph_break=context, frames=tuple(dataclasses.replace(
        f, code=dataclasses.replace(f.code, name=name, is_resume=True)) for f in st.frames)) for st in scenario.stops)
    app = make_app(dataclasses.replace(scenario, stops=stops))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        console = RichConsole(width=200, record=True, file=io.StringIO())
        console.print(app.main_screen.query_one("#stop-detail").content)
        text = console.export_text()
        assert "graph break" in text
        assert f"resume function {name} (compile 1/0) continues forward (prog.py:15) at offset 38 (STORE_FAST k, " \
               "line 26)" in text
        assert "graph break in forward during compile 0/0, at prog.py:26" in text and "k = x.sum().item()" in text
        assert "reason: Unsupported Tensor.item() call" in text and "Explanation: Dynamo does not trace it" in text
        assert "locals carried over:" in text and "self = Scale train mode" in text


async def test_the_source_pane_reads_its_file_through_the_engine(monkeypatch) -> None:  # noqa: ANN001
    """The source pane asks `Engine.source(whole_file=True)` for a file it has not shown (read on the program's
    thread, not the UI's), once per file, and shows the stop's line in it."""
    from pathlib import Path

    from fake_scenarios import PROGRAM

    from dynadbg.tui.source_view import SourceView

    asked: list[bool] = []
    real = FakeEngine.source

    def source(self, whole_file: bool = False):  # noqa: ANN001, ANN202
        asked.append(whole_file)
        return real(self, whole_file)

    monkeypatch.setattr(FakeEngine, "source", source)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(SourceView)
        assert asked == [True]
        assert view.filename == PROGRAM and view.virtual_size.height == len(Path(PROGRAM).read_text().splitlines())
        assert view.lineno == app.last_stop.frame.lineno
        await pilot.press("s")
        await settle(pilot)
        assert asked == [True]  # the same file: not asked again


async def test_a_step_outside_dynamos_tracing_does_not_redraw_the_hidden_trace_view() -> None:
    """Each step away from a trace stop used to put the Trace view's placeholder up again, and a `Static` update
    lays the whole screen out anew (the largest share of a step's repaint on a big model): the view is left alone
    while there is nothing new to show."""
    from textual.widgets import Static

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        body = app.main_screen.trace_view.query_one(Static)
        updates = []
        original = body.update
        body.update = lambda *a, **k: (updates.append(a), original(*a, **k))  # type: ignore[method-assign]
        for expected in (1, 2, 3):
            await pilot.press("s")
            await settle(pilot)
            assert app.main_screen.bytecode.current == expected
        assert updates == []


def test_the_stderr_view_shows_torchs_log_prefix_once_above_the_lines_of_one_message() -> None:
    """At 80 columns torch's ``W1203 13:46:16.395000 7702 torch/...py:1759] [0/0]`` prefix took most of each row
    and the message's lines alternated with it; the view shows it dimmed once per run of lines that share it
    (what was written is kept as it came: `text`)."""
    from dynadbg.tui.stderr_view import StderrView

    prefix = "W1203 13:46:16.395000 7702 torch/_dynamo/variables/tensor.py:1759] [0/0]"
    written = f"{prefix} Graph break from `Tensor.item()`\n{prefix}     capture_scalar_outputs = True\nplain line\n" \
              f"{prefix} again"
    view = StderrView()
    shown = view._shown(written)  # noqa: SLF001 - the display transform alone, no app needed
    assert shown.plain.splitlines() == [prefix, "  Graph break from `Tensor.item()`", "      capture_scalar_outputs = True",
                                        "plain line", prefix, "  again"]
    assert shown.spans and shown.spans[0].style == "dim"


def test_rows_cut_at_a_panes_right_edge_end_in_an_ellipsis_and_a_tensor_check_leads_with_its_sizes() -> None:
    from rich.segment import Segment
    from textual.strip import Strip

    from dynadbg.core.format.guards import short_leaf_code
    from dynadbg.tui.lines_view import marked_cut

    cut = marked_cut(Strip([Segment("LOAD_GLOBAL __compiled_fn_2")]).crop(0, 12), 12)
    assert cut.text == "LOAD_GLOBAL…" and cut.cell_length == 12
    code = ("check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
            "torch.float32, device=None, requires_grad=False, size=[2, 4], stride=[4, 1])")
    assert short_leaf_code(code) == "check_tensor(L['x'], size=[2, 4], stride=[4, 1], float32, …)"
    assert "requires_grad=True" in short_leaf_code(code.replace("requires_grad=False", "requires_grad=True"))
    assert short_leaf_code("___check_type_id(L['x'], 1402), type=<class 'int'>") == (
        "type=int  ___check_type_id(L['x'], …)")
    assert short_leaf_code("___check_type_id(L['m'], 77), type=<class 'torch.nn.modules.linear.Linear'>") == (
        "type=Linear  ___check_type_id(L['m'], …)")


async def test_at_80_columns_a_stop_in_a_resume_function_keeps_its_compile_id() -> None:
    """A resume function's long code name at 80 columns: the status line keeps the compile id (the stop's own data),
    cutting the name in the middle (both ends show) rather than dropping the compile id."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        stop = app.last_stop
        frame = stop.selected_frame
        name = "torch_dynamo_resume_in_normalise_at_8"
        renamed = replace(frame, code=replace(frame.code, name=name, is_resume=True))
        status = app.main_screen.query_one(StatusLine)
        status.stderr_lines = 12
        app.main_screen.stop = replace(stop, frames=tuple(renamed if f is frame else f for f in stop.frames),
                                       compile_id="1/0", seq=stop.seq + 1)
        await pilot.pause()
        text = rendered(status)
        assert "compile 1/0" in text and "instr " in text and "stderr 12" in text, text
        assert "torch_dyn" in text and text.split(" · ")[0].endswith("at_8"), text
        assert len(text) <= 80, text
