"""The Textual debugger app and `run_tui`, the function the CLI calls.

Threads: the user's program runs on the engine's worker thread; this app owns the main thread. Engine events
arrive as `Bridge` messages. Every engine method the app calls (`dynadbg.core.protocol.Engine`: `set_step`,
`guard_trees`, `decide`, `preview_edit`, ...) blocks until the program's thread answered, so it runs in a Textual
thread worker, never on the UI thread; `quit` and `interrupt` run on short daemon threads so a busy engine can
never hold the UI (or its shutdown) hostage.

Widgets post intents (a view kind, an instruction index, a decision, an edit op); the app turns each into one
typed engine call and renders the typed answer. The console is the one place the command language is spoken: its
line goes to `Engine.execute` as the user typed it, the output is logged, and what the command changed (the
selected frame, breakpoints, watches, edits) is read back with `Engine.current_stop` — the app never parses a
line it sent or the engine's text.

Engine calls are made one at a time, in the order they were issued. A resuming call (step, next, continue, a
recompile decision, any console line) is accepted only while the program is stopped and no other one is in
flight; keys pressed while it runs are ignored (the footer greys them out). Keys that do not apply at the current
stop are hidden from the footer (`actions.Action.when`): the recompile-stop choices appear only at a recompile
stop (and only those the stop offers as available), the edit keys only in generated code.

Dialogs: the edit dialog (``e``/``i``/``x``, `EditDialog`) previews an instruction edit with `Engine.preview_edit`
and applies it with `Engine.apply_edit`; the ``dynamic`` choice asks for ``NAME DIM`` (`PromptScreen`).
"""

from __future__ import annotations

import gc
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import App, ScreenStackError
from textual.message import Message
from textual.timer import Timer
from textual.worker import get_current_worker

from dynadbg.core.model import (
    DEFAULT_BREAK_ON,
    BreakpointView,
    CommandResult,
    Decision,
    DecisionKind,
    EditOp,
    EditOutcome,
    EditPreview,
    EngineError,
    ErrorKind,
    GuardTree,
    HistoryView,
    Resumed,
    Stop,
    StopKind,
)
from dynadbg.core import format as fmt
from dynadbg.core.edits import format_diff
from dynadbg.core.format.glossary import Glossary, stop_terms
from dynadbg.core.runner import ExitResult

from . import actions
from .bridge import Bridge, EngineSession
from .commands import ActionCommands, LearnCommand
from .console import Console
from .edit_dialog import EditDialog
from .help_screen import HelpScreen
from .prompt_screen import PromptScreen
from .recompile_view import available_choices, choice_for, tensor_inputs
from .screen import QUERY_VIEWS, MainScreen
from .source_view import SourceView
from .status_line import StatusLine
from .teach import TeachingApp

#: Registry action id → the control method it calls (``until`` also takes the bytecode cursor's index).
_CONTROL: dict[str, Callable[[EngineSession, int], Any]] = {
    "step": lambda engine, cursor: engine.set_step(),
    "next": lambda engine, cursor: engine.set_next(),
    "return": lambda engine, cursor: engine.set_return(),
    "continue": lambda engine, cursor: engine.set_continue(),
    "until": lambda engine, cursor: engine.set_until(cursor),
}
#: The recompile-stop choice actions (their ids are the `DecisionKind` values).
_CHOICES = frozenset(kind.value for kind in DecisionKind)
#: Stop kinds that stay in the call of the previous stop when code object and compile id did not change, so its
#: guard tree (evaluated for that call's inputs) is kept; any other stop may be a new call and fetches it again.
_SAME_CALL = frozenset({StopKind.STEP, StopKind.RETURN})
#: Seconds the program state must hold before the footer's greyed-out keys are updated.
FOOTER_SETTLE = 0.25
#: Seconds the program must run before the status line says so (a quick step shows no "running" flash).
RUNNING_SHOWN_AFTER = 0.1
#: Seconds `q` waits for the program to end before the app exits anyway.
QUIT_DEADLINE = 0.9


class _Cancelled(Exception):
    """The thread worker waiting on an engine call was cancelled (the app is closing)."""


@dataclass(frozen=True)
class _Call:
    """One queued engine call.

    Attributes:
        fn: calls the engine (on the engine-call thread) and returns its answer.
        done: handles the answer on the UI thread.
        resume: the call may let the program run (it holds `_awaiting_resume` until answered).
        what: what it is, for an internal-error line.
    """

    fn: Callable[[], Any]
    done: Callable[[Any], None]
    resume: bool
    what: str


class DebuggerApp(TeachingApp, App[int]):
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

    class EngineAnswered(Message):
        """An engine call came back (posted by the engine worker)."""

        def __init__(self, call: _Call, result: Any) -> None:
            self.call = call
            """The call."""
            self.result = result
            """What the engine returned (an `EngineError` when the call failed)."""
            super().__init__()

    class QuitDone(Message):
        """`Session.quit()` returned (or gave up waiting)."""

        def __init__(self, result: ExitResult | None) -> None:
            self.result = result
            """The program's exit result, if it arrived in time."""
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
        self.keymap: dict[str, str] = dict(keymap or {})
        """Action id → keys overrides in force (shown by the help screen and the palette)."""
        self.phase = "starting"
        """``"starting"``, ``"running"``, ``"stopped"`` or ``"exited"``."""
        self.last_stop: Stop | None = None
        """The latest stop (None before the first); after ``u``/``d`` its `Stop.selected` names the frame shown."""
        self.exit_result: ExitResult | None = None
        """How the program ended, once it did."""
        self.stops_seen = 0
        self._glossary = Glossary()
        """Number of stops so far."""
        self._start = start
        self._keymap_warnings = tuple(keymap_warnings)
        self._main = MainScreen()
        self._awaiting_resume = False
        self._quitting = False
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._queue_lock = threading.Lock()
        self._caller: threading.Thread | None = None
        self._pending = 0
        self._guards_key: tuple[Any, ...] | None = None
        self._guards_seq = -1
        self._view_seq: dict[str, tuple[int, int]] = {}
        self._footer_timer: Timer | None = None
        self._auto_view: str | None = None
        self._footer_gate: tuple[Any, ...] = (self.phase, False)
        self._running_timer: Timer | None = None
        self._running_text = "running"
        self._teach_init()

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
        status = self._main.query_one(StatusLine)
        status.interrupt_key = actions.display_keys(keys["interrupt"])
        status.quit_key = actions.display_keys(keys["quit"])
        status.forward_key = actions.display_keys(keys["forward"])
        self._main.recompile_view.keys = keys
        # The program's prints (any thread) land in the console log instead of under the TUI.
        self.begin_capture_print(self._main.console, stdout=True, stderr=True)
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
        if self.phase != "exited" and not self._quitting:
            # the app went away without `q` (an error, a test's end): a paused program would wait for a command
            # forever with every hook installed; end it (`Session.quit` returns at once)
            try:
                self.session.quit()
            except Exception:  # noqa: BLE001 - leaving regardless
                pass
        self._queue.put(None)
        gc.unfreeze()
        if self._footer_timer is not None:
            self._footer_timer.stop()

    # Actions (all from the registry) ---------------------------------------------------------------------------

    @property
    def stopped(self) -> bool:
        """The program is paused and no resuming call is in flight."""
        return self.phase == "stopped" and not self._awaiting_resume

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
        if when == "running":
            # Only while the program runs; otherwise Ctrl+C falls through to Textual's copy binding.
            return self.phase in ("running", "starting") or self._awaiting_resume
        if when == "recompile":
            return stopped and entry.id in available_choices(stop)
        if when == "generated":
            frame = self._main.frame
            if at_recompile or frame is None or not frame.code.generated:
                return False
            return True if stopped else None
        if when == "frame" and at_recompile:
            return False
        if when in ("stopped", "frame"):
            return True if stopped else None
        return True

    def action_dbg(self, action_id: str) -> None:
        """Run the registry action `action_id` (every key binding and palette entry lands here)."""
        entry = actions.get(action_id)
        screen = self._main
        instr = screen.bytecode.cursor_instruction
        cursor = instr.index if instr is not None else 0
        if entry.id == "help":
            if not isinstance(self.screen, HelpScreen):
                self.push_screen(HelpScreen(self.keymap))
        elif entry.id == "console":
            screen.console.input.focus()
        elif entry.id == "maximize":
            screen.toggle_maximize()
        elif entry.id == "explain":
            if screen.toggle_explain():
                self.explain_cursor()
        elif entry.id == "interrupt":
            self.interrupt()
        elif entry.id == "quit":
            self.quit_program()
        elif entry.id.startswith("view_"):
            screen.show_view("tab-" + entry.id.removeprefix("view_"))
        elif entry.id == "breakpoint":
            if instr is not None:
                self._toggle_breakpoint(instr.index)
        elif entry.id in ("edit", "insert", "delete"):
            self.open_edit_dialog(entry.id)
        elif entry.id == "dynamic":
            self._ask_dynamic()
        elif entry.id in _CHOICES:
            choice = choice_for(self.last_stop, DecisionKind(entry.id))
            if choice is not None:
                self.decide(choice.decision)
        elif entry.id in _CONTROL:
            control = _CONTROL[entry.id]
            self._resume(lambda: control(self.session, cursor), entry.id)
        elif entry.id in ("up", "down"):
            self.select_frame(-1 if entry.id == "up" else 1)
        elif entry.id in ("back", "forward"):
            self.move_in_history(entry.id)
        elif entry.id == "whatif":
            self._what_if()

    # Intents → engine calls ------------------------------------------------------------------------------------

    def _resume(self, fn: Callable[[], Any], what: str, *, echo: str | None = None,
                done: Callable[[Any], None] | None = None) -> None:
        """Send a call that lets the program go on (only while stopped and no other one is in flight)."""
        if not self.stopped:
            return
        if echo is not None:
            self._main.console.echo(echo)
        self._awaiting_resume = True
        self._bindings_changed()
        self._enqueue(_Call(fn, done or self._resumed, True, what))

    def _show_resumed(self, result: Resumed) -> None:
        """What a resuming call or a decision did, in the console, each thing once (`format.resumed_text`'s
        parts): what was done, each warning (as an error line), the permanent fix."""
        console = self._main.console
        head = fmt.resumed_head(result)
        if head:
            console.output(head)
        for warning in result.warnings:
            console.error(fmt.warning_line(warning))
        if result.permanent is not None:
            console.output(Text("permanently: ") + Text(fmt.permanent_text(result.permanent)))

    def _resumed(self, result: Any) -> None:
        """A control call or a decision answered: running (the next stop follows), or why it could not."""
        if isinstance(result, Resumed):
            self._show_resumed(result)
            if self._awaiting_resume and self.phase == "stopped":
                self._set_running("running")
            if result.quit:
                self.quit_program()
            return
        self._awaiting_resume = False
        self._bindings_changed()
        self._log_error(result)

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

        self._enqueue(_Call(lambda: engine.source(whole_file=True), done, False, "source"))

    def decide(self, decision: Decision) -> None:
        """Take a recompile-stop decision (`Engine.decide`); the log shows the command and its permanent code."""
        self._resume(lambda: self.session.decide(decision), decision.kind.value, echo=decision.command)

    def select_frame(self, delta: int) -> None:
        """``u`` (-1, toward the caller) / ``d`` (+1): select another frame of the stop."""
        if not self.stopped:
            return
        engine = self.session
        self._enqueue(_Call((lambda: engine.up()) if delta < 0 else (lambda: engine.down()),
                            self._selected, False, "up" if delta < 0 else "down"))

    def move_in_history(self, direction: str) -> None:
        """``[`` / ``]``: show the previous / next recorded stop (`Engine.back` / `Engine.forward`), read-only."""
        if not self.stopped:
            return
        engine = self.session
        call = (lambda: engine.back()) if direction == "back" else (lambda: engine.forward())
        self._enqueue(_Call(call, self._history_moved, False, direction))

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

        self._enqueue(_Call(call, self._breakpoints_changed, False, "breakpoint"))

    def _breakpoints_changed(self, result: Any) -> None:
        if isinstance(result, tuple) and all(isinstance(b, BreakpointView) for b in result):
            self._main.breakpoints = result
        else:
            self._log_error(result)

    def _what_if(self) -> None:
        if self.stopped:
            self._main.console.echo("whatif")
            self._enqueue(_Call(self.session.what_if, self._show_what_if, False, "whatif"))

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

    def preview_edit(self, op: EditOp) -> EditPreview | EngineError:
        """The engine's preview of the instruction edit `op` (blocking: call it from a thread worker only)."""
        if self.phase != "stopped":
            return EngineError("no preview while the program runs", "not paused")
        try:
            return self._call_engine(self.session.preview_edit, op)
        except _Cancelled:
            return EngineError("cancelled", "internal")

    def on_edit_dialog_apply(self, event: EditDialog.Apply) -> None:
        dialog, op = event.dialog, event.op
        self._main.console.echo(op.text)

        def done(result: Any) -> None:
            if dialog.is_attached:
                dialog.applied(result)
            if isinstance(result, EditOutcome) and result.ok:
                self._patch_changed()
                self._main.console.output(result.message)
                if result.diff is not None:
                    self._main.console.output(format_diff(result.diff, context=2))
            else:
                self._log_error(result.error if isinstance(result, EditOutcome) else result)

        self._enqueue(_Call(lambda: self.session.apply_edit(op), done, False, op.text))

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

    def on_main_screen_breakpoint_requested(self, event: MainScreen.BreakpointRequested) -> None:
        self._toggle_breakpoint(event.index)

    def on_main_screen_view_requested(self, event: MainScreen.ViewRequested) -> None:
        self._fill_view(event.pane_id)

    def _fill_view(self, pane: str, *, force: bool = False) -> None:
        """Fill a view from its engine query, once per stop and selected frame (unless `force`)."""
        stop = self.last_stop
        query = QUERY_VIEWS.get(pane)
        if query is None or not self.stopped or stop is None:
            return
        key = (stop.seq, stop.selected)
        if not force and self._view_seq.get(pane) == key:
            return
        self._view_seq[pane] = key
        engine = self.session
        if pane == "tab-recompile":
            # The records keep the diffs of the entries that existed at each miss; the Why view also shows the
            # entries' diffs now (after the decision compiled a new entry), as `diff` does.
            def call() -> Any:
                return engine.recompile_records(), engine.guard_diffs()
        elif pane == "tab-entries":
            # The resume functions' code names (`compiles`) beside their global names: one function, two names.
            def call() -> Any:
                return engine.entries(), engine.compiles()
        else:
            def call() -> Any:
                return getattr(engine, query)()
        self._enqueue(_Call(call, lambda result: self._query_done(pane, result), False, query))

    def _query_done(self, pane: str, result: Any) -> None:
        if pane == "tab-recompile" and isinstance(result, tuple):  # (records, diffs) from `_fill_view`
            result, diffs = result
            self._main.recompile_view.live_diffs = diffs if isinstance(diffs, tuple) else ()
        elif pane == "tab-entries" and isinstance(result, tuple):  # (entries, compiles) from `_fill_view`
            result, compiles = result
            self._main.learn_resume_aliases(result, compiles)
        self._main.show_query(pane, result)
        if isinstance(result, EngineError):
            self._log_error(result)

    def on_console_submitted(self, event: Console.Submitted) -> None:
        self.submit(event.line)

    def submit(self, line: str) -> None:
        """Run a command-language line the user typed (`Engine.execute`), in order with every other call.

        The line reaches the engine as typed. While it is answered no other resuming call is accepted (it may
        resume the program). Afterwards `Engine.current_stop` shows what it changed.
        """
        console = self._main.console
        console.echo(line)
        engine = self.session
        resume = self.stopped
        if resume:
            self._awaiting_resume = True
            self._bindings_changed()

        def call() -> Any:
            result = engine.execute(line)
            if result.resumed or result.quit or result.error:
                return result, None
            return result, engine.current_stop()

        self._enqueue(_Call(call, lambda answer: self._console_done(answer, resume), resume, line))

    def _console_done(self, answer: Any, resume: bool) -> None:
        console = self._main.console
        if isinstance(answer, EngineError):
            answer = (CommandResult(error=answer.message), None)
        result, stop = answer
        if result.error:
            console.error(result.error)
        elif isinstance(result.data, Resumed) and result.output == fmt.resumed_text(result.data):
            self._show_resumed(result.data)  # as a key's decision shows it
        else:
            console.output(result.output)
        if result.resumed:
            if resume and self._awaiting_resume and self.phase == "stopped":
                self._set_running("running")
        elif resume:
            self._awaiting_resume = False
            self._bindings_changed()
        if result.quit:
            self.quit_program()
            return
        if isinstance(stop, Stop) and self.phase == "stopped":
            # What the command changed (selection, breakpoints, watches, edits): views filled before are stale.
            self._view_seq.clear()
            self._show_same_stop(stop)

    # The engine queue ------------------------------------------------------------------------------------------

    @property
    def engine_busy(self) -> bool:
        """Engine calls are queued or running, or their answers are not handled yet."""
        return self._pending > 0

    def _enqueue(self, call: _Call) -> None:
        """Queue an engine call; the engine-call thread makes it, in order, and posts its answer."""
        with self._queue_lock:
            self._pending += 1
            if self._caller is None:
                # One daemon thread for every call: a step costs no thread start, and a call the engine never
                # answers cannot hold up the app's exit.
                self._caller = threading.Thread(target=self._make_calls, name="dynadbg-engine-calls", daemon=True)
                self._caller.start()
        self._queue.put(call)

    def _make_calls(self) -> None:
        """The engine-call thread: run queued calls one at a time, in order, posting each answer."""
        while True:
            call = self._queue.get()
            if call is None:
                return
            try:
                result = call.fn()
            except Exception as exc:  # noqa: BLE001 - an engine bug must not kill the UI
                result = EngineError(f"internal error in {call.what}: {type(exc).__name__}: {exc}", "internal")
            if not self.post_message(self.EngineAnswered(call, result)):
                with self._queue_lock:
                    self._pending -= 1

    def on_debugger_app_engine_answered(self, event: EngineAnswered) -> None:
        try:
            event.call.done(event.result)
        finally:
            with self._queue_lock:
                self._pending -= 1

    def _call_engine(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call a blocking engine method from a thread worker, giving up (`_Cancelled`) if the worker is cancelled.

        The call itself runs on a daemon thread so that a call the engine never answers cannot block the app's
        shutdown (Textual waits for its worker threads when it exits).
        """
        worker = get_current_worker()
        done = threading.Event()
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - re-raised on the worker
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=call, name="dynadbg-engine-call", daemon=True).start()
        while not done.wait(0.05):
            if worker.is_cancelled:
                raise _Cancelled
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def _log_error(self, error: Any) -> None:
        if error is not None:
            self._main.console.error(str(getattr(error, "message", error)))

    def _patch_changed(self) -> None:
        """An edit was installed or undone: the Diff view is stale (refilled now if it is open)."""
        self._main.console.info("the Diff view (key 6) shows the patch")
        self._view_seq.pop("tab-diff", None)
        if self._main.views.active == "tab-diff":
            self._fill_view("tab-diff", force=True)

    # Engine events ---------------------------------------------------------------------------------------------

    def on_bridge_stopped(self, event: Bridge.Stopped) -> None:
        stop = event.stop
        self.last_stop = stop
        self.stops_seen += 1
        self.phase = "stopped"
        self._awaiting_resume = False
        self._running_done()
        # A full collection in a torch program walks millions of objects (0.4-0.6 s here); stepping allocates
        # enough to trigger one every few dozen steps. While the program is paused or stepping, leave the objects
        # alive now to the permanent generation; `_show_running` gives them back once the program runs on.
        gc.freeze()
        screen = self._main
        screen.activity = None
        screen.stop = stop
        if stop.kind not in (StopKind.STEP,):
            screen.console.info(f"stopped: {stop.kind.value} · {stop.message}" if stop.message
                                else f"stopped: {stop.kind.value}")
            keys = actions.effective_keys(self.keymap)
            if stop.kind is StopKind.RECOMPILE:
                screen.console.info(f"  every failing guard, the guard diffs and the choices: Recompile view (key "
                                    f"{actions.display_keys(keys['view_recompile'])})")
            else:
                for title, _ in fmt.stop_blocks(stop):
                    screen.console.info(f"  {title} (Stop view, key {actions.display_keys(keys['view_stop'])})")
        if stop.exception:
            screen.console.error(stop.exception)
        if not self._glossary.complete:
            # the first time a Dynamo term shows up, one line says what it means (as in line mode)
            for gloss in self._glossary.new_terms(stop_terms(stop)):
                screen.console.info(gloss)
        # A recompile stop opens the Recompile view; another stop outside any frame (compile) has nothing to list:
        # show its report instead. The next stop in a frame goes back to the listing.
        auto = ("tab-recompile" if stop.kind is StopKind.RECOMPILE
                else "tab-stop" if stop.frame is None and (stop.graph_break or stop.exception_lines) else None)
        active = screen.views.active
        # A recompile stop always opens its view (whatever view was open: the choices are there); the Stop view
        # replaces only the listing or a view opened the same way.
        if auto == "tab-recompile" or (auto is not None and active in ("tab-bytecode", self._auto_view)):
            self._auto_view = auto
            screen.show_view(auto)
        elif auto is None and stop.frame is not None and self._auto_view is not None and active == self._auto_view:
            self._auto_view = None
            screen.show_view("tab-bytecode")
        self._fetch_guards_for(stop)
        self.fetch_teaching(stop)
        # Views filled from queries are stale now; refill the open one.
        self._fill_view(screen.views.active)
        self._bindings_changed()

    def _show_same_stop(self, stop: Stop) -> None:
        """The stop the program is paused at, changed by a call (another frame selected, a breakpoint, a watch)."""
        self.last_stop = stop
        self._main.stop = stop
        self._fetch_guards_for(stop)
        self.fetch_teaching(stop)
        self._fill_view(self._main.views.active)
        self._bindings_changed()

    def on_bridge_running(self, event: Bridge.Running) -> None:
        if self.phase != "exited":
            self._set_running(event.text)

    def _set_running(self, text: str) -> None:
        # The panes keep showing the last stop (pudb-style); the status line says the program runs, once it has
        # run for `RUNNING_SHOWN_AFTER` seconds: a step that stops sooner repaints the screen once, not twice.
        self.phase = "running"
        self._running_text = text
        if self._running_timer is None:
            self._running_timer = self.set_timer(RUNNING_SHOWN_AFTER, self._show_running)
        self._bindings_changed()

    def _show_running(self) -> None:
        self._running_timer = None
        if self.phase == "running":
            gc.unfreeze()  # the program runs on: its garbage is collected as without the debugger
            self._main.activity = self._running_text

    def _running_done(self) -> None:
        if self._running_timer is not None:
            self._running_timer.stop()
            self._running_timer = None

    def on_bridge_info(self, event: Bridge.Info) -> None:
        self._main.console.info(event.text)

    def on_bridge_exited(self, event: Bridge.Exited) -> None:
        self._on_exit_result(event.result)

    def _on_exit_result(self, result: ExitResult) -> None:
        first = self.exit_result is None
        self.exit_result = result
        self.phase = "exited"
        self._awaiting_resume = False
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
        console = screen.console
        if result.traceback:
            console.error(result.traceback.rstrip())
            screen.show_view("tab-stop")
        status = f"program exited with status {result.status}"
        (console.error if result.status else console.info)(
            f"{status}: {result.exception}" if result.exception else status)
        console.info("press q to leave the debugger")
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
        self._enqueue(_Call(self.session.guard_trees, lambda result: self._guards_loaded(result, seq), False,
                            "guard tree"))

    def _guards_loaded(self, result: Any, seq: int) -> None:
        if seq != self._guards_seq:
            return
        screen = self._main
        screen.guards_loading = False
        trees = result if isinstance(result, tuple) else ()
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
        threading.Thread(target=self._safely, args=(self.session.interrupt,), daemon=True,
                         name="dynadbg-interrupt").start()

    def quit_program(self) -> None:
        """End the program (`Session.quit`) and leave the app within about a second."""
        if self.phase == "exited" or self._quitting:
            self.exit(self._status(), return_code=self._status())
            return
        self._quitting = True
        self._main.console.info("ending the program…")
        self.set_timer(QUIT_DEADLINE + 0.05, self._exit_now)
        threading.Thread(target=self._quit_engine, daemon=True, name="dynadbg-quit").start()

    def _quit_engine(self) -> None:
        result = None
        try:
            self.session.quit()
            result = self.session.wait(timeout=QUIT_DEADLINE)
        except Exception:  # noqa: BLE001 - the app exits regardless
            pass
        self.post_message(self.QuitDone(result))

    def on_debugger_app_quit_done(self, event: QuitDone) -> None:
        if event.result is not None and self.exit_result is None:
            self.exit_result = event.result
        self.exit(self._status(), return_code=self._status())

    def _gate(self) -> tuple[Any, ...]:
        """What the footer's shown and greyed-out keys depend on (`check_action`)."""
        stop = self.last_stop
        frame = self._main.frame
        return (self.phase, self._awaiting_resume, stop.kind if stop is not None else None,
                available_choices(stop), frame is not None and frame.code.generated)

    def _bindings_changed(self) -> None:
        """Update the footer's enabled/greyed keys once the state has been stable for a moment.

        Each footer refresh rebuilds its key widgets (tens of ms), so a step that starts and stops within
        `FOOTER_SETTLE` seconds repaints no footer at all. Key dispatch does not wait for this: `check_action` is
        asked at every key press.
        """
        if self._footer_timer is not None:
            self._footer_timer.stop()
        self._footer_timer = self.set_timer(FOOTER_SETTLE, self._refresh_footer)

    def _refresh_footer(self) -> None:
        self._footer_timer = None
        if self._gate() != self._footer_gate:
            self._footer_gate = self._gate()
            try:
                self.screen.refresh_bindings()
            except ScreenStackError:  # the app is closing
                pass

    def _exit_now(self) -> None:
        self.exit(self._status(), return_code=self._status())

    def _status(self) -> int:
        return self.exit_result.status if self.exit_result is not None else 0

    @staticmethod
    def _safely(fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - interrupt is best effort
            pass


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
