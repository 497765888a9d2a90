"""The Textual debugger app and `run_tui`, the function the CLI calls.

Threads: the user's program runs on the engine's worker thread; this app owns the main thread. Engine events
arrive as `Bridge` messages. Every engine method the app calls (`dynadbg.core.protocol.Engine`: `set_step`,
`guard_trees`, `decide`, `preview_edit`, ...) blocks until the program's thread answered, so the app makes each
one through its `EngineClient` (`engine_client.py`): on its own daemon thread, one at a time, in order, the
answer handled on the UI thread.

Widgets post intents (a view, an instruction index, a decision, an edit op); the app turns each into one typed
engine call and renders the typed answer. Registry actions dispatch through one table (`DebuggerApp._ACTIONS`).
The console is the one place the command language is spoken: its line goes to the app's `CommandLine` (the
command language over the engine, `dynadbg.core.commands`) as the user typed it, the output is logged, and what
the command changed (the selected frame, breakpoints, watches, edits) is read back with `Engine.current_stop` —
the app never parses a line it sent or the engine's text. A key (or palette entry) that lets the program go on logs
the command it is the same as, its verb spelled out (``s``: ``> step``; `commands.spelled_out`), once.

A step is one engine round trip and one paint of each pane: the `Stop` brings the roles and the stack's provenance
(`Stop.teaching`, the bridge asks for them), and the guard tree is fetched again only for another call. The
program's stdout and stderr are captured by the app itself (`events.Print` to the app), so they queue behind the
same message stream as the stops: what the program printed before a stop is logged before that stop.

A resuming call (step, next, continue, a recompile decision, any console line) is accepted only while the
program is stopped and no other one is in flight; keys pressed while it runs are ignored (the footer greys them
out). Keys that do not apply at the current stop are hidden from the footer (`actions.Action.when`).

Public messages for front ends built on this app (`dynadbg learn`): `StopShown` (a stop is on screen),
`CommandAnswered` (a console command came back), `ResumeSent` (a key or a command let the program go on),
`ActionDone` (a key, the palette or a dialog did what a command that does not resume does), `ProgramEnded` (the
program ended). `ResumeSent` and `ActionDone` carry the command-language line the key's action counts as
(`actions.command_line`), so a front end follows one language whichever way the user went. Console lines can be
taken over by handling `Console.Submitted` first and calling `prevent_default()`.

The delays (`FOOTER_SETTLE`, `RUNNING_SHOWN_AFTER`, `PANES_AT_LATEST`, `QUIT_DEADLINE`, `PRINT_FLUSH`) are class
attributes; the tests set the footer's, the "running" flash's and the output gathering's to 0 (`PANES_AT_LATEST`
stays: a step's panes normally follow the status line's frame well before it).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from textual import events
from textual.app import App, ScreenStackError
from textual.message import Message
from textual.timer import Timer

from dynadbg.core.model import (
    DEFAULT_BREAK_ON,
    BreakpointView,
    CommandResult,
    Decision,
    DecisionKind,
    DropPreview,
    EditOutcome,
    EditPreview,
    EngineError,
    ErrorKind,
    Explanation,
    GuardTree,
    HistoryView,
    Resumed,
    Stop,
    StopKind,
)
from dynadbg.core import format as fmt
from dynadbg.core.commands import CommandLine, spelled_out
from dynadbg.core.format.edits import format_diff
from dynadbg.core.format.advice import plan_check_text
from dynadbg.core.format.glossary import Glossary, stop_terms
from dynadbg.core.runner import ExitResult
from dynadbg.core.trace_model import TraceStopView

from . import actions
from .bridge import Bridge, EngineSession
from .bytecode_view import BytecodeView
from .commands import ActionCommands, LearnCommand
from .console import Console
from .drop_dialog import DropDialog
from .edit_dialog import EditDialog
from .engine_client import EngineClient
from .guard_tree_view import GuardTreeView
from .help_screen import HelpScreen
from .prompt_screen import PromptScreen
from .recompile_view import available_choices, choice_for, tensor_inputs
from .screen import MainScreen
from .teaching import Teaching
from .trace_view import KEYS_LINE, traced_break
from .views import View
from .source_view import SourceView

#: Stop kinds that stay in the call of the previous stop when code object and compile id did not change, so its
#: guard tree (evaluated for that call's inputs) is kept; any other stop may be a new call and fetches it again.
_SAME_CALL = frozenset({StopKind.STEP, StopKind.RETURN})

#: seconds a resuming command's echo waits for the stop it leads to before it is logged anyway (`_echo_later`)
ECHO_AFTER = 0.1

#: Registry actions that do not apply at a trace stop (no frame, breakpoint or cache entry there).
_NOT_AT_TRACE = frozenset({"breakpoint", "up", "down", "whatif"})

#: The engine query that fills each view when it is opened (`MainScreen.show_query` shows the answer).
_VIEW_QUERIES: dict[View, Callable[[EngineSession], Any]] = {
    View.ORIGINAL: lambda engine: engine.original_code(),
    View.GRAPH: lambda engine: engine.graphs(),
    # the resume functions' code names (`compiles`) beside their global names: one function, two names
    View.ENTRIES: lambda engine: (engine.entries(), engine.compiles()),
    View.DIFF: lambda engine: engine.patch_diff(),
    # the records keep the diffs of the entries that existed at each miss; the view also shows the entries'
    # diffs now (after the decision compiled a new entry), as `diff` does
    View.RECOMPILE: lambda engine: (engine.recompile_records(), engine.guard_diffs()),
    # at a run-time stop after a graph break: the recorded attempt that traced the break (`trace steps`)
    View.TRACE: lambda engine: engine.trace_steps(),
}


class DebuggerApp(App[int]):
    """The dynadbg TUI.

    Args:
        session_factory: builds the engine session with the given listener (the app's `Bridge`); e.g.
            ``lambda listener: Session(listener, break_on=...)``, or a fake engine in tests. It implements
            `dynadbg.core.protocol.Engine`.
        start: starts the program on the session (``lambda s: s.start_script(path, argv)``); called once the app
            is mounted. None: the caller starts it.
        keymap: action id → keys overrides (see `actions.load_keymap`).
        keymap_warnings: problems found reading the keymap, shown in the console log at start.

    The app's return value (``App.run()``) is the program's exit status when it is known.
    """

    CSS_PATH = "dynadbg.tcss"
    TITLE = "dynadbg"
    BINDINGS = actions.bindings()
    COMMANDS = App.COMMANDS | {ActionCommands, LearnCommand}

    DIRECT_KEYS: ClassVar[tuple[str, ...]] = ("step", "next", "return", "continue", "until")
    """Actions whose keys, pressed in a pane of the main screen, run at once (`on_event`)."""
    FOOTER_SETTLE: ClassVar[float] = 0.25
    """Seconds the program state must hold before the footer's greyed-out keys are updated (each footer refresh
    rebuilds its key widgets: tens of ms)."""
    RUNNING_SHOWN_AFTER: ClassVar[float] = 0.1
    """Seconds the program must run before the status line says so (a quick step shows no "running" flash)."""
    PANES_AT_LATEST: ClassVar[float] = 0.1
    """Seconds after a step's stop by which its panes are painted even when no frame showed the status line first
    (normally they follow the frame that does: `StatusLine.after_render`)."""
    PANES_AFTER_STATUS: ClassVar[float] = 0.001
    """Seconds the UI thread idles after composing a step's status-line frame before it paints the panes: Textual
    writes a frame from a thread of its own, which needs the GIL; painting at once held it for the paint's
    milliseconds (up to the interpreter's 5 ms switch interval), and the status line reached the terminal late
    (p95 +4 ms in `benchmarks/bench_tui_terminal.py`)."""
    ELAPSED_SHOWN_AFTER: ClassVar[float] = 3.0
    """Seconds a compile must have run before the status line adds its time to ``compiling NAME (FILE:LINE)``."""
    QUIT_DEADLINE: ClassVar[float] = 0.9
    """Seconds `q` waits for the program to end before the app exits anyway."""
    PRINT_FLUSH: ClassVar[float] = 0.05
    """Seconds the program's output is gathered before its complete lines are logged while it runs (everything is
    logged at once before a stop or any other engine event)."""
    PARTIAL_LINE_FLUSH: ClassVar[float] = 0.5
    """Seconds a line the program has begun but not ended (`print("a", "b")` writes "a", " ", "b", "\\n" one at a
    time; a progress bar writes "\\r..." with no newline) waits for its end before it is logged as it stands."""

    class StopShown(Message):
        """A stop is on screen (a new stop, or the shown stop changed: another frame, a recorded stop)."""

        def __init__(self, stop: Stop, new: bool) -> None:
            self.stop = stop
            """The stop shown."""
            self.new = new
            """A new stop of the program (False: the same pause, changed by a command)."""
            super().__init__()

    class CommandAnswered(Message):
        """A console command line came back from the engine."""

        def __init__(self, line: str, result: CommandResult) -> None:
            self.line = line
            """The line as the user typed it."""
            self.result = result
            """What the engine answered."""
            super().__init__()

    class ResumeSent(Message):
        """A key, a decision or a console line (one that may resume) was sent to the engine while the program was
        stopped; posted before the engine answered."""

        def __init__(self, what: str, *, line: bool = False, command: str | None = None) -> None:
            self.what = what
            """The action id (``"step"``, ``"eager"``), or the command line as typed."""
            self.line = line
            """`what` is a console line."""
            self.command = what if line else command
            """The command-language line this is the same as: the line typed; a key's `actions.command_line`
            (``"s"``, ``"until 12"``); a decision's `Decision.command` (``"eager"``, ``"drop g3"``); None when
            there is none."""
            super().__init__()

    class ActionDone(Message):
        """A key, the palette or a dialog did, at a stop, what a command that does not resume does (``w``:
        ``whatif``; ``3``: ``graph``; ``X``: ``explain 12``; an edit applied from the edit dialog: its ``edit``
        line); posted when the action was sent, before the engine answered (engine calls made after it see its
        effect), an edit once the engine installed it."""

        def __init__(self, action_id: str, command: str) -> None:
            self.action_id = action_id
            """The registry action's id (``"view_graph"``)."""
            self.command = command
            """The command-language line it counts as (`actions.command_line`, or the dialog's command)."""
            super().__init__()

    class ProgramEnded(Message):
        """The program ended (its first end only)."""

        def __init__(self, result: ExitResult) -> None:
            self.result = result
            """How it ended."""
            super().__init__()

    def __init__(
        self,
        session_factory: Callable[[Bridge], EngineSession],
        start: Callable[[EngineSession], None] | None = None,
        *,
        keymap: Mapping[str, str] | None = None,
        keymap_warnings: tuple[str, ...] | list[str] = (),
    ) -> None:
        super().__init__()
        self.bridge = Bridge()
        """The listener the session reports to."""
        self.session: EngineSession = session_factory(self.bridge)
        """The engine session."""
        self.client = EngineClient(self, self.session, on_idle=self._engine_idle)
        """The one path of every engine call."""
        self.command_line = CommandLine(self.session)
        """The command language over the session: what the console's lines run on (through `client`)."""
        self.keymap: dict[str, str] = dict(keymap or {})
        """Action id → keys overrides in force (shown by the help screen and the palette)."""
        effective = actions.effective_keys(self.keymap)
        self._direct: dict[str, str] = {key.strip(): f"dbg({action_id!r})" for action_id in self.DIRECT_KEYS
                                        for key in effective[action_id].split(",") if key.strip()}
        self.phase = "starting"
        """``"starting"``, ``"running"``, ``"stopped"`` or ``"exited"``."""
        self.last_stop: Stop | None = None
        """The latest stop (None before the first); after ``u``/``d`` its `Stop.selected` names the frame shown."""
        self.exit_result: ExitResult | None = None
        """How the program ended, once it did."""
        self.stops_seen = 0
        """Number of stops so far."""
        self._glossary = Glossary()
        self._start = start
        self._keymap_warnings = tuple(keymap_warnings)
        self._main = MainScreen()
        self.teaching = Teaching(self._main, self.client, lambda: (self.last_stop, self.stopped))
        """The teaching views' engine calls (roles and provenance of recorded stops, the Explain pane)."""
        self.awaiting_resume = False
        """A resuming call is in flight (its stop or its refusal has not arrived)."""
        self._quitting = False
        self._guards_key: tuple[Any, ...] | None = None
        self._guards_seq = -1
        self._view_seq: dict[View, tuple[int, int]] = {}
        self._footer_timer: Timer | None = None
        self._auto_view: View | None = None
        self._footer_gate: tuple[Any, ...] = (self.phase, False)
        self._running_timer: Timer | None = None
        self._running_text = "running"
        self._running_since = 0.0  # time.monotonic() when `_running_text` last changed
        self._elapsed_timer: Timer | None = None
        self._printed: list[str] = []
        self._stderr: list[str] = []
        self._print_timer: Timer | None = None
        self._print_waits_for_line_end = False
        self._paint_pending: Stop | None = None
        self._footer_wanted = False
        self._actions: dict[str, Callable[[], None]] = {
            "help": self._open_help,
            "console": lambda: self._main.console.input.focus(),
            "maximize": lambda: self._main.toggle_maximize(),
            "explain": self._toggle_explain,
            "interrupt": self.interrupt,
            "quit": self.quit_program,
            "breakpoint": lambda: self._toggle_breakpoint(self._cursor()) if self._cursor_instr() else None,
            "edit": lambda: self.open_edit_dialog("edit"),
            "insert": lambda: self.open_edit_dialog("insert"),
            "delete": lambda: self.open_edit_dialog("delete"),
            "dynamic": self._ask_dynamic,
            "drop": self._ask_drop,
            "up": lambda: self.select_frame(-1),
            "down": lambda: self.select_frame(1),
            "back": lambda: self.move_in_history("back"),
            "forward": lambda: self.move_in_history("forward"),
            "whatif": self._what_if,
            "next_failing": lambda: self._jump_failing(1),
            "previous_failing": lambda: self._jump_failing(-1),
            "failing_only": lambda: self._main.guard_tree.toggle_failing_only(),
            "step": lambda: self._control("step", lambda engine: engine.set_step()),
            "next": lambda: self._control("next", lambda engine: engine.set_next()),
            "return": lambda: self._control("return", lambda engine: engine.set_return()),
            "continue": lambda: self._control("continue", lambda engine: engine.set_continue()),
            "until": self._until,
            "trace_break": self._trace_cursor_break,
        }
        """Registry action id → what it does (the views and the recompile choices are added below)."""
        for view in View:
            self._actions[view.action] = lambda view=view: self._show_view(view)
        for kind in DecisionKind:
            if kind is not DecisionKind.DYNAMIC:
                self._actions.setdefault(kind.value, lambda kind=kind: self._choose(kind))

    def _show_view(self, view: View) -> bool | None:
        """A view's key. At a trace stop the Graph and Recompile views have nothing to show (they are about
        generated code); their commands answer there from Dynamo's trace: the key runs the command instead
        (``3``: ``graph``, the graph so far; ``7``: ``why``, the reason of the break), as if typed."""
        if self.at_trace_stop and view in (View.GRAPH, View.RECOMPILE):
            self.submit("graph" if view is View.GRAPH else "why")
            return False  # no ActionDone: the typed command is checked as typed
        self._main.show_view(view)
        if (view is View.TRACE and self.stopped and not self.at_trace_stop
                and traced_break(self.last_stop) is not None):
            # after a graph break the view shows what ``trace steps`` lists: the attempt that traced the break
            self.post_message(self.ActionDone(view.action, "trace steps"))
        return None

    # Set-up ----------------------------------------------------------------------------------------------------

    def get_default_screen(self) -> MainScreen:
        return self._main

    @property
    def main_screen(self) -> MainScreen:
        """The debugger's screen (also while the help screen is on top)."""
        return self._main

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)

    def on_main_screen_ready(self) -> None:
        """Start listening (and the program): from here on every engine event has a pane to land in."""
        keys = actions.effective_keys(self.keymap)
        status = self._main.status
        status.interrupt_key = actions.display_keys(keys["interrupt"])
        status.quit_key = actions.display_keys(keys["quit"])
        status.forward_key = actions.display_keys(keys["forward"])
        status.stderr_key = actions.display_keys(keys["view_stderr"])
        self._main.recompile_view.keys = keys
        self._main.trace_view.keys_line = KEYS_LINE.format(
            step=actions.display_keys(keys["step"]), next=actions.display_keys(keys["next"]),
            ret=actions.display_keys(keys["return"]), cont=actions.display_keys(keys["continue"]),
            back=actions.display_keys(keys["back"]), forward=actions.display_keys(keys["forward"]),
            until=actions.display_keys(keys["until"]))
        # The program's prints (any thread) come to the app itself, queued with the engine's events.
        self.begin_capture_print(self, stdout=True, stderr=True)
        for warning in self._keymap_warnings:
            self._main.console.error(warning)
        self.bridge.attach(self)
        if self._start is not None:
            try:
                self._start(self.session)
            except Exception as exc:  # noqa: BLE001 - shown to the user; the app stays usable
                self._main.console.error(f"could not start the program: {exc}")
                self._on_exit_result(ExitResult(2, exception=f"{type(exc).__name__}: {exc}"))

    def on_unmount(self) -> None:
        self.bridge.detach()
        self.client.close()
        if self.phase != "exited" and not self._quitting:
            # the app went away without `q` (an error, a test's end): a paused program would wait for a command
            # forever with every hook installed; end it (`Session.quit` returns at once)
            try:
                self.session.quit()
            except Exception:  # noqa: BLE001 - leaving regardless
                pass
        gc.unfreeze()
        if self._footer_timer is not None:
            self._footer_timer.stop()

    async def on_event(self, event: events.Event) -> None:
        """A stepping key (`DIRECT_KEYS`) pressed while a pane of the main screen has the focus runs its action
        here, at once. Textual would forward the key to the focused pane and let it travel back up through the
        pane's containers (seven for the bytecode pane, a message hop each) to reach the app's binding: about
        1 ms of a step's latency, keypress to status line, in a real terminal (`benchmarks/bench_tui_terminal.py`).
        Only when nothing between the pane and the app binds that key and the pane takes no typed text (the
        console's input does), so the action that runs is the one Textual would run; otherwise, and when the
        action does not apply now, the key goes Textual's way."""
        if isinstance(event, events.Key) and not event.is_forwarded and await self._direct_key(event):
            return
        await super().on_event(event)

    async def _direct_key(self, event: events.Key) -> bool:
        action = self._direct.get(event.key)
        focused = self.focused
        if action is None or focused is None or self.screen is not self._main:
            return False
        if focused.check_consume_key(event.key, event.character):
            return False
        for node in focused.ancestors_with_self:
            if node is self:
                break
            if event.key in node._bindings.key_to_bindings:  # noqa: SLF001 - Textual's own order: theirs first
                return False
        return bool(await self.run_action(action))

    # Actions (all from the registry) ---------------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        """The program is paused and no resuming call is in flight."""
        return self.phase == "stopped" and not self.awaiting_resume

    @property
    def engine_busy(self) -> bool:
        """Engine calls are running or waiting, or their answers are not handled yet."""
        return self.client.busy

    @property
    def settled(self) -> bool:
        """No engine call in flight or waiting, and no program output waiting to be logged (whether the program is
        stopped, runs, or ended)."""
        return (not self.client.busy and not self._printed and not self._stderr and self._paint_pending is None
                and not self._main.console.echo_held)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether a registry action applies now (`actions.Action.when`): True runs it, None greys it out in the
        footer (it applies once the program stops), False hides it (it does not apply at this kind of stop)."""
        if action != "dbg" or not parameters:
            return True
        try:
            entry = actions.get(str(parameters[0]))
        except KeyError:
            return False
        stopped = self.stopped
        stop = self.last_stop if self.phase == "stopped" else None
        at_recompile = stop is not None and stop.kind is StopKind.RECOMPILE
        when = entry.when
        if self.phase == "exited" and when in ("stopped", "frame", "generated", "recompile", "running"):
            return False  # the program has ended: no key that steps, selects or decides is offered any more
        if when == "running":
            # Only while the program runs; otherwise Ctrl+C falls through to Textual's copy binding.
            return self.phase in ("running", "starting") or self.awaiting_resume
        if when == "recompile":
            return stopped and entry.id in available_choices(stop)
        if entry.id == "trace_break" and (stop is None or stop.teaching is None or not stop.teaching.traced_breaks):
            return False  # only in generated code with a graph-break region whose compile the trace recorder holds
        if when == "generated":
            frame = self._main.frame
            if at_recompile or frame is None or not frame.code.generated:
                return False
            return True if stopped else None
        if when == "frame" and at_recompile:
            return False
        at_trace = stop is not None and stop.trace is not None
        if at_trace and entry.id in _NOT_AT_TRACE:
            return False  # inside Dynamo's tracing there is no frame to select, nor a breakpoint or guard to check
        if entry.id == View.TRACE.action and not at_trace and traced_break(stop) is None:
            return False  # the Trace view (and its tab): at a trace stop, or after a graph break Dynamo's trace holds
        if when in ("stopped", "frame"):
            return True if stopped else None
        return True

    def action_dbg(self, action_id: str) -> None:
        """Run the registry action `action_id` (every key binding and palette entry lands here)."""
        action = actions.get(action_id)
        handler = self._actions.get(action.id)
        if handler is None:
            return
        stopped, at_trace = self.stopped, self.at_trace_stop
        shown = handler()
        command = actions.command_line(action.id, self._cursor() if self._cursor_instr() is not None else None,
                                       at_trace=at_trace)
        if stopped and command is not None and not action.resumes and shown is not False:
            # a resuming action says so itself (`ResumeSent`); a pane hidden again (``X`` twice) is no command
            self.post_message(self.ActionDone(action.id, command))

    def _cursor_instr(self) -> Any:
        return self._main.bytecode.cursor_instruction

    def _trace_cursor_break(self) -> None:
        """`T`: the Trace view shows the recorded steps of the attempt that traced the graph break under the bytecode
        cursor (`StopTeaching.traced_breaks`), the breaking step marked; off a break row the console says so."""
        stop = self.last_stop
        teaching = stop.teaching if stop is not None and self.stopped else None
        if stop is None or teaching is None:
            return
        traced = teaching.traced_break_at(self._cursor())
        if traced is None:
            rows = sorted({k for k, _ in teaching.traced_breaks})
            self._main.console.info(f"T works on a graph-break row: here instructions {rows[0]}–{rows[-1]}" if rows else
                                    "T: no graph break of this code is in Dynamo's recorded trace")
            return
        screen = self._main
        self._view_seq[View.TRACE] = (stop.seq, stop.selected)  # filled here: opening the view asks nothing more
        screen.trace_view.show(None, traced, row=True)
        screen.show_trace_tab(True)
        screen.show_view(View.TRACE)
        engine = self.session
        self.client.call(lambda: engine.trace_steps(traced.compile_id, traced.attempt),
                         lambda steps: screen.show_query(View.TRACE, steps), "trace steps")

    def _cursor(self) -> int:
        instr = self._main.bytecode.cursor_instruction
        return instr.index if instr is not None else 0

    @property
    def at_trace_stop(self) -> bool:
        """The program is paused at a trace stop (inside Dynamo's tracing: `Stop.trace`)."""
        return self.phase == "stopped" and self.last_stop is not None and self.last_stop.trace is not None

    def _until(self) -> None:
        """``t``: run until the cursor's instruction; at a trace stop, let Dynamo trace until the cursor's line."""
        if self.at_trace_stop:
            instr = self._cursor_instr()
            line = instr.lineno if instr is not None else None
            engine = self.session
            # at a trace stop `until` takes a source line, not an instruction index
            self._resume(lambda: engine.trace_until(line), "until",
                         command="until" if line is None else f"until {line}")
            return
        self._control("until", lambda engine, index=self._cursor(): engine.set_until(index))

    def _open_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.keymap, lessons=self.lesson_keys()))

    def lesson_keys(self) -> tuple[tuple[str, str], ...]:
        """Extra keys the help screen lists (a lesson's; none in the debugger)."""
        return ()

    def _toggle_explain(self) -> bool:
        """``X``: show the Explain pane (True; the Bytecode view opens, it sits there) or hide it (False)."""
        shown = self._main.toggle_explain()
        if shown:
            if self._main.active_view is not View.BYTECODE:
                self._main.show_view(View.BYTECODE)  # the pane sits under the bytecode: another view would hide it
            self.teaching.explain_cursor()
        return bool(shown)

    def _jump_failing(self, step: int) -> None:
        """``f`` / ``F``: the guard pane takes the focus (arrows then move in it) and goes to the next / previous
        failing guard."""
        view = self._main.guard_tree
        view.focus()
        view.jump_failing(step)

    def on_guard_tree_view_jumped(self, event: GuardTreeView.Jumped) -> None:
        """Say in the console when a jump came round, or found no failing guard to go to."""
        console = self._main.console
        if event.position is None:
            tree = self._main.guard_tree.guards
            if tree is None:
                console.info("guards: no guard tree for this stop")
            elif not tree.evaluated:
                console.info("guards: this tree was not checked against a call's inputs, so nothing fails")
            elif tree.failing:
                n = len(tree.failing)
                console.info(f"guards: {'the failing guard hangs' if n == 1 else f'the {n} failing guards hang'} "
                             f"on no node of the tree (torch's own check fails; `guards fail` shows it)")
            else:
                console.info(f"guards: all {tree.leaf_count:,} guards of entry {tree.compile_id} pass")
        elif event.wrapped:
            where = "first" if event.forward else "last"
            console.info(f"guards: wrapped round to the {where} failing guard "
                         f"({event.position + 1} of {event.total})")

    def _choose(self, kind: DecisionKind) -> None:
        choice = choice_for(self.last_stop, kind)
        if choice is not None:
            self.decide(choice.decision)

    # Intents → engine calls ------------------------------------------------------------------------------------

    def _control(self, what: str, call: Callable[[EngineSession], Any]) -> None:
        engine = self.session
        cursor = self._cursor() if self._cursor_instr() is not None else None
        self._resume(lambda: call(engine), what, command=actions.command_line(what, cursor))

    def _resume(self, fn: Callable[[], Any], what: str, *, command: str | None = None) -> None:
        """Send a call that lets the program go on (only while stopped and no other one is in flight); `command`:
        the command-language line it is the same as (`ResumeSent.command`), logged in the console as if typed, its
        verb written out (`commands.spelled_out`: ``s`` pressed logs ``> step``). A typed line never comes here
        (`submit` logs it as typed), so nothing is logged twice."""
        if not self.stopped:
            return
        if command is not None:
            self._echo_later(spelled_out(command))
        self.awaiting_resume = True
        self.post_message(self.ResumeSent(what, command=command))
        self._bindings_changed()
        self.client.call(fn, self._resumed, what, direct=True)

    def _echo_later(self, line: str) -> None:
        """Log a resuming command's echo after the stop it leads to has shown where the program is (`_paint_step`
        logs it with the panes), or after `ECHO_AFTER` seconds if no stop comes sooner: written at the keypress, its
        repaint and the status line's shared a frame (a step's status line came 33 ms after its key, not 4)."""
        console = self._main.console
        console.echo(line, later=True)
        self.set_timer(ECHO_AFTER, console.flush_echo)

    def _show_resumed(self, result: Resumed) -> None:
        """What a resuming call or a decision did, in the console, each thing once (`format.resumed_text`'s
        parts): what was done, each warning (as an error line), what a drop's filter was checked on, the
        permanent fix."""
        console = self._main.console
        head = fmt.resumed_head(result)
        if head:
            console.output(head)
        for line in fmt.held_back_lines(result.held_back):
            console.output(line)
        for warning in result.warnings:
            console.error(fmt.warning_line(warning))
        if result.plan is not None:
            console.output(plan_check_text(result.plan))
        if result.permanent is not None:
            # prose, not a listing: it wraps at the console's edge (at 80 columns its comment ran off the right)
            console.output("permanently: " + fmt.permanent_text(result.permanent))

    def _resumed(self, result: Any) -> None:
        """A control call or a decision answered: running (its answer came through `Bridge.Resuming`), or why
        it could not."""
        if isinstance(result, Resumed):
            if self.awaiting_resume and self.phase == "stopped":
                self._set_running("running")
            if result.quit:
                self.quit_program()
            return
        self.awaiting_resume = False
        self._bindings_changed()
        self._log_error(result)

    def on_bridge_resuming(self, event: Bridge.Resuming) -> None:
        """The engine let the program go on: its answer, before anything the program prints next."""
        self._flush_printed()
        result = event.result
        self._show_resumed(result)

    def on_source_view_wanted(self, event: SourceView.Wanted) -> None:
        """The source pane shows a file it holds no text of: the engine reads it, on the program's thread."""
        view, wanted = event.view, event.filename
        engine = self.session

        def done(result: Any) -> None:
            if isinstance(result, tuple):
                view.set_source(result[0], result[2])
            if not isinstance(result, tuple) or result[0] != wanted:
                view.source_failed(wanted, again=not isinstance(result, EngineError)
                                   or result.kind is ErrorKind.NOT_PAUSED)

        self.client.call(lambda: engine.source(whole_file=True), done, "source")

    def decide(self, decision: Decision) -> None:
        """Take a recompile-stop decision (`Engine.decide`); the log shows the command and its permanent code."""
        engine = self.session
        self._resume(lambda: engine.decide(decision), decision.kind.value, command=decision.command)

    def select_frame(self, delta: int) -> None:
        """``u`` (-1, toward the caller) / ``d`` (+1): select another frame of the stop."""
        if not self.stopped:
            return
        engine = self.session
        self.client.call((lambda: engine.up()) if delta < 0 else (lambda: engine.down()), self._selected,
                         "up" if delta < 0 else "down")

    def move_in_history(self, direction: str) -> None:
        """``[`` / ``]``: show the previous / next recorded stop (`Engine.back` / `Engine.forward`), read-only."""
        if not self.stopped:
            return
        engine = self.session
        if self.at_trace_stop:  # the recorded steps of Dynamo's trace (`Engine.trace_back` / `trace_forward`)
            call = (lambda: engine.trace_back()) if direction == "back" else (lambda: engine.trace_forward())
            self.client.call(call, self._trace_moved, direction)
            return
        call = (lambda: engine.back()) if direction == "back" else (lambda: engine.forward())
        self.client.call(call, self._history_moved, direction)

    def _trace_moved(self, result: Any) -> None:
        stop = self.last_stop
        if isinstance(result, TraceStopView) and stop is not None and stop.trace is not None:
            if result.mark is None and stop.trace.mark is not None:
                self._main.console.info("back to the present")
            self._show_same_stop(replace(stop, trace=result))
        else:
            self._log_error(result)

    def _history_moved(self, result: Any) -> None:
        if isinstance(result, HistoryView):
            if result.at_present:
                self._main.console.info("back to the present")
            self._show_same_stop(result.stop)
        else:
            self._log_error(result)

    def _selected(self, result: Any) -> None:
        if isinstance(result, Stop):
            self._show_same_stop(result)
        else:
            self._log_error(result)

    def _toggle_breakpoint(self, index: int) -> None:
        if not self.stopped:
            return
        engine = self.session
        on = index not in self._main.bytecode.breakpoints

        def call() -> Any:
            result = engine.set_break(index) if on else engine.clear_break(index)
            return result if isinstance(result, EngineError) else engine.list_breakpoints()

        self.client.call(call, self._breakpoints_changed, "breakpoint")

    def _breakpoints_changed(self, result: Any) -> None:
        if isinstance(result, tuple) and all(isinstance(b, BreakpointView) for b in result):
            self._main.breakpoints = result
        else:
            self._log_error(result)

    def _what_if(self) -> None:
        if self.stopped:
            self._main.console.echo("whatif")
            self.client.call(self.session.what_if, self._show_what_if, "whatif")

    def _show_what_if(self, result: Any) -> None:
        """The ``w`` key's answer, as typing ``whatif`` prints it (`format.whatif_text`)."""
        if isinstance(result, EngineError):
            self._log_error(result)
            return
        self._main.console.output(fmt.whatif_text(result))

    def open_edit_dialog(self, kind: str) -> None:
        """Open the edit dialog (``"edit"``, ``"insert"``, ``"delete"``) on the bytecode cursor's instruction."""
        bytecode = self._main.bytecode
        code, instr = bytecode.code, bytecode.cursor_instruction
        if self.phase != "stopped" or code is None or instr is None or not code.generated:
            return
        self.push_screen(EditDialog(kind, instr, code.name, len(code.instructions)))

    def on_edit_dialog_preview_wanted(self, event: EditDialog.PreviewWanted) -> None:
        """The edit dialog wants the engine's preview of its op (`Engine.preview_edit`, nothing installed)."""
        dialog, op, text = event.dialog, event.op, event.text
        if self.phase != "stopped":
            dialog.show_preview(text, EngineError("no preview while the program runs", ErrorKind.NOT_PAUSED))
            return
        engine = self.session

        def done(result: EditPreview | EngineError) -> None:
            if dialog.is_attached:
                dialog.show_preview(text, result)

        self.client.call(lambda: engine.preview_edit(op), done, "preview")

    def on_edit_dialog_apply(self, event: EditDialog.Apply) -> None:
        dialog, op = event.dialog, event.op
        self._main.console.echo(op.text)

        def done(result: Any) -> None:
            if dialog.is_attached:
                dialog.applied(result)
            if isinstance(result, EditOutcome) and result.ok:
                self.post_message(self.ActionDone(op.kind.value, op.text))
                self._main.note_code_replaced(result.diff)
                self._main.refresh_subtitles()
                self._patch_changed()
                self._main.console.output(result.message)
                if result.diff is not None:
                    self._main.console.output(format_diff(result.diff, context=2))
            else:
                self._log_error(result.error if isinstance(result, EditOutcome) else result)

        engine = self.session
        self.client.call(lambda: engine.apply_edit(op), done, op.text)

    def _ask_drop(self) -> None:
        """The ``drop`` choice: the dialog of what it would leave out (`DropDialog`), before anything runs."""
        if choice_for(self.last_stop, DecisionKind.DROP) is None or not self.stopped:
            self._main.console.info("drop: not available at this stop (see the Recompile view, key 7)")
            return
        engine = self.session

        def got(result: Any) -> None:
            if isinstance(result, DropPreview) and self.stopped:
                self.push_screen(DropDialog(result), self._drop_answered)
            elif isinstance(result, EngineError):
                self._log_error(result)

        self.client.call(lambda: engine.preview_drop(), got, "preview drop")

    def _drop_answered(self, ids: tuple[str, ...] | None) -> None:
        if ids is None:
            self._main.console.info("drop cancelled: nothing dropped, the program is still paused")
        elif ids:
            self.decide(Decision(DecisionKind.DROP, ids))
        else:
            # nothing selected: the new entry keeps every guard (what torch does)
            self.decide(Decision(DecisionKind.RECOMPILE))

    def on_drop_dialog_preview_wanted(self, event: DropDialog.PreviewWanted) -> None:
        dialog, ids = event.dialog, event.ids
        engine = self.session

        def done(result: Any) -> None:
            if dialog.is_attached:
                dialog.show_preview(ids, result)

        self.client.call(lambda: engine.preview_drop(ids), done, "preview drop")

    def _ask_dynamic(self) -> None:
        """The ``dynamic`` choice: ask for NAME DIM (the engine's suggestions, then every tensor input's dims)."""
        stop = self.last_stop
        suggested = [f"{c.decision.name} {c.decision.dim}" for c in (stop.choices if stop else ())
                     if c.kind is DecisionKind.DYNAMIC and c.available and c.decision.name is not None]
        if not suggested:
            # no size guard failed: marking a dimension dynamic would not avoid this recompile
            self._main.console.info("dynamic: no input tensor changed size at one dimension here "
                                    "(type `dynamic NAME DIM` in the console to mark one anyway)")
            return
        tensors = tensor_inputs(stop)
        for name, shape in tensors:
            suggested += [f"{name} {dim}" for dim in range(len(shape)) if f"{name} {dim}" not in suggested]
        shapes = ", ".join(f"{name} {list(shape)}" for name, shape in tensors) or "none"
        explanation = ("NAME DIM: the input tensor and the dimension to mark dynamic "
                       "(torch._dynamo.mark_dynamic), then recompile.\n"
                       f"tensor inputs: {shapes}")

        def answered(value: str | None) -> None:
            if not value:
                return
            name, _, dim = value.strip().rpartition(" ")
            try:
                number = int(dim)
            except ValueError:
                self._main.console.error(f"NAME DIM: the dimension must be an integer, not {dim!r}")
                return
            if not name.strip():
                self._main.console.error("NAME DIM: name the input tensor, e.g. x 0")
                return
            self.decide(Decision(DecisionKind.DYNAMIC, name=name.strip(), dim=number))

        self.push_screen(PromptScreen("mark a dimension dynamic", explanation, value=suggested[0] if suggested else "",
                                      placeholder="NAME DIM   e.g. x 0", suggestions=suggested), answered)

    def on_bytecode_view_cursor_moved(self, event: BytecodeView.CursorMoved) -> None:
        """The bytecode cursor moved (bubbled up from the screen): the Explain pane follows it."""
        if event.view is self._main.bytecode:
            self.teaching.explain_cursor()

    def on_main_screen_breakpoint_requested(self, event: MainScreen.BreakpointRequested) -> None:
        self._toggle_breakpoint(event.index)

    def on_main_screen_view_requested(self, event: MainScreen.ViewRequested) -> None:
        self._fill_view(event.view)

    def _fill_view(self, view: View, *, force: bool = False) -> None:
        """Fill a view from its engine query, once per stop and selected frame (unless `force`)."""
        stop = self.last_stop
        query = _VIEW_QUERIES.get(view)
        if query is None or not self.stopped or stop is None:
            return
        if view is View.TRACE and traced_break(stop) is None:
            return  # a trace stop's view comes with the stop; elsewhere there is no recorded break to show
        key = (stop.seq, stop.selected)
        if not force and self._view_seq.get(view) == key:
            return
        self._view_seq[view] = key
        engine = self.session
        self.client.call(lambda: query(engine), lambda result: self._query_done(view, result), view.value)

    def _query_done(self, view: View, result: Any) -> None:
        screen = self._main
        if view is View.RECOMPILE and isinstance(result, tuple):  # (records, diffs)
            result, diffs = result
            screen.recompile_view.live_diffs = diffs if isinstance(diffs, tuple) else ()
        elif view is View.ENTRIES and isinstance(result, tuple):  # (entries, compiles)
            result, compiles = result
            screen.learn_resume_aliases(result, compiles)
        screen.show_query(view, result)
        if isinstance(result, EngineError):
            self._log_error(result)

    def on_console_submitted(self, event: Console.Submitted) -> None:
        self.submit(event.line)

    def submit(self, line: str) -> None:
        """Run a command-language line the user typed (`command_line`), in order with every other call.

        The line reaches the engine as typed. While it is answered no other resuming call is accepted (it may
        resume the program). Afterwards `Engine.current_stop` shows what it changed.
        """
        engine, command_line = self.session, self.command_line
        resume = self.stopped
        if resume:
            self._echo_later(line)  # it may be a step: its status line first
        else:
            self._main.console.echo(line)
        if resume:
            self.awaiting_resume = True
            self.post_message(self.ResumeSent(line, line=True))
            self._bindings_changed()

        def call() -> Any:
            result = command_line.execute(line)
            if result.resumed or result.quit or result.error:
                return result, None
            return result, engine.current_stop()

        self.client.call(call, lambda answer: self._console_done(line, answer, resume), line)

    def _console_done(self, line: str, answer: Any, resume: bool) -> None:
        console = self._main.console
        if isinstance(answer, EngineError):
            answer = (CommandResult(error=answer.message), None)
        result, stop = answer
        if result.error:
            console.error(result.error)
        elif not (result.resumed and not result.quit):
            # a resuming command's answer came through `Bridge.Resuming`, before the program went on
            console.output(result.output)
        if result.resumed:
            if resume and self.awaiting_resume and self.phase == "stopped":
                self._set_running("running")
        elif resume:
            self.awaiting_resume = False
            self._bindings_changed()
        self.post_message(self.CommandAnswered(line, result))
        if result.quit:
            self.quit_program()
            return
        if isinstance(stop, Stop) and self.phase == "stopped":
            # What the command changed (selection, breakpoints, watches, edits): views filled before are stale.
            self._view_seq.clear()
            if isinstance(result.data, EditOutcome) and result.data.edit is not None:
                self._guards_key = None   # a guard edit changed the entry's guards: fetch the tree again
            elif isinstance(result.data, EditOutcome) and result.data.ok:
                self._main.note_code_replaced(result.data.diff)  # an instruction edit, a patch file or an undo
                self._main.refresh_subtitles()
            self._show_same_stop(stop)
            if isinstance(result.data, Explanation) and self._main.explain_shown:
                # the Explain pane explains the cursor's instruction: a typed `explain` (the current one, or IDX)
                # takes the cursor there, so the pane and the console say the same (they disagreed after a detour)
                self._main.bytecode.action_cursor_to(result.data.index)

    def on_engine_client_answered(self, event: EngineClient.Answered) -> None:
        self.client.answered(event)

    def _log_error(self, error: Any) -> None:
        if error is not None:
            self._main.console.error(str(getattr(error, "message", error)))

    def _patch_changed(self) -> None:
        """An edit was installed or undone: the Diff view is stale (refilled now if it is open)."""
        self._main.console.info("the Diff view (key 6) shows the patch")
        self._view_seq.pop(View.DIFF, None)
        if self._main.active_view is View.DIFF:
            self._fill_view(View.DIFF, force=True)

    # The program's output --------------------------------------------------------------------------------------

    def on_print(self, event: events.Print) -> None:
        """Text the program printed (stdout to the console log, stderr to the Stderr view): gathered for
        `PRINT_FLUSH` seconds, and logged at once before the next engine event."""
        (self._stderr if event.stderr else self._printed).append(event.text)
        if self.PRINT_FLUSH <= 0:
            self.call_later(self._flush_printed_lines)
        elif self._print_timer is None or (self._print_waits_for_line_end and "\n" in event.text):
            if self._print_timer is not None:
                self._print_timer.stop()
            self._print_waits_for_line_end = False
            self._print_timer = self.set_timer(self.PRINT_FLUSH, self._flush_printed_lines)

    def _flush_printed_lines(self) -> None:
        """The timer's flush: the complete lines gathered so far. A line the program has begun and not ended (one
        `print("a", 1)` is four writes) waits for its end up to `PARTIAL_LINE_FLUSH` seconds."""
        if self._print_timer is not None:
            self._print_timer.stop()
            self._print_timer = None
        text = "".join(self._printed)
        cut = text.rfind("\n") + 1
        if cut == len(text):
            self._flush_printed()
            return
        self._printed = [text[cut:]]
        if text[:cut].strip():
            self._main.console.program(text[:cut].rstrip("\n"))
        if self._stderr:
            self._flush_stderr()
        self._print_waits_for_line_end = True
        self._print_timer = self.set_timer(self.PARTIAL_LINE_FLUSH, self._flush_printed)

    def _flush_printed(self) -> None:
        self._print_waits_for_line_end = False
        if self._print_timer is not None:
            self._print_timer.stop()
            self._print_timer = None
        if self._printed:
            text, self._printed = "".join(self._printed), []
            if text.strip():
                self._main.console.program(text.rstrip("\n"))
        if self._stderr:
            self._flush_stderr()

    def _flush_stderr(self) -> None:
        errors, self._stderr = "".join(self._stderr), []
        if errors.strip():
            self._main.on_console_stderr_written(Console.StderrWritten(errors.rstrip("\n")))

    # Engine events ---------------------------------------------------------------------------------------------

    def on_bridge_stopped(self, event: Bridge.Stopped) -> None:
        self._flush_printed()  # what the program printed before it stopped comes first
        stop = event.stop
        self.last_stop = stop
        self.stops_seen += 1
        self.phase = "stopped"
        self.awaiting_resume = False
        self._running_done()
        # A full collection in a torch program walks millions of objects (0.4-0.6 s here); stepping allocates
        # enough to trigger one every few dozen steps. While the program is paused or stepping, leave the objects
        # alive now to the permanent generation; `_show_running` gives them back once the program runs on.
        gc.freeze()
        screen = self._main
        screen.activity = None
        screen.new_stop(stop)
        if stop.kind is StopKind.STEP:
            # A step: the status line (where the program is now) goes out in a frame of its own, the panes in the
            # next one. A frame repaints every widget between its topmost and its lowest change (Textual
            # composes the bounding box of the changes), so the status line alone is a one-row frame the
            # terminal shows at once; the panes follow a frame later (`_paint_step`), once the status line was
            # rendered (`StatusLine.after_render`), or after `PANES_AT_LATEST` seconds when no frame shows it (a
            # dialog on top, a maximised pane).
            screen.status.stop = stop
            self._paint_pending = stop
            screen.status.after_render(lambda: self.set_timer(self.PANES_AFTER_STATUS,
                                                              lambda: self._paint_step(stop)))
            self.set_timer(self.PANES_AT_LATEST, lambda: self._paint_step(stop))
            return
        screen.stop = stop
        self._log_stop(stop)
        self._show_stop(stop)

    def _paint_step(self, stop: Stop) -> None:
        if self._paint_pending is not stop:
            return  # painted already (the other of its two triggers), or a later stop came: it paints itself
        self._paint_pending = None
        if self.last_stop is not stop:
            return  # a later stop of another kind came before this one was painted
        self._main.console.flush_echo()  # in the panes' frame
        self._main.stop = stop
        self._show_stop(stop)

    def _show_stop(self, stop: Stop) -> None:
        screen = self._main
        # A recompile stop opens the Recompile view; another stop outside any frame (compile) has nothing to list:
        # show its report instead. The next stop in a frame goes back to the listing.
        shows_report = stop.graph_break or stop.eager_fallback or stop.exception_lines
        auto = (View.RECOMPILE if stop.kind is StopKind.RECOMPILE
                else View.TRACE if stop.trace is not None
                else View.STOP if stop.frame is None and shows_report else None)
        active = screen.active_view
        # A recompile stop always opens its view (whatever view was open: the choices are there); the Stop view
        # replaces only the listing or a view opened the same way.
        if auto is View.RECOMPILE or (auto is not None and active in (View.BYTECODE, self._auto_view)):
            self._auto_view = auto
            screen.show_view(auto)
        elif auto is None and stop.frame is not None and self._auto_view is not None and active is self._auto_view:
            self._auto_view = None
            screen.show_view(View.BYTECODE)
        self._at_stop(stop, new=True)

    def _log_stop(self, stop: Stop) -> None:
        """The console's lines for a stop other than a step: what it is, where its details are, new terms."""
        console = self._main.console
        console.info(f"stopped: {stop.kind.value} · {stop.message}" if stop.message
                     else f"stopped: {stop.kind.value}")
        keys = actions.effective_keys(self.keymap)
        if stop.kind is StopKind.RECOMPILE:
            console.info(f"  every failing guard, the guard diffs and the choices: Recompile view (key "
                         f"{actions.display_keys(keys['view_recompile'])})")
        elif stop.trace is not None:
            console.info(f"  Dynamo's symbolic stack and locals, the graph and guards so far: Trace view (key "
                         f"{actions.display_keys(keys['view_trace'])})")
        else:
            for title, _ in fmt.stop_blocks(stop):
                console.info(f"  {title} (Stop view, key {actions.display_keys(keys['view_stop'])})")
        if stop.exception:
            console.error(stop.exception)
        if not self._glossary.complete:
            # the first time a Dynamo term shows up, one line says what it means (as in line mode)
            for gloss in self._glossary.new_terms(stop_terms(stop), stop.compile_id):
                console.info(gloss)

    def _at_stop(self, stop: Stop, *, new: bool) -> None:
        """What every shown stop needs besides its panes: the guard tree (for another call), the teaching data
        it did not bring, the open view's query, the footer."""
        self._fetch_guards_for(stop)
        self.teaching.at_stop(stop)
        # Views filled from queries are stale now; refill the open one.
        self._fill_view(self._main.active_view)
        self._bindings_changed()
        self.post_message(self.StopShown(stop, new))

    def _show_same_stop(self, stop: Stop) -> None:
        """The stop the program is paused at, changed by a call (another frame selected, a breakpoint, a watch).
        Another frame selected (``u``, ``d``) while the Trace view shows a run-time stop's recorded trace (the
        trace of the selected frame's break): the listing of the frame now selected comes to the front."""
        before = self.last_stop
        self.last_stop = stop
        screen = self._main
        if (before is not None and before.selected != stop.selected and stop.trace is None
                and screen.active_view is View.TRACE):
            self._auto_view = None
            screen.show_view(View.BYTECODE)
        self._main.stop = stop
        self._at_stop(stop, new=False)

    def on_bridge_running(self, event: Bridge.Running) -> None:
        if self.phase != "exited":
            self._set_running(event.text)

    def _set_running(self, text: str) -> None:
        # The panes keep showing the last stop (pudb-style); the status line says the program runs, once it has
        # run for `RUNNING_SHOWN_AFTER` seconds: a step that stops sooner repaints the screen once, not twice.
        self.phase = "running"
        if text != self._running_text:
            self._running_since = time.monotonic()
        self._running_text = text
        if self.RUNNING_SHOWN_AFTER <= 0:
            self.call_later(self._show_running)
        elif self._running_timer is None:
            self._running_timer = self.set_timer(self.RUNNING_SHOWN_AFTER, self._show_running)
        self._bindings_changed()

    def _show_running(self) -> None:
        self._running_timer = None
        if self.phase == "running":
            gc.unfreeze()  # the program runs on: its garbage is collected as without the debugger
            self._main.activity = self._running_text
            if self._elapsed_timer is None:
                self._elapsed_timer = self.set_interval(1.0, self._tick_elapsed)

    def _tick_elapsed(self) -> None:
        """Once a second while the program runs: a compile that has taken `ELAPSED_SHOWN_AFTER` seconds or more
        shows its time on the status line (``compiling forward (model.py:12), 14 s``), a sign it is not hung."""
        if self.phase != "running":
            if self._elapsed_timer is not None:
                self._elapsed_timer.stop()
                self._elapsed_timer = None
            return
        elapsed = time.monotonic() - self._running_since
        text = self._running_text
        if text.startswith("compiling") and elapsed >= self.ELAPSED_SHOWN_AFTER:
            text = f"{text}, {elapsed:.0f} s"
        if self._main.activity != text:
            self._main.activity = text

    def _running_done(self) -> None:
        if self._running_timer is not None:
            self._running_timer.stop()
            self._running_timer = None

    def on_bridge_info(self, event: Bridge.Info) -> None:
        self._flush_printed()
        self._main.console.info(event.text)

    def on_bridge_exited(self, event: Bridge.Exited) -> None:
        self._on_exit_result(event.result)

    def _on_exit_result(self, result: ExitResult) -> None:
        self._flush_printed()
        first = self.exit_result is None
        self.exit_result = result
        self.phase = "exited"
        self.awaiting_resume = False
        self._running_done()
        gc.unfreeze()
        screen = self._main
        screen.activity = None
        screen.stop = None
        screen.guards_loading = False
        screen.guards = None
        screen.exit_result = result
        self._bindings_changed()
        if self._quitting:
            self.exit(result.status, return_code=result.status)
            return
        if not first:
            return
        self.post_message(self.ProgramEnded(result))
        console = screen.console
        if result.traceback:
            console.error(result.traceback.rstrip())
            screen.show_view(View.STOP)
        status = f"program exited with status {result.status}"
        (console.error if result.status else console.info)(
            f"{status}: {result.exception}" if result.exception else status)
        console.info("press q to leave the debugger")
        if self.focused is console.input and not console.input.value:
            screen.on_console_left()  # an empty console gives up the focus, so that q is the key the line names
        if self.stops_seen == 0:
            console.info("the program never stopped in compiled code")

    # Guard tree ------------------------------------------------------------------------------------------------

    def _fetch_guards_for(self, stop: Stop) -> None:
        frame = stop.selected_frame
        key = (stop.compile_id, frame.code.key if frame is not None else None, stop.selected)
        if key == self._guards_key and (stop.kind in _SAME_CALL or stop.seq == self._guards_seq):
            return
        self._guards_key = key
        self._guards_seq = stop.seq
        self._main.guards_loading = True
        seq = stop.seq
        self.client.call(self.session.guard_trees, lambda result: self._guards_loaded(result, seq), "guard tree")

    def _guards_loaded(self, result: Any, seq: int) -> None:
        if seq != self._guards_seq:
            return
        screen = self._main
        screen.guards_loading = False
        trees = result if isinstance(result, tuple) else ()
        stop = self.last_stop
        record = stop.recompile if stop is not None and stop.kind is StopKind.RECOMPILE else None
        screen.guard_tree.groups = record.groups if record is not None else ()
        screen.guards = next((t for t in trees if isinstance(t, GuardTree)), None)
        if isinstance(result, EngineError) and result.kind == "internal":
            screen.console.error(f"guard tree: {result.message}")

    # Interrupt and quit ----------------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """Textual's own quit (Ctrl+Q) ends the program cleanly too, like ``q``."""
        self.quit_program()

    def interrupt(self) -> None:
        """Ask the engine to stop the program at its next generated instruction (Ctrl+C)."""
        self._main.console.info("interrupting…")
        self.client.interrupt()

    def quit_program(self) -> None:
        """End the program (`Session.quit`) and leave the app within about a second."""
        if self.phase == "exited" or self._quitting:
            self.exit(self._status(), return_code=self._status())
            return
        self._quitting = True
        self._main.console.info("ending the program…")
        self.set_timer(self.QUIT_DEADLINE + 0.05, self._exit_now)
        self.client.quit(self.QUIT_DEADLINE)

    def on_engine_client_ended(self, event: EngineClient.Ended) -> None:
        if event.result is not None and self.exit_result is None:
            self.exit_result = event.result
        self.exit(self._status(), return_code=self._status())

    def _gate(self) -> tuple[Any, ...]:
        """What the footer's shown and greyed-out keys depend on (`check_action`)."""
        stop = self.last_stop
        frame = self._main.frame
        return (self.phase, self.awaiting_resume, stop.kind if stop is not None else None,
                available_choices(stop), frame is not None and frame.code.generated)

    def _bindings_changed(self) -> None:
        """Update the footer's enabled/greyed keys once the state has been stable for `FOOTER_SETTLE` seconds.

        Each footer refresh rebuilds its key widgets (tens of ms), so a step that starts and stops within the
        settle time repaints no footer at all. Key dispatch does not wait for this: `check_action` is asked at
        every key press.
        """
        if self._footer_timer is not None:
            self._footer_timer.stop()
            self._footer_timer = None
        if self.FOOTER_SETTLE <= 0:
            self.call_later(self._refresh_footer)
        else:
            self._footer_timer = self.set_timer(self.FOOTER_SETTLE, self._refresh_footer)

    def _refresh_footer(self) -> None:
        self._footer_timer = None
        if self.client.busy:
            # an engine call in flight (the step itself, a query) changes the state again when it is answered:
            # refresh once it was (`_engine_idle`), not for each state on the way
            self._footer_wanted = True
            return
        if self._gate() != self._footer_gate:
            self._footer_gate = self._gate()
            try:
                self.screen.refresh_bindings()
            except ScreenStackError:  # the app is closing
                pass

    def _engine_idle(self) -> None:
        """The engine client answered its last call: a footer refresh held back for it is due now."""
        if self._footer_wanted:
            self._footer_wanted = False
            self._bindings_changed()

    def _exit_now(self) -> None:
        self.exit(self._status(), return_code=self._status())

    def _status(self) -> int:
        return self.exit_result.status if self.exit_result is not None else 0


def run_tui(
    start: Callable[[Any], None],
    break_on: Any = DEFAULT_BREAK_ON,
    *,
    keymap: str | None = None,
) -> int:
    """Run the program under the TUI and return its exit status.

    Creates a `dynadbg.core.session.Session` with the app's bridge as listener, starts the program with
    ``start(session)`` once the app is up, runs the app until the user leaves, and waits (briefly) for the program
    to end.

    Args:
        start: starts the program, e.g. ``lambda s: s.start_script(path, argv)`` or
            ``lambda s: s.start_callable(fn, *args)``.
        break_on: stop kinds to activate (``{"entry", "recompile", "exception"}`` by default).
        keymap: a keymap JSON file (``{"step": "s,f7"}``); None reads ``$DYNADBG_KEYMAP`` (a file or inline JSON).

    Returns:
        The program's exit status (`ExitResult.status`): its own status, 1 when it raised, 0 when the user quit.
    """
    from dynadbg.core.session import Session

    keys, warnings = actions.load_keymap(keymap)
    app = DebuggerApp(
        lambda listener: Session(listener, break_on=break_on),
        start,
        keymap=keys,
        keymap_warnings=warnings,
    )
    status = app.run()
    result = app.exit_result
    if result is None:
        try:
            result = app.session.wait(timeout=2.0)
        except Exception:  # noqa: BLE001 - fall back to the app's own status
            result = None
    if result is not None:
        return result.status
    return status if isinstance(status, int) else 0
