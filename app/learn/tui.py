"""`dynadbg learn` in the TUI: the debugger app with a narration pane that follows the lesson.

`LearnApp` builds on `DebuggerApp` through its public messages only: `DebuggerApp.StopShown`,
`DebuggerApp.CommandAnswered`, `DebuggerApp.ResumeSent`, `DebuggerApp.ActionDone` and `DebuggerApp.ProgramEnded`,
and `Console.Submitted` for the console lines the coach answers itself (``lesson``, ``lesson skip``). After each
stop, each console command, each key (or palette entry, or dialog) that does what a command does, and the
program's end, the coach's condition is checked against the engine's state: the stop brings what a condition reads
(kind, instruction, role: `Stop.teaching`), so no engine call is needed; a stop without its roles (a recorded one)
is read with `Coach.snapshot` through the app's engine client.

A key counts as the command the action registry says it sends (`ResumeSent.command`, `ActionDone.command`:
`E` is ``eager``, ``3`` is ``graph``, ``X`` is ``explain IDX``), so a step is done whichever way the learner went:
a condition reads the engine's state, never the text a command printed, so a key that shows its answer in a view
is checked the same as the typed command. When the program ends with the step not done the narration says so and
how to go on (F8, or the lesson again).

Under 32 rows (80×24) the screen has room for one pane beside the narration and the console (``dynadbg.tcss``,
``-learn``): the pane a step names (`Step.pane`) comes to the front when the step begins, a view key or a typed
command brings up the pane that shows its answer (``guards`` the guard tree, ``explain`` the Explain pane; at a
trace stop the console log), and the next step keeps it there unless it names another.

When a step is done, the narration shows the next one at once, but its pane and its bytecode cursor wait for the
learner's next key press (or command): until then the screen keeps the answer to the step just done (``explain``'s
text in the Explain pane). Keys that only read that answer do not count: Shift+↓ / Shift+↑, Tab / Shift+Tab, and
the scrolling keys inside the Explain pane. The first step's pane, and the step F8 skips to, come at once.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable

from textual import events, on
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.widget import Widget
from textual.widgets import TabbedContent

from dynadbg.core.commands import RESUMING
from dynadbg.core.model import Explanation, Stop, StopKind
from dynadbg.tui import actions
from dynadbg.tui.app import DebuggerApp
from dynadbg.tui.console import Console
from dynadbg.tui.narration_view import SCROLL_KEYS, NarrationView
from dynadbg.tui.views import View

from .coach import Coach, EngineState, leading_todo, resolve_action, spoken, verb_of
from .lessons import Lesson
from .progress import Progress

SKIP_KEY = "f8"
#: What the narration's ▶ row and hint add while letters act as keys (the console's command line does not have the
#: focus): a command typed then runs as keys
KEYS_NOW = " (letters are keys now: press : first, then type it)"

#: The key that shows the step's next hint (the narration's border names it)
HINT_KEY = "f7"
#: Keys that move the focus between panes: they never bring the next step's panes (`LearnApp._reading_key`)
READING_KEYS = frozenset({"tab", "shift+tab"})
#: Keys that scroll the Explain pane while it has the focus (reading the last answer, not acting)
EXPLAIN_SCROLL_KEYS = frozenset({"up", "down", "pageup", "pagedown", "home", "end"})

#: The narration's first line while a step's pane and cursor wait for the learner's next key (`LearnApp._show`)
PANES_PENDING = ("(Above: the answer to your last command, kept for you to read. The next key you press (Tab "
                 "aside) brings the pane this step is about.)")

#: `LearnApp._pane_step` after a typed look covered the step's pane: it is brought again at the next key
_REARMED = -2

#: The panes that take the whole main area when in front at 80×24 (any other `Step.pane` is a view of the left pane).
FRONT_PANES = ("source", "stack", "locals", "guards", "log")
#: A step's `Step.pane` that is a view, by name.
PANE_VIEWS = {"bytecode": View.BYTECODE, "explain": View.BYTECODE, "original": View.ORIGINAL, "graph": View.GRAPH,
              "entries": View.ENTRIES, "stop": View.STOP, "recompile": View.RECOMPILE, "trace": View.TRACE}
#: A typed command whose answer a pane shows in full (the log has a few rows at 80×24): that pane comes to the front.
ANSWER_PANE = {"stack": "stack", "locals": "locals", "guards": "guards", "explain": "explain", "graph": "graph",
               "orig": "original", "entries": "entries", "why": "recompile", "trace": "trace", "l": "log"}


class LessonCommands(Provider):
    """Palette entries of a lesson: skip the step, show it again."""

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action in (("Lesson: skip this step (F8)", "skip_step"),
                              ("Lesson: a hint for this step (F7)", "hint"),
                              ("Lesson: show the step again in the console", "show_step")):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), lambda a=action: self.app.run_action(a), text=title)


class LearnApp(DebuggerApp):
    """The debugger app running one lesson's program, with the narration pane."""

    # Textual reads CSS_PATH relative to the subclass's module: point it back at the debugger's stylesheet
    CSS_PATH = str(Path(sys.modules[DebuggerApp.__module__].__file__).with_name("dynadbg.tcss"))
    BINDINGS = [*DebuggerApp.BINDINGS, Binding(SKIP_KEY, "skip_step", "Skip step", id="skip_step"),
                Binding(HINT_KEY, "hint", "Hint", id="lesson_hint", show=False),
                # the narration scrolls while the console keeps the focus (a long step at 80×24)
                Binding(SCROLL_KEYS[0], "scroll_narration(3)", "More of the step's text", show=False),
                Binding(SCROLL_KEYS[1], "scroll_narration(-3)", "Back up the step's text", show=False)]
    COMMANDS = DebuggerApp.COMMANDS | {LessonCommands}

    def __init__(self, lesson: Lesson, progress: Progress | None,
                 session_factory: Callable[[Any], Any], *, preface: str = "", **kwargs: Any) -> None:
        super().__init__(session_factory, lambda s: s.start_script(str(lesson.program), []), **kwargs)
        self.coach = Coach(lesson, progress)
        """Follows the learner through the lesson."""
        self._moved = False
        self.checks = 0
        """Condition checks answered so far (tests wait on it)."""
        self._preface = preface
        self.narration = NarrationView(id="narration")
        """The lesson's narration pane."""
        self.front = "views"
        """The pane in front at 80×24: ``views`` (the left pane's views), or one of `FRONT_PANES`."""
        self._pane_step = -1
        """The step whose pane and cursor were brought last (-1: none yet, the lesson's first step brings them at
        once; `_REARMED`: a typed look covered them, the next key brings them again)."""
        self._panes_pending = False
        self._was_typing = False
        self._catching: list[str] = []
        """Commands a skip is typing for the learner (`_catch_up`), the next first; their answers and stops are
        no moves of the learner's."""
        self._catch_line: str | None = None
        """The line `_catch_up` typed last, until its answer."""
        self._skipping = False
        """A skip waits for the engine to say what to type for it (`action_skip_step`)."""
        self._answer_in_pane = False
        """The last command's answer is a pane or view on screen (`ANSWER_PANE`): the next step's pane waits for
        the learner's next key, so it stays to be read; an answer only in the console, or a stop, keeps nothing."""

    def on_main_screen_ready(self) -> None:
        self.main_screen.add_class("-learn")
        self.main_screen.console.step_on_first_empty = False  # Enter "to go on" must not step past a step
        self.main_screen.mount(self.narration, before=self.main_screen.console)
        self.bring_to_front("views")
        self._show()
        for line in self._preface.splitlines():
            self.main_screen.console.info(line)
        # lessons say "type `ll`": typing goes to the command line from the start (Escape leaves it for the keys)
        self.main_screen.console.input.focus()
        # the narration's border says whether letters type a command or act as keys now
        self.watch(self.main_screen, "focused", self._focus_moved)
        # (Textual then calls DebuggerApp's own handler of this message, which starts the program)

    def _focus_moved(self, focused: Widget | None) -> None:
        self.narration.typing = focused is self.main_screen.console.input

    def lesson_keys(self) -> tuple[tuple[str, str], ...]:
        return ((HINT_KEY.upper(), "The step's next hint, at the top of the narration (`lesson hint` in the console "
                                   "too)"),
                (SKIP_KEY.upper(), "Skip this lesson step (always allowed; `lesson skip` in the console too)"),
                ("Shift+↓ / Shift+↑", "Scroll the step's text when it is longer than its pane"),
                ("lesson (console)", "Show the step again; a wrong move (a stop or a command the step does not ask "
                                     "for) shows the step's next hint"),
                ("lesson N (console)", "Show step N's text again (a finished step's text leaves the narration)"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("skip_step", "hint"):
            return not self.coach.finished  # a finished lesson has no step to skip: the footer drops the key
        return super().check_action(action, parameters)

    def action_scroll_narration(self, rows: int) -> None:
        self.narration.scroll_lines(rows)

    def bring_to_front(self, pane: str) -> None:
        """Put `pane` (a `Step.pane` name, or ``views``) in front: at 80×24 the one pane shown beside the narration;
        a view is opened (at any size), the Explain pane is opened under the bytecode."""
        screen = self.main_screen
        front = pane if pane in FRONT_PANES else "views"
        self.front = front
        for name in ("views", *FRONT_PANES):
            screen.set_class(name == front, f"-front-{name}")
        view = PANE_VIEWS.get(pane)
        if view is not None and self.phase == "stopped" and screen.active_view is not view:
            screen.show_view(view)
        if pane == "explain" and self.phase == "stopped" and not screen.explain_shown:
            screen.toggle_explain()
            self.teaching.explain_cursor()

    def _in_front(self, pane: str) -> bool:
        """Whether `pane` (a `Step.pane` name) is what the screen shows in front now."""
        screen = self.main_screen
        if pane in FRONT_PANES:
            return self.front == pane
        if self.front != "views" or screen.active_view is not PANE_VIEWS.get(pane):
            return False
        return pane != "explain" or screen.explain_shown

    def _cursor_to(self, placeholder: str, then: Callable[[], Any] | None = None) -> None:
        """The bytecode pane's cursor on the row `placeholder` names (the views in front, the Bytecode view open);
        `then` runs once it is there (or once the row is known not to exist)."""
        session = self.session

        def moved(index: Any) -> None:
            if isinstance(index, str) and index.isdigit():
                self.bring_to_front("bytecode")
                self.main_screen.bytecode.action_cursor_to(int(index))
            if then is not None:
                self.call_later(then)

        def find() -> str:
            try:
                return resolve_action(session, placeholder)
            except LookupError:
                return ""  # the lesson is stale for this torch: the tests say so; the learner keeps the listing

        self.client.call(find, moved, "lesson cursor")

    def _show_view(self, view: View) -> bool | None:
        """A view's key brings the views to the front, also the view already open behind the log (its tab does
        not change, so `_view_opened` hears nothing): a tester pressed 1 for the bytecode and the log stayed."""
        shown = super()._show_view(view)
        if shown is not False and self.front != "views":
            self.bring_to_front("views")
        return shown

    @on(TabbedContent.TabActivated)
    def _view_opened(self, event: TabbedContent.TabActivated) -> None:
        """A view was opened (its key, the palette, a stop): the views come to the front."""
        if self.front != "views":
            self.bring_to_front("views")

    def _show(self, at_once: bool = False) -> None:
        """The current step in the narration. A step begun since the last call brings its pane and cursor at once
        when it is the first one (or `at_once`: F8 skipped to it), else at the learner's next key or command
        (`_panes_pending`): the answer to the step just done stays on screen until then."""
        coach = self.coach
        step = coach.step
        if step is not None and self._pane_step != coach.index and self.phase == "stopped":
            if (at_once or self._pane_step == -1 or not self._answer_in_pane
                    or step.cursor is None and (step.pane is None or self._in_front(step.pane))):
                # nothing to keep (the last step's answer is in the console, or was a stop), or nothing to change
                self._step_panes()
            else:
                self._panes_pending = True
        body = coach.step_body()  # what to do first, in sight before any scrolling (`Coach.step_body`)
        if step is None:
            self.refresh_bindings()  # F8 leaves the footer (`check_action`)
        else:
            if self._panes_pending and (step.pane is not None or step.cursor is not None):
                body = PANES_PENDING + "\n" + body  # what the text says of the panes is true after that key
        # the hints are line mode's too: the TUI's command line is the console, not a "(dynadbg)" prompt
        hint = coach.hint.replace("at the (dynadbg) prompt", "in the console") if coach.hint else coach.hint
        if not self._typing():
            # letters act as keys: a command typed now runs as keys (`guards` ran r, s, c: the program ended)
            if hint and "`" in hint:
                hint += KEYS_NOW
            todo = leading_todo(body)
            if todo is not None and len(todo[1]) > 1:
                # (a one-letter command is its own key: `c` continues either way)
                end = todo[0]
                body = f"{body[:end]}{KEYS_NOW}{body[end:]}"
        self.narration.show(coach.heading(), body, hint, SKIP_KEY.upper(), done=step is None,
                            ended=coach.stranded_text(skip_how=f"press {SKIP_KEY.upper()} (or type `lesson skip`)"),
                            hint_key=HINT_KEY.upper() if step is not None and step.hints else "")

    def _step_panes(self, then: Callable[[], Any] | None = None) -> None:
        """Bring the current step's pane to the front and its cursor onto its row (`Step.pane`, `Step.cursor`),
        once per step, while the program is stopped; `then` runs once the cursor is on its row (the step has a
        cursor: it is moved by an engine call)."""
        pending, self._panes_pending = self._panes_pending, False
        coach = self.coach
        step = coach.step
        if step is None or self._pane_step == coach.index or self.phase != "stopped":
            return
        self._pane_step = coach.index
        if step.pane is not None:
            self.bring_to_front(step.pane)
        # a step about a guard opens that value's guards in the guard pane (each leaf shows its source line)
        guarded = step.done.guard or step.done.no_guard
        self.main_screen.guard_tree.open_source(guarded[0] if guarded and step.pane == "guards" else None)
        if step.cursor is not None:
            self._cursor_to(step.cursor, then)
        if pending:
            self._show()  # the narration without `PANES_PENDING`

    # what the learner does -----------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """A key press brings the pending step's pane and cursor (`_show`) before the key does anything (not
        Shift+↓ / Shift+↑, which scroll the narration: the last answer stays while the step is read)."""
        if isinstance(event, events.Key) and self._panes_pending and not self._reading_key(event.key):
            step = self.coach.step
            action = self._cursor_action(event.key) if step is not None and step.cursor is not None else None
            if action is not None:
                # a key (`t`, `X`, `e`, `b`) would act on the row the cursor is leaving: it acts once the step's
                # cursor is on the step's row, as the narration says it is
                event.stop()
                event.prevent_default()
                self._step_panes(then=lambda: self.run_action(action))
                return
            self._step_panes()  # not for a key that scrolls the narration: reading the step changes no pane
        await super().on_event(event)

    def _typing(self) -> bool:
        """Whether letters type into the console now (its command line has the focus), not act as keys."""
        main = getattr(self, "_main", None)
        return main is not None and main.is_mounted and main.focused is main.console.input

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self._typing_changed()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self._typing_changed()

    def _typing_changed(self) -> None:
        """The narration's "press `:` first" note follows where the letters go (`KEYS_NOW`)."""
        typing = self._typing()
        if typing != self._was_typing:
            self._was_typing = typing
            if self.narration.is_mounted:
                self._show()

    def _reading_key(self, key: str) -> bool:
        """Whether `key` only reads the last answer: Shift+↓ / Shift+↑ (the narration), Tab / Shift+Tab (to the
        pane holding it: the Explain pane's border says "Tab to this pane, then ↓"), and the scrolling keys while
        the Explain pane has the focus. Such a key keeps the step's pane and cursor waiting (`_panes_pending`)."""
        if key in SCROLL_KEYS or key in READING_KEYS:
            return True
        return key in EXPLAIN_SCROLL_KEYS and self.focused is self.main_screen.explain

    def _cursor_action(self, key: str) -> str | None:
        """The action `key` runs now when it acts on the bytecode cursor's row (its command has ``{cursor}``),
        else None."""
        if self.main_screen.focused is self.main_screen.console.input:
            return None  # typing a command
        active = self.screen.active_bindings.get(key)
        match = re.fullmatch(r"dbg\('([^']+)'\)", active.binding.action) if active is not None else None
        if match is None:
            return None
        try:
            command = actions.get(match.group(1)).command
        except KeyError:
            return None
        return active.binding.action if command is not None and "{cursor}" in command else None

    def submit(self, line: str) -> None:
        """A command line: the pending step's pane and cursor come first, so the command's answer pane wins."""
        if self._panes_pending:
            self._step_panes()
        super().submit(line)

    @on(Console.Submitted)
    def _lesson_line(self, event: Console.Submitted) -> None:
        """``lesson`` and ``lesson skip`` are the coach's, as in line mode; every other line goes to the engine."""
        words = event.line.split()
        if words[:1] != ["lesson"]:
            return
        event.prevent_default()
        self.main_screen.console.echo(event.line)
        if words[1:] == ["skip"]:
            self.action_skip_step()
        elif words[1:] == ["hint"]:
            self.action_hint()
        elif len(words) == 2 and words[1].isdigit() and self.coach.step_text(int(words[1])) is not None:
            self.main_screen.console.info(self.coach.step_text(int(words[1])))
        elif len(words) > 1:
            self.main_screen.console.error(f"usage: lesson (the step again) | lesson hint | lesson skip | lesson N "
                                           f"(step N's text, 1-{len(self.coach.lesson.steps)})")
        else:
            self.action_show_step()

    @on(Console.Left)
    def _console_left(self) -> None:
        """Escape in the console at 80×24: to the pane in front (the screen focused the left pane's open view,
        which a front pane covers), so its keys (Enter opens a guard) act on what is on screen."""
        screen = self.main_screen
        pane = {"source": screen.source, "stack": screen.stack, "locals": screen.locals,
                "guards": screen.guard_tree}.get(self.front)
        if pane is not None and pane.display and screen.has_class("-short"):
            pane.focus()

    @on(DebuggerApp.ResumeSent)
    def _resume_sent(self, event: DebuggerApp.ResumeSent) -> None:
        # noted before the answer: the stop it leads to may arrive before the call's own answer
        if self._catch_line is not None:
            return  # typed by a skip (`_catch_up`): not the learner's move, nor the next step's command
        self._moved = True
        command = event.command
        if command is not None and verb_of(command) in RESUMING:
            self.coach.observe_command(command, None)

    @on(DebuggerApp.ActionDone)
    def _action_done(self, event: DebuggerApp.ActionDone) -> None:
        """A key (the palette, a dialog) did what `event.command` does: checked as if it had been typed."""
        if self.coach.finished:
            return
        verb = verb_of(event.command)
        self._answer_in_pane = verb in ANSWER_PANE  # a view key (``3``) or ``X``: its answer is that pane
        if self.at_trace_stop and verb in ANSWER_PANE:
            self.bring_to_front("log")     # ``3`` / ``7`` at a trace stop answer in the console: its log in front
        elif verb == "why":
            self._failing_first()
        elif verb == "explain":
            self.bring_to_front("views")   # ``X``: the Explain pane under the bytecode
            self._log_answer(event.command)
        self.coach.observe_command(event.command, None)
        # read from the engine, after the action's own call (``u``'s new frame): the shown stop may lag behind
        self._check(move=True, looked=True, fresh=True)

    def _failing_first(self) -> None:
        """`why`'s answer is the failing guards with their expected and actual values: on a short screen the
        Recompile view starts at them (its title and choices rows come first, and left them below its edge)."""
        if self.main_screen.has_class("-short"):
            self.main_screen.recompile_view.show_failing_first()

    def _log_answer(self, line: str) -> None:
        """The console's log gets `line`'s answer, as if it had been typed (``X``: ``explain 51``): the key and the
        command leave the same text to scroll back to once the Explain pane follows the next step's cursor."""
        console, command_line = self.main_screen.console, self.command_line
        console.echo(line)

        def logged(result: Any) -> None:
            if getattr(result, "error", None):
                console.error(result.error)
            elif getattr(result, "output", None):
                console.output(result.output)

        self.client.call(lambda: command_line.execute(line), logged, line)

    @on(DebuggerApp.CommandAnswered)
    def _command_answered(self, event: DebuggerApp.CommandAnswered) -> None:
        result = event.result
        if self._catch_line is not None and event.line == self._catch_line:
            self._catch_line = None
            if self._catching and not result.error:
                self._catch_up(self._catching, 0)
            elif not result.resumed:
                self._check(move=False)  # an edit typed for the learner: the next step may be done by it
            return
        if result.resumed and not result.error:
            return  # a resuming command was noted when it was sent; the stop it leads to is checked
        # it did not resume: the next stop is not its doing (every typed line is sent as a possible resume; a
        # `locals` before F8 made the skip's own stop count as the learner's wrong move)
        self._moved = False
        pane = ANSWER_PANE.get(verb_of(event.line)) if not result.error else None
        self._answer_in_pane = pane is not None
        if pane is not None:
            # before the check: a step it completes may name the next pane. At a trace stop the answer is the
            # command's own text (the views are about generated code): the log, in front
            self.bring_to_front("log" if self.at_trace_stop else pane)
            if pane == "recompile" and not self.at_trace_stop:
                self._failing_first()
            elif pane == "explain" and isinstance(result.data, Explanation):
                # the pane explains the cursor's row: on the instruction the typed `explain` explained (it opened
                # on the row the cursor had been left at, RESUME, while the console explained LOAD_GLOBAL)
                self.main_screen.bytecode.action_cursor_to(result.data.index)
        self.coach.observe_command(event.line, result.error)
        self._check(move=True, looked=result.error is None, typed=True)

    @on(DebuggerApp.StopShown)
    def _stop_shown(self, event: DebuggerApp.StopShown) -> None:
        if not event.new:
            return  # a command changed the stop: its answer is checked (`CommandAnswered`)
        move, self._moved = self._moved, False
        self._answer_in_pane = False  # a new stop: the panes show it, nothing of a last answer to keep
        if event.stop.kind is StopKind.RECOMPILE:
            self._failing_first()     # lesson 2's "expected 1, actual 2" was a row below the view's edge at 80x24
        self._check(move=move, new_stop=True)

    @on(DebuggerApp.ProgramEnded)
    def _program_ended(self, event: DebuggerApp.ProgramEnded) -> None:
        # the panes have nothing left to show; the log has every line the program printed
        self.bring_to_front("log")
        if not self.coach.exited:
            self.coach.observe_exit(event.result.status)
            self._check(move=True)

    def action_skip_step(self) -> None:
        """Skip the current step (always allowed). When the step's action moves or changes the program
        (`Coach.catch_up`: `c`, `until`, `eager`, an edit), it is typed for the learner, so the next step's text
        describes the screen there is; then the next step is checked at once (the program may already be where it
        wants: a stop it names)."""
        coach = self.coach
        if self._skipping:
            return  # the last F8's catch-up is still being worked out: one skip at a time
        stop = self.last_stop if self.phase == "stopped" and not self.awaiting_resume else None
        step = coach.step
        if stop is not None and step is not None and step.done.claims:
            # what the step claims of its place is engine state: whether the program is there is read off the
            # engine (lesson 7: call 0's entry stop is no place for the step about the next call's edited code)
            session = self.session
            self._skipping = True

            def answered(result: Any) -> None:
                self._skipping = False
                if coach.step is step:
                    self._skip_with(result if isinstance(result, tuple) else (), stop)

            self.client.call(lambda: coach.catch_up(coach.snapshot(session)), answered, "lesson skip")
            return
        commands = coach.catch_up(coach.state_at(stop, stop.teaching.roles if stop is not None and stop.teaching
                                                 else None)) if stop is not None else ()
        self._skip_with(commands, stop)

    def _skip_with(self, commands: tuple[str, ...], stop: Stop | None) -> None:
        """Skip the current step, typing `commands` (its `Coach.catch_up`) after."""
        coach = self.coach
        # nothing of the last answer to keep: the next step's pane comes at once, also for a step done by the
        # skip's check (a newcomer's F8 left "the value-stack pane (in front now)" with the bytecode in front)
        self._answer_in_pane = False
        number = coach.step.number if coach.step is not None else 0
        passed = len(coach.passed)
        coach.skip()
        if len(coach.passed) > passed:
            # the program had ended: the next step, which waits for the end, is done by it (lesson 2: F8 on step 5
            # went straight to "done", step 6 never shown)
            done = coach.passed[-1]
            self.main_screen.console.info(f"step {done} is done too: it waits for the program's end, which has "
                                          f"come (`lesson {done}` shows its text)")
        self._show(at_once=True)
        if commands:
            self._catch_up(list(commands), number)
        elif stop is not None:
            self._check(move=False)

    def _catch_up(self, commands: list[str], number: int) -> None:
        """Type `commands` (the skipped step `number`'s, `Coach.catch_up`) one after another; what they lead to is
        checked as no move of the learner's (no hint)."""
        console, session = self.main_screen.console, self.session
        self._catching = commands

        def resolve() -> str:
            try:
                return resolve_action(session, commands[0], forward=True)
            except LookupError as exc:
                return f"!{exc}"

        def resolved(line: Any) -> None:
            if not isinstance(line, str) or line.startswith("!") or self.phase != "stopped":
                self._catching = []
                console.info(f"could not type `{spoken(commands[0])}` for you "
                             f"({str(line)[1:] or 'the program moved'}): "
                             f"the next step may describe another stop than this one; "
                             f"{SKIP_KEY.upper()} skips it too")
                return
            commands.pop(0)
            if number:
                console.info(f"skipped step {number}: typing its `{line}` for you, so that the program is where the "
                             f"next step expects it")
            self._catch_line = line
            self.submit(line)

        self.client.call(resolve, resolved, "lesson catch-up")

    def action_hint(self) -> None:
        """The step's next hint, at the top of the narration (F7, ``lesson hint``)."""
        before = self.coach.hint
        hint = self.coach.ask_hint()
        if hint is None and not self.coach.finished:
            self.main_screen.console.info(f"this step has no hint: {SKIP_KEY.upper()} skips it")
        elif hint is not None and hint == before:
            self.main_screen.console.info(f"no more hints for this step (its last one is at the top of the "
                                          f"narration): {SKIP_KEY.upper()} skips it")
        self._show()

    def action_show_step(self) -> None:
        self.main_screen.console.info(self.coach.narration(skip_how=f"press {SKIP_KEY.upper()}",
                                                           hint_how=f"press {HINT_KEY.upper()}"))

    # checking the condition -------------------------------------------------------------------------------------
    def _check(self, move: bool, looked: bool = False, fresh: bool = False, new_stop: bool = False,
               typed: bool = False) -> None:
        """Check the step's condition; `fresh`: read the state from the engine even when the shown stop has what
        the condition needs; `new_stop`: the check follows a new stop; `typed`: it follows a typed command
        (`_checked`)."""
        coach = self.coach
        if coach.finished:
            return
        stop = self.last_stop if self.phase == "stopped" else None
        frame = stop.selected_frame if stop is not None else None
        step = coach.step
        claims = step is not None and bool(step.done.claims)
        if stop is not None and (fresh or claims
                                 or stop.teaching is None and frame is not None and frame.code.generated):
            # the step's claims are about engine state (guards, entries, the graph, a graph break), a key changed
            # what the stop shows, or no roles came with this stop (a recorded one): ask the engine
            session = self.session

            def answered(result: Any) -> None:
                self._checked(result, move, looked, new_stop, typed)

            self.client.call(lambda: coach.snapshot(session), answered, "lesson step check")
            return
        self._checked(coach.state_at(stop, stop.teaching.roles if stop is not None and stop.teaching else None),
                      move, looked, new_stop, typed)

    def _checked(self, state: Any, move: bool, looked: bool, new_stop: bool = False, typed: bool = False) -> None:
        """The condition's answer: the step done (the next one shown), or not. A new stop that did not do it moved
        the bytecode cursor to its instruction: a step whose text says "the row under the cursor" gets its row
        back (a tester's wrong `until 5` made lesson 1's "the row under the cursor ... `t`" false)."""
        self.checks += 1
        step = self.coach.step
        caught = len(self.coach.caught_up)
        done = isinstance(state, EngineState) and self.coach.advance(state, move=move, looked=looked)
        if len(self.coach.caught_up) > caught and step is not None:
            self.main_screen.console.info(
                f"step {step.number} is done too: the program is already where its `{step.action[0]}` leads "
                f"(`lesson {step.number}` shows its text)")
        if (new_stop and not done and step is not None and step is self.coach.step and step.cursor is not None
                and self._pane_step == self.coach.index and not self._panes_pending and self.phase == "stopped"):
            self._cursor_to(step.cursor)
        elif (new_stop and not done and step is not None and step is self.coach.step and step.pane is not None
              and self._pane_step == self.coach.index and not self._panes_pending and self.phase == "stopped"
              and not self._in_front(step.pane)):
            # the stop brought the views to the front over the step's pane (F8's `until` typed for the learner,
            # after the step's pane came): the narration says its pane is in front
            self.bring_to_front(step.pane)
        if (typed and looked and not done and step is not None and step is self.coach.step
                and self._answer_in_pane and (step.pane is not None or step.cursor is not None)
                and self._pane_step == self.coach.index and not self._panes_pending and self.phase == "stopped"
                and not self._in_front(step.pane or "bytecode")):
            # a typed look around (lesson 3: the `stack` step 3 suggests) put its answer's pane over the one this
            # step is about: that answer stays to be read, and the next key brings the step's pane back, as after
            # a step (a newcomer at step 4 had no bytecode pane, and nothing said how to get it back). A view key
            # (`3`) is the learner's own choice of pane: it stays.
            self._pane_step = _REARMED
            self._panes_pending = True
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
