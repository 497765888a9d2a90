"""The debugging session: the program's worker thread, the stop policy, the command queue, the listener hooks.

Threads (the bdb/pdb split, DESIGN.md): the user's program runs in a worker thread this module starts. When it
stops, the engine builds a frozen `Stop` snapshot, hands it to `Listener.on_stop` and blocks on a request queue.
Front ends call the engine methods (`dynadbg.core.protocol.Engine`) from any thread, directly or through their
command line (`dynadbg.core.commands.CommandLine`, which the engine does not know); each call runs on the worker
thread (every torch call, frame read, eval and edit happens there) and its frozen result comes back as a value. A
control method or a decision (``s``, ``n``, ``c``…) lets the worker go on.

Hooks installed while a session runs, all restored by the teardown (`q` included):
``set_bytecode_debugger_callback`` (torch, process-global), the worker thread's trace function, and the Dynamo
patches of `dynadbg.core.capture`.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import compat, facts
from .model import (
    BREAK_ON_KINDS,
    DEFAULT_BREAK_ON,
    CodeView,
    CommandResult,
    CompiledFrameView,
    FrameView,
    GuardTree,
    Stop,
)
from . import format as fmt
from .engine import EngineMethods
from .engine_base import anytime
from .engine_hooks import RETURN_LINES_PER_RUN as RETURN_LINES_PER_RUN  # the session's public limit
from .engine_hooks import DynamoHooks
from .engine_stepping import Stepping
from .engine_install import BY_THREAD, Installer
from .trace_engine import TraceMethods
from .protocol import InlineDriver as InlineDriver, Listener as Listener  # the front end's side, declared there
from .model import EngineError, ErrorKind, GeneratedInfo, Resumed
from .decisions import GuardDropper
from .guard_filter import GuardFilter
from .history import DEFAULT_LIMIT as DEFAULT_HISTORY_LIMIT, DEFAULT_MAX_BYTES as DEFAULT_HISTORY_BYTES
from .history import History, HistoryCursor, SummaryCache
from .recompile import RecompileLog
from .runner import ExitResult, QuitProgram, run_script, user_traceback
from .disasm import code_view
from .stack import FrameState
from .state import Breakpoint, Mode, PauseContext, SessionError
from .snapshot import build_stop
from .values import UNKNOWN

if TYPE_CHECKING:
    from .capture import Capture


def session_on_thread(ident: int | None = None) -> "Session | None":
    """The installed session whose program runs on thread `ident` (default: this thread), if any."""
    return BY_THREAD.get(threading.get_ident() if ident is None else ident)


class Session(TraceMethods, EngineMethods):
    """One debugging session over one program run.

    Args:
        listener: the front end's hooks (see `Listener`).
        break_on: which stop kinds are active (`model.BREAK_ON_KINDS`); default `model.DEFAULT_BREAK_ON`.
        check_depth: verify depth tracking against the live stack at every traced instruction (3.11 only; slow,
            for tests); disagreements are collected in `depth_mismatches`.
        on_traced: called as ``on_traced(frame, state)`` at every traced instruction of generated code, after its
            `stack.FrameState` has advanced to it (and been checked, with `check_depth`), before any stop there; on
            the worker thread, inside the program (for checking tools and tests: tests/cases/step_all.py checks
            slot provenance with it). It must not raise or resume anything.
        history_limit: most stops at an instruction kept for `back`/`forward` (`history.History`; 0: off).
        history_bytes: memory cap of that history (bytes, estimated from the kept summaries; 0: off).
        history_every: also record every instruction a stepping command runs through without stopping (``s N``,
            ``n N``, ``until``, ``r``, in the frame being stepped): value stack and locals summarised at each
            (costs a summary per instruction; off by default, ``history every on``).
        trace: install the trace service (Dynamo's own tracing recorded, trace stops; `trace_stops`); False
            leaves Dynamo's symbolic interpreter unpatched (a baseline for tests and benchmarks).

    Raises:
        ValueError: an unknown stop kind in `break_on`.
    """

    def __init__(
        self, listener: Listener, *, break_on: Iterable[str] = DEFAULT_BREAK_ON, check_depth: bool = False,
        on_traced: Callable[[FrameType, FrameState], None] | None = None,
        history_limit: int = DEFAULT_HISTORY_LIMIT, history_bytes: int = DEFAULT_HISTORY_BYTES,
        history_every: bool = False, trace: bool = True,
    ) -> None:
        self.listener = listener
        self._compose()
        self._hooks = DynamoHooks(self)
        self._stepping = Stepping(self)
        self._installer = Installer(self)
        #: check the tracked stack depth at every traced instruction (for tests): against the live stack top
        #: where the interpreter exposes it (3.11), else against what a return instruction needs (1, or 0)
        self.check_depth = check_depth
        self.on_traced = on_traced
        self.break_on: set[str] = set(break_on)
        unknown = self.break_on - set(BREAK_ON_KINDS)
        if unknown:
            raise ValueError(f"unknown stop kind(s): {', '.join(sorted(unknown))} (known: {', '.join(BREAK_ON_KINDS)})")
        #: the stops at instructions so far, for `back`/`forward` (bounded); the cursor says which one is shown
        self.history = History(history_limit, history_bytes, history_every)
        self.history_cursor = HistoryCursor(self.history)
        #: sequence numbers of recorded instructions that were no stop (negative: never a `Stop.seq`)
        self._passing_seq = 0
        self._passing_cache = SummaryCache()
        # stepping state (worker thread)
        self.mode = Mode.CONTINUE
        self.count = 0
        self.target: FrameType | None = None
        self.until_index = -1
        #: id(code) -> instruction index -> breakpoint (codes are keyed by id: hashing a code object hashes its bytes)
        self.breakpoints: dict[int, dict[int, Breakpoint]] = {}
        self._bp_numbers = 0
        #: id(code) -> code for every generated code object seen (keeps them alive, so ids stay unique)
        self.generated: dict[int, CodeType] = {}
        self.compile_ids: dict[int, str] = {}
        self.entered: set[int] = set()
        self.states: dict[FrameType, FrameState] = {}
        #: generated codes known to need no tracing under the current mode, breakpoints and stop kinds
        self._quiet: set[int] = set()
        self._note_call: Callable[[CodeType], None] = lambda code: None
        self.stop_seq = 0
        #: instruction events handled so far (how much generated code was stepped or watched)
        self.traced_instructions = 0
        self._interrupt = False
        self._quitting = False
        self._last_exc_id = 0
        #: (code name, index, tracked depth, real depth[, after exception]) wherever depth tracking disagreed with the
        #: live stack.
        # (code name, index, tracked depth, live depth), with whether the tracked depth was rebased where known
        self.depth_mismatches: list[tuple[str, int, int, int] | tuple[str, int, int, int, bool]] = []
        # threads
        self._thread: threading.Thread | None = None
        self._worker_ident: int | None = None
        self._requests: "queue.Queue[tuple[Callable[[], Any], queue.Queue[Any] | _Answer]]" = queue.Queue()
        self._lock = threading.Lock()
        self.ctx: PauseContext | None = None
        self._result: ExitResult | None = None
        self._done = threading.Event()
        self.capture: Capture | None = None
        self.guard_costs: Any = None  # guard_cost.GuardCostLog while installed
        self.backend: Any = None
        self._prev_callback: Any = None
        self._installed = False
        self._undo_skip: Callable[[], None] = lambda: None
        #: callables run with every `capture.CompileEvent` before the compile stop (they may replace
        #: ``event.code`` / ``event.guard_manager`` for this very compile)
        self.compile_hooks: list[Callable[[Any], None]] = []
        #: answers stops on the program's own thread (`attach`); None when a front end calls from its own thread
        self._inline: InlineDriver | None = None
        self._step_message = ""
        #: callables run at teardown, last registered first (edits and guard filters restore torch state here)
        self.teardown_hooks: list[Callable[[], None]] = []
        #: every cache miss of the run, analysed when it happens (`recompile.RecompileRecord`s)
        self.recompiles = RecompileLog()
        self.compile_hooks.append(self.recompiles.on_compiled)
        #: what the last control method or decision of the current stop asked for (ends the pause loop)
        self._resumed: Resumed | None = None
        #: names the user bound with ``!STMT`` that are not locals of the frame (seen at every later stop)
        self._user_vars: dict[str, Any] = {}
        #: print every generated instruction before it runs (``v``)
        self.verbose = False
        #: ids of generated codes already searched for breakpoint markers
        self._scanned: set[int] = set()
        #: torch's eval-frame contexts (``_TorchDynamoContext``) given our exception hook, to take it back off
        self._hooked_contexts: list[Any] = []
        #: the ``enter_exit_hooks`` entry torch calls before each compiled call: it returns the cleanup torch calls
        #: after it (`DynamoHooks.after_compiled_call`); a ``repeat`` iterator's ``__next__`` does that with no
        #: Python frame
        self._enter_hook: Callable[[], Callable[[], None]] = itertools.repeat(self._hooks.after_compiled_call).__next__
        #: generated codes whose return was reported in this stop-to-stop run, lines printed in it, and code
        #: objects that returned past `RETURN_LINES_PER_RUN` (`DynamoHooks.note_return`)
        self._returns_reported: set[int] = set()
        self._return_lines = 0
        self._returns_omitted = 0
        #: ids of generated codes the user stepped in (s, n, until) in their current call: the next call stops at
        #: its entry while ``reentry`` is on
        self._stepped_in: set[int] = set()
        #: every generated code object that ran while this session was attached, in the order first seen
        self.seen_codes: list[CodeType] = []
        #: a nested ``dynadbg.debug()`` runs its own session meanwhile: this one's hooks stand aside
        self._suspended = False
        self._outer: "Session | None" = None
        #: the code objects torch's frame callback is converting on the worker thread now, outermost first
        self._converting: list[CodeType] = []
        #: set_trace() from eager code: stop in the next generated frame this frame calls (its resume function)
        self._resume_parent: FrameType | None = None
        # services, made on first use (each registers compile and teardown hooks)
        self._patch_manager: Any = None
        self._guard_editor: Any = None
        self._guard_dropper: GuardDropper | None = None
        self._guard_filter: GuardFilter | None = None
        #: Dynamo's own tracing: the trace recorder and the trace stops (`trace_stops.TraceStops`), once installed
        self.trace_stops: Any = None
        self._trace_wanted = trace

    # ==========================================================================================================
    # Services and what they may use of the session (`protocol.Host`)
    # ==========================================================================================================

    @property
    def patch_manager(self) -> Any:
        """The session's instruction patches (`patches.PatchManager`), made on first use."""
        if self._patch_manager is None:
            from .patches import PatchManager

            self._patch_manager = PatchManager(self)
        return self._patch_manager

    @property
    def guard_editor(self) -> Any:
        """The session's guard edits (`guard_edits.GuardEditor`), made on first use."""
        if self._guard_editor is None:
            from .guard_edits import GuardEditor

            self._guard_editor = GuardEditor(self, lambda: self.patch_manager, self.guard_filter)
        return self._guard_editor

    @property
    def guard_dropper(self) -> GuardDropper:
        """The guard filter of the recompile stop's ``drop`` (`decisions.GuardDropper`), made on first use."""
        if self._guard_dropper is None:
            dropper = GuardDropper(self.guard_filter, lambda result: self.message(fmt.drop_result_text(result)),
                                   self.recompiles)
            self.compile_hooks.append(dropper.on_compiled)
            self.teardown_hooks.append(dropper.undo)
            self._guard_dropper = dropper
        return self._guard_dropper

    @property
    def guard_filter(self) -> GuardFilter:
        """The session's one guard filter (`guard_filter.GuardFilter`): ``drop`` and ``guard drop`` rules."""
        if self._guard_filter is None:
            self._guard_filter = GuardFilter(self.message)
            self.teardown_hooks.append(self._guard_filter.undo)
        return self._guard_filter

    @property
    def quitting(self) -> bool:
        return self._quitting

    def message(self, text: str) -> None:
        """An information line for the front end (`Listener.on_message`); never raises."""
        self._message(text)

    def mark_changed(self, code_key: int | None = None) -> None:
        """Forget the cached "needs no tracing" answer of one generated code object (None: of all)."""
        if code_key is None:
            self._quiet.clear()
        else:
            self._quiet.discard(code_key)

    # ==========================================================================================================
    # Public API (any thread)
    # ==========================================================================================================

    def start_script(self, path: str, argv: list[str] | None = None) -> None:
        """Run the script `path` (as ``__main__``, with `argv`) in the worker thread.

        Raises:
            runner.ScriptError: the file is missing or unreadable (checked here, before anything is installed).
            SessionError: the session already started.
        """
        from .runner import check_script

        check_script(path)
        argv = list(argv or [])
        self._installer.start(lambda: run_script(path, argv, post_mortem=self._hooks.post_mortem),
                              name=f"dynadbg: {path}")

    def start_callable(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Run ``fn(*args, **kwargs)`` in the worker thread; an exception it raises ends the run with status 1."""

        def body() -> ExitResult:
            try:
                fn(*args, **kwargs)
                return ExitResult(0)
            except QuitProgram:
                return ExitResult(0, quit=True)
            except SystemExit as exc:
                from .runner import exit_status_of

                return ExitResult(exit_status_of(exc.code))
            except BaseException as exc:  # noqa: BLE001
                try:
                    self._hooks.post_mortem(exc)
                except QuitProgram:
                    pass
                return ExitResult(1, user_traceback(exc), f"{type(exc).__name__}: {exc}")

        self._installer.start(body, name=f"dynadbg: {getattr(fn, '__name__', 'program')}")

    def _on_worker(self, call: Callable[[], Any], anytime: bool) -> Any:
        """Run `call` on the paused worker thread and return its result (see `engine.engine_method`)."""
        if threading.get_ident() == self._worker_ident:
            if self.ctx is None and not anytime:
                return EngineError("the program is not paused", ErrorKind.NOT_PAUSED)
            return self._guarded(call)
        with self._lock:
            paused = self.ctx is not None
            if paused:
                reply: "queue.Queue[Any]" = queue.Queue(1)
                self._requests.put((lambda: self._guarded(call), reply))
        if not paused:
            if anytime:
                return self._guarded(call)
            if self.finished:
                return EngineError("the program has finished", ErrorKind.NOT_PAUSED)
            return EngineError("the program is running", ErrorKind.NOT_PAUSED)
        while True:
            try:
                return reply.get(timeout=0.25)
            except queue.Empty:
                # a caller waiting on a command that never ends (`p` of an endless loop) is let go once the user
                # quits: its front end can exit while the daemon worker finishes or dies with the process
                if self._quitting:
                    return EngineError("the program is ending", ErrorKind.NOT_PAUSED)

    @staticmethod
    def _guarded(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except QuitProgram:
            raise
        except Exception as exc:  # noqa: BLE001 - never let a debugger bug kill the program
            return EngineError(f"internal error: {type(exc).__name__}: {exc}", ErrorKind.INTERNAL)

    def submit(self, fn: Callable[[], Any], answer: Callable[[Any], None]) -> bool:
        """Queue `fn` for the paused worker thread and return at once, without waiting for it; the worker calls
        `answer` with its result (an `EngineError` when `fn` raised, or when the program resumed before `fn` could
        run). `fn` may call any engine method (on the worker thread they run directly); a resuming one lets the
        program go on after `fn` returns, as `engine_method`'s blocking path does.

        For a front end that must not block, and whose answer is a message (the TUI posts it to its app:
        `MessagePump.post_message` is thread-safe): a step costs one thread hop each way instead of two.
        `answer` runs on the worker thread and must not raise.

        Returns:
            False (nothing queued) when the program is not paused, or when called on the worker thread itself.
        """
        if threading.get_ident() == self._worker_ident:
            return False
        with self._lock:
            if self.ctx is None:
                return False
            self._requests.put((lambda: self._guarded(fn), _Answer(answer)))
        return True

    def call_on_worker(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the paused worker thread and return its result (None when the program is not paused)."""
        if threading.get_ident() == self._worker_ident:
            return fn()
        with self._lock:
            if self.ctx is None:
                return None
            reply: "queue.Queue[Any]" = queue.Queue(1)
            self._requests.put((fn, reply))
        return reply.get()

    def guard_tree(self) -> GuardTree | None:
        """Guard tree of the cache entry serving the selected frame, evaluated for this call's inputs (blocking)."""
        trees = self.guard_trees()
        return trees[0] if isinstance(trees, tuple) and trees else None

    def compiled_frames(self) -> list[CompiledFrameView]:
        """Every code object Dynamo compiled so far, with its entries, graphs, graph breaks and recompiles."""
        if self.capture is None:
            return []
        return list(self.capture.frames())

    @anytime
    def interrupt(self) -> None:
        """Stop at the next instruction of generated code the program runs (Ctrl+C)."""
        self._interrupt = True
        self._quiet.clear()

    @anytime
    def quit(self) -> None:
        """End the program and restore every hook. Returns at once; `wait` for the end."""
        if threading.get_ident() == self._worker_ident and self.ctx is not None:
            self._quit_here()  # a command of the stop: the pause loop ends the program when it returns
            return
        self._quitting = True
        self._quiet.clear()
        with self._lock:
            if self.ctx is not None:
                reply: "queue.Queue[Any]" = queue.Queue(1)
                self._requests.put((lambda: CommandResult(output="quit", quit=True), reply))
                return
        if self._thread is not None and self._thread.is_alive() and self._worker_ident is not None:
            compat.async_raise(self._worker_ident, QuitProgram)

    def attach(self, driver: "InlineDriver") -> None:
        """Debug the calling thread itself (``dynadbg.debug()``, ``set_trace``): hooks are installed now and each
        stop is answered inline by `driver` on this thread. End with `release`.

        Raises:
            SessionError: the session already runs a program.
        """
        if self._thread is not None or self._installed:
            raise SessionError("this session already runs a program")
        self._worker_ident = threading.get_ident()
        self._inline = driver
        self._installer.install()

    def release(self, result: ExitResult | None = None) -> None:
        """End an `attach`ed session: restore every hook (idempotent)."""
        if self._inline is None or self._done.is_set():
            return
        try:
            self._installer.teardown()
        finally:
            self._result = result or ExitResult(0)
            self._done.set()
            self.listener.on_exit(self._result)

    def stop_in(self, frame: FrameType) -> None:
        """Stop at the next instruction `frame` runs (``set_trace``). Call on the program's thread."""
        if threading.get_ident() != self._worker_ident:
            raise SessionError("stop_in must be called on the program's thread")
        self.generated[id(frame.f_code)] = frame.f_code
        if id(frame.f_code) not in self._scanned:
            self._hooks.first_sight(frame.f_code)
        # the call is a graph break: the values computed before it are arguments of the resume function this
        # frame calls next (its own locals still hold the inputs), so stop there; if it calls none, at its return
        self._resume_parent = frame
        self._quiet.clear()
        self._stepping.trace_running(frame)

    def wait(self, timeout: float | None = None) -> ExitResult | None:
        """Wait for the program to end; its `ExitResult`, or None on timeout.

        Also waits (within `timeout`) for the worker thread itself to finish: the result is set before the
        thread's last steps (the exit callback, the thread's own teardown, torch's thread-local state), and a
        process that exits while those still run can abort in torch's C++ teardown
        (``terminate called without an active exception``). Front ends call this before they return.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        self._done.wait(timeout)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread() and self._done.is_set():
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._result

    @property
    def paused(self) -> bool:
        return self.ctx is not None

    @property
    def installed(self) -> bool:
        """Whether this session's hooks are in place (from its start to its teardown)."""
        return self._installed

    def suspend(self) -> None:
        """A nested session takes this thread over (``dynadbg.debug()`` inside another): until `resume`, this
        session stops nowhere and reports nothing. The nested one takes over torch's debugger callback and the
        ``sys.monitoring`` tool and gives them back when it ends; this one takes its exit hooks off meanwhile."""
        self._suspended = True
        for context in self._hooked_contexts:
            compat.remove_exit_hook(context, self._enter_hook)

    def resume(self) -> None:
        """The nested session ended: this one serves its thread again."""
        self._suspended = False
        for context in self._hooked_contexts:
            compat.add_exit_hook(context, self._enter_hook)
        if self.backend is not None:
            self.backend.reclaim()
        self._quiet.clear()

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    # ==========================================================================================================
    # Worker thread: install, run, teardown
    # ==========================================================================================================

    def _on_worker_thread(self) -> bool:
        return threading.get_ident() == self._worker_ident

    def capture_has_frames(self) -> bool:
        if self.capture is None:
            return True   # as when reading the capture fails: not known, so not "none"
        try:
            return bool(self.capture.frames())
        except Exception:  # noqa: BLE001
            return True

    def _message(self, text: str) -> None:
        try:
            self.listener.on_message(text)
        except Exception:  # noqa: BLE001 - a front-end bug must not kill the program
            pass

    # ==========================================================================================================
    # Dynamo hooks (worker thread, or any thread that runs compiled code)
    # ==========================================================================================================

    def _on_generated_code(self, code: CodeType) -> None:
        key = id(code)
        self.generated[key] = code
        if threading.get_ident() != self._worker_ident or self._suspended:
            return
        if key not in self._scanned:
            self._hooks.first_sight(code)
        elif not self._hooked_contexts and "exception" in self.break_on and not compat.USE_SYS_MONITORING:
            self._hooks.hook_wrapper()  # exception stops switched on after the first calls (3.11)
        self.backend.set_exception_stops("exception" in self.break_on)  # RAISE events (3.12+); no-op if unchanged
        # when quitting, the trace raises QuitProgram in the frame
        if self._quitting or self._stepping.wants_frame(code):
            self.backend.watch(code)
        else:
            self._quiet.add(key)

    # ==========================================================================================================
    # Stops
    # ==========================================================================================================

    def _pause(self, ctx: PauseContext, message: str) -> None:
        """Block the worker at a stop until a resuming command arrives. Raises QuitProgram on `q`.

        Dynamo's frame callback is off while paused: nothing the debugger runs here is offered for compiling.
        """
        with compat.dynamo_off():
            self._pause_inner(ctx, message)

    def _pause_inner(self, ctx: PauseContext, message: str) -> None:
        if ctx.selected < 0:
            ctx.selected = len(ctx.frames) - 1
        self.mode, self.count, self.target = Mode.CONTINUE, 0, None
        self._quiet.clear()
        self.stop_seq += 1
        self._hooks.flush_returns()  # a new stop-to-stop run: each generated frame that returns gets its line again
        self._resumed = None
        ctx.stop = build_stop(self, ctx, message)
        self.history_cursor.position = None
        if not ctx.post_mortem:
            self.history.record(ctx.stop)
        self._passing_cache = SummaryCache()  # hold nothing of a stepping run past its stop
        with self._lock:
            self.ctx = ctx
        try:
            self.listener.on_stop(ctx.stop)
        except Exception as exc:  # noqa: BLE001
            self._message(f"front end failed to show the stop: {exc}")
        quit_now = False
        while self._inline is not None:
            # the driver reads a command and runs it with its own command line (the engine runs no command text);
            # its answer, or the engine's own state, says whether the program goes on
            try:
                result = self._inline.answer(ctx.stop if ctx.stop is not None else Stop(ctx.kind, message))
            except QuitProgram:
                result = CommandResult(output="quit", quit=True)
            if result.resumed or result.quit or self._resumed is not None or self._quitting:
                quit_now = result.quit or self._quitting
                with self._lock:
                    self.ctx = None
                break
        while self._inline is None:
            fn, reply = self._requests.get()
            try:
                result = fn()
            except QuitProgram:
                result = CommandResult(output="quit", quit=True)
                self._quitting = True
            except Exception as exc:  # noqa: BLE001 - never let a command kill the program
                result = CommandResult(error=f"internal error: {type(exc).__name__}: {exc}")
            quits = self._quitting or (isinstance(result, CommandResult) and result.quit)
            if quits or self._resumed is not None or (isinstance(result, CommandResult) and result.resumed):
                quit_now = quits
                with self._lock:
                    # answer anything queued behind the resuming command, then stop accepting requests
                    while not self._requests.empty():
                        _fn, other = self._requests.get_nowait()
                        other.put(EngineError("the program resumed before this command ran", ErrorKind.NOT_PAUSED))
                    self.ctx = None
                reply.put(result)
                self._notify_resumed()
                break
            reply.put(result)
        self.history_cursor.position = None  # however the pause ended, the program goes on from the present
        if quit_now or self._quitting:
            self._quitting = True
            raise QuitProgram()
        self._stepping.apply_mode(ctx)
        try:
            self.listener.on_running(self._hooks.running_text())
        except Exception:  # noqa: BLE001
            pass

    def _notify_resumed(self) -> None:
        if self._resumed is None or self._resumed.quit:
            return
        try:
            self.listener.on_resumed(self._resumed)
        except Exception as exc:  # noqa: BLE001 - a front-end bug must not kill the program
            self._message(f"front end failed to show a resume: {exc}")

    # ==========================================================================================================
    # Helpers shared with commands/snapshot
    # ==========================================================================================================

    def is_resume(self, code: CodeType) -> bool:
        info = self.generated_info(code)
        if info is not None:
            return bool(info.is_resume)
        return facts.is_resume_name(code.co_name)

    def generated_info(self, code: CodeType) -> GeneratedInfo | None:
        """(original code, compile id, is resume function) of a generated code object, when known."""
        if self.capture is not None:
            try:
                info = self.capture.generated_info(code)
            except Exception:  # noqa: BLE001
                info = None
            if info is not None:
                return info
        return None

    def code_view(self, code: CodeType) -> CodeView:
        info = self.generated_info(code)
        cid = info.compile_id if info else self.compile_ids.get(id(code))
        return code_view(code, generated=id(code) in self.generated, compile_id=cid,
                         is_resume=bool(info and info.is_resume))

    def add_breakpoint(self, code: CodeType, index: int, condition: str | None) -> Breakpoint:
        self._bp_numbers += 1
        self._quiet.discard(id(code))
        bp = Breakpoint(self._bp_numbers, code, index, condition)
        self.breakpoints.setdefault(id(code), {})[index] = bp
        return bp

    def clear_breakpoint(self, code: CodeType, index: int) -> Breakpoint | None:
        bps = self.breakpoints.get(id(code))
        if not bps or index not in bps:
            return None
        bp = bps.pop(index)
        if not bps:
            del self.breakpoints[id(code)]
        return bp


__all__ = ["Session", "Listener", "Mode", "Breakpoint", "PauseContext", "SessionError", "UNKNOWN", "FrameView"]


class _Answer:
    """The reply slot of a `Session.submit` request: the pause loop's ``reply.put(result)`` calls the answer."""

    __slots__ = ("_answer",)

    def __init__(self, answer: Callable[[Any], None]) -> None:
        self._answer = answer

    def put(self, value: Any) -> None:
        try:
            self._answer(value)
        except Exception:  # noqa: BLE001 - a front-end bug must not kill the program
            pass
