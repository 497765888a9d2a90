"""Pilot tests of the recompile screen (issue 4) and the edit dialog and Diff view (issue 5), on the fake engine."""

from __future__ import annotations

import io

import pytest
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import counter_recompile_scenario
from rich.console import Console
from textual.widgets import Input, Static, TabbedContent

from dynadbg.core.model import StopKind
from dynadbg.tui import actions
from dynadbg.tui.edit_dialog import EditDialog, OpcodeSuggester, argument_text, opcode_names
from dynadbg.tui.prompt_screen import PromptScreen
from dynadbg.tui.recompile_view import available_choices, choice_for

SIZE = (120, 40)


def plain(renderable) -> str:  # noqa: ANN001
    """A Rich renderable as plain text, 200 columns wide."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def log_text(app) -> str:  # noqa: ANN001
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


def footer_ids(app) -> set[str]:  # noqa: ANN001
    """Ids of the registry actions the footer shows now."""
    return {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show and b.binding.id}


async def _settled(pilot) -> None:  # noqa: ANN001
    await settle(pilot)  # the footer and the edit preview wait no time in tests
    await settle(pilot)


# Recompile screen ------------------------------------------------------------------------------------------------


async def test_recompile_stop_opens_the_recompile_view_with_every_failing_guard() -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        screen = app.main_screen
        assert app.last_stop.kind is StopKind.RECOMPILE
        assert screen.query_one("#views", TabbedContent).active == "tab-recompile"
        assert app.session.calls.count("recompile_records()") == 1  # the view asked for the structured record
        assert app.session.sent == []
        assert screen.has_class("-recompile")
        text = plain(screen.recompile_view.content)
        # every entry, in torch's order, each failing guard with its code, user line, expected and actual value
        assert text.index("entry 0/1") < text.index("entry 0/0")
        assert "EQUALS_MATCH  L['self'].counter == 1" in text and "L['self'].counter == 0" in text
        assert "module_int_counter.py:13  self.counter += 1" in text
        assert "expected 1   actual 2" in text and "expected 0   actual 2" in text
        assert "HINT: torch.compile considers integer attributes" in text
        assert "self.counter: 1 → 2" in text
        # the guard diff between the entries, the limit, the choices with keys and their permanent code
        assert "0/0 → 0/1: 1 changed" in text
        assert "recompile limit: 2 of recompile_limit 8 used" in text
        for key, command in (("R", "recompile"), ("E", "eager"), ("S", "skip"), ("D", "drop [ID...]"),
                             ("M", "dynamic NAME DIM")):
            assert f" {key}  {command}" in text, command
        # the checked filter, on the program's own call (`cm = torch.compile(m, backend="eager")`)
        assert 'torch.compile(m, backend="eager", options={"guard_filter_fn"' in text
        assert 'torch.compiler.set_stance("eager_on_recompile")' in text
        assert "torch._dynamo.config.allow_unspec_int_on_nn_module = True" in text
        # the inputs are the locals pane's frame; the footer offers the choices, not the frame keys
        assert [name for name, _ in screen.frame.locals] == ["self", "x"]
        shown = footer_ids(app)
        assert {"recompile", "eager", "skip", "drop"} <= shown
        assert not {"return", "breakpoint", "up", "down", "edit"} & shown
        assert "dynamic" not in shown  # no input changed size: nothing to mark dynamic


async def test_skip_and_eager_show_different_permanent_code() -> None:
    """The Recompile view: under ``S skip`` the code that stops compiling (the entry limit), not eager's line."""
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        lines = plain(app.main_screen.recompile_view.content).splitlines()
        starts = {key: next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(f"{key}  {cmd}"))
                  for key, cmd in (("E", "eager"), ("S", "skip"), ("D", "drop"))}
        eager = "\n".join(lines[starts["E"]:starts["S"]])
        skip = "\n".join(lines[starts["S"]:starts["D"]])
        # one word for it everywhere: "permanently" (line mode, the log and this view)
        assert "permanently" in skip and "recompile_limit = 2" in skip and "for good" not in skip + eager
        # eager's own line first: this call uncompiled (a force_eager block), then the wider stance
        assert 'set_stance("force_eager")' in eager and 'set_stance("eager_on_recompile")' in eager
        # skip's first code is the entry limit (beside its label, or under it in a view under 80 columns)
        first_code = skip.split("permanently:", 1)[1].lstrip().splitlines()[0]
        assert "recompile_limit" in first_code and "eager_on_recompile" not in first_code


@pytest.mark.parametrize(("key", "command"), [("R", "recompile"), ("E", "eager"), ("S", "skip"), ("D", "drop g18")])
async def test_recompile_choice_keys_send_their_command(key: str, command: str) -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        await pilot.press(key)
        await _settled(pilot)
        if key == "D":  # drop asks first (its dialog, test_tui_drop_dialog.py): Enter accepts the default
            assert app.session.sent == []
            await pilot.press("enter")
            await _settled(pilot)
        assert app.session.sent == [f"decide({command})"]
        assert f"> {command}" in log_text(app)
        assert "permanently:" in log_text(app)  # the engine's code for good, in the log
        # the choice resumed the program: the next stop is the entry of the new code
        assert app.last_stop.kind is StopKind.ENTRY and app.last_stop.compile_id == "0/2"
        assert app.main_screen.query_one("#views", TabbedContent).active == "tab-bytecode"
        assert not app.main_screen.has_class("-recompile")


def _size_changed_scenario():  # noqa: ANN202
    """The recorded recompile stop as if ``x`` (a ``Tensor[2]``) had changed size at dimension 0 (the engine then
    names it)."""
    from dataclasses import replace

    from fake_scenarios import counter_guard_tree

    from dynadbg.core.guards import iter_leaves
    from dynadbg.core.model import Decision, DecisionKind, DynamicDim, GuardStatus, PermanentFix

    scenario = counter_recompile_scenario()
    stop = scenario.stops[0]
    choices = tuple(replace(c, decision=Decision(DecisionKind.DYNAMIC, name="x", dim=0), detail="",
                            permanent=PermanentFix(DecisionKind.DYNAMIC, "model", dims=(DynamicDim("x", 0),)))
                    if c.kind is DecisionKind.DYNAMIC else c for c in stop.choices)
    # x's size guard fails too (the engine refuses to mark an input no failing guard checks)
    recorded = next(leaf for leaf in iter_leaves(counter_guard_tree()) if leaf.guard_type == "TENSOR_MATCH")
    assert recorded.source == "L['x']" and "size=[2]" in recorded.code[0]
    size = replace(recorded, status=GuardStatus.FAIL, expected="size=[2]", actual="size=[3]")
    record = stop.recompile
    assert record is not None
    first = replace(record.entries[0], failing=(*record.entries[0].failing, size))
    scenario.stops[0] = replace(stop, choices=choices, recompile=replace(record, entries=(first, *record.entries[1:])))
    return scenario


async def test_dynamic_is_not_offered_when_no_dimension_changed() -> None:
    """No size guard failed: ``M`` is hidden from the footer and pressing it opens no pre-filled guess."""
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        assert "dynamic" not in footer_ids(app)
        await pilot.press("M")
        await _settled(pilot)
        assert not isinstance(app.screen, PromptScreen)
        assert app.session.sent == []
        text = plain(app.main_screen.recompile_view.content)
        assert "no input tensor changed size at one dimension" in text and "not available here" in text


async def test_dynamic_choice_asks_for_name_and_dim() -> None:
    app = make_app(_size_changed_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        assert "dynamic" in footer_ids(app)
        await pilot.press("M")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        field = app.screen.query_one(Input)
        assert field.value == "x 0"  # the input and dimension that changed size, as the engine named them
        await pilot.press("ctrl+u", *"x 0", "enter")
        await _settled(pilot)
        assert app.session.sent == ["decide(dynamic x 0)"]
        assert "torch._dynamo.mark_dynamic(x, 0)" in log_text(app)


async def test_dynamic_prompt_escape_sends_nothing() -> None:
    app = make_app(_size_changed_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        await pilot.press("M")
        await pilot.pause()
        await pilot.press("escape")
        await _settled(pilot)
        assert app.session.sent == []
        assert app.last_stop.kind is StopKind.RECOMPILE


async def test_choice_keys_do_nothing_away_from_a_recompile_stop() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        assert not {"recompile", "eager", "skip", "drop", "dynamic"} & footer_ids(app)
        await pilot.press("R", "E", "S", "D", "M")
        await _settled(pilot)
        assert app.session.sent == []
        assert app.last_stop.kind is StopKind.ENTRY


def test_choices_come_from_the_stop_as_data() -> None:
    from dataclasses import replace

    from dynadbg.core.model import DecisionKind

    scenario = counter_recompile_scenario()
    stop = scenario.stops[0]
    assert available_choices(stop) == {"recompile", "eager", "skip", "drop"}  # no dimension to mark dynamic
    assert available_choices(scenario.stops[1]) == frozenset()
    drop = choice_for(stop, DecisionKind.DROP)
    assert drop is not None and drop.decision.guard_ids == ("g18",)
    # a choice the engine marks unavailable is neither offered nor sent
    blocked = replace(stop, choices=tuple(replace(c, available=False, why_not="the recompile limit is hit")
                                          if c.kind in (DecisionKind.DROP, DecisionKind.DYNAMIC) else c
                                          for c in stop.choices))
    assert available_choices(blocked) == {"recompile", "eager", "skip"}
    assert choice_for(blocked, DecisionKind.DROP) is None


async def test_unavailable_choice_shows_why_and_its_key_is_hidden() -> None:
    from dataclasses import replace

    from dynadbg.core.model import DecisionKind

    scenario = counter_recompile_scenario()
    stop = scenario.stops[0]
    scenario.stops[0] = replace(stop, choices=tuple(
        replace(c, available=False, why_not="this compile hits the recompile limit")
        if c.kind is DecisionKind.DROP else c for c in stop.choices))
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        text = plain(app.main_screen.recompile_view.content)
        assert "not available: this compile hits the recompile limit" in text
        assert "drop" not in footer_ids(app) and "eager" in footer_ids(app)
        await pilot.press("D")
        await _settled(pilot)
        assert app.session.sent == []


# Edit dialog -----------------------------------------------------------------------------------------------------


async def _open(pilot, key: str = "e", row: int = 8) -> EditDialog:  # noqa: ANN001
    await _settled(pilot)
    await pilot.press(*["down"] * row, key)
    await _settled(pilot)
    dialog = pilot.app.screen
    assert isinstance(dialog, EditDialog)
    return dialog


def preview_text(dialog: EditDialog) -> str:
    return plain(dialog.query_one("#edit-preview", Static).content)


async def test_edit_dialog_opens_on_the_cursor_instruction_and_previews_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot)
        assert dialog.instr.index == 8 and dialog.instr.opname == "LOAD_CONST"
        field = dialog.query_one("#edit-input", Input)
        assert field.value == "LOAD_CONST 0"
        await pilot.press("ctrl+u", *"LOAD_CONST 1")
        await _settled(pilot)
        assert app.session.previews[-1] == "edit 8 LOAD_CONST 1"
        text = preview_text(dialog)
        assert "✓ valid: edit 8 LOAD_CONST 1" in text
        # depth before → after of the edited row and its neighbours; the diff against Dynamo's code
        assert "▶    8             1 → 2      LOAD_CONST 1" in text
        assert "9             2 → 1      BINARY_SUBSCR" in text
        assert "-    8       LOAD_CONST 0" in text and "+         8  LOAD_CONST 1" in text
        assert app.session.sent == []  # previews install nothing


async def test_typing_in_the_edit_dialog_replaces_the_prefilled_instruction() -> None:
    """The dialog opens with the instruction selected: what the user types replaces it (no ctrl+u first)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot)
        field = dialog.query_one("#edit-input", Input)
        assert field.value == "LOAD_CONST 0"
        await pilot.press(*"LOAD_CONST 1")
        await _settled(pilot)
        assert field.value == "LOAD_CONST 1"
        assert app.session.previews[-1] == "edit 8 LOAD_CONST 1"


async def test_edit_dialog_enter_applies_and_the_diff_view_shows_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("ctrl+u", *"LOAD_CONST 1", "enter")
        await _settled(pilot)
        assert app.session.sent == ["apply_edit(edit 8 LOAD_CONST 1)"]
        assert not isinstance(app.screen, EditDialog)
        assert "installed: runs from the next call" in log_text(app)
        # this call goes on with the instructions listed: the pane says the next call runs others (the ✎ rows)
        assert str(app.main_screen.bytecode.border_subtitle).endswith("· ✎ edited: runs from the next call (Diff: 6)")
        await pilot.press("6")
        await _settled(pilot)
        assert app.session.calls[-1] == "patch_diff()"
        views = app.main_screen.query_one("#views", TabbedContent)
        assert views.active == "tab-diff"
        diff = app.main_screen.diff_view
        assert "-  8     LOAD_CONST 0" in diff.text and "+     8  LOAD_CONST 1" in diff.text
        assert diff.border_subtitle == "forward · 1 removed, 1 added"
        styles = {line.plain[:1]: str(line.style) for line in diff.lines if line.plain[:1] in "+-"}
        assert styles["+"] != styles["-"]  # added and removed rows are coloured apart


async def test_edit_dialog_shows_a_rejected_edit_inline_and_installs_nothing() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot)
        await pilot.press("ctrl+u", *"POP_TOP")
        await _settled(pilot)
        text = preview_text(dialog)
        assert "rejected (stack underflow): edited code: row 9 BINARY_SUBSCR needs 2 values but the stack holds 0" in text
        assert text.count("needs 2 values but the stack holds 0") == 1  # the verdict says it; no problem line repeats it
        assert "✗    9" in text
        assert "of co_stacksize 5" in text  # the code's stack size, not the room the underflow probe was given
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == ["apply_edit(edit 8 POP_TOP)"]
        assert app.screen is dialog  # still open
        assert "not applied (nothing was installed)" in preview_text(dialog)
        assert app.session.patch_ops == []
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, EditDialog)


async def test_edit_dialog_syntax_errors_need_no_engine() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot)
        before = list(app.session.previews)
        await pilot.press("ctrl+u")
        await _settled(pilot)
        assert "missing OPNAME" in preview_text(dialog)
        assert app.session.previews == before
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == []


@pytest.mark.parametrize(("key", "typed", "line"), [("i", "NOP", "insert 8 NOP"), ("x", None, "delete 8")])
async def test_insert_and_delete_send_their_command(key: str, typed: str | None, line: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, key)
        if typed is not None:
            await pilot.press(*typed)
        await _settled(pilot)
        assert dialog.line == line
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent[-1] == f"apply_edit({line})"


async def test_edit_keys_only_in_generated_code_while_stopped() -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        await pilot.press("e", "i", "x")
        await pilot.pause()
        assert not isinstance(app.screen, EditDialog)  # a recompile stop runs no generated code
        await pilot.press("R")
        await _settled(pilot)
        assert "edit" in footer_ids(app)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditDialog)


def test_registry_keys_do_not_clash() -> None:
    seen: dict[str, str] = {}
    for action in actions.ACTIONS:
        for key in action.keys.split(","):
            assert key not in seen, f"{key} is bound to {seen.get(key)} and {action.id}"
            seen[key] = action.id


async def test_opcode_suggester_completes_the_opname_being_typed() -> None:
    suggester = OpcodeSuggester()
    assert await suggester.get_suggestion("LOAD_F") == "LOAD_FAST"
    assert await suggester.get_suggestion("load_co") == "load_const"
    assert await suggester.get_suggestion("POP_TOP; LOAD_C") == "POP_TOP; LOAD_CONST"
    assert await suggester.get_suggestion("LOAD_CONST 1") is None  # typing the argument
    assert await suggester.get_suggestion("LOAD_CONST") is None
    names = opcode_names()
    assert names[0] == "LOAD_FAST" and "CACHE" not in names and not any(n.startswith("INSTRUMENTED_") for n in names)


def test_argument_text_is_what_the_edit_command_takes() -> None:
    from dynadbg.core.model import Instr

    assert argument_text(Instr(0, 0, "POP_TOP", None, "", 1)) == "POP_TOP"
    assert argument_text(Instr(0, 0, "LOAD_CONST", 1, "7", 1)) == "LOAD_CONST 7"
    assert argument_text(Instr(0, 0, "POP_JUMP_FORWARD_IF_FALSE", 4, "to 58", 1, jump_target=20)) == \
        "POP_JUMP_FORWARD_IF_FALSE 20"
    assert argument_text(Instr(0, 0, "CALL", 2, "", 1)) == "CALL 2"


def test_readme_keys_table_is_the_registry() -> None:
    """The README's TUI keys table is `actions.markdown_table()` verbatim (regenerate it from there)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert actions.markdown_table() in readme


async def test_why_view_after_recompile_shows_the_diff_with_the_entry_compiled_since() -> None:
    """After ``R`` the miss's record saw one entry; the Why view shows what ``diff`` shows now, not
    "nothing to compare"."""
    import dataclasses

    from fake_scenarios import counter_recompile_record

    live = counter_recompile_record()
    (diff,) = live.diffs
    past = dataclasses.replace(live, seq=1, compile_id="0/1", entries=live.entries[1:], diffs=(),
                               decision="recompile", pending=False)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.session.recompile_records = lambda compile_id=None: (past,)
        app.session.guard_diffs = lambda old=None, new=None: (diff,)
        await pilot.press("7")
        await _settled(pilot)
        text = plain(app.main_screen.recompile_view.content)
        assert "recompiled → 0/1: recompile" in text
        assert "nothing to compare" not in text
        assert "0/0 → 0/1: 1 changed" in text and "L['self'].counter == 0" in text


async def test_a_long_guard_code_takes_one_line_at_80_columns(tmp_path) -> None:  # noqa: ANN001
    """A GLOBAL_STATE guard's JSON (hundreds of characters) is cut to one line with a marker, so the stop's other
    failing guards stay on the first screen."""
    from fake_scenarios import mode_switch_recompile_scenario
    from svg_text import squeeze, svg_rows

    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=(80, 24)) as pilot:
        await _settled(pilot)
        shot = tmp_path / "recompile.svg"
        shot.write_text(app.export_screenshot(), encoding="utf-8")
        rows = [squeeze(r) for r in svg_rows(shot)]
        (at,) = [k for k, r in enumerate(rows) if "g1GLOBAL_STATE" in r]
        # the failure torch reported (marked so), its code cut where the line ends
        assert "←torch'sreason___check_gl" in rows[at] and rows[at].split("│")[1].endswith("…")
        code = app.last_stop.recompile.entries[0].failing[0].code[0]
        assert f"(cut:{len(code)}chars;wholein`guards`)" in rows[at + 1]
        assert not any('"grad_mode"' in r for r in rows)          # none of the JSON past the first line
        assert any("2×TRUE_MATCHon" in r for r in rows)           # the next failing guards are on the first screen


async def test_at_80_columns_the_permanent_code_wraps_in_the_console() -> None:
    """The `permanently:` line of a decision is prose with code in it: at 80 columns it wraps at the console's
    edge, nothing of it runs off the right (as a listing it was cut at ``# calls insid``)."""
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=(80, 24)) as pilot:
        await _settled(pilot)
        await pilot.press("E")
        await _settled(pilot)
        log = app.main_screen.console.log_widget
        width = log.scrollable_content_region.width
        rows = [strip.text.rstrip() for strip in log.lines]
        start = next(k for k, row in enumerate(rows) if row.startswith("permanently: "))
        assert all(len(row) <= width for row in rows[start:start + 8]), rows
        said = " ".join(" ".join(rows[start:start + 8]).split())
        assert "outside it torch compiles as before" in said and "every other call runs eagerly" in said, said


async def test_a_recorded_recompile_stop_shows_the_real_engines_data_and_drop_says_each_warning_once() -> None:
    """The recompile stop of ``tests/programs/module_int_counter.py`` as the real engine answered it
    (`record_fake`): the Recompile view names the failing counter guard and the program's line; ``D`` and Enter
    drop the default, and the console says each of its warnings once (issue 18's triple warning)."""
    from fake_scenarios import recorded_recompile_scenario

    scenario = recorded_recompile_scenario()
    stop = scenario.stops[0]
    app = make_app(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        assert app.last_stop.kind is StopKind.RECOMPILE
        text = plain(app.main_screen.recompile_view.content)
        # the real failing guard (the counter was 0 when the entry compiled) and the program's own line
        assert "EQUALS_MATCH  L['self'].counter == 0" in text and "expected 0   actual 1" in text
        assert "module_int_counter.py:13  self.counter += 1" in text
        await pilot.press("D")
        await _settled(pilot)
        await pilot.press("enter")
        await _settled(pilot)
        default = next(c.decision.guard_ids for c in stop.choices if c.kind.value == "drop")
        assert default and app.session.sent == [f"decide(drop {' '.join(default)})"]
        said = log_text(app)
        # the program's own call, as the Recompile view wrote it
        assert 'permanently: torch.compile(m, backend="eager", options={"guard_filter_fn"' in said
        assert said.count("RESULTS MAY BE WRONG") == 1 and "WARNING: WARNING" not in said


def _gutter(app, index: int) -> str:  # noqa: ANN001
    bytecode = app.main_screen.bytecode
    return bytecode.render_line(bytecode.row_of(index) - bytecode.scroll_offset.y).text[:2]


async def test_an_installed_edit_marks_its_row_at_once_though_this_call_runs_the_listed_code() -> None:
    """An edit applies from the next call, so the pane goes on listing the code this call runs: the row the edit
    changes is marked ``✎`` in the gutter as soon as it is installed (not at the next call), and the pane's
    subtitle says what the mark means."""
    from dynadbg.tui.bytecode_view import EDITED_MARK

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        assert EDITED_MARK not in _gutter(app, 8)
        await pilot.press("ctrl+u", *"LOAD_CONST 1", "enter")
        await _settled(pilot)
        assert app.session.sent == ["apply_edit(edit 8 LOAD_CONST 1)"]
        assert _gutter(app, 8)[0] == EDITED_MARK
        assert all(EDITED_MARK not in _gutter(app, i) for i in (7, 9))
        assert "· ✎ edited: runs from the next call (Diff: 6)" in str(app.main_screen.bytecode.border_subtitle)


async def test_after_patch_undo_the_subtitle_no_longer_says_new_code_runs() -> None:
    """An undo is installed like an edit (Dynamo's code against itself): the pane said "the next call runs the new
    code" after it, while Dynamo's own code runs again."""
    from dynadbg.tui.bytecode_view import EDITED_MARK

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        app.submit("insert 9 NOP")
        await _settled(pilot)
        app.submit("patch undo")
        await _settled(pilot)
        assert "Dynamo's code restored" in log_text(app)
        subtitle = str(app.main_screen.bytecode.border_subtitle)
        assert "new code" not in subtitle and "✎" not in subtitle
        assert subtitle.endswith("· edit undone: Dynamo's code runs again (Diff: 6)")
        assert EDITED_MARK not in _gutter(app, 9)
        app.submit("insert 9 NOP")  # edited again: the edit's note, not the undo's
        await _settled(pilot)
        assert "· ✎ edited: runs from the next call (Diff: 6)" in str(app.main_screen.bytecode.border_subtitle)


async def test_an_insert_typed_in_the_console_marks_the_row_it_goes_before() -> None:
    from dynadbg.tui.bytecode_view import EDITED_MARK

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _settled(pilot)
        app.submit("insert 9 NOP")
        await _settled(pilot)
        assert "installed" in log_text(app), log_text(app)
        assert app.main_screen.bytecode.edited == frozenset({9})
        assert _gutter(app, 9)[0] == EDITED_MARK
        assert "· ✎ edited: runs from the next call (Diff: 6)" in str(app.main_screen.bytecode.border_subtitle)
