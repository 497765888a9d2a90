"""`dynadbg learn` in the TUI: the debugger app with a narration pane that follows the lesson.

After each stop, each console command and the program's end, the coach's condition is checked against the
engine's state: `Coach.snapshot` runs on the app's engine-call thread (every engine call blocks until the program's
worker thread answered; torch is only touched there), and the answer updates the pane on the UI thread.
Console lines ``lesson`` and ``lesson skip`` are the coach's, as in line mode; F8 skips a step.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from textual.binding import Binding
from textual.command import Hit, Hits, Provider

from dynadbg.core.commands import RESUMING
from dynadbg.core.model import CommandResult, EngineError
from dynadbg.tui.app import DebuggerApp, _Call
from dynadbg.tui.narration_view import NarrationView

from .coach import Coach, EngineState
from .lessons import Lesson
from .progress import Progress

SKIP_KEY = "f8"


class LessonCommands(Provider):
    """Palette entries of a lesson: skip the step, show it again."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action in (("Lesson: skip this step (F8)", "skip_step"),
                              ("Lesson: show the step again in the console", "show_step")):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), lambda a=action: self.app.run_action(a), text=title)


class LearnApp(DebuggerApp):
    """The debugger app running one lesson's program, with the narration pane."""

    # Textual reads CSS_PATH relative to the subclass's module: point it back at the debugger's stylesheet
    CSS_PATH = str(Path(sys.modules[DebuggerApp.__module__].__file__).with_name("dynadbg.tcss"))
    BINDINGS = [*DebuggerApp.BINDINGS, Binding(SKIP_KEY, "skip_step", "Skip step", id="skip_step")]
    COMMANDS = DebuggerApp.COMMANDS | {LessonCommands}

    def __init__(self, lesson: Lesson, progress: Progress | None,
                 session_factory: Callable[[Any], Any], *, preface: str = "", **kwargs: Any) -> None:
        super().__init__(session_factory, lambda s: s.start_script(str(lesson.program), []), **kwargs)
        self.coach = Coach(lesson, progress)
        """Follows the learner through the lesson."""
        self._moved = False
        self._line: str | None = None
        self.checks = 0
        """Condition checks answered so far (tests wait on it)."""
        self._preface = preface

    def on_main_screen_ready(self) -> None:
        self._main.mount(NarrationView(id="narration"), before=self._main.console)
        self._show()
        for line in self._preface.splitlines():
            self._main.console.info(line)
        # lessons say "type `ll`": typing goes to the command line from the start (Escape leaves it for the keys)
        self._main.console.input.focus()
        # (Textual then calls DebuggerApp's own handler of this message, which starts the program)

    @property
    def narration(self) -> NarrationView:
        return self._main.query_one("#narration", NarrationView)

    def _show(self) -> None:
        coach = self.coach
        step = coach.step
        if step is None:
            body = coach.lesson.outro or "Lesson finished."
        else:
            body = (coach.lesson.intro + "\n\n" if coach.index == 0 and coach.lesson.intro else "") + step.text
        self.narration.show(coach.heading(), body, coach.hint, SKIP_KEY.upper(), done=step is None)

    # what the learner does -----------------------------------------------------------------------------------
    def submit(self, line: str) -> None:
        words = line.split()
        if words[:1] == ["lesson"]:
            self._main.console.echo(line)
            if words[1:] == ["skip"]:
                self.action_skip_step()
            else:
                self.action_show_step()
            return
        self._line = line
        if self.stopped and words and words[0] in RESUMING:
            # noted before the call: the stop it leads to may arrive before the call's own answer
            self._moved = True
            self.coach.observe_command(line, "", None)
        super().submit(line)

    def _console_done(self, answer: Any, resume: bool) -> None:
        super()._console_done(answer, resume)
        if isinstance(answer, EngineError):
            answer = (CommandResult(error=answer.message), None)
        result = answer[0]
        if self._line is None or (result.resumed and not result.error):
            return  # a resuming command was noted in `submit`; the stop it leads to is checked
        self.coach.observe_command(self._line, result.output, result.error)
        self._check(move=True, looked=result.error is None)

    def _resume(self, fn: Callable[[], Any], what: str, **kwargs: Any) -> None:
        if self.stopped:
            self._moved = True
        super()._resume(fn, what, **kwargs)

    def on_bridge_stopped(self, event: Any) -> None:
        # DebuggerApp's handler of the message runs too (Textual calls each class's handler in the MRO)
        move, self._moved = self._moved, False
        self._check(move=move)

    def _on_exit_result(self, result: Any) -> None:
        super()._on_exit_result(result)
        if not self.coach.exited:
            self.coach.observe_exit()
            self._check(move=True)

    def action_skip_step(self) -> None:
        """Skip the current step (always allowed)."""
        self.coach.skip()
        self._show()

    def action_show_step(self) -> None:
        self._main.console.info(self.coach.narration(skip_how=f"press {SKIP_KEY.upper()}"))

    # checking the condition on the engine-call thread --------------------------------------------------------
    def _check(self, move: bool, looked: bool = False) -> None:
        coach = self.coach
        if coach.finished:
            return
        session = self.session
        self._enqueue(_Call(lambda: coach.snapshot(session), lambda state: self._checked(state, move, looked),
                            False, "lesson step check"))

    def _checked(self, state: Any, move: bool, looked: bool) -> None:
        self.checks += 1
        if isinstance(state, EngineState):
            self.coach.advance(state, move=move, looked=looked)
        self._show()


def run_lesson_tui(lesson: Lesson, progress: Progress | None, preface: str = "") -> int:
    """Run `lesson` in the TUI; the program's exit status. `preface` (the lesson list) opens the console log."""
    from dynadbg.core.session import Session
    from dynadbg.tui import actions

    keys, warnings = actions.load_keymap(None)
    app = LearnApp(lesson, progress, lambda listener: Session(listener, break_on=lesson.break_on),
                   keymap=keys, keymap_warnings=warnings, preface=preface)
    status = app.run()
    result = app.exit_result or app.session.wait(timeout=2.0)
    if result is not None:
        return result.status
    return status if isinstance(status, int) else 0
