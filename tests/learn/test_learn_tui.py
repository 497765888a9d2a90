"""`dynadbg learn` in the TUI, on the real engine: the narration pane follows each lesson as the learner types
each step's action in the console, or presses the key the footer offers for it (Pilot)."""

from __future__ import annotations

import asyncio
import os
import re
import time

import pytest

from dynadbg.learn.coach import resolve_action
from dynadbg.learn.lessons import load_lessons
from dynadbg.learn.progress import DATA_DIR_ENV, Progress
from dynadbg.learn.tui import PANES_PENDING

pytestmark = pytest.mark.slow

LESSONS = load_lessons()


async def _until(pilot, condition, timeout: float = 60.0) -> bool:  # noqa: ANN001
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            return False
        await asyncio.sleep(0.01)  # polls the real engine: no fixed wait
    return True


def _learn_app(lesson, tmp_path, monkeypatch):  # noqa: ANN001, ANN202
    """`lesson` in the TUI on the real engine, its progress kept under `tmp_path`."""
    from dynadbg.core.session import Session
    from dynadbg.learn.tui import LearnApp

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return LearnApp(lesson, Progress(), lambda listener: Session(listener, break_on=lesson.break_on))


async def _settle(pilot) -> None:  # noqa: ANN001
    """Until no engine call is in flight and no worker runs (a settled app), then its messages handled."""
    await _until(pilot, lambda: pilot.app.settled and all(w.is_finished for w in pilot.app.workers))
    await pilot.pause()


async def _play_steps(pilot, lesson, count: int) -> None:  # noqa: ANN001
    """Type the first command of each of `lesson`'s first `count` steps, each once its step is current."""
    app = pilot.app
    for step in lesson.steps[:count]:
        app.submit(await asyncio.to_thread(resolve_action, app.session, step.action[0]))
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.coach.index >= step.number, 30)


async def _lesson_3_at_the_graph_break(pilot) -> str:  # noqa: ANN001
    """Lesson 3 from its first stop: `ll` (step 1), then `until` the graph-break CALL (step 2); the `until` line
    typed."""
    app = pilot.app
    assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
    app.submit("ll")
    assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
    line = await asyncio.to_thread(resolve_action, app.session, "until {role:graph break:CALL}")
    app.submit(line)
    assert await _until(pilot, lambda: app.coach.index == 2 and _idle(app))
    return line


def _idle(app) -> bool:  # noqa: ANN001
    return (app.stopped or app.phase == "exited") and not app.engine_busy


def _key_for(app, line: str):  # noqa: ANN001, ANN202
    """The registry action whose key sends `line` and applies now (`check_action`), with the bytecode cursor's
    instruction index its command takes (None: the current instruction); None when no key does."""
    from dynadbg.tui import actions

    for action in actions.ACTIONS:
        template = action.command
        if (actions.command_line(action.id, 0, at_trace=app.at_trace_stop) is None
                or app.check_action("dbg", (action.id,)) is not True):
            continue
        if "{cursor}" in template:
            match = re.fullmatch(re.escape(template).replace(re.escape("{cursor}"), r"(\d+)"), line)
            if match:
                return action, int(match.group(1))
        if line == actions.command_line(action.id, at_trace=app.at_trace_stop):
            return action, None
    return None


async def _press_for(pilot, line: str) -> str | None:  # noqa: ANN001
    """Do `line` with the key the footer offers for it (the edit dialog for an ``edit``): the key pressed, or None
    when no key does it now (the caller types it)."""
    app = pilot.app
    bytecode = app.main_screen.bytecode
    edit = re.fullmatch(r"edit (\d+) (.+)", line)
    found = _key_for(app, line)
    if edit and app.check_action("dbg", ("edit",)) is True:
        key, index = "e", int(edit.group(1))
    elif found is not None:
        action, index = found
        key = action.keys.split(",")[0]
    else:
        return None
    if app.focused is app.main_screen.console.input:
        await pilot.press("escape")  # the keys, not the command line
    step = app.coach.step
    if app._panes_pending and step is not None and step.cursor is not None and index is not None:  # noqa: SLF001
        # as a learner does: one key while the last answer is kept brings the step's cursor, then acts on its row,
        # the row the step asks for (checked: the step is done only if the action ran there)
        await pilot.press(key)
        return key
    if index is None:
        bytecode.action_to_current()
    else:
        bytecode.action_cursor_to(index)
    await pilot.pause()
    await pilot.press(key)
    if edit:
        from dynadbg.tui.edit_dialog import EditDialog

        assert await _until(pilot, lambda: isinstance(app.screen, EditDialog))
        await pilot.press("ctrl+u", *edit.group(2), "enter")
        assert await _until(pilot, lambda: not isinstance(app.screen, EditDialog))
    return key


#: How the lessons are played: typed, and by the footer's keys. CI's secondary lanes (other Pythons and torches) set
#: DYNADBG_TEST_LEARN_BY=typing: what a key sends is the same on every version, the generated code the typed plays
#: step through is not (the main lane plays both).
PLAYS = [by for by in os.environ.get("DYNADBG_TEST_LEARN_BY", "typing,keys").split(",") if by in ("typing", "keys")]


@pytest.mark.parametrize("by", PLAYS)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path.stem)
async def test_every_lesson_in_the_tui(lesson, by, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Each step's action, typed in the console (`by` typing) or done by the footer's key where one sends that
    command (`by` keys: ``E`` for ``eager``, ``t`` on the cursor's row for ``until IDX``, ``3`` for ``graph``, the
    edit dialog for ``edit``), makes the step done."""
    await _play(lesson, by, tmp_path, monkeypatch, (120, 40))


@pytest.mark.skipif("keys" not in PLAYS, reason="this lane plays the lessons by typing only")
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path.stem)
async def test_every_lesson_by_keys_at_80x24(lesson, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """At 80×24, where one pane is in front beside the narration and panes step aside, the footer's keys still
    make every step done."""
    await _play(lesson, "keys", tmp_path, monkeypatch, (80, 24))


async def _play(lesson, by: str, tmp_path, monkeypatch, size: tuple[int, int]) -> None:  # noqa: ANN001
    app = _learn_app(lesson, tmp_path, monkeypatch)
    pressed: list[str] = []
    async with app.run_test(size=size) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        narration = app.narration
        assert narration.heading == f"Lesson {lesson.number}: {lesson.title} · step 1 of {len(lesson.steps)}"
        assert str(narration.border_title).endswith(f" · step 1 of {len(lesson.steps)}")
        for step in lesson.steps:
            assert app.coach.index == step.number - 1
            for command in step.action:
                assert await _until(pilot, lambda: _idle(app)), f"step {step.number}: the app never settled"
                if app.coach.index != step.number - 1:
                    break
                line = await asyncio.to_thread(resolve_action, app.session, command)
                key = await _press_for(pilot, line) if by == "keys" else None
                if key is None:
                    app.submit(line)
                else:
                    pressed.append(f"{key} ({line})")
                await _settle(pilot)
            await _until(pilot, lambda: _idle(app) and app.coach.index >= step.number, 30)
            assert app.coach.index == step.number, (
                f"lesson {lesson.number} ({lesson.path.name}) step {step.number}: `{'; '.join(step.action)}` "
                f"{'by keys ' + ', '.join(pressed) if by == 'keys' else 'typed'} did not make it true in the TUI "
                f"(it needs: {step.done.describe()})")
        await _settle(pilot)
        assert "· done" in str(narration.border_title)
        assert not app.coach.skipped
        await pilot.press("q")
    assert lesson.number in Progress().done
    if by == "keys":
        print(f"lesson {lesson.number} by keys: {', '.join(pressed)}")
        assert pressed, f"lesson {lesson.number}: no step's command has a key (the keys run is the typing run)"


async def test_f8_skips_a_step_and_a_wrong_move_shows_a_hint(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("until 3")                     # step 1 wants `ll`
        assert await _until(pilot, lambda: app.coach.hint is not None)
        assert "Hint:" in app.narration.plain
        await pilot.press("f8")
        await _settle(pilot)
        assert app.coach.index == 1 and f"step 2 of {len(lesson.steps)}" in str(app.narration.border_title)
        await pilot.press("q")


async def test_f8_types_the_skipped_steps_command_that_moves_the_program(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 1 at 80x24: F8 on step 3 (`until` the graph call) used to move the narration only, and step 4 ("the
    value stack at the graph call") described a stop that was not on screen. Now F8 types the skipped step's
    `until IDX` (the console says so), the program stops at the graph call, and step 4's `stack` is done there."""
    lesson = LESSONS[0]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for _ in range(2):
            await pilot.press("f8")                  # steps 1 and 2 only look: nothing is typed
            await _settle(pilot)
        start = app.last_stop.selected_frame.index
        await pilot.press("f8")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.last_stop.selected_frame.index != start)
        await _settle(pilot)
        log = " ".join(" ".join(strip.text.split()) for strip in app.main_screen.console.log_widget.lines)
        assert re.search(r"skipped step 3: typing its `until (\d+)` for you", log)
        assert app.coach.index == 3 and app.coach.skipped == [1, 2, 3] and app.coach.hint is None
        frame = app.last_stop.selected_frame
        assert frame.code.instructions[frame.index].opname == "CALL"
        app.submit("stack")
        assert await _until(pilot, lambda: app.coach.index == 4 and _idle(app))
        assert app.coach.passed == [4]
        await pilot.press("q")


async def test_lesson_7_s_continue_step_needs_the_next_call_and_f8_types_its_c(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 7 step 4 ("Continue with `c`": the next call runs the edited code): a newcomer's F8 there typed
    nothing, the program stayed in call 0 (whose entry stop is an entry stop too), step 5 said "this call still
    runs the edited code", and the lesson ended without 'edited' printed. A look (`guards`) at call 0 passed the
    step the same way. Now the step needs the edited code in front of the learner; F8 types its `c`."""
    lesson = LESSONS[6]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _play_steps(pilot, lesson, 3)
        assert app.coach.index == 3
        app.submit("guards")                          # a look at call 0's entry stop: not the next call's
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app))
        await _settle(pilot)
        assert app.coach.index == 3
        await pilot.press("f8")
        assert await _until(pilot, lambda: app.coach.index == 4 and _idle(app))
        await _settle(pilot)
        assert "skipped step 4: typing its `c` for you" in " ".join(_log_text(app).split())
        for line in ("patch undo", "guard undo", "c"):
            app.submit(line)
            await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app))
        assert await _until(pilot, lambda: app.phase == "exited" and app.coach.finished)
        printed = [line for line in _log_text(app).splitlines() if "tag = " in line]
        assert [line.split("tag = ")[1].split(",")[0] for line in printed] == ["'original'", "'edited'", "'original'"]
        await pilot.press("q")


async def test_lesson_3_f5_at_the_until_step_strands_it_and_the_steps_about_the_break_after_it(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 3 at 80x24, played as a newcomer did: `ll`, then F5 (continue) at step 2 instead of `until` the
    graph-break CALL: the program runs into the resume function, called from after the break. Step 2 says it can no
    longer be done (no `until 51` hint for code where index 51 does not exist); F8 goes on, and step 3 ("you are at
    the instruction Dynamo could not put in a graph") says the same rather than describe a stop that is not there,
    as does step 4 (`until` the resume call: the program is inside the call it made); no step text or console line shows a raw ``{role:...}`` placeholder."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("ll")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        await pilot.press("f5")
        assert await _until(pilot, lambda: _idle(app) and "resume_in_normalise" in app.last_stop.frame.code.name)
        await _settle(pilot)
        assert await _until(pilot, lambda: app.coach.stranded)
        assert "the program has gone past it" in " ".join(app.narration.plain.split())
        # the border says how to go on and how to leave, whole at 80 columns (it was cut: "type q to leave the …")
        assert await _until(pilot, lambda: str(app.narration.border_subtitle).startswith("more below"), 10)
        subtitle = str(app.narration.border_subtitle)
        assert "F8: skip step" in subtitle and "leave" in subtitle and len(subtitle) <= 74, subtitle
        await pilot.press("f8")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.coach.index == 2)
        await _settle(pilot)
        assert app.coach.stranded, app.narration.plain
        text = " ".join(app.narration.plain.split())
        assert text.startswith("This step can no longer be done in this run"), text
        # step 4, `until` the resume call: the program is inside the call that instruction made
        await pilot.press("f8")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.coach.index == 3)
        await _settle(pilot)
        assert app.coach.stranded, app.narration.plain
        assert "{role:" not in _log_text(app) and "{role:" not in app.narration.plain
        # a typed `explain` opens the Explain pane on the instruction it explained (it opened on the cursor's row,
        # RESUME, while the console explained the current LOAD_GLOBAL)
        app.submit("explain")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.main_screen.explain_shown)
        await _settle(pilot)
        current = app.last_stop.selected_frame.index
        parts = app.main_screen.query_one("#explain").parts
        assert parts[0].plain.startswith(f"{current} ") and app.main_screen.bytecode.cursor == current
        await pilot.press("q")


async def test_a_typed_look_over_the_steps_pane_keeps_its_answer_until_the_next_key(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 3 at 80x24: after step 3's `explain`, a newcomer typed the `stack` that step 3 suggests. Its pane came
    over the bytecode pane, and step 4 ("the row under the bytecode pane's cursor") had no bytecode pane on screen
    and no way back said. Now the narration says the answer is kept and the next key brings the step's pane: the
    bytecode pane, its cursor on the resume call."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _play_steps(pilot, lesson, 3)
        assert app.coach.index == 3
        app.submit("stack")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.front == "stack")
        await _settle(pilot)
        assert app.narration.plain.startswith(PANES_PENDING), app.narration.plain
        await pilot.press("end")                      # any key (here: in the console's command line)
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.front == "views")
        await _settle(pilot)
        line = await asyncio.to_thread(resolve_action, app.session, lesson.steps[3].action[0])
        assert await _until(pilot, lambda: line == f"until {app.main_screen.bytecode.cursor}")
        assert not app.narration.plain.startswith(PANES_PENDING)
        # a view key is the learner's own choice of pane: it stays
        await pilot.press("escape")
        await pilot.press("3")
        await _settle(pilot)
        await pilot.press("down")
        await _settle(pilot)
        assert not app.narration.plain.startswith(PANES_PENDING) and app.coach.index == 3
        # a typed look, then F8: the skip keeps nothing of the answer; step 5's value-stack pane is in front (a
        # newcomer read "the value-stack pane (in front now)" with the bytecode pane in front)
        await pilot.press("colon")
        app.submit("locals")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.front == "locals")
        await pilot.press("f8")

        def at_resume_call() -> bool:
            frame = app.last_stop.selected_frame
            return frame.code.instructions[frame.index].opname == "CALL_FUNCTION_EX"

        assert await _until(pilot, lambda: _idle(app) and app.coach.index == 4 and at_resume_call())
        await _settle(pilot)
        assert app.coach.hint is None, (app.coach.wrong, app.coach.wrong_moves)
        assert app.front == "stack" and not app.narration.plain.startswith(PANES_PENDING), app.narration.plain
        await pilot.press("q")


async def test_enter_on_an_empty_command_line_before_any_command_runs_nothing_in_a_lesson(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """pdb's first-prompt rule (an empty line steps) moved a newcomer's program past the step when they pressed
    Enter "to go on". In a lesson an empty line before any command runs nothing, and says so."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        index = app.last_stop.selected_frame.index
        await pilot.press("enter")
        await _settle(pilot)
        assert _idle(app) and app.last_stop.selected_frame.index == index and app.coach.hint is None
        assert "none was typed yet: nothing ran" in _log_text(app)
        await pilot.press("q")


async def test_f8_after_a_stranded_recompile_step_goes_on_without_a_loop(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 4: R at step 3 (which asks for E) strands it at once; F8 then finds the program already at the second
    entry's code, where step 4's `recompile` leads: step 4 is done by that, nothing is typed, no hint (a newcomer
    got "`recompile` did not work" in a loop). Lesson 2: F8 on step 2 types its `c`; step 3 opens without a hint."""
    lesson = LESSONS[3]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for line in ("c", "why"):
            app.submit(line)
            await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app))
        assert app.coach.index == 2
        await pilot.press("escape")
        await pilot.press("R")
        assert await _until(pilot, lambda: app.coach.stranded and _idle(app))
        await pilot.press("f8")
        assert await _until(pilot, lambda: app.coach.index == 4 and _idle(app))
        await _settle(pilot)
        assert app.coach.skipped == [3] and 4 in app.coach.passed and app.coach.hint is None
        assert "only at a recompile stop" not in _log_text(app)
        assert "step 4 is done too: the program is already where its `recompile` leads" in \
            " ".join(_log_text(app).split())
        await pilot.press("q")
    lesson = LESSONS[1]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for _ in range(2):
            await pilot.press("f8")
            await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app))
        assert await _until(pilot, lambda: app.last_stop is not None and app.last_stop.kind.value == "recompile"
                             and _idle(app))
        await _settle(pilot)
        assert app.coach.index == 2 and app.coach.hint is None, app.coach.hint
        assert not app.narration.plain.startswith("Hint:")
        await pilot.press("q")


async def test_a_step_longer_than_its_pane_at_80x24_scrolls_with_shift_down(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 3's first step does not fit the narration pane at 80×24: its border says how to see the rest, and
    Shift+Down (typed while the console has the focus) brings the step's last sentence, what to do, on screen."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("svg_text", Path(__file__).parents[1] / "app" / "svg_text.py")
    svg_text = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(svg_text)
    squeeze, svg_rows = svg_text.squeeze, svg_text.svg_rows

    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    shot = tmp_path / "screen.svg"

    def screen() -> str:
        shot.write_text(app.export_screenshot(), encoding="utf-8")
        # the narration's rows joined: a sentence wrapped across two rows reads on (their borders dropped)
        return squeeze("".join(svg_rows(shot))).replace("││", "")

    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        last = squeeze(" ".join(lesson.steps[0].text.split()[-6:]))
        assert last not in screen(), "the step fits at 80x24: this test no longer tests a long step"
        # the border is rewritten after the text's layout (`NarrationView._say_if_more`, after a refresh)
        assert await _until(pilot, lambda: str(app.narration.border_subtitle).startswith("more below"), 10)
        subtitle = str(app.narration.border_subtitle)
        assert subtitle.startswith("more below: Shift+↓") and "F8: skip step" in subtitle
        # the whole subtitle on the border at 80 columns: what does not fit is dropped, never cut mid-word
        assert len(subtitle) <= 74, subtitle
        assert app.focused is app.main_screen.console.input
        for _ in range(6):
            await pilot.press("shift+down")
        await _settle(pilot)
        assert last in screen(), screen()
        assert app.focused is app.main_screen.console.input   # still typing: the keys did not move the focus
        assert await _until(pilot, lambda: str(app.narration.border_subtitle).startswith("Shift+↑: back to the top"),
                            10)
        await pilot.press("q")


async def test_at_80x24_the_footer_beside_the_console_fits_the_skip_key_and_how_to_leave(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A lesson starts in the console, where the letter keys type: the footer shows the keys that work there, F8
    among them, and how to leave the console for the letter keys, all within 80 columns."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        assert app.focused is app.main_screen.console.input
        footer = re.sub(r"\s+", "", _screen_rows(app, tmp_path)[-1])
        assert "F10Next" in footer and "F8Skipstep" in footer and "Esc/Tabforletterkeys" in footer, footer
        assert all(part.region.right <= 80 for part in app.main_screen.query("KeysFooter > *"))
        await pilot.press("ctrl+q")


async def test_at_80x24_the_footer_of_the_letter_keys_shows_t_which_lesson_1_asks_for(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Issue 21: lesson 1 says "Esc, then `t`, runs to the cursor", and at 80 columns the footer was cut before ``t``
    (``F8 Skip step`` takes its room). After Esc the footer shows the stepping keys first, ``t Until`` among them."""
    lesson = LESSONS[0]
    assert "`t`" in " ".join(step.text for step in lesson.steps)
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        await pilot.press("escape")
        await _settle(pilot)
        footer = re.sub(r"\s+", "", _screen_rows(app, tmp_path)[-1])
        assert footer.startswith("?HelpqQuitsStepnNexttUntilcCont") and "F8Skipstep" in footer, footer
        assert all(part.region.right <= 80 for part in app.main_screen.query("KeysFooter > *"))
        await pilot.press("ctrl+q")


def test_a_long_lesson_title_is_cut_before_its_step_count_at_80_columns() -> None:
    from dynadbg.tui.narration_view import fitted_title

    heading = "Lesson 3: A graph break: the eager instruction and the resume function · step 1 of 8"
    title = fitted_title(heading, 80)
    assert title.endswith("… · step 1 of 8") and title.startswith("Lesson 3: A graph break") and len(title) <= 74
    assert fitted_title(heading, 120) == heading  # a pane wide enough shows it whole
    assert fitted_title("Lesson 3: A graph break: the eager instruction and the resume function · done", 60).endswith(
        "… · done")


async def test_a_program_that_ends_on_an_unfinished_step_says_so_and_f8_goes_on(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 4, step 3 asks for `eager` at the recompile stop; `R` (recompile) there is a wrong move, and `c` then
    lets the program end: the narration says the step cannot be done in this run and how to go on, and F8 walks
    through the rest to the end of the lesson."""
    lesson = LESSONS[3]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await pilot.press("escape")
        for key in ("c", "7"):                       # steps 1 and 2, by the keys
            await pilot.press(key)
            await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app))
        assert app.coach.index == 2, "steps 1 and 2 by keys"
        await pilot.press("R")                       # step 3 wants E
        assert await _until(pilot, lambda: app.coach.stranded and _idle(app))
        await _settle(pilot)
        # at once, on the first row, where "▶ Choose `eager`" was (a second entry now: that stop is gone)
        assert app.narration.plain.startswith("This step can no longer be done in this run: it is about the moment "
                                              "the function had 1 cache entry, and it has 2 now")
        await pilot.press("c")
        assert await _until(pilot, lambda: app.phase == "exited" and app.coach.stranded and _idle(app))
        await _settle(pilot)
        text = app.narration.plain
        assert "The program has ended before this step was done, so it cannot be done in this run." in text
        assert "Press F8 (or type `lesson skip`) to skip it" in text and "`dynadbg learn 4`" in text
        assert "Hint:" not in text
        assert "F8: skip step · q: leave the debugger" in str(app.narration.border_subtitle)
        assert str(app.narration.border_title).endswith(f"step 3 of {len(lesson.steps)}")
        for number in range(4, len(lesson.steps) + 1):
            await pilot.press("f8")
            await pilot.pause()
            assert f"step {number} of" in str(app.narration.border_title)
            assert "cannot be done in this run" in app.narration.plain
        await pilot.press("f8")
        await pilot.pause()
        assert "· done" in str(app.narration.border_title) and app.coach.skipped == [3, 4, 5, 6]
        assert "cannot be done" not in app.narration.plain
        await pilot.press("q")


async def test_f8_after_the_end_says_which_later_step_the_end_did(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 2 after the program ended: F8 on step 5 went straight to "done" (step 6 waits for the end, which had
    come), and step 6 was never shown. The console says so."""
    lesson = LESSONS[1]
    assert lesson.steps[-1].done.exited
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        while app.phase != "exited":
            app.submit("c")
            assert await _until(pilot, lambda: _idle(app) and app.phase in ("stopped", "exited"))
        assert await _until(pilot, lambda: app.coach.stranded and _idle(app))
        for _ in range(len(lesson.steps) - 1):
            await pilot.press("f8")
            await _settle(pilot)
        assert "· done" in str(app.narration.border_title)
        last = len(lesson.steps)
        assert f"step {last} is done too: it waits for the program's end, which has come" in _log_text(app)
        await pilot.press("q")


async def test_a_palette_entry_counts_as_its_command(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 4, step 3 (`eager` at the recompile stop) done from the command palette (Ctrl+P, "Eager")."""
    from textual.command import CommandPalette

    lesson = LESSONS[3]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for line in ("c", "why"):
            app.submit(line)
            await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app))
        assert app.coach.index == 2
        await pilot.press("escape", "ctrl+p")
        assert await _until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Eager: Run this call eagerly")
        await pilot.pause(0.5)
        await pilot.press("enter")
        assert await _until(pilot, lambda: app.coach.index == 3 and _idle(app), 60), (
            f"the palette's Eager did not finish step 3 (step {app.coach.index + 1}, hint {app.coach.hint!r})")
        assert app.coach.hint is None
        await pilot.press("q")


def _screen_rows(app, tmp_path) -> list[str]:  # noqa: ANN001
    """The rows of the terminal as the learner reads them (`export_screenshot`)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("svg_text", Path(__file__).parents[1] / "app" / "svg_text.py")
    svg_text = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(svg_text)
    shot = tmp_path / "screen.svg"
    shot.write_text(app.export_screenshot(), encoding="utf-8")
    return svg_text.svg_rows(shot)


def _pane_rows(rows: list[str], title: str) -> list[str]:
    """The text rows inside the pane whose top border carries `title` (none: the pane is not on screen)."""
    top = next((i for i, row in enumerate(rows) if f"╭─ {title} " in row), None)
    if top is None:
        return []
    column = rows[top].index("╭")
    inside = []
    for row in rows[top + 1:]:
        if row[column:column + 1] != "│":
            break
        # the right border (a full-width pane), the scrollbar, and a bytecode row's gutter (marks, its role's letter)
        text = row[column + 1:].rsplit("│", 1)[0].strip("▁▂▃▄▅▆▇█ ")
        inside.append(re.sub(r"^[●✎▶›▷ ]*[A-Za-z?-](?= +\d+ )", "", text).strip() if title == "bytecode"
                      else text.strip("▌ "))
    return inside


async def test_at_80x24_the_pane_a_step_talks_about_has_room_and_its_answer_row(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 3 at 80×24: at the first stop the bytecode pane shows several rows (not a bare border); the step that
    asks for the BREAK CALL's index shows that row at once (`ll`'s answer is in the console: nothing to keep; the
    lesson put the cursor on it); ``X`` there opens an Explain
    pane with rows to read beside the bytecode, and it stays on that answer until the next key, which brings the
    next step's cursor (the resume call, explained); typing `stack` shows the value-stack pane whole."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        assert len([r for r in _pane_rows(rows, "bytecode") if r]) >= 4, "\n".join(rows)
        app.submit("ll")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        # `ll`'s answer is in the console: nothing to keep, step 2's cursor comes at once, on the row it asks for
        line = await asyncio.to_thread(resolve_action, app.session, "until {role:graph break:CALL}")
        assert await _until(pilot, lambda: _idle(app) and line == f"until {app.main_screen.bytecode.cursor}"), \
            "step 2's cursor did not come"
        await pilot.press(*"until ")              # the learner starts typing
        await _settle(pilot)
        index = app.main_screen.bytecode.cursor
        assert line == f"until {index}"   # the row the step asks for is under the cursor
        bytecode = _pane_rows(_screen_rows(app, tmp_path), "bytecode")
        assert any(re.match(rf"{index}\s+\d+.*CALL", r) for r in bytecode), "\n".join(bytecode)
        assert any("run eagerly" in r for r in bytecode), "\n".join(bytecode)
        await pilot.press(*str(index), "enter")
        assert await _until(pilot, lambda: app.coach.index == 2 and _idle(app))
        await _settle(pilot)
        await pilot.press("escape", "X")
        assert await _until(pilot, lambda: app.coach.index == 3 and _idle(app))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        # step 4 is shown, but the screen keeps step 3's answer: the Explain pane on the BREAK CALL, to read
        assert app.main_screen.bytecode.cursor == index, "\n".join(rows)
        explain = [r for r in _pane_rows(rows, "explain") if r]
        assert len(explain) >= 4 and explain[0].startswith(f"{index} CALL"), "\n".join(rows)
        assert "step 4 of" in str(app.narration.border_title)
        # the narration says so: its "the cursor is on that CALL_FUNCTION_EX" holds after the next key
        assert app.narration.text.plain.startswith(PANES_PENDING), app.narration.text.plain
        # the Explain pane's border says "Tab to this pane, then ↓": Tab, and ↓ inside that pane, only read the
        # answer: the cursor and the explanation stay on the BREAK CALL (a newcomer lost the answer here)
        for _ in range(4):
            if app.focused is app.main_screen.explain:
                break
            await pilot.press("tab")
            await _settle(pilot)
        assert app.focused is app.main_screen.explain, app.focused
        await pilot.press("down", "down")
        await _settle(pilot)
        assert app.main_screen.bytecode.cursor == index
        assert app.narration.text.plain.startswith(PANES_PENDING), app.narration.text.plain
        await pilot.press("colon")                 # the learner goes on (back to typing): step 4's cursor comes
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.main_screen.bytecode.cursor != index), \
            "the key did not bring step 4's cursor"
        await _settle(pilot)
        assert PANES_PENDING not in app.narration.text.plain
        rows = _screen_rows(app, tmp_path)
        # step 4 put the cursor on the resume call: the Explain pane explains that row, with room to read
        cursor = app.main_screen.bytecode.cursor
        explain = [r for r in _pane_rows(rows, "explain") if r]
        assert len(explain) >= 4 and explain[0].startswith(f"{cursor} CALL"), "\n".join(rows)
        assert any(r.startswith(f"{cursor} ") for r in _pane_rows(rows, "bytecode")), "\n".join(rows)
        app.submit("stack")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app))

        def tos_shown() -> bool:  # the pane scrolls to its TOS once it has been laid out: poll, a moment at most
            stack = [r for r in _pane_rows(_screen_rows(app, tmp_path), "value stack") if r]
            return any(r.startswith("TOS") for r in stack) and any("BINARY_SUBSCR" in r for r in stack)

        assert await _until(pilot, tos_shown, timeout=5.0), "\n".join(_screen_rows(app, tmp_path))
        await pilot.press("q")


async def test_a_hint_in_the_tui_names_the_console_not_line_modes_prompt(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 1's hint says "at the (dynadbg) prompt" for line mode; the TUI has no such prompt: it says "in the
    console"."""
    lesson = LESSONS[0]
    assert "(dynadbg) prompt" in lesson.steps[0].hints[0]   # line mode's wording (its prompt is "(dynadbg)")
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("s")                           # step 1 wants `orig`
        assert await _until(pilot, lambda: app.coach.hint is not None and _idle(app))
        await _settle(pilot)
        assert "Type the four letters `orig` in the console" in app.narration.plain
        assert "(dynadbg)" not in app.narration.plain
        await pilot.press("q")


async def test_while_letters_are_keys_the_step_and_its_hint_say_press_colon_first(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """After Esc, letters act as keys: a newcomer typed lesson 2's `guards` as the step said, which ran `r`,
    `s`, `c` and ended the program. While the console's command line lacks the focus, the ▶ row and the hint say
    to press `:` first; typing again, they do not."""
    from dynadbg.learn.tui import KEYS_NOW

    lesson = LESSONS[0]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        console = app.main_screen.console
        console.input.focus()
        await _settle(pilot)
        assert KEYS_NOW.strip() not in app.narration.plain
        await pilot.press("escape")
        await _settle(pilot)
        assert app.focused is not console.input
        first = app.narration.plain.split("▶ ", 1)[1]
        assert first.startswith("Type `orig`") and "press : first" in first.split("\n")[0] + first[:200]
        app.submit("s")                           # a wrong move: the hint
        assert await _until(pilot, lambda: app.coach.hint is not None and _idle(app))
        await _settle(pilot)
        assert app.narration.plain.count("press : first") >= 2   # the ▶ row and the hint
        await pilot.press("colon")
        await _settle(pilot)
        assert "press : first" not in app.narration.plain
        await pilot.press("escape")
        await pilot.press("q")


async def test_a_step_that_opens_with_its_command_says_press_colon_first_too(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 5 step 5 is one line, "Type `p history` again: ...", with no ▶ row, so the "press : first" note never
    showed while letters were keys (typed, `p history` runs p, h, i, ...). The note follows the opening command
    wherever it is; a one-letter command (`c`) is its own key and gets none."""
    from dynadbg.learn.tui import KEYS_NOW

    lesson = LESSONS[4]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await pilot.press("escape")
        await _settle(pilot)
        app.coach.index = 4                       # step 5's text, as the narration shows it
        app._show()
        await _settle(pilot)
        text = " ".join(app.narration.plain.split())
        assert f"Type `p history`{KEYS_NOW} again:" in text, text
    lesson = LESSONS[6]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await pilot.press("escape")
        await _settle(pilot)
        app.coach.index = 3                       # step 4: "Continue with `c`": the key c does it
        app._show()
        await _settle(pilot)
        assert KEYS_NOW.strip() not in app.narration.plain
        app.coach.index = 4                       # step 5: "Undo the instruction edit with `patch undo`"
        app._show()
        await _settle(pilot)
        assert f"`patch undo`{KEYS_NOW}" in " ".join(app.narration.plain.split())


async def test_at_80x24_lesson_2_shows_the_guard_its_first_step_asks_about(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 2 step 1 asks for the guard on L['offset'] and the source line it came from: at 80×24 the guard pane
    is on screen with that value's guards open, the EQUALS_MATCH leaf and its line in sight."""
    lesson = LESSONS[1]
    assert lesson.steps[0].pane == "guards"
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        assert await _until(pilot, lambda: app.main_screen.guards is not None)
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        guards = [re.sub(r"\s+", "", r) for r in _pane_rows(rows, "guards")]
        assert any("EQUALS_MATCHL['offset']==1←returnx+offset" in r for r in guards), "\n".join(rows)
        await pilot.press("q")


async def test_at_80x24_lesson_8_u_then_x_shows_the_explain_pane_of_the_caller(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 8 step 6 at 80×24, after the trace stop and its log answers: ``u`` then ``X`` show the caller's
    bytecode and an Explain pane of its resume call, with rows to read (it showed none)."""
    lesson = LESSONS[7]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("graph")                       # a trace stop: the answer is the log's, in front
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app))
        log = [re.sub(r"\s+", "", r) for r in _screen_rows(app, tmp_path)]
        # "+" marks a node the last traced instruction added (on 3.12 the stop comes right after the sum)
        assert any(r.lstrip("+").startswith("sum_1call_methodsum") for r in log), "\n".join(log)
        for step in lesson.steps[:5]:
            for command in step.action:
                assert await _until(pilot, lambda: _idle(app))
                if app.coach.index != step.number - 1:
                    break
                app.submit(await asyncio.to_thread(resolve_action, app.session, command))
                await _settle(pilot)
            assert await _until(pilot, lambda: _idle(app) and app.coach.index >= step.number, 30)
        await _settle(pilot)
        await pilot.press("escape")
        await pilot.press("u")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app))
        await pilot.press("X")
        assert await _until(pilot, lambda: app.coach.index == 6 and _idle(app))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        explain = [r for r in _pane_rows(rows, "explain") if r]
        assert len(explain) >= 4 and "resume call" in explain[0], "\n".join(rows)
        assert any("CALL_FUNCTION_EX" in r for r in _pane_rows(rows, "bytecode")), "\n".join(rows)
        await pilot.press("q")


async def test_at_80x24_escape_from_the_console_goes_to_the_pane_in_front(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """After `guards` the guard tree is the one pane in front: Escape gives it the focus (not the hidden
    bytecode view behind it), so Enter opens the guard under its cursor."""
    lesson = LESSONS[1]  # lesson 2: guards
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("guards")
        assert await _until(pilot, lambda: app.front == "guards" and _idle(app))
        await _settle(pilot)
        await pilot.press("escape")
        await _settle(pilot)
        assert app.focused is app.main_screen.guard_tree, app.focused
        await pilot.press("q")


async def test_shift_down_reads_the_next_step_without_bringing_its_pane(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Once a step is done by a command whose answer is a pane (lesson 1's `orig`), the next step's pane and
    cursor wait for the learner's next key, so the answer stays to be read; Shift+Down, which scrolls the step's
    text, is not that key (a learner scrolling to read the step lost the answer to the last one)."""
    from dynadbg.learn.tui import PANES_PENDING

    app = _learn_app(LESSONS[0], tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("orig")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        assert app.narration.plain.startswith(PANES_PENDING)
        await pilot.press("shift+down", "shift+down")
        await _settle(pilot)
        assert app.narration.plain.startswith(PANES_PENDING)  # still waiting
        await pilot.press("escape")  # any other key: the step's pane and cursor come
        await _settle(pilot)
        assert not app.narration.plain.startswith(PANES_PENDING)
        await pilot.press("q")


async def test_an_answer_only_in_the_console_keeps_nothing_the_next_step_brings_its_cursor_at_once(
        tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 3: `ll`'s answer is in the console (three rows at 80×24), so step 2's bytecode cursor comes at once,
    on the graph-break CALL the step asks for: the listing's region is on screen without a key."""
    from dynadbg.learn.tui import PANES_PENDING

    app = _learn_app(LESSONS[2], tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("ll")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        line = await asyncio.to_thread(resolve_action, app.session, "until {role:graph break:CALL}")
        assert await _until(pilot, lambda: _idle(app) and f"until {app.main_screen.bytecode.cursor}" == line)
        assert not app.narration.plain.startswith(PANES_PENDING)
        await pilot.press("q")


async def test_a_cursor_key_while_the_last_answer_is_kept_acts_on_the_steps_row(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 3 step 4 ("run to the call of the resume function") comes while `explain`'s answer is kept; the
    learner's `t` (until the cursor) runs to the resume call at once: the key brings the step's cursor, then acts
    on its row (a tester's first `t` used to do nothing but move the cursor)."""
    app = _learn_app(LESSONS[2], tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await _lesson_3_at_the_graph_break(pilot)
        app.submit("explain")
        assert await _until(pilot, lambda: app.coach.index == 3 and _idle(app))
        await _settle(pilot)
        target = await asyncio.to_thread(resolve_action, app.session, "until {role:resume call:CALL_FUNCTION_EX}")
        app.main_screen.bytecode.focus()
        await pilot.press("t")
        assert await _until(pilot, lambda: app.coach.index == 4 and _idle(app)), app.coach.index
        assert f"until {app.last_stop.frame.index}" == target
        await pilot.press("q")


async def test_lesson_8s_trace_steps_step_is_done_by_the_trace_views_key_too(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """After the graph break, key 9 opens the Trace view with what `trace steps` lists (the attempt that traced
    the break): it counts as that command, as the narration's "(key 9)" lets a learner expect."""
    from dynadbg.core.model import StopKind

    lesson = next(les for les in LESSONS if les.path.stem.startswith("08"))
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for k, line in enumerate(["why", "stack", "graph", "c"]):
            app.submit(line)
            assert await _until(pilot, lambda k=k: app.coach.index == k + 1 and _idle(app), 120), (line, app.coach.index)
        await _settle(pilot)
        assert app.last_stop.kind is StopKind.GRAPH_BREAK and app.coach.step.done.command == "trace"
        if app.focused is app.main_screen.console.input:
            await pilot.press("escape")
        await pilot.press("9")
        assert await _until(pilot, lambda: app.coach.index == 5 and _idle(app), 30), app.coach.index
        await pilot.press("q")


def _console_rows(rows: list[str]) -> list[str]:
    """The console log's rows: between the narration's bottom border and the command input (the row above the
    footer)."""
    bottom = max(i for i, row in enumerate(rows) if row.startswith("╰"))
    return rows[bottom + 1:-2]


async def test_at_80x24_the_console_shows_an_answer_of_several_rows_beside_the_narration(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 3 at 80×24: the console keeps six rows of its log (a step's answer that runs to several rows stays on
    screen), five while the Explain pane is open, and the narration keeps its title with "step N of M"."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        app.submit("ll")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        console = _console_rows(rows)
        assert len(console) >= 6 and all(r.strip() for r in console), "\n".join(rows)
        assert any("step 2 of 8" in r for r in rows), "\n".join(rows)
        assert len([r for r in _pane_rows(rows, "bytecode") if r]) >= 5, "\n".join(rows)
        await pilot.press("escape", "X")
        await _settle(pilot)
        assert await _until(pilot, lambda: _idle(app) and app.main_screen.has_class("-explain"))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        assert len(_console_rows(rows)) >= 5, "\n".join(rows)
        assert len([r for r in _pane_rows(rows, "explain") if r]) >= 4, "\n".join(rows)
        assert any("step 2 of 8" in r for r in rows), "\n".join(rows)
        await pilot.press("q")


async def test_at_80x24_lesson_4s_choices_read_one_under_another(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 4's recompile stop at 80×24: the Recompile view (78 columns) gives each choice a row of its key and
    syntax, with what it does and its permanent code under the syntax at nearly the view's width (not a column
    of 55 beside it)."""
    import io

    from rich.console import Console as RichConsole

    lesson = LESSONS[3]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        await _settle(pilot)
        app.submit("c")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        view = app.main_screen.recompile_view
        width = view.scrollable_content_region.width
        assert 64 <= width < 80, width
        console = RichConsole(width=width, record=True, file=io.StringIO())
        console.print(view.content)
        rows = console.export_text().splitlines()
        shown = "\n".join(rows)
        drop = next((k for k, r in enumerate(rows) if r.lstrip().startswith("D  drop [ID...]")), None)
        assert drop is not None, shown
        assert rows[drop].split("drop [ID...]", 1)[1].strip() == "", shown
        column = rows[drop].index("drop [ID...]")
        assert rows[drop + 1][column:].startswith("drop guards from the new entry"), shown
        assert rows[drop + 1][:column].strip() == "", shown
        permanently = next(k for k in range(drop, len(rows)) if rows[k].strip() == "permanently:")
        assert rows[permanently + 1].strip().startswith("torch.compile(scale"), shown
        await pilot.press("q")


def _log_text(app) -> str:  # noqa: ANN001
    """Everything in the console's log, as plain text."""
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


async def test_x_at_lesson_3s_explain_step_logs_the_explanation_as_the_typed_command_does(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 3 step 3 done by ``X``: the explanation is in the console's log too (typed `explain` puts it there),
    so the answer survives once the Explain pane follows the next step's cursor (a newcomer's X left the log
    empty)."""
    app = _learn_app(LESSONS[2], tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        line = await _lesson_3_at_the_graph_break(pilot)
        await _settle(pilot)
        index = line.split()[1]
        await pilot.press("escape", "X")
        assert await _until(pilot, lambda: app.coach.index == 3 and _idle(app))
        await _settle(pilot)
        log = _log_text(app)
        assert f"> explain {index}" in log, log
        assert re.search(rf"^{index} CALL", log, re.M) and "what it does:" in log, log
        await pilot.press("q")


async def test_a_hint_shows_first_f7_asks_for_one_and_a_wrong_stop_gives_the_cursor_back(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 1 step 3 at 80×24 ("the row under the bytecode pane's cursor ... `t`"): a wrong `until 5` stops at 5
    and the hint arrives as the narration's first row (it was appended below the fold); the cursor is back on the
    graph call the step names (it stayed on 5); the border names F7, which shows the next hint."""
    lesson = LESSONS[0]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for k, line in enumerate(["orig", "ll"]):
            app.submit(line)
            assert await _until(pilot, lambda k=k: app.coach.index == k + 1 and _idle(app))
        await _settle(pilot)
        assert "F7: hint" in str(app.narration.border_subtitle), app.narration.border_subtitle
        target = await asyncio.to_thread(resolve_action, app.session, "until {role:graph call:CALL}")
        app.submit("until 5")
        assert await _until(pilot, lambda: app.coach.hint is not None and _idle(app))
        await _settle(pilot)
        assert app.last_stop.frame.index == 5 and app.coach.index == 2
        assert await _until(pilot, lambda: _idle(app) and f"until {app.main_screen.bytecode.cursor}" == target, 10), (
            app.main_screen.bytecode.cursor, target)
        narration = [r for r in _pane_rows(_screen_rows(app, tmp_path), "Lesson 1: What torch.compile produced")]
        assert narration and narration[0].startswith("Hint: " + lesson.steps[2].hints[0][:30]), narration
        await pilot.press("f7")
        await _settle(pilot)
        assert app.narration.plain.startswith("Hint: " + lesson.steps[2].hints[1]), app.narration.plain
        assert len(lesson.steps[2].hints) == 2
        await pilot.press("f7")     # past the last hint: said, not silent
        await _settle(pilot)
        log = " ".join(" ".join(strip.text.split()) for strip in app.main_screen.console.log_widget.lines)  # wrapped
        assert "no more hints for this step" in log and "F8 skips it" in log, log[-500:]
        await pilot.press("q")


@pytest.mark.parametrize("number, by, shown", [
    (4, "typing", ("expected 2", "actual 3")),
    (6, "keys", ("size=[2]", "size=[3]")),
])
async def test_at_80x24_whys_answer_the_expected_and_actual_values_stay_on_screen(
        number, by, shown, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lessons 4 and 6 ask `why` for the failing guard's expected and actual values: at 80×24 the Recompile view
    starts at the failing entry, so they are on screen, also once the next (longer) step is shown (a tester found
    them below the pane's edge)."""
    lesson = LESSONS[number - 1]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        app.submit("c")
        assert await _until(pilot, lambda: app.coach.index == 1 and _idle(app))
        await _settle(pilot)
        if by == "keys":
            await pilot.press("escape", "7")
        else:
            app.submit("why")
        assert await _until(pilot, lambda: app.coach.index == 2 and _idle(app))
        await _settle(pilot)

        def answer_shown() -> bool:
            view = "".join(_pane_rows(_screen_rows(app, tmp_path), "why it recompiles"))
            return all(text in re.sub(r"\s+", "", view) for text in (t.replace(" ", "") for t in shown))

        assert await _until(pilot, answer_shown, 10), "\n".join(_screen_rows(app, tmp_path))
        if number == 4:
            # step 3 (now shown) names the "choose:" row "at its top, Esc then Home"
            assert "Esc then Home" in app.narration.plain
            if app.focused is app.main_screen.console.input:
                await pilot.press("escape")
            await pilot.press("home")
            await _settle(pilot)
            assert await _until(pilot, lambda: any(r.startswith("choose:") for r in _pane_rows(
                _screen_rows(app, tmp_path), "why it recompiles")), 5), "\n".join(_screen_rows(app, tmp_path))
        await pilot.press("q")


async def test_at_80x24_lesson_2s_second_entry_shows_the_type_matchs_source_line(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Lesson 2 step 5 at 80×24: the TYPE_MATCH row of L['offset'] is too long for the pane: it keeps the line of
    the user's source it came from and cuts the guard's code instead (the source line was cut at the right edge)."""
    lesson = LESSONS[1]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for step in lesson.steps[:5]:
            app.submit(step.action[0])
            assert await _until(pilot, lambda n=step.number: app.coach.index == n and _idle(app), 60), step.number
            await _settle(pilot)

        def shown() -> bool:
            rows = [re.sub(r"\s+", "", r) for r in _pane_rows(_screen_rows(app, tmp_path), "guards")]
            # ... and the type it checks ("it must be an int"), which the code's end `type=<class 'int'>` lost
            return any("TYPE_MATCH←returnx+offsettype=int" in r for r in rows)

        assert await _until(pilot, shown, 10), "\n".join(_screen_rows(app, tmp_path))
        await pilot.press("q")


async def test_at_80x24_lesson_2s_recompile_stop_shows_the_value_expected_and_found(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 2 step 2's recompile stop at 80×24: the Recompile view starts at the failing entry, so the failing
    guard's "expected 1 actual 2" is on screen (it was one row below the view's edge, under its title and choices)."""
    lesson = LESSONS[1]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _until(pilot, lambda: app.phase == "stopped" and _idle(app))
        for step in lesson.steps[:2]:
            app.submit(step.action[0])
            assert await _until(pilot, lambda n=step.number: app.coach.index == n and _idle(app), 60), step.number
            await _settle(pilot)

        def shown() -> bool:
            view = re.sub(r"\s+", "", "".join(_pane_rows(_screen_rows(app, tmp_path), "why it recompiles")))
            return "expected1" in view and "actual2" in view

        assert await _until(pilot, shown, 10), "\n".join(_screen_rows(app, tmp_path))
        await pilot.press("q")


async def test_at_120x40_the_bytecode_keeps_its_cursor_row_beside_an_open_explain_pane(tmp_path, monkeypatch) -> None:  # noqa: ANN001, E501
    """Lesson 3 at 120×40 with the Explain pane open (step 3's `explain`): step 4 talks about "the row under the
    bytecode pane's cursor" while its narration takes eight rows; the bytecode pane still shows that row (it was a
    bare border: the narration and the Explain pane had taken its rows)."""
    lesson = LESSONS[2]
    app = _learn_app(lesson, tmp_path, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        line = await _lesson_3_at_the_graph_break(pilot)
        app.submit("explain")
        assert await _until(pilot, lambda: app.coach.index == 3 and _idle(app))
        await pilot.press("colon")                 # the next key brings step 4's cursor (the resume call)
        assert await _until(pilot, lambda: _idle(app) and app.main_screen.bytecode.cursor != int(line.split()[1]))
        await _settle(pilot)
        rows = _screen_rows(app, tmp_path)
        cursor = app.main_screen.bytecode.cursor
        assert app.main_screen.has_class("-explain") and "step 4 of" in str(app.narration.border_title)
        bytecode = [r for r in _pane_rows(rows, "bytecode") if r]
        assert len(bytecode) >= 2 and any(f" {cursor} " in f" {r.lstrip('›RGBsr ')}" for r in bytecode), \
            "\n".join(rows)
        explain = [r for r in _pane_rows(rows, "explain") if r]
        # the narration: on that row the Explain pane says "loaded as __resume_at_O_N" (76 and 3 on 3.11 in the
        # lesson's own process: Dynamo's counter is the process's, and this one has compiled before)
        assert len(explain) >= 3 and re.search(r"loaded as __resume_at_\d+_\d+\)", " ".join(explain)), "\n".join(rows)
        await pilot.press("q")
