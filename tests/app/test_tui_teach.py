"""The TUI's teaching views, as a user sees them: the role gutter and section headers of the bytecode pane, the
Explain pane following the cursor, the stack pane naming who pushed each slot, and the source / original / FX-graph
views following the bytecode cursor.

Fast tests run on the fake engine (`forward_scenario(teach=True)`: a graph call, a graph break on ``print()``, a
resume call); the last one runs the bundled demo on the real engine.
"""

from __future__ import annotations

import asyncio

import io
import time

import pytest
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import forward_scenario

SIZE = (140, 45)


def _rows(view) -> list[str]:  # noqa: ANN001
    """Every display row of a bytecode pane as text (scrolling it through), headers included."""
    rows: dict[int, str] = {}
    height = view.scrollable_content_region.height
    for top in range(0, view.virtual_size.height, height):
        view.scroll_to(y=top, animate=False, immediate=True, force=True)
        first = view.scroll_offset.y  # the last page stops at the end
        for y in range(height):
            if first + y < view.virtual_size.height:
                rows[first + y] = view.render_line(y).text
    return [rows[k] for k in sorted(rows)]


def _explain_text(screen) -> str:  # noqa: ANN001
    return "\n".join(part.plain for part in screen.query_one("#explain").parts)


async def _at(pilot, steps: int) -> None:  # noqa: ANN001
    await settle(pilot)
    for _ in range(steps):
        await pilot.press("s")
        await settle(pilot)


async def test_bytecode_pane_shows_a_role_gutter_and_one_header_per_section() -> None:
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 1)
        view = app.main_screen.bytecode
        rows = _rows(view)
        headers = [r.strip() for r in rows if "── " in r]
        # a resume function by its code's name; the global it is loaded from does not fit this pane: it goes first,
        # and the row ends inside the pane
        assert headers[6] == "▌ ── call of the resume function torch_dynamo_resume_in_forward_at_19 ──"
        headers[6] = "(resume)"
        # as `roles.code_roles` tags this code: the branch after the graph call is rebuilt state (it follows
        # the graph's outputs under one header), the arguments of the resume call belong to that call
        assert headers == [
            "▌ ── prologue ──",
            "▌ ── load graph __compiled_fn_1 (called at 5) ──",
            "▌ ── load graph inputs ──",
            "▌ ── call graph __compiled_fn_1 (2 inputs) ──",
            "▌ ── unpack graph outputs, rebuild locals ──",  # output then rebuild: one header, not two
            "▌ ── the graph-break instruction, run eagerly: print ──",      # names what runs eagerly
            "(resume)",
            "▌ ── return ──",
        ]
        # every instruction row carries its role's letter (read without colour: G the graph call, B the break's
        # call); rows and indexes differ by the headers above them
        from dynadbg.core.model import Role
        from dynadbg.tui.role_sections import ROLE_MARKS

        instr_rows = [r for r in rows if "── " not in r]
        marks = {mark for mark, _colour in ROLE_MARKS.values()}
        assert len(instr_rows) == 32 and all(r[2] in marks for r in instr_rows)
        assert len(marks) == len(Role)  # each role its own letter
        roles = view.roles.roles
        assert all(r[2] == ROLE_MARKS[roles[int(r[3:].split()[0])].role][0] for r in instr_rows)
        assert {r[2] for r in instr_rows} >= {"G", "B", "R"}
        assert view.row_of(5) == 5 + 4 and view.index_at(view.row_of(5)) == 5
        # the cursor walks instructions, never a header row
        view.focus()
        await pilot.press("home")
        seen = []
        for _ in range(6):
            seen.append(view.cursor)
            await pilot.press("down")
        assert seen == [0, 1, 2, 3, 4, 5]


async def test_without_roles_the_pane_has_no_gutter_and_no_headers() -> None:
    app = make_app()  # the fake answers "no roles here", as the engine does for code it has no roles of
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 1)
        view = app.main_screen.bytecode
        assert view.virtual_size.height == 32
        assert not any("── " in r or "▌" in r for r in _rows(view))


async def test_explain_pane_follows_the_cursor() -> None:
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 5)
        screen = app.main_screen
        assert not screen.query_one("#explain").display
        await pilot.press("X")
        await settle(pilot)
        assert screen.query_one("#explain").display
        text = _explain_text(screen)
        # the CALL of the graph, with the live values it pops at this stop
        assert text.startswith("5 CALL")
        assert "role: Graph call: calls the FX graph __compiled_fn_1 with x, n" in text
        assert "stack now: pops 4 (slot 0: NULL, slot 1: <graph __compiled_fn_1 of 0/0>" in text
        assert "what it does: Calls a function." in text
        screen.bytecode.focus()
        await pilot.press("up")
        await settle(pilot)
        text = _explain_text(screen)
        assert text.startswith("4 PRECALL") and "stack now" not in text  # not the current instruction
        # a typed `explain` (the current instruction) takes the cursor there: the pane and the console agree
        app.submit("explain")
        await settle(pilot)
        assert _explain_text(screen).startswith("5 CALL") and screen.bytecode.cursor == 5
        app.submit("explain 3")
        await settle(pilot)
        assert _explain_text(screen).startswith("3 ") and screen.bytecode.cursor == 3
        await pilot.press("X")
        await settle(pilot)
        assert not screen.query_one("#explain").display


async def test_stack_pane_names_the_instruction_that_pushed_each_slot() -> None:
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 10)  # before STORE_FAST y: output 0 of the graph on the stack
        text = app.main_screen.query_one("#stack").text
        assert "← 9 BINARY_SUBSCR\n    = output 0 of __compiled_fn_1 (FX node relu)" in text
        await pilot.press("s", "s", "s", "s")  # at the branch: n > 2
        await settle(pilot)
        await _at(pilot, 0)
        text = app.main_screen.query_one("#stack").text
        assert "← 13 COMPARE_OP >" in text and "FX node" not in text


async def test_source_original_and_graph_follow_the_bytecode_cursor() -> None:
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 1)
        screen = app.main_screen
        await pilot.press("3")  # the Graph view (fills it)
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        view = screen.bytecode
        view.focus()
        view.cursor = 16  # LOAD_METHOD relu, user line 18
        await settle(pilot)
        source = screen.query_one("#source")
        assert source.related == 18
        assert any(r.startswith("▷  18") for r in (source.render_line(y).text
                                                    for y in range(source.scrollable_content_region.height)))
        await pilot.press("2")
        await settle(pilot)
        orig = screen.query_one("#orig-bytecode")
        assert orig.related == {i.index for i in orig.code.instructions if i.lineno == 18} != set()
        # the other way: the Original view's cursor on a line-19 row marks the generated rows of line 19
        assert app.focused is orig
        orig.cursor = next(i.index for i in orig.code.instructions if i.lineno == 19)
        await settle(pilot)
        assert view.related == {i.index for i in view.code.instructions if i.lineno == 19} != set()
        await pilot.press("3")
        await settle(pilot)
        from rich.console import Console

        console = Console(width=120, record=True, file=io.StringIO())
        console.print(screen.query_one("#graph").content)
        assert "▶ line 18 of the user's code made: relu" in console.export_text()


def _graph_text(screen) -> str:  # noqa: ANN001
    from rich.console import Console

    console = Console(width=120, record=True, file=io.StringIO())
    console.print(screen.query_one("#graph").content)
    return console.export_text()


def _marked(view) -> list[int]:  # noqa: ANN001
    """Instruction indexes whose rows show the ``▷`` mark (related to another view's cursor), as drawn."""
    return [i.index for i in view.code.instructions
            if (view.scroll_to(y=view.row_of(i.index), animate=False, immediate=True, force=True)
                or view.render_line(view.row_of(i.index) - view.scroll_offset.y).text[1] == "▷")]


def _reversed_lines(renderable) -> list[str]:  # noqa: ANN001
    """The lines of `renderable` drawn in reverse video (the Graph view's cursor)."""
    from rich.console import Console

    console = Console(width=120, file=io.StringIO())
    return ["".join(s.text for s in line).strip() for line in console.render_lines(renderable)
            if any(s.style is not None and s.style.reverse for s in line)]


def _source_rows(source) -> list[str]:  # noqa: ANN001
    return [source.render_line(y).text for y in range(source.scrollable_content_region.height)]


async def test_moving_the_source_cursor_marks_the_generated_and_original_rows_and_graph_nodes_of_its_line() -> None:
    from dynadbg.tui.source_view import SourceView

    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 1)
        screen = app.main_screen
        await pilot.press("2")  # the Original view (fills it)
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        # Tab from the bytecode pane reaches the source pane; its cursor starts on the current line
        await pilot.press("tab")
        await settle(pilot)
        source = screen.query_one("#source", SourceView)
        assert app.focused is source
        assert source.cursor == source.lineno == 16
        await pilot.press("down", "down")
        await settle(pilot)
        assert source.cursor == 18
        # the cursor line is drawn distinctly from the current line (▶) and keeps the focus colour
        rows = _source_rows(source)
        assert any(r.startswith("›  18") for r in rows) and any(r.startswith("▶  16") for r in rows)
        generated = screen.bytecode
        wanted = [i.index for i in generated.code.instructions if i.lineno == 18]
        assert wanted and _marked(generated) == wanted
        orig = screen.query_one("#orig-bytecode")
        assert orig.related == {i.index for i in orig.code.instructions if i.lineno == 18} != set()
        await pilot.press("up")
        await settle(pilot)
        assert _marked(generated) == [i.index for i in generated.code.instructions if i.lineno == 17]
        # the Graph view, opened now, marks the nodes traced from the source cursor's line
        await pilot.press("down")
        await pilot.press("3")
        await settle(pilot)
        assert "▶ line 18 of the user's code made: relu" in _graph_text(screen)
        # the bytecode cursor takes over again: its line marks the source, and its own pane loses the marks
        await pilot.press("1")
        await settle(pilot)
        generated.focus()
        await pilot.press("down")
        await settle(pilot)
        line = generated.cursor_instruction.lineno
        assert source.related == line and generated.related == frozenset()


async def test_the_graph_views_node_cursor_marks_the_generated_rows_and_source_line_of_the_nodes_line() -> None:
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 1)
        screen = app.main_screen
        await pilot.press("3")
        await settle(pilot)
        graph = screen.query_one("#graph")
        assert app.focused is graph
        # the node lines, in the graph's order: l_x_ (an input: no user line), mul, add, relu
        assert [r.node for r in graph.rows] == ["l_x_", "mul", "add", "relu"]
        await pilot.press("down", "down")  # the first press lands on the first node line, the second on mul
        await settle(pilot)
        assert graph.cursor_row.node == "mul"
        generated, source = screen.bytecode, screen.query_one("#source")
        # the bytecode pane shares the view area with the Graph view: its marks are there when the user goes back
        line16 = {i.index for i in generated.code.instructions if i.lineno == 16}
        assert line16 and generated.related == line16
        assert source.related == 16
        assert any(r.startswith("▷  16") or r.startswith("▶  16") for r in _source_rows(source))
        text = _graph_text(screen)
        assert "▶ line 16 of the user's code made: mul, add" in text
        await pilot.press("down", "down")  # add (same line), then relu
        await settle(pilot)
        assert graph.cursor_row.node == "relu"
        assert source.related == 18 and any(r.startswith("▷  18") for r in _source_rows(source))
        assert "▶ line 18 of the user's code made: relu" in _graph_text(screen)
        assert _reversed_lines(graph.content) == ["relu = add.relu();  add = None"]  # the cursor line, drawn
        await pilot.press("1")
        await settle(pilot)
        line18 = [i.index for i in generated.code.instructions if i.lineno == 18]
        assert line18 and _marked(generated) == line18
        # back in the Graph view its cursor is where it was
        await pilot.press("3")
        await settle(pilot)
        assert graph.cursor_row.node == "relu"
        await pilot.press("home")  # an input node: traced from no user line, nothing marked
        await settle(pilot)
        assert graph.cursor_row.node == "l_x_" and generated.related == frozenset() and source.related is None
        # the bytecode cursor still drives the Graph view afterwards
        await pilot.press("1")
        await settle(pilot)
        generated.focus()
        generated.cursor = 16  # LOAD_METHOD relu, user line 18
        await settle(pilot)
        assert source.related == 18 and generated.related == frozenset()


@pytest.mark.slow
async def test_the_demo_on_the_real_engine_names_the_graph_call_the_break_and_the_resume_call() -> None:
    """The bundled demo: from the screen alone, which instruction calls the graph, which runs ``.item()`` eagerly,
    and what the resume function receives (the Explain pane at its call)."""
    from dynadbg.core.session import Session
    from dynadbg.demos import demo_path
    from dynadbg.tui.app import DebuggerApp

    app = DebuggerApp(lambda listener: Session(listener),
                      lambda session: session.start_script(str(demo_path(None)), []))
    async with app.run_test(size=SIZE) as pilot:
        start = time.monotonic()
        while app.phase not in ("stopped", "exited") and time.monotonic() - start < 120:
            await asyncio.sleep(0.01)
        await settle(pilot)
        view = app.main_screen.bytecode
        while view.roles is None and time.monotonic() - start < 120:
            await asyncio.sleep(0.01)
        headers = [r.strip() for r in _rows(view) if "── " in r]
        assert any(h.startswith("▌ ── call graph __compiled_fn_") for h in headers), headers
        assert "▌ ── the graph-break instruction, run eagerly: .item() ──" in headers
        assert any(h.startswith("▌ ── call of the resume function torch_dynamo_resume_in_forward_at_") for h in headers), headers
        # the resume call's CALL_FUNCTION_EX, explained: what the resume function receives
        call = app.main_screen.bytecode.roles.resume_calls[0].call_index
        await pilot.press("X")
        view.focus()
        view.cursor = call
        await settle(pilot)
        text = _explain_text(app.main_screen)
        assert text.startswith(f"{call} CALL_FUNCTION_EX")
        assert "calls the resume function torch_dynamo_resume_in_forward_at_" in text and "___stack0" in text
        await pilot.press("q")


async def test_help_explains_the_role_gutter_and_lists_the_explain_key() -> None:
    from rich.console import Console
    from textual.widgets import Static

    from dynadbg.core.model import Role
    from dynadbg.tui.help_screen import HelpScreen

    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=SIZE) as pilot:
        await _at(pilot, 0)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=160, record=True, file=io.StringIO())
        console.print(app.screen.query_one(Static).content)
        text = console.export_text()
        assert "Role gutter (bytecode pane)" in text
        assert all(role.value in text for role in Role if role is not Role.UNKNOWN)
        assert "explain {cursor}" in text and "Show or hide the Explain pane" in text


async def test_at_80x24_an_explanation_longer_than_its_pane_says_more_below_and_scrolls_to_its_end() -> None:
    """At 80×24 the Explain pane has a few rows: an explanation longer than that wraps at the pane's width, its
    bottom border says more is below and how to read it (Tab to the pane, then ↓), and ↓ there brings its last
    row, what the instruction does, on screen."""
    app = make_app(forward_scenario(teach=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await _at(pilot, 5)
        screen = app.main_screen
        await pilot.press("X")
        await settle(pilot)
        explain = screen.query_one("#explain")
        height = explain.scrollable_content_region.height
        assert len(explain.lines) > height, "the explanation fits: this test no longer tests a long one"
        assert all(line.cell_len <= explain.scrollable_content_region.width for line in explain.lines)
        assert str(explain.border_subtitle) == "more below: Tab to this pane, then ↓ · instruction 5"
        screen.bytecode.focus()
        await pilot.press("tab")
        await settle(pilot)
        assert app.focused is explain
        assert str(explain.border_subtitle).startswith("more below: ↓ ·")
        for _ in range(len(explain.lines)):
            await pilot.press("down")
        await settle(pilot)
        shown = [explain.render_line(y).text for y in range(height)]
        assert explain.lines[-1].plain in "\n".join(shown) and "…" not in "".join(shown)
        assert str(explain.border_subtitle) == "↑ back to the top · instruction 5"
