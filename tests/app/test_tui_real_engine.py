"""The TUI on the real engine (`dynadbg.core.session.Session`) and small real programs: the contract, end to end.

Slow (they import torch and compile); the fast behaviour tests use the fake engine (`test_tui_app.py`).
"""

from __future__ import annotations

import asyncio

import textwrap
import time

import pytest
from fake_app import no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from forkrun import python
from waiting import until

pytestmark = pytest.mark.slow

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

CRASH = textwrap.dedent(
    """
    import torch

    def f(x):
        return x + 1

    torch.compile(f, backend="eager")(torch.ones(2))
    raise ValueError("boom after compile")
    """
)


async def _until(pilot, condition, timeout: float = 120.0) -> None:  # noqa: ANN001
    await until(pilot, condition, timeout, poll=lambda: asyncio.sleep(0.01))  # fails the test when it never holds


def _app(path):  # noqa: ANN001, ANN202
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    return DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(path), []))


def _log(app) -> str:  # noqa: ANN001
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


def _rendered(renderable) -> str:  # noqa: ANN001
    """A widget's Rich content as the text a reader sees (``str()`` of a Group is its repr, not its text)."""
    import io

    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_real_program_stops_steps_and_runs_to_the_end(tmp_path) -> None:  # noqa: ANN001
    from dynadbg.core.model import StopKind
    from dynadbg.tui.bytecode_view import BytecodeView
    from dynadbg.tui.guard_tree_view import GuardTreeView

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.ENTRY
        bytecode = app.main_screen.query_one("#bytecode", BytecodeView)
        assert bytecode.code is not None and bytecode.code.generated
        first = bytecode.current
        await _until(pilot, lambda: app.main_screen.query_one(GuardTreeView).guards is not None, 60)
        tree = app.main_screen.query_one(GuardTreeView).guards
        assert tree is not None and tree.leaf_count > 0
        await pilot.press("s")
        await _until(pilot, lambda: app.phase == "stopped" and app.last_stop.kind is StopKind.STEP)
        assert bytecode.current != first
        await pilot.press("2")
        await _until(pilot, lambda: app.main_screen.query_one("#orig-bytecode", BytecodeView).code is not None)
        orig = app.main_screen.query_one("#orig-bytecode", BytecodeView).code
        assert orig is not None and not orig.generated
        await pilot.press("1", "c")
        await _until(pilot, lambda: app.phase == "exited")
        assert app.exit_result is not None and app.exit_result.status == 0
        assert "result 9.0" in _log(app)
        await pilot.press("q")
    assert app.return_code == 0


async def test_real_program_quit_while_stopped(tmp_path) -> None:  # noqa: ANN001
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped"
        started = time.monotonic()
        await pilot.press("q")
        await _until(pilot, lambda: not app.is_running, 5)
        assert time.monotonic() - started < 1.5
    result = app.session.wait(5)
    assert result is not None and result.quit


async def test_app_gone_without_quit_ends_the_paused_program(tmp_path) -> None:  # noqa: ANN001
    """An app that goes away while the program is paused (an error in the UI, a test's end) ends the program:
    otherwise it waits for a command forever with torch's debugger callback installed, and every later compile in
    the process would stop in a session nobody drives."""
    from dynadbg.core import compat

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped"
    result = app.session.wait(10)
    assert result is not None and result.quit
    assert compat.eval_frame_c.get_bytecode_debugger_callback() is None


async def test_real_program_that_raises_stays_open(tmp_path) -> None:  # noqa: ANN001
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        # the entry stop of f first, then the exception at top level ends the script
        while app.phase == "stopped":
            await pilot.press("c")
            await _until(pilot, lambda: app.phase != "running" and not app.awaiting_resume)
        assert app.phase == "exited" and app.exit_result.status == 1
        assert "boom after compile" in _log(app)
        assert app.is_running
        await pilot.press("q")
    assert app.return_code == 1


RECOMPILES = textwrap.dedent(
    """
    import torch

    def f(x, n):
        y = x * n
        return y + 1

    cf = torch.compile(f, backend="eager")
    for n in (2, 3):
        print("result", float(cf(torch.ones(3), n).sum()))
    """
)


async def test_real_edit_dialog_previews_on_the_program_thread_and_applies(tmp_path) -> None:  # noqa: ANN001
    """The edit dialog's preview comes from the real `Session.preview_edit` (run on the program's thread); Enter
    installs the edit with `Session.apply_edit` and the Diff view shows it."""
    from dynadbg.tui.diff_view import DiffView
    from dynadbg.tui.edit_dialog import EditDialog

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped"
        await pilot.press("i")
        await _until(pilot, lambda: isinstance(app.screen, EditDialog), 10)
        dialog = app.screen
        await pilot.press(*"NOP")
        await _until(pilot, lambda: dialog.previewed == f"{dialog.instr.index} NOP", 30)
        preview = str(dialog.query_one("#edit-preview").content)
        assert preview  # rendered; the exact rows depend on the Python version
        await pilot.press("enter")
        await _until(pilot, lambda: not isinstance(app.screen, EditDialog), 30)
        assert "installed" in _log(app)
        await pilot.press("6")
        await _until(pilot, lambda: "NOP" in app.main_screen.query_one(DiffView).text, 30)
        assert "+" in app.main_screen.query_one(DiffView).text
        await pilot.press("q")


async def test_real_recompile_stop_shows_the_record_and_eager_resumes(tmp_path) -> None:  # noqa: ANN001
    from dynadbg.core.model import StopKind
    from dynadbg.core.recompile import RecompileRecord

    script = tmp_path / "prog.py"
    script.write_text(RECOMPILES)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        while app.phase == "stopped" and app.last_stop.kind is not StopKind.RECOMPILE:
            await pilot.press("c")
            await _until(pilot, lambda: app.phase != "running" and not app.awaiting_resume)
        assert app.last_stop.kind is StopKind.RECOMPILE
        view = app.main_screen.recompile_view
        await _until(pilot, lambda: view.record is not None, 30)
        assert isinstance(view.record, RecompileRecord)
        assert any(leaf.source == "L['n']" for v in view.record.entries for leaf in v.failing)
        assert app.main_screen.views.active == "tab-recompile"
        await pilot.press("E")
        await _until(pilot, lambda: app.phase == "exited", 60)
        log = _log(app)
        assert "> eager" in log and 'set_stance("eager_on_recompile")' in log
        assert "result 9.0" in log and "result 12.0" in log
        await pilot.press("q")


def test_screenshot_script_makes_every_svg(tmp_path) -> None:  # noqa: ANN001
    """``python screenshots/make_screenshots.py`` drives the real demo to every screenshot and exits cleanly."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "screenshots" / "make_screenshots.py"
    proc = python([str(script), "--out", str(tmp_path), "--timeout", "120"], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from svg_text import squeeze, svg_rows

    # what each screenshot must show a reader of the README (whitespace-free: Textual splits runs of cells)
    shows = {
        "main-mid-step": ["⏸ step forward", "value stack", "TOS [3]", "guards", "all pass", "def forward"],
        "history": ["HISTORY 2/4", "recorded: history 2/4"],
        "guard-tree-expanded": ["EQUALS_MATCH", "L['scale'] == 1", "expected 1, actual 1"],
        "help": ["dynadbg help", "Step into", "Choose failing guards to drop"],
        "teach-roles-explain": ["call graph __compiled_fn", "explain", "Graph call"],
        "teach-provenance": ["the graph-break instruction, run eagerly: .item()", "Graph break"],
        "recompile": ["about to recompile", "EQUALS_MATCH", "expected 1", "actual 2", "scale: 1 → 2"],
        "edit-dialog": ["edit row 22 of forward", "LOAD_CONST 3", "✓ valid"],
        "diff": ["1 removed, 1 added", "-   22       LOAD_FAST scale", "+        22  LOAD_CONST 3"],
    }
    for name, wanted in shows.items():
        screen = squeeze("\n".join(svg_rows(tmp_path / f"{name}.svg")))
        missing = [w for w in wanted if squeeze(w) not in screen]
        assert not missing, f"{name}.svg does not show {missing}"


async def test_the_compiled_graph_on_the_stack_is_labelled_as_the_graph(tmp_path) -> None:  # noqa: ANN001
    """After ``LOAD_GLOBAL __compiled_fn_…`` the stack pane names the graph and its compile id, not
    ``<function forward at …>`` (the FX module's method, which reads as the user's own function)."""
    from dynadbg.core.model import StopKind
    from dynadbg.tui.stack_view import StackView

    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        stack = app.main_screen.query_one(StackView)
        for _ in range(8):
            if "__compiled_fn" in stack.text:
                break
            await pilot.press("s")
            await _until(pilot, lambda: app.phase == "stopped" and app.last_stop.kind is StopKind.STEP)
        import re

        # the counters are per process: other tests may have compiled before
        assert re.search(r"<graph __compiled_fn_\d+ of \d+/0>", stack.text), stack.text
        assert f"of {app.last_stop.compile_id}>" in stack.text
        assert "<function" not in stack.text
        await pilot.press("q")


async def test_the_demo_from_the_keyboard_at_80x24() -> None:
    """The bundled demo on the real engine, keys only: a guard's detail, Original scrolled, the log maximised and
    restored, on to the resume function whose Stop view explains the graph break; torch's stderr kept out of the
    console."""
    from textual.widgets import RichLog

    from dynadbg.core.model import LeafGuardView, StopKind
    from dynadbg.core.session import Session
    from dynadbg.demos import demo_path
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.bytecode_view import BytecodeView
    from dynadbg.tui.guard_tree_view import GuardTreeView

    path = demo_path(None)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(path), []))
    async with app.run_test(size=(80, 24)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        screen = app.main_screen
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.ENTRY
        tree = screen.query_one(GuardTreeView)
        await _until(pilot, lambda: tree.guards is not None, 60)
        for _ in range(8):
            if app.focused is tree:
                break
            await pilot.press("tab")
        assert app.focused is tree
        await pilot.press("home")
        for _ in range(40):
            await pilot.press("down")
            node = tree.cursor_node
            if isinstance(node.data, LeafGuardView):
                break
            if node.allow_expand and not node.is_expanded:
                await pilot.press("enter")
        assert isinstance(tree.cursor_node.data, LeafGuardView)
        if not tree.cursor_node.is_expanded:
            await pilot.press("enter")
        await pilot.pause()
        assert any(f"id {tree.cursor_node.data.id}" in str(c.label) for c in tree.cursor_node.children)
        await pilot.press("2")
        await _until(pilot, lambda: screen.query_one("#orig-bytecode", BytecodeView).code is not None, 30)
        original = screen.query_one("#orig-bytecode", BytecodeView)
        assert app.focused is original
        await pilot.press("pagedown")
        await pilot.pause()
        assert original.scroll_offset.y > 0
        for _ in range(8):
            if isinstance(app.focused, RichLog) and app.focused.id == "log":
                break
            await pilot.press("tab")
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.console.log_widget
        await pilot.press("escape")
        await pilot.pause()
        assert screen.maximized is None
        log = "\n".join(strip.text for strip in screen.console.log_widget.lines)
        assert "W1" not in log and "NumPy" not in log
        # on to the resume function after the graph break
        for _ in range(4):
            await pilot.press("c")
            await _until(pilot, lambda: app.phase in ("stopped", "exited") and not app.engine_busy)
            if app.phase != "stopped" or app.last_stop.selected_frame.code.name.startswith("torch_dynamo_resume"):
                break
        assert app.phase == "stopped"
        await pilot.press("5")
        await _until(pilot, lambda: "continues forward" in _rendered(screen.stop_detail.content), 30)
        text = _rendered(screen.stop_detail.content)
        assert "graph break" in text and "continues forward" in text, text
        await pilot.press("q")
        await pilot.pause(0.2)


async def test_a_graph_break_with_no_resume_function_stops_in_the_tui_and_the_program_finishes() -> None:
    """A break in a ``try`` block: Dynamo runs the whole frame eagerly, no generated code runs for it. The TUI gets
    the graph-break stop (no frame of generated code: the frame's inputs), its Stop view says what Dynamo did
    instead, and `c` lets the program end normally."""
    from pathlib import Path

    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp

    program = Path(__file__).resolve().parents[1] / "programs" / "try_graph_break.py"
    app = DebuggerApp(lambda listener: Session(listener, break_on=("graph-break",)),
                      lambda session: session.start_script(str(program), []))
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.GRAPH_BREAK
        assert "falls back to eager" in app.last_stop.message
        from dynadbg.core import format as fmt

        (text,) = [body for title, body in fmt.stop_blocks(app.last_stop) if title == "graph break"]
        assert "what Dynamo did instead" in text
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("c")
        await _until(pilot, lambda: app.phase == "exited", 120)
        assert app.exit_result.status == 0


async def test_real_recompile_view_says_torch_makes_the_sequence_dimension_dynamic() -> None:
    """Lengths 8, 16, 17, 32: the one recompile stop's view says automatic dynamic makes the sequence dimension
    dynamic, ``M`` offers no dimension to mark and says why; 17 and 32 need no stop."""
    import io
    from pathlib import Path

    from rich.console import Console

    from dynadbg.core.model import StopKind
    from dynadbg.tui.prompt_screen import PromptScreen

    script = Path(__file__).resolve().parents[1] / "core" / "programs" / "sequence_lengths.py"
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        while app.phase == "stopped" and app.last_stop.kind is not StopKind.RECOMPILE:
            await pilot.press("c")
            await _until(pilot, lambda: app.phase != "running" and not app.awaiting_resume)
        assert app.last_stop.kind is StopKind.RECOMPILE
        view = app.main_screen.recompile_view
        await _until(pilot, lambda: view.record is not None, 30)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(view.content)
        text = console.export_text()
        assert ("automatic dynamic\n  torch makes L['tokens'] dim 1 dynamic in the new entry 0/1: sizes 8 then 16 "
                "were seen; later sizes hit that entry") in text
        assert "not available: torch's automatic dynamic shapes makes tokens 1 dynamic in the new entry" in text
        shown = {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show and b.binding.id}
        assert "dynamic" not in shown and "recompile" in shown       # nothing to mark: M is not offered
        await pilot.press("M")
        await settle(pilot)
        assert not isinstance(app.screen, PromptScreen) and app.last_stop.kind is StopKind.RECOMPILE
        await pilot.press("R")
        await _until(pilot, lambda: app.phase in ("stopped", "exited"), 60)
        while app.phase == "stopped":
            assert app.last_stop.kind is not StopKind.RECOMPILE       # no second recompile: 17 and 32 hit 0/1
            await pilot.press("c")
            await _until(pilot, lambda: app.phase != "running" and not app.awaiting_resume)
        assert "torch compiled graphs: 2" in _log(app)


TRAIN_EVAL = textwrap.dedent(
    """
    import torch

    class Blocks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList(
                [torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)) for _ in range(4)])

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    net = torch.compile(Blocks(), backend="eager")
    x = torch.randn(3, 4)
    net(x)
    net.eval()
    print("eval", tuple(net(x).shape))
    """
)


async def test_real_train_to_eval_recompile_guard_pane_counts_and_jumps(tmp_path) -> None:  # noqa: ANN001
    """The train → eval recompile of four BatchNorm blocks, on the real engine: the guard pane's managers count the
    failing ``.training`` guards under them, each of them is marked as one of the record's group, ``f`` visits
    each failing guard, then wraps round; ``D`` lists the four as one row."""
    from dynadbg.core.model import GuardNodeView, LeafGuardView, StopKind
    from dynadbg.tui.guard_tree_view import GuardTreeView

    script = tmp_path / "train_eval.py"
    script.write_text(TRAIN_EVAL)
    app = _app(script)
    async with app.run_test(size=(140, 45)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        for _ in range(5):
            if app.phase != "stopped" or app.last_stop.kind is StopKind.RECOMPILE:
                break
            await pilot.press("c")
            await _until(pilot, lambda: app.phase in ("stopped", "exited") and not app.awaiting_resume)
        assert app.phase == "stopped" and app.last_stop.kind is StopKind.RECOMPILE
        # the Recompile view says the four flags once, with what happened, as line mode does
        import io

        from rich.console import Console

        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.main_screen.recompile_view.content)
        recompile = console.export_text()
        assert "4 × TRUE_MATCH on L['self']._modules['blocks']._modules[*]" in recompile, recompile
        assert "the model switched from train() to eval()" in recompile, recompile
        assert "_modules['2']" not in recompile.split("choices")[0], recompile
        view = app.main_screen.query_one(GuardTreeView)
        await _until(pilot, lambda: view.guards is not None and not view.loading, 60)
        tree = view.guards
        paths = view.failures.paths
        assert [p.leaf.id for p in paths] == [leaf.id for leaf in tree.failing]
        training = [p for p in paths if p.leaf.source.endswith(".training")]
        assert len(training) == 4
        # the ModuleList's manager (built on the way to the first failing guard) counts every failing guard below it
        node, blocks = view.root, None
        while blocks is None and node.children:
            node = next(c for c in node.children if isinstance(c.data, GuardNodeView) and view.failures.count(c.data))
            if node.data.source == "L['self']._modules['blocks']":
                blocks = node
        below = sum(1 for p in paths if blocks.data in p.managers)
        assert below >= 4 and f"{below} of {blocks.data.leaf_count:,} guards failing" in str(blocks.label)
        assert view.cursor_node is not None and view.cursor_node.data is paths[0].leaf
        marks = set()
        for path in (*paths[1:], paths[0]):
            await pilot.press("f")
            await pilot.pause()
            assert isinstance(view.cursor_node.data, LeafGuardView) and view.cursor_node.data is path.leaf
            if path.leaf.source.endswith(".training"):  # a member of the record's group says so on its label
                marks.add(str(view.cursor_node.label).split("[group: ")[1].split("]")[0])
        assert marks == {f"{k} of 4" for k in range(1, 5)}
        assert f"guards: wrapped round to the first failing guard (1 of {len(paths)})" in _log(app)
        # D: the four flags are one row of the dialog, left out of the default, their guards listed on `e`
        from textual.widgets import SelectionList

        from dynadbg.tui.drop_dialog import DropDialog

        await pilot.press("D")
        await _until(pilot, lambda: isinstance(app.screen, DropDialog))
        rows = app.screen.query_one("#drop-rows", SelectionList)
        prompts = [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)]
        (group,) = [p for p in prompts if "4 × TRUE_MATCH" in p]
        assert "[left out: module mode flags] .training of BatchNorm1d: True → False" in group, prompts
        assert not any(p.split()[0].startswith("g") and ".training" in p for p in prompts), prompts
        assert rows.selected == []
        at = next(i for i, p in enumerate(prompts) if p is group)
        rows.highlighted = at
        await pilot.press("e")
        await pilot.pause()
        assert rows.option_count == len(prompts) + 4
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")


MODED = textwrap.dedent(
    """
    import torch

    def f(x, mode):
        return x * 2

    graphs = []
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    cf = torch.compile(f, backend=backend)
    for mode in ("a", "a", "b"):
        cf(torch.ones(3), mode)
    print("graphs", len(graphs))
    """
)


async def test_guard_add_typed_in_the_console_is_a_real_leaf_in_the_guard_pane(tmp_path) -> None:  # noqa: ANN001
    """The TUI's way to add a guard at a stop is the console's `guard add`, which the engine answers
    (`Engine.add_guard`, through the toolkit): the guard pane shows the copy's new leaf, and the 'b' call that
    fails it recompiles."""
    from dynadbg.core.guards import iter_leaves
    from dynadbg.tui.guard_tree_view import GuardTreeView

    script = tmp_path / "moded.py"
    script.write_text(MODED)
    app = _app(script)
    async with app.run_test(size=(120, 40)) as pilot:
        await _until(pilot, lambda: app.phase in ("stopped", "exited"))
        assert app.phase == "stopped"
        pane = app.main_screen.query_one(GuardTreeView)
        await _until(pilot, lambda: pane.guards is not None, 60)
        await pilot.press("colon", *"guard add L['mode']", "enter")

        def leaf():  # noqa: ANN202
            tree = pane.guards
            return next((lf for lf in iter_leaves(tree) if lf.source == "L['mode']"), None) if tree else None

        await _until(pilot, lambda: leaf() is not None, 60)
        assert leaf() is not None, _log(app)
        assert (leaf().guard_type, leaf().code[0]) == ("EQUALS_MATCH", "L['mode'] == 'a'")
        assert "guard 1 added to f 0/0: EQUALS_MATCH L['mode'] == 'a'" in _log(app)
        seen = app.last_stop.seq
        await pilot.press("escape", "c")
        for _ in range(3):                     # the recompile for 'b' stops at its entry: go on
            await _until(pilot, lambda: app.phase == "exited" or (app.phase == "stopped"
                                                                   and app.last_stop.seq != seen))
            if app.phase == "exited":
                break
            seen = app.last_stop.seq
            await pilot.press("c")
        assert app.exit_result is not None and app.exit_result.status == 0
        assert "graphs 2" in _log(app)
        await pilot.press("q")
