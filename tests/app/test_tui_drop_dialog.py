"""Pilot tests of the drop dialog (key ``D`` at a recompile stop), on the fake engine: what would be dropped is
shown, with the guards the default leaves out unselected and their reason, before anything runs; guards that
repeat are one row per group."""

from __future__ import annotations

from pathlib import Path

from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import counter_recompile_scenario, mode_switch_recompile_scenario
from svg_text import squeeze, svg_rows
from textual.widgets import SelectionList, Static

from dynadbg.core.model import StopKind
from dynadbg.tui.drop_dialog import DropDialog

SIZE = (80, 24)


def log_text(app) -> str:  # noqa: ANN001
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


async def _settled(pilot) -> None:  # noqa: ANN001
    await settle(pilot)
    await settle(pilot)


async def _open(pilot, app) -> DropDialog:  # noqa: ANN001
    await _settled(pilot)
    await pilot.press("D")
    await _settled(pilot)
    assert isinstance(app.screen, DropDialog), app.screen
    return app.screen


def _rows(dialog: DropDialog) -> dict[str, tuple[str, bool]]:
    rows = dialog.query_one("#drop-rows", SelectionList)
    chosen = set(rows.selected)
    return {rows.get_option_at_index(i).value: (str(rows.get_option_at_index(i).prompt),
                                                rows.get_option_at_index(i).value in chosen)
            for i in range(rows.option_count)}


def _details(dialog: DropDialog) -> str:
    return str(dialog.query_one("#drop-details", Static).render())


async def test_D_opens_the_dialog_with_mode_guards_unselected_and_nothing_runs() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, app)
        assert app.session.sent == []                       # asking is not deciding
        rows = _rows(dialog)
        assert list(rows) == ["g1", "group:0", "g74"]              # the two .training flags: one row
        assert rows["g74"][1] and "EQUALS_MATCH L['self'].steps == 0" in rows["g74"][0]
        for key in ("g1", "group:0"):
            assert not rows[key][1], key
        assert "[left out: global state]" in rows["g1"][0]
        assert ("2 × TRUE_MATCH [left out: module mode flags] .training of BatchNorm1d: True → False"
                in rows["group:0"][0])
        details = _details(dialog)
        # the reasons, the warning and the permanent code of the current selection, before anything runs
        assert "left out (module mode flags): train() and eval() run different code" in details
        assert "left out (global state)" in details
        assert "RESULTS MAY BE WRONG" in details and "L['self'].steps" in details
        assert 'e.name == "self.steps"' in details and "permanently:" in details
        assert ".training" not in details.split("permanently:")[1]


async def test_escape_cancels_and_the_program_stays_paused() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot, app)
        await pilot.press("escape")
        await _settled(pilot)
        assert not isinstance(app.screen, DropDialog)
        assert app.session.sent == []
        assert app.last_stop.kind is StopKind.RECOMPILE and app.stopped
        assert "drop cancelled" in log_text(app)


async def test_enter_sends_the_drop_of_the_default_selection() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot, app)
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == ["decide(drop g74)"]
        assert app.last_stop.kind is StopKind.ENTRY and app.last_stop.compile_id == "0/1"


async def test_selecting_a_group_row_selects_its_guards_then_enter_sends_them() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, app)
        await pilot.press("down", "space")               # the highlight starts on g1: down once is the group
        await _settled(pilot)
        assert _rows(dialog)["group:0"][1]
        assert dialog.selected_ids == ("g43", "g63", "g74")  # the preview shown is the new selection's
        details = _details(dialog)
        # the group's warning once, not once per guard
        assert "2 × L['self'].__dict__['_modules'][*].training are constants to Dynamo" in details
        assert "bn1'].training is a constant" not in details
        permanent = details.split("permanently:")[1]
        assert "['bn1'].training" in permanent and "['bn2'].training" in permanent
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == ["decide(drop g43 g63 g74)"]


async def test_e_lists_a_groups_guards_and_one_of_them_can_be_selected_alone() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, app)
        await pilot.press("down", "e")
        await _settled(pilot)
        rows = _rows(dialog)
        assert list(rows) == ["g1", "group:0", "g43", "g63", "g74"]
        assert "└ g43 TRUE_MATCH" in rows["g43"][0] and "bn1'].training == True" in rows["g43"][0]
        await pilot.press("down", "space")                # g43 alone
        await _settled(pilot)
        rows = _rows(dialog)
        assert rows["g43"][1] and not rows["g63"][1]
        assert not rows["group:0"][1] and "(1 of 2 selected)" in rows["group:0"][0]
        assert dialog.selected_ids == ("g43", "g74")
        assert "bn1'].training is a constant to Dynamo" in _details(dialog)   # one guard of it: its own warning
        await pilot.press("e")                            # on a member: folds its group
        await _settled(pilot)
        assert list(_rows(dialog)) == ["g1", "group:0", "g74"]
        await pilot.press("space")                        # a partly selected group: all of it
        await _settled(pilot)
        assert _rows(dialog)["group:0"][1] and dialog.selected_ids == ("g43", "g63", "g74")
        await pilot.press("space")                        # and off again
        await _settled(pilot)
        assert dialog.selected_ids == ("g74",)
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == ["decide(drop g74)"]


async def test_selected_and_unselected_rows_read_differently_on_screen(tmp_path: Path) -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot, app)
        shot = tmp_path / "dialog.svg"

        def row(text: str) -> str:
            shot.write_text(app.export_screenshot(), encoding="utf-8")
            return next(squeeze(r) for r in svg_rows(shot) if text in r)

        assert "[x]g74EQUALS_MATCH" in row("g74 EQUALS_MATCH")
        assert "[]g1GLOBAL_STATE" in row("g1 GLOBAL_STATE")
        assert "[]▸2×TRUE_MATCH" in row("2 × TRUE_MATCH")
        assert "X" not in row("g1 GLOBAL_STATE").split("g1")[0]   # no ticked-looking mark on an unselected row
        await pilot.press("space", "down", "down", "space")   # g1 on, g74 off
        await _settled(pilot)
        assert "[x]g1GLOBAL_STATE" in row("g1 GLOBAL_STATE")
        assert "[]g74EQUALS_MATCH" in row("g74 EQUALS_MATCH")


async def test_nothing_selected_recompiles_with_every_guard() -> None:
    app = make_app(mode_switch_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, app)
        await pilot.press("down", "down", "space")         # g74 off: nothing selected
        await _settled(pilot)
        assert dialog.selected_ids == ()
        assert "nothing selected: Enter recompiles with every guard kept" in _details(dialog)
        await pilot.press("enter")
        await _settled(pilot)
        assert app.session.sent == ["decide(recompile)"]


async def test_the_dialog_fits_80_by_24() -> None:
    app = make_app(counter_recompile_scenario())
    async with app.run_test(size=SIZE) as pilot:
        dialog = await _open(pilot, app)
        box = dialog.query_one("#drop-box")
        assert box.region.right <= 80 and box.region.bottom <= 24 and box.region.y >= 0
        rows = dialog.query_one("#drop-rows", SelectionList)
        assert rows.region.height >= 1 and dialog.query_one("#drop-details-box").region.height >= 3
