"""SVG snapshots of the TUI on the fake engine, at 120x40 (the size the layout is designed for).

The fake engine's data is canned, so these do not depend on the Python version; they do depend on Textual's
rendering, so they run only on the pinned Textual. Regenerate after an intended change with
``pytest tests/app/test_tui_snapshots.py --snapshot-update`` and review ``snapshot_report.html``.
"""

from __future__ import annotations

import pytest
import textual
from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import counter_recompile_scenario, crash_scenario, forward_scenario, mode_switch_recompile_scenario

pytestmark = pytest.mark.skipif(textual.__version__ != "8.2.8",
                                reason="snapshots are pinned to the Textual version that made them")

SIZE = (120, 40)


def _after(*keys: str):  # noqa: ANN202
    """A run_before that waits for the first stop, presses `keys` one by one, and lets everything settle."""

    async def run_before(pilot) -> None:  # noqa: ANN001
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        await settle(pilot)

    return run_before


def test_main_screen_mid_step(snap_compare) -> None:  # noqa: ANN001
    """Five steps into ``forward``: the marker on the CALL of the FX graph (index 5), its NULL, function and two
    arguments on the value stack (TOS first), the locals, source synced to line 16, the guard tree passing."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_after(*"sssss"))


def test_history_shows_a_recorded_stop(snap_compare) -> None:  # noqa: ANN001
    """Five steps, then ``[`` twice: the status line reads ``HISTORY 4/6 … any step returns to the present`` in
    the warning colour, the marker and the current row (warning colour) on the recorded instruction (index 3), the
    value stack and locals recorded then, both panes subtitled ``recorded: history 4/6``."""
    assert snap_compare(make_app(), terminal_size=SIZE,
                        run_before=_after(*"sssss", "left_square_bracket", "left_square_bracket"))


def test_guard_tree_expanded_on_failing_guard(snap_compare) -> None:  # noqa: ANN001
    """The entry's guards evaluated for n=4: the tree opens the path to the failing ``L['n'] == 3`` guard, whose
    details (expression, user line, expected/actual) are expanded with Enter; the rest stay collapsed."""
    app = make_app(forward_scenario(n_fails=True))

    async def run_before(pilot) -> None:  # noqa: ANN001
        await settle(pilot)
        pilot.app.main_screen.guard_tree.focus()
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen_lists_the_action_registry(snap_compare) -> None:  # noqa: ANN001
    """``?`` opens the help: every registry action with its keys, what it does and its console command, then the
    console's command language."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_after("question_mark"))


def test_program_that_raised_stays_open_with_traceback(snap_compare) -> None:  # noqa: ANN001
    """A script that raised: status line with the exit status and exception, the Stop view showing the
    traceback, the log saying so; the debugger waits for ``q``."""
    assert snap_compare(make_app(crash_scenario()), terminal_size=SIZE, run_before=_after())


def test_original_bytecode_view(snap_compare) -> None:  # noqa: ANN001
    """Key ``2`` switches the left pane to the original bytecode of ``forward``, fetched with ``orig``."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_after("2"))


def test_recompile_screen_answers_why_at_a_glance(snap_compare) -> None:  # noqa: ANN001
    """``module_int_counter.py``'s third call, recorded (``self.counter`` is 2): the Recompile view opens by
    itself with both entries' failing ``L['self'].counter == N`` guards (user line, expected/actual, torch's HINT
    once), the changed input; the inputs in the locals pane, the failing path open in the guard tree, the choices
    (R E S D M) in the footer."""
    assert snap_compare(make_app(counter_recompile_scenario()), terminal_size=SIZE, run_before=_after())


def test_drop_dialog_asks_first_at_80x24(snap_compare) -> None:  # noqa: ANN001
    """``D`` at the recompile stop of ``eval_after_training.py`` (recorded: the model switched to eval() under
    no_grad): the drop dialog at 80x24, the step count's guard selected, GLOBAL_STATE and the two ``.training``
    guards unselected with their reason, the warning and the permanent code of the selection below; nothing has
    run."""
    assert snap_compare(make_app(mode_switch_recompile_scenario()), terminal_size=(80, 24), run_before=_after("D"))


def test_edit_dialog_previews_a_stack_underflow(snap_compare) -> None:  # noqa: ANN001
    """``e`` on row 8 (``LOAD_CONST 0``), typed ``POP_TOP``: the live preview rejects it (row 9 ``BINARY_SUBSCR``
    would underflow), showing the depth before → after of the rows around the edit and the diff; nothing is sent."""

    async def run_before(pilot) -> None:  # noqa: ANN001
        await _after(*["down"] * 8, "e")(pilot)
        await pilot.press("ctrl+u", *"POP_TOP")
        await settle(pilot)  # the preview (no debounce in tests)
        await settle(pilot)
        from test_tui_recompile_edit import preview_text

        for _ in range(200):  # the engine's answer for the whole word, not the one for a keystroke before it
            if "BINARY_SUBSCR needs 2 values" in preview_text(pilot.app.screen):
                break
            await pilot.pause(0.05)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_diff_view_after_an_edit(snap_compare) -> None:  # noqa: ANN001
    """``edit 8 LOAD_CONST 1`` applied from the dialog, then key ``6``: the Diff view lists Dynamo's row 8 in red
    (``-``) and the edited row in green (``+``) with three rows of context and folded unchanged runs."""

    async def run_before(pilot) -> None:  # noqa: ANN001
        await _after(*["down"] * 8, "e")(pilot)
        await pilot.press("ctrl+u", *"LOAD_CONST 1", "enter")
        await settle(pilot)
        await _after("6")(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_watches_pane_marks_changes_and_shows_errors(snap_compare) -> None:  # noqa: ANN001
    """``watch y``, ``watch n``, ``watch nope`` typed at the entry, then eleven steps: the watches pane (under the
    locals) shows ``y`` bound since the last stop (marked ``*``), ``n`` unchanged, and ``nope``'s NameError in
    the error colour; the program was never stopped for it."""

    async def run_before(pilot) -> None:  # noqa: ANN001
        await settle(pilot)
        for line in ("watch y", "watch n", "watch nope"):
            await pilot.press("colon", *line, "enter", "escape")
            await settle(pilot)
        await _after(*"s" * 11)(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_roles_gutter_headers_and_explain_pane(snap_compare) -> None:  # noqa: ANN001
    """Teaching data on: five steps into ``forward`` the bytecode pane has a coloured role bar per instruction and
    a header per section (load graph, inputs, ``call graph __compiled_fn_1 (2 inputs)``); ``X`` opens the Explain
    pane on the graph's CALL: its role sentence, the live values it pops, what CALL does on this Python."""
    assert snap_compare(make_app(forward_scenario(teach=True)), terminal_size=SIZE,
                        run_before=_after(*"sssss", "X"))


def test_stack_pane_provenance(snap_compare) -> None:  # noqa: ANN001
    """Teaching data on, before ``STORE_FAST y``: the stack pane names under each slot the instruction that pushed
    it; the graph's output names its FX node (``output 0 of __compiled_fn_1 (FX node relu)``)."""
    assert snap_compare(make_app(forward_scenario(teach=True)), terminal_size=SIZE, run_before=_after(*"s" * 10))
