"""The Textual debugger app and `run_tui`, the function the CLI calls.

Threads: the user's program runs on the engine's worker thread; this app owns the main thread. Engine events
arrive as `Bridge` messages. Every engine call that blocks (`execute`, `guard_tree`, `compiled_frames`) runs in a
Textual thread worker, never on the UI thread; `quit` and `interrupt` run on short daemon threads so a busy
engine can never hold the UI (or its shutdown) hostage.

Commands are executed one at a time, in the order they were issued. A resuming command (step, next, continue, …)
is accepted only while the program is stopped and no other resuming command is in flight; keys pressed while it
runs are ignored (the footer greys them out). Keys that do not apply at the current stop are hidden from the
footer (`actions.Action.when`): the recompile-stop choices appear only at a recompile stop, the edit keys only in
generated code.

Dialogs: the edit dialog (``e``/``i``/``x``, `EditDialog`) previews an instruction edit through `preview_edit`
(the engine's `PatchManager.preview`, on a thread worker) and sends ``edit``/``insert``/``delete`` on Enter; the
``dynamic`` choice asks for ``NAME DIM`` (`PromptScreen`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from textual import work
from textual.app import App, ScreenStackError
from textual.message import Message
from textual.timer import Timer
from textual.worker import get_current_worker

from dynadbg.core.model import DEFAULT_BREAK_ON, CommandResult, GuardTree, Stop, StopKind
from dynadbg.core.patches import EditOp, EditPreview
from dynadbg.core.runner import ExitResult

from . import actions, bridge
from .bridge import Bridge, EngineSession
from .commands import ActionCommands
from .console import Console
from .edit_dialog import EditDialog
from .help_screen import HelpScreen
from .prompt_screen import PromptScreen
from .recompile_view import available_choices, stop_choices, tensor_inputs
from .screen import VIEW_COMMANDS, MainScreen
from .status_line import StatusLine

#: Console verbs that let the program run (the command language's resuming commands and the recompile choices).
RESUMING = frozenset({"s", "step", "n", "next", "r", "return", "c", "cont", "continue", "until", "unt",
                      "recompile", "eager", "skip", "drop", "dynamic"})
#: Verbs whose result fills a view instead of the log (``patch`` only as ``patch`` / ``patch show``).
_VIEW_OF = {"orig": "tab-orig", "graph": "tab-graph", "entries": "tab-entries", "why": "tab-recompile",
            "patch": "tab-diff"}
#: Verbs of the edit dialog's commands.
_EDIT_VERBS = frozenset({"edit", "insert", "delete"})
#: Stop kinds that stay in the call of the previous stop when code object and compile id did not change, so its
#: guard tree (evaluated for that call's inputs) is kept; any other stop may be a new call and fetches it again.
_SAME_CALL = frozenset({StopKind.STEP, StopKind.RETURN})
#: Seconds the program state must hold before the footer's greyed-out keys are updated.
FOOTER_SETTLE = 0.25
#: Seconds `q` waits for the program to end before the app exits anyway.
QUIT_DEADLINE = 0.9


class _Cancelled(Exception):
    """The thread worker waiting on an engine call was cancelled (the app is closing)."""


class DebuggerApp(App[int]):
    """The dynadbg TUI.

    Args:
        session_factory: builds the engine session with the given listener (the app's `Bridge`); e.g.
            ``lambda listener: Session(listener, break_on=...)``, or a fake engine in tests.
        start: starts the program on the session (``lambda s: s.start_script(path, argv)``); called once the app
            is mounted. None: the caller starts it.
        keymap: action id → keys overrides (see `actions.load_keymap`).
        keymap_warnings: problems found reading the keymap, shown in the console log at start.
        previewer: makes the edit dialog's preview, blocking: ``previewer(session, op)`` gives the engine's
            `EditPreview` or a line saying why there is none. Default `bridge.preview_edit` (the real engine's
            `PatchManager.preview` on the program's thread); the fake engine of the tests passes its own.

    The app's return value (``App.run()``) is the program's exit status when it is known.
    """

    CSS_PATH = "dynadbg.tcss"
    TITLE = "dynadbg"
    BINDINGS = actions.bindings()
    COMMANDS = App.COMMANDS | {ActionCommands}

    class CommandDone(Message):
        """A console command came back from the engine."""

        def __init__(self, line: str, result: CommandResult, silent: bool, resume: bool = False) -> None:
            self.line = line
            """The command as sent."""
            self.result = result
            """What the engine returned."""
            self.silent = silent
            """True for commands the UI issued itself (filling a view), not the user."""
            self.resume = resume
            """True for the resuming command the UI is waiting on (the one that set `_awaiting_resume`)."""
            super().__init__()

    class GuardsLoaded(Message):
        """`Session.guard_tree()` came back."""

        def __init__(self, tree: GuardTree | None, seq: int, error: str | None = None) -> None:
            self.tree = tree
            """The tree, or None (no entry serves the frame, or the call failed)."""
            self.seq = seq
            """`Stop.seq` of the stop it was fetched for."""
            self.error = error
            """Why the call failed, if it did."""
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
        previewer: Callable[[EngineSession, EditOp], EditPreview | str] | None = None,
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
        """The latest stop (None before the first)."""
        self.exit_result: ExitResult | None = None
        """How the program ended, once it did."""
        self.stops_seen = 0
        """Number of stops so far."""
        self._start = start
        self._keymap_warnings = tuple(keymap_warnings)
        self._main = MainScreen()
        self._awaiting_resume = False
        self._quitting = False
        self._queue: deque[tuple[str, bool, bool]] = deque()
        self._queue_lock = threading.Lock()
        self._draining = False
        self._guards_key: tuple[Any, ...] | None = None
        self._guards_seq = -1
        self._view_seq: dict[str, int] = {}
        self._footer_timer: Timer | None = None
        self._auto_view: str | None = None
        self._previewer = previewer if previewer is not None else bridge.preview_edit
        self._edit_dialog: EditDialog | None = None
        self._footer_gate: tuple[Any, ...] = (self.phase, False)

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
        if self._footer_timer is not None:
            self._footer_timer.stop()

    # Actions (all from the registry) ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether a registry action applies now (`actions.Action.when`): True runs it, None greys it out in the
        footer (it applies once the program stops), False hides it (it does not apply at this kind of stop)."""
        if action != "dbg" or not parameters:
            return True
        try:
            entry = actions.get(str(parameters[0]))
        except KeyError:
            return False
        stopped = self.phase == "stopped" and not self._awaiting_resume
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
        if entry.id == "help":
            if not isinstance(self.screen, HelpScreen):
                self.push_screen(HelpScreen(self.keymap))
        elif entry.id == "console":
            screen.console.input.focus()
        elif entry.id == "interrupt":
            self.interrupt()
        elif entry.id == "quit":
            self.quit_program()
        elif entry.id.startswith("view_"):
            screen.show_view("tab-" + entry.id.removeprefix("view_"))
        elif entry.id == "breakpoint":
            instr = screen.bytecode.cursor_instruction
            if instr is not None:
                self._toggle_breakpoint(instr.index)
        elif entry.id in _EDIT_VERBS:
            self.open_edit_dialog(entry.id)
        elif entry.id == "dynamic":
            self._ask_dynamic()
        elif entry.command is not None:
            instr = screen.bytecode.cursor_instruction
            cursor = instr.index if instr is not None else 0
            # Stepping by key is not echoed (the panes show its effect); a recompile choice is, with its code.
            self.submit(entry.command.format(cursor=cursor), echo=not entry.resumes or entry.when == "recompile")

    def open_edit_dialog(self, kind: str) -> None:
        """Open the edit dialog (``"edit"``, ``"insert"``, ``"delete"``) on the bytecode cursor's instruction."""
        bytecode = self._main.bytecode
        code, instr = bytecode.code, bytecode.cursor_instruction
        if self.phase != "stopped" or code is None or instr is None or not code.generated:
            return
        self.push_screen(EditDialog(kind, instr, code.name, len(code.instructions)))

    def preview_edit(self, op: EditOp) -> EditPreview | str:
        """The engine's preview of the instruction edit `op` (blocking: call it from a thread worker only)."""
        if self.phase != "stopped":
            return "no preview while the program runs"
        try:
            return self._call_engine(self._previewer, self.session, op)
        except _Cancelled:
            return "cancelled"

    def on_edit_dialog_apply(self, event: EditDialog.Apply) -> None:
        self._edit_dialog = event.dialog
        self.submit(event.line)

    def _ask_dynamic(self) -> None:
        """The ``dynamic`` choice: ask for NAME DIM (the engine's suggestions, then every tensor input's dims)."""
        stop = self.last_stop
        suggested = [c.syntax.removeprefix("dynamic").strip() for c in stop_choices(stop) if c.command == "dynamic"]
        tensors = tensor_inputs(stop)
        for name, shape in tensors:
            suggested += [f"{name} {dim}" for dim in range(len(shape)) if f"{name} {dim}" not in suggested]
        shapes = ", ".join(f"{name} {list(shape)}" for name, shape in tensors) or "none"
        explanation = ("NAME DIM: the input tensor and the dimension to mark dynamic "
                       "(torch._dynamo.mark_dynamic), then recompile.\n"
                       f"tensor inputs: {shapes}")

        def answered(value: str | None) -> None:
            if value:
                self.submit(f"dynamic {value}")

        self.push_screen(PromptScreen("mark a dimension dynamic", explanation, value=suggested[0] if suggested else "",
                                      placeholder="NAME DIM   e.g. x 0", suggestions=suggested), answered)

    def _toggle_breakpoint(self, index: int) -> None:
        on = index not in self._main.bytecode.breakpoints
        self.submit(f"{'b' if on else 'cl'} {index}")

    def on_main_screen_breakpoint_requested(self, event: MainScreen.BreakpointRequested) -> None:
        if self.phase == "stopped":
            self._toggle_breakpoint(event.index)

    def on_main_screen_view_requested(self, event: MainScreen.ViewRequested) -> None:
        stop = self.last_stop
        if self.phase == "stopped" and stop is not None and self._view_seq.get(event.pane_id) != stop.seq:
            self._view_seq[event.pane_id] = stop.seq
            self.submit(event.command, silent=True)

    def on_console_submitted(self, event: Console.Submitted) -> None:
        self.submit(event.line)

    # Commands --------------------------------------------------------------------------------------------------

    def submit(self, line: str, *, silent: bool = False, echo: bool = True) -> None:
        """Send a console command to the engine, in order, on a thread worker.

        Typed commands always reach the engine, which answers the ones that need a stop with an error while the
        program runs or after it ended. Keys are gated earlier (`check_action`).

        Args:
            line: a command-language line (``"s"``, ``"p x"``).
            silent: the UI issued it (filling a view): not echoed, and dropped unless the program is stopped.
            echo: log the line (keys that step pass False).
        """
        console = self._main.console
        verb = line.split(maxsplit=1)[0] if line.strip() else ""
        if echo and not silent:
            console.echo(line)
        if verb in ("q", "quit", "exit"):
            self.quit_program()
            return
        if silent and (self.phase != "stopped" or self._awaiting_resume):
            return
        resume = verb in RESUMING and self.phase == "stopped" and not self._awaiting_resume
        if resume:
            self._awaiting_resume = True
            self._bindings_changed()
        with self._queue_lock:
            self._queue.append((line, silent, resume))
            start = not self._draining
            self._draining = True
        if start:
            self._drain()

    @work(thread=True, group="engine", exit_on_error=False)
    def _drain(self) -> None:
        """Execute queued commands one at a time, in order, posting each result."""
        while True:
            with self._queue_lock:
                if not self._queue:
                    self._draining = False
                    return
                line, silent, resume = self._queue.popleft()
            try:
                result = self._call_engine(self.session.execute, line)
            except _Cancelled:
                with self._queue_lock:
                    self._draining = False
                return
            except Exception as exc:  # noqa: BLE001 - an engine bug must not kill the UI
                result = CommandResult(error=f"internal error running {line!r}: {type(exc).__name__}: {exc}")
            if not isinstance(result, CommandResult):
                result = CommandResult(error=f"engine returned {type(result).__name__} for {line!r}")
            self.post_message(self.CommandDone(line, result, silent, resume))

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

    def on_debugger_app_command_done(self, event: CommandDone) -> None:
        screen = self._main
        console = screen.console
        result = event.result
        parts = event.line.split()
        verb = parts[0] if parts else ""
        pane = _pane_for(parts)
        if verb in _EDIT_VERBS:
            self._edit_done(event.line, result)
        if result.error:
            if not event.silent or pane is not None:
                console.error(result.error)
            if pane is not None:
                self._fill_view(pane, result.error, None)
            if event.resume:
                self._awaiting_resume = False
                self._bindings_changed()
            return
        if result.resumed:
            if event.resume and self._awaiting_resume and self.phase == "stopped":
                self._set_running("running")
        elif event.resume:
            self._awaiting_resume = False
            self._bindings_changed()
        if verb in ("b", "break", "cl", "clear") and len(parts) > 1 and parts[1].isdigit():
            screen.set_breakpoint(int(parts[1]), on=verb in ("b", "break"))
        elif verb in ("u", "up", "d", "down"):
            stop = self.last_stop
            if stop is not None and stop.frames:
                current = screen.frame_index % len(stop.frames)
                step = -1 if verb in ("u", "up") else 1
                screen.frame_index = max(0, min(len(stop.frames) - 1, current + step))
        if pane is not None:
            if self.last_stop is not None:
                self._view_seq[pane] = self.last_stop.seq
            self._fill_view(pane, result.output, result.data)
            if not event.silent:
                screen.show_view(pane)
            return
        if verb in _EDIT_VERBS or (verb == "patch" and len(parts) > 1 and parts[1] in ("load", "undo")):
            self._patch_changed()
        if verb == "guards" and isinstance(result.data, GuardTree):
            screen.guards = result.data
            tree = result.data
            console.output(f"guard tree of entry {tree.compile_id}: {tree.leaf_count:,} guards, "
                           f"{len(tree.failing):,} failing (guards pane)")
            return
        console.output(result.output)
        if result.quit:
            self.quit_program()

    def _fill_view(self, pane: str, output: str, data: object) -> None:
        screen = self._main
        {"tab-orig": screen.show_original, "tab-graph": screen.show_graph, "tab-entries": screen.show_entries,
         "tab-recompile": screen.show_recompile, "tab-diff": screen.show_diff}[pane](output, data)

    def _edit_done(self, line: str, result: CommandResult) -> None:
        """Hand an edit command's result to the edit dialog that sent it (it closes, or shows the rejection)."""
        dialog = self._edit_dialog
        if dialog is not None and dialog.pending_line == line:
            self._edit_dialog = None
            if dialog.is_attached:
                dialog.applied(result)

    def _patch_changed(self) -> None:
        """An edit was installed or undone: the Diff view is stale (refilled now if it is open)."""
        self._main.console.info("the Diff view (key 6) shows the patch")
        self._view_seq.pop("tab-diff", None)
        if self._main.views.active == "tab-diff":
            self._main.post_message(MainScreen.ViewRequested("tab-diff", VIEW_COMMANDS["tab-diff"] or ""))

    # Engine events ---------------------------------------------------------------------------------------------

    def on_bridge_stopped(self, event: Bridge.Stopped) -> None:
        stop = event.stop
        self.last_stop = stop
        self.stops_seen += 1
        self.phase = "stopped"
        self._awaiting_resume = False
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
                for title, _ in stop.detail:
                    screen.console.info(f"  {title} (Stop view, key {actions.display_keys(keys['view_stop'])})")
        if stop.exception:
            screen.console.error(stop.exception)
        # A recompile stop opens the Recompile view; another stop outside any frame (compile) has nothing to list:
        # show its report instead. The next stop in a frame goes back to the listing.
        auto = ("tab-recompile" if stop.kind is StopKind.RECOMPILE
                else "tab-stop" if stop.frame is None and stop.detail else None)
        active = screen.views.active
        if auto is not None and active in ("tab-bytecode", self._auto_view):
            self._auto_view = auto
            screen.show_view(auto)
        elif auto is None and stop.frame is not None and self._auto_view is not None and active == self._auto_view:
            self._auto_view = None
            screen.show_view("tab-bytecode")
        self._fetch_guards_for(stop)
        # Views filled from commands are stale now; refill the open one.
        active = screen.views.active
        command = VIEW_COMMANDS.get(active)
        if command is not None:
            screen.post_message(MainScreen.ViewRequested(active, command))
        self._bindings_changed()

    def on_bridge_running(self, event: Bridge.Running) -> None:
        if self.phase != "exited":
            self._set_running(event.text)

    def _set_running(self, text: str) -> None:
        # The panes keep showing the last stop (pudb-style); the status line says the program runs.
        self.phase = "running"
        self._main.activity = text
        self._bindings_changed()

    def on_bridge_info(self, event: Bridge.Info) -> None:
        self._main.console.info(event.text)

    def on_bridge_exited(self, event: Bridge.Exited) -> None:
        self._on_exit_result(event.result)

    def _on_exit_result(self, result: ExitResult) -> None:
        first = self.exit_result is None
        self.exit_result = result
        self.phase = "exited"
        self._awaiting_resume = False
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
        frame = stop.frame
        key = (stop.compile_id, frame.code.key if frame is not None else None)
        if stop.kind in _SAME_CALL and key == self._guards_key:
            return
        self._guards_key = key
        self._guards_seq = stop.seq
        self._main.guards_loading = True
        self._fetch_guards(stop.seq)

    @work(thread=True, group="guards", exclusive=True, exit_on_error=False)
    def _fetch_guards(self, seq: int) -> None:
        """Fetch the guard tree for the stop `seq` (blocks on the engine's worker thread)."""
        try:
            tree = self._call_engine(self.session.guard_tree)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - shown in the log
            self.post_message(self.GuardsLoaded(None, seq, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.GuardsLoaded(tree if isinstance(tree, GuardTree) else None, seq))

    def on_debugger_app_guards_loaded(self, event: GuardsLoaded) -> None:
        if event.seq != self._guards_seq:
            return
        screen = self._main
        screen.guards_loading = False
        screen.guards = event.tree
        if event.error:
            screen.console.error(f"guard tree: {event.error}")

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


def _pane_for(parts: list[str]) -> str | None:
    """The view a command's result fills (``orig``: the Original view), or None for the log."""
    verb = parts[0] if parts else ""
    if verb == "patch" and len(parts) > 1 and parts[1] != "show":
        return None
    return _VIEW_OF.get(verb)


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
