"""The debugging session: the program's worker thread, the stop policy, the command queue, the listener hooks.

Threads (the bdb/pdb split, DESIGN.md): the user's program runs in a worker thread this module starts. When it
stops, the engine builds a frozen `Stop` snapshot, hands it to `Listener.on_stop` and blocks on a request queue.
Front ends call `Session.execute(line)` from any thread; the line is run on the worker thread (every torch call,
frame read, eval and edit happens there) and its `CommandResult` comes back as a value. A resuming command
(``s``, ``n``, ``c``…) lets the worker go on.

Hooks installed while a session runs, all restored by the teardown (`q` included):
``set_bytecode_debugger_callback`` (torch, process-global), the worker thread's trace function, and the Dynamo
patches of `dynadbg.core.capture`.
"""

from __future__ import annotations

import enum
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from types import CodeType, FrameType, TracebackType
from typing import Any, Callable, Iterable, Protocol

from . import compat
from .model import (
    BREAK_ON_KINDS,
    DEFAULT_BREAK_ON,
    CodeView,
    CommandResult,
    CompiledFrameView,
    FrameView,
    GuardTree,
    Stop,
    StopKind,
)
from .runner import ExitResult, QuitProgram, run_script
from .stack import FrameState, code_index
from .values import UNKNOWN


class Listener(Protocol):
    """What a front end implements. Every method is called on the program's worker thread."""

    def on_stop(self, stop: Stop) -> None:
        """The program paused; it stays paused until a resuming command arrives through `Session.execute`."""

    def on_running(self, message: str) -> None:
        """The program runs again (``"running"``)."""

    def on_message(self, text: str) -> None:
        """An information or warning line (feature disabled, entry compiled, ...)."""

    def on_exit(self, result: ExitResult) -> None:
        """The program ended; the session's hooks are already restored."""


class InlineDriver(Protocol):
    """Answers stops on the program's own thread (`Session.attach`): the line-mode REPL of ``dynadbg.debug()``."""

    def read_command(self, stop: Stop) -> str | None:
        """The next command line at `stop` (None: detach and let the program run)."""

    def show_result(self, result: CommandResult) -> None:
        """Show what a command produced."""


class Mode(enum.Enum):
    CONTINUE = "continue"
    STEP = "step"
    NEXT = "next"
    RETURN = "return"
    UNTIL = "until"


@dataclass
class Breakpoint:
    """A breakpoint on one instruction of one generated code object."""

    number: int
    code: CodeType
    index: int
    condition: str | None = None
    hits: int = 0
    enabled: bool = True


@dataclass
class PauseContext:
    """Everything the commands of one stop work on (worker thread only)."""

    kind: StopKind
    frames: list[FrameState]                # generated frames, outermost first
    selected: int                           # index into frames
    stop: Stop | None = None
    return_value: Any = None
    exception: BaseException | None = None
    traceback: TracebackType | None = None
    compile_event: Any = None               # capture.CompileEvent at a compile stop
    miss_event: Any = None                  # capture.CacheMissEvent at a recompile stop
    decision: str | None = None             # what to do at a recompile stop
    post_mortem: bool = False
    extra: dict[str, Any] = field(default_factory=dict)     # per-stop data of command mixins ("recompile": ...)

    @property
    def frame(self) -> FrameState | None:
        return self.frames[self.selected] if self.frames else None


class SessionError(Exception):
    """Misuse of the session API (starting twice, ...)."""


class Session:
    """One debugging session over one program run.

    Args:
        listener: the front end's hooks (see `Listener`).
        break_on: which stop kinds are active (`model.BREAK_ON_KINDS`); default `model.DEFAULT_BREAK_ON`.
        check_depth: verify depth tracking against the live stack at every traced instruction (3.11 only; slow,
            for tests); disagreements are collected in `depth_mismatches`.

    Raises:
        ValueError: an unknown stop kind in `break_on`.
    """

    def __init__(
        self, listener: Listener, *, break_on: Iterable[str] = DEFAULT_BREAK_ON, check_depth: bool = False
    ) -> None:
        self.listener = listener
        #: check the tracked stack depth at every traced instruction (for tests): against the live stack top
        #: where the interpreter exposes it (3.11), else against what a return instruction needs (1, or 0)
        self.check_depth = check_depth
        self.break_on: set[str] = set(break_on)
        unknown = self.break_on - set(BREAK_ON_KINDS)
        if unknown:
            raise ValueError(f"unknown stop kind(s): {', '.join(sorted(unknown))} (known: {', '.join(BREAK_ON_KINDS)})")
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
        #: (code name, index, tracked depth, real depth[, after exception]) wherever depth tracking disagreed with the live stack.
        self.depth_mismatches: list[tuple[str, int, int, int]] = []
        # threads
        self._thread: threading.Thread | None = None
        self._worker_ident: int | None = None
        self._requests: "queue.Queue[tuple[Callable[[], Any], queue.Queue[Any]]]" = queue.Queue()
        self._lock = threading.Lock()
        self.ctx: PauseContext | None = None
        self._result: ExitResult | None = None
        self._done = threading.Event()
        self.capture: Any = None
        self.backend: Any = None
        self._prev_callback: Any = None
        self._installed = False
        self._undo_skip: Callable[[], None] = lambda: None
        #: callables run with every `capture.CompileEvent` before the compile stop (they may replace
        #: ``event.code`` / ``event.guard_manager`` for this very compile)
        self.compile_hooks: list[Callable[[Any], None]] = []
        #: answers stops on the program's own thread (`attach`); None when a front end drives `execute`
        self._inline: InlineDriver | None = None
        self._step_message = ""
        #: callables run at teardown, last registered first (edits and guard filters restore torch state here)
        self.teardown_hooks: list[Callable[[], None]] = []
        from .recompile import RecompileLog

        #: every cache miss of the run, analysed when it happens (`recompile.RecompileRecord`s)
        self.recompiles = RecompileLog()
        self.compile_hooks.append(self.recompiles.on_compiled)
        from .commands import CommandSet

        self.commands = CommandSet(self)

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
        self._start(lambda: run_script(path, argv, post_mortem=self._post_mortem), name=f"dynadbg: {path}")

    def start_callable(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Run ``fn(*args, **kwargs)`` in the worker thread; an exception it raises ends the run with status 1."""

        def body() -> ExitResult:
            import traceback

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
                    self._post_mortem(exc)
                except QuitProgram:
                    pass
                return ExitResult(1, "".join(traceback.format_exception(exc)), f"{type(exc).__name__}: {exc}")

        self._start(body, name=f"dynadbg: {getattr(fn, '__name__', 'program')}")

    def execute(self, line: str) -> CommandResult:
        """Run one command of the command language and return what it produced.

        Thread-safe. While the program is paused the command runs on the worker thread and this call blocks until
        it is done; while it runs, only commands that touch no frame (``h``, ``break-on``, ``compiles``) are
        accepted. Never raises for bad input: errors come back in `CommandResult.error`.
        """
        if threading.get_ident() == self._worker_ident:
            return self.commands.dispatch(line)
        with self._lock:
            if self.ctx is None:
                return self.commands.dispatch_running(line)
            reply: "queue.Queue[Any]" = queue.Queue(1)
            self._requests.put((lambda: self.commands.dispatch(line), reply))
        return reply.get()

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
        """Guard tree of the cache entry serving the current frame, evaluated for this call's inputs (blocking)."""
        result = self.call_on_worker(self.commands.current_guard_tree)
        return result if isinstance(result, GuardTree) else None

    def compiled_frames(self) -> list[CompiledFrameView]:
        """Every code object Dynamo compiled so far, with its entries, graphs, graph breaks and recompiles."""
        if self.capture is None:
            return []
        return list(self.capture.frames())

    def interrupt(self) -> None:
        """Stop at the next instruction of generated code the program runs (Ctrl+C)."""
        self._interrupt = True
        self._quiet.clear()

    def quit(self) -> None:
        """End the program and restore every hook. Returns at once; `wait` for the end."""
        self._quitting = True
        self._quiet.clear()
        with self._lock:
            if self.ctx is not None:
                reply: "queue.Queue[Any]" = queue.Queue(1)
                self._requests.put((lambda: CommandResult(output="quit", quit=True), reply))
                return
        if self._thread is not None and self._thread.is_alive() and self._worker_ident is not None:
            compat.async_raise(self._worker_ident, QuitProgram)

    def detach(self) -> CommandResult:
        """Clear breakpoints and every stop kind, then continue: the program runs to its end undisturbed."""
        return self.execute("detach")

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
        self._install()

    def release(self, result: ExitResult | None = None) -> None:
        """End an `attach`ed session: restore every hook (idempotent)."""
        if self._inline is None or self._done.is_set():
            return
        try:
            self._teardown()
        finally:
            self._result = result or ExitResult(0)
            self._done.set()
            self.listener.on_exit(self._result)

    def stop_in(self, frame: FrameType) -> None:
        """Stop at the next instruction `frame` runs (``set_trace``). Call on the program's thread."""
        if threading.get_ident() != self._worker_ident:
            raise SessionError("stop_in must be called on the program's thread")
        self.generated[id(frame.f_code)] = frame.f_code
        self.mode, self.count, self.target = Mode.NEXT, 1, frame
        self._step_message = "dynadbg.set_trace()"
        self._quiet.clear()
        self._trace_running(frame)

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
    def finished(self) -> bool:
        return self._done.is_set()

    # ==========================================================================================================
    # Worker thread: install, run, teardown
    # ==========================================================================================================

    def _start(self, body: Callable[[], ExitResult], name: str) -> None:
        if self._thread is not None:
            raise SessionError("this session already started a program")
        self._thread = threading.Thread(target=self._main, args=(body,), name=name, daemon=True)
        self._thread.start()

    def _main(self, body: Callable[[], ExitResult]) -> None:
        self._worker_ident = threading.get_ident()
        result = ExitResult(1, exception="the debugger failed to start")
        try:
            self._install()
            result = body()
        except QuitProgram:
            result = ExitResult(0, quit=True)
        except BaseException as exc:  # noqa: BLE001 - a debugger bug must still end the session cleanly
            import traceback

            result = ExitResult(1, "".join(traceback.format_exception(exc)), f"dynadbg internal error: {exc}")
        finally:
            try:
                self._teardown()
                compat.release_thread_python_objects()   # before this thread ends: see its docstring
            finally:
                if self._quitting and not result.quit:
                    result = ExitResult(result.status, result.traceback, result.exception, quit=True)
                if self.capture is not None and not self.capture_has_frames() and not result.quit:
                    self._message("no frame was compiled by torch.compile in this run")
                self._result = result
                self._done.set()
                self.listener.on_exit(result)

    def capture_has_frames(self) -> bool:
        try:
            return bool(self.capture.frames())
        except Exception:  # noqa: BLE001
            return True

    def _install(self) -> None:
        compat.load()
        self._undo_skip = compat.skip_own_files()
        for msg in compat.missing_features():
            self._message(msg)
        from .tracing import make_backend

        self.backend = make_backend(self)
        try:
            from .capture import Capture

            self.capture = Capture(on_compiled=self._on_compiled, on_cache_miss=self._on_cache_miss)
            self.capture.install()
        except ImportError:
            self.capture = None
        self._note_call = self.capture.note_call if self.capture is not None else (lambda code: None)
        if self.capture is not None:
            self.capture.hits_counted = True  # `_on_generated_code` calls note_call for every call
        self._prev_callback = compat.set_debugger_callback(self._make_callback())
        self._installed = True

    def _teardown(self) -> None:
        if not self._installed:
            return
        self._installed = False
        compat.set_debugger_callback(self._prev_callback)
        if self.backend is not None:
            self.backend.release()
        if not compat.USE_SYS_MONITORING:
            sys.settrace(None)
        if self.capture is not None:
            self.capture.uninstall()
        self._undo_skip()
        for undo in reversed(self.teardown_hooks):
            try:
                undo()
            except Exception as exc:  # noqa: BLE001
                self._message(f"teardown hook failed: {type(exc).__name__}: {exc}")
        self.teardown_hooks.clear()
        self.states.clear()
        self.target = None

    def _message(self, text: str) -> None:
        try:
            self.listener.on_message(text)
        except Exception:  # noqa: BLE001 - a front-end bug must not kill the program
            pass

    # ==========================================================================================================
    # Dynamo hooks (worker thread, or any thread that runs compiled code)
    # ==========================================================================================================

    def _make_callback(self) -> Callable[[CodeType], None]:
        """The callback torch calls before any Dynamo-generated code runs (``set_bytecode_debugger_callback``).

        Hot path (every call of compiled code): a hit count and one set lookup when the code has no reason to
        be traced. `_quiet` caches that answer (ids of codes); anything that could change it (a stop, a
        breakpoint, a stop kind switched on, an interrupt, quit) clears it.
        """
        quiet, note, slow = self._quiet, self._note_call, self._on_generated_code

        def on_generated_code(code: CodeType) -> None:
            note(code)
            if id(code) not in quiet:
                slow(code)

        return on_generated_code

    def _on_generated_code(self, code: CodeType) -> None:
        key = id(code)
        self.generated[key] = code
        if threading.get_ident() != self._worker_ident:
            return
        if self._quitting:
            raise QuitProgram()
        if self.wants_frame(code):
            self.backend.watch(code)
        else:
            self._quiet.add(key)

    def _on_compiled(self, event: Any) -> None:
        """Capture's compile hook: Dynamo produced `event.code` (with its guards) for `event.original`.

        `compile_hooks` run first (e.g. re-applying an instruction edit or a guard filter to this compile), then
        the compile stop, if active. Runs inside Dynamo's compile lock.
        """
        for hook in list(self.compile_hooks):
            try:
                hook(event)
            except Exception as exc:  # noqa: BLE001 - an edit hook must not break the user's compile
                self._message(f"compile hook failed: {type(exc).__name__}: {exc}")
        self.generated[id(event.code)] = event.code
        self.compile_ids[id(event.code)] = str(event.compile_id)
        if "compile" in self.break_on and threading.get_ident() == self._worker_ident:
            ctx = PauseContext(StopKind.COMPILE, [], 0, compile_event=event)
            name = getattr(event.original, "co_name", "?")
            self._pause(ctx, f"compiled {name} as {event.compile_id}; it has not run yet")
            # an instruction edit at this stop may have replaced event.code
            self.generated[id(event.code)] = event.code
            self.compile_ids[id(event.code)] = str(event.compile_id)

    def _on_cache_miss(self, event: Any) -> str | None:
        """Capture's cache-miss hook: a code object with entries is about to be compiled again."""
        if getattr(event, "after_limit", False):   # past the recompile limit: no recompile follows, no stop
            self.recompiles.record_miss(event)
            return None
        stopping = "recompile" in self.break_on and threading.get_ident() == self._worker_ident
        record = self.recompiles.record_miss(event, pending=stopping)  # analysed now, stop or not
        if not stopping:
            return None
        ctx = PauseContext(StopKind.RECOMPILE, [], 0, miss_event=event)
        ctx.extra["recompile"] = record
        name = getattr(event.code, "co_name", "?")
        n = len(event.entries)
        try:
            self._pause(ctx, f"{name} is about to recompile: its {n} cache entr{'y' if n == 1 else 'ies'} rejected this call")
        finally:
            self.recompiles.update(record, decision=ctx.decision or "recompile", pending=False)
        return ctx.decision

    def _post_mortem(self, exc: BaseException) -> None:
        """The script raised: stop on the innermost generated frame its traceback passes through."""
        if "exception" not in self.break_on or self._quitting:
            return
        tb = exc.__traceback__
        frames: list[FrameState] = []
        while tb is not None:
            if id(tb.tb_frame.f_code) in self.generated:
                st = FrameState(tb.tb_frame, code_index(tb.tb_frame.f_code))
                st.index = st.table.index_of_offset.get(tb.tb_lasti, -1)
                frames.append(st)
            tb = tb.tb_next
        if not frames:
            return
        ctx = PauseContext(StopKind.EXCEPTION, frames, len(frames) - 1, exception=exc, post_mortem=True)
        self._pause(ctx, f"uncaught {type(exc).__name__} raised through generated code (post-mortem)")

    # ==========================================================================================================
    # TraceHandler (worker thread)
    # ==========================================================================================================

    def wants_frame(self, code: CodeType) -> bool:
        key = id(code)
        if key not in self.generated:
            return False
        if self._interrupt or self.mode is Mode.STEP or key in self.breakpoints:
            return True
        if "entry" in self.break_on and key not in self.entered:
            return True
        if "graph-break" in self.break_on and self.is_resume(code):
            return True
        if "exception" in self.break_on and self.mode is not Mode.CONTINUE:
            return True
        return False

    def on_call(self, frame: FrameType) -> None:
        self._state(frame)

    def _state(self, frame: FrameType) -> FrameState:
        st = self.states.get(frame)
        if st is None:
            st = FrameState(frame, code_index(frame.f_code))
            try:
                st.inputs = dict(frame.f_locals)
            except Exception:  # noqa: BLE001
                st.inputs = {}
            self.states[frame] = st
        return st

    def on_instruction(self, frame: FrameType, offset: int) -> None:
        if self._quitting:
            raise QuitProgram()
        self.traced_instructions += 1
        st = self._state(frame)
        first = st.index < 0
        rebased = st.pending_exception_offset is not None
        st.advance(offset)
        if self.check_depth and st.depth >= 0:
            live = self._expected_depth(st)
            if live is not None and live != st.depth:
                self.depth_mismatches.append((frame.f_code.co_name, st.index, st.depth, live, rebased))
                st.depth = live
        code = frame.f_code
        kind: StopKind | None = None
        message = ""
        if self._interrupt:
            self._interrupt = False
            kind, message = StopKind.INTERRUPT, "interrupted"
        key = id(code)
        bp = self.breakpoints.get(key, {}).get(st.index)
        if kind is None and bp is not None and bp.enabled and self._condition_true(bp, frame):
            bp.hits += 1
            kind, message = StopKind.BREAKPOINT, f"breakpoint {bp.number} at index {st.index}"
        passive: StopKind | None = None
        if first:
            if "graph-break" in self.break_on and self.is_resume(code):
                passive = StopKind.GRAPH_BREAK
            elif "entry" in self.break_on and key not in self.entered:
                passive = StopKind.ENTRY
            self.entered.add(key)
        mode = self.mode
        stepped = False
        if mode is Mode.STEP:
            self.count -= 1
            stepped = self.count <= 0
        elif mode is Mode.NEXT and frame is self.target:
            self.count -= 1
            stepped = self.count <= 0
        elif mode is Mode.UNTIL and frame is self.target and st.index >= self.until_index:
            stepped = True
        if kind is None:
            if passive is not None and (stepped or mode is Mode.CONTINUE or mode is Mode.RETURN):
                kind = passive
            elif stepped:
                kind = StopKind.STEP
        if kind is None:
            return
        if kind is StopKind.ENTRY:
            message = "entering generated code"
        elif kind is StopKind.GRAPH_BREAK:
            message = "entering a resume function after a graph break"
        elif kind is StopKind.STEP:
            message = {Mode.UNTIL: f"reached index {st.index}", Mode.NEXT: "next"}.get(mode, "step")
            if self._step_message:
                message, self._step_message = self._step_message, ""
        self._pause(PauseContext(kind, self._frames_for(frame), -1), message)

    @staticmethod
    def _expected_depth(st: FrameState) -> int | None:
        exact = st.exact_stack()
        if exact is not None:
            return len(exact)
        if 0 <= st.index < len(st.table.instructions):
            return {"RETURN_VALUE": 1, "RETURN_CONST": 0}.get(st.table.instructions[st.index].opname)
        return None

    def on_return(self, frame: FrameType, value: Any) -> None:
        st = self.states.get(frame)
        if self.mode is Mode.RETURN and frame is self.target and not self._quitting:
            ctx = PauseContext(StopKind.RETURN, self._frames_for(frame), -1, return_value=value)
            self._pause(ctx, f"{frame.f_code.co_name} is returning")
        if frame is self.target and self.mode in (Mode.NEXT, Mode.UNTIL, Mode.RETURN):
            # the frame we were stepping in is done: stop at the next generated instruction, in the caller if any
            self.mode, self.count, self.target = Mode.STEP, 1, None
        if self.mode is Mode.STEP:
            caller = frame.f_back
            while caller is not None and id(caller.f_code) not in self.generated:
                caller = caller.f_back
            if caller is not None and caller not in self.states:
                self._trace_running(caller)
        self.states.pop(frame, None)
        if st is not None:
            st.frame = None  # type: ignore[assignment]  # drop the frame reference
        self._update_arming()

    def on_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
        st = self._state(frame)
        if st.index < 0:
            st.index = st.table.index_of_offset.get(offset, -1)
        st.pending_exception_offset = offset
        if "exception" in self.break_on and id(exc) != self._last_exc_id and not isinstance(exc, QuitProgram):
            self._last_exc_id = id(exc)
            ctx = PauseContext(StopKind.EXCEPTION, self._frames_for(frame), -1, exception=exc)
            self._pause(ctx, f"{type(exc).__name__} raised in generated code")

    # ==========================================================================================================
    # Stops
    # ==========================================================================================================

    def _frames_for(self, frame: FrameType) -> list[FrameState]:
        """FrameStates of the generated frames on the stack from the outermost to `frame`."""
        chain: list[FrameState] = []
        f: FrameType | None = frame
        while f is not None:
            if id(f.f_code) in self.generated:
                st = self.states.get(f)
                if st is None:
                    st = FrameState(f, code_index(f.f_code))
                    st.index = st.table.index_of_offset.get(f.f_lasti, -1)
                    st.depth = -1  # not traced: depth unknown
                chain.append(st)
            f = f.f_back
        chain.reverse()
        return chain

    def _trace_running(self, frame: FrameType) -> None:
        st = self.states.get(frame)
        if st is None:
            st = FrameState(frame, code_index(frame.f_code))
            st.index = st.table.index_of_offset.get(frame.f_lasti, -1)
            st.depth = -1
            self.states[frame] = st
        self.backend.trace_existing(frame)

    def _condition_true(self, bp: Breakpoint, frame: FrameType) -> bool:
        if not bp.condition:
            return True
        try:
            return bool(eval(bp.condition, frame.f_globals, dict(frame.f_locals)))  # noqa: S307 - user's own expression
        except Exception as exc:  # noqa: BLE001 - like pdb: an error in the condition stops
            self._message(f"breakpoint {bp.number}: condition raised {type(exc).__name__}: {exc}; stopping")
            return True

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
        from .snapshot import build_stop

        ctx.stop = build_stop(self, ctx, message)
        with self._lock:
            self.ctx = ctx
        try:
            self.listener.on_stop(ctx.stop)
        except Exception as exc:  # noqa: BLE001
            self._message(f"front end failed to show the stop: {exc}")
        quit_now = False
        while self._inline is not None:
            line = self._inline.read_command(ctx.stop)
            try:
                result = self.commands.dispatch("detach" if line is None else line)
            except QuitProgram:
                result = CommandResult(output="quit", quit=True)
            except Exception as exc:  # noqa: BLE001
                result = CommandResult(error=f"internal error: {type(exc).__name__}: {exc}")
            self._inline.show_result(result)
            if result.resumed or result.quit:
                quit_now = result.quit
                with self._lock:
                    self.ctx = None
                break
        while self._inline is None:
            fn, reply = self._requests.get()
            try:
                result = fn()
            except QuitProgram:
                result = CommandResult(output="quit", quit=True)
            except Exception as exc:  # noqa: BLE001 - never let a command kill the program
                result = CommandResult(error=f"internal error: {type(exc).__name__}: {exc}")
            if isinstance(result, CommandResult) and (result.resumed or result.quit):
                quit_now = result.quit
                with self._lock:
                    # answer anything queued behind the resuming command, then stop accepting requests
                    while not self._requests.empty():
                        _fn, other = self._requests.get_nowait()
                        other.put(CommandResult(error="the program resumed before this command ran"))
                    self.ctx = None
                reply.put(result)
                break
            reply.put(result)
        if quit_now or self._quitting:
            self._quitting = True
            raise QuitProgram()
        self._apply_mode(ctx)
        try:
            self.listener.on_running("running")
        except Exception:  # noqa: BLE001
            pass

    def _apply_mode(self, ctx: PauseContext) -> None:
        """After a stop: make sure the frames the new mode needs are traced, and nothing else."""
        cur = ctx.frame
        frame = cur.frame if cur is not None and not ctx.post_mortem else None
        if self.mode in (Mode.NEXT, Mode.UNTIL, Mode.RETURN) and frame is not None:
            self.target = frame
        if self.mode is not Mode.CONTINUE and frame is not None and not self.backend.is_traced(frame):
            self._trace_running(frame)
        self._update_arming()

    def _update_arming(self) -> None:
        backend = self.backend
        if backend is None:
            return
        if self.mode is not Mode.CONTINUE or self._interrupt:
            if self.states:
                backend.arm()
            return
        # continue: keep local tracing only where a breakpoint may still be hit
        for frame in list(self.states):
            if id(frame.f_code) not in self.breakpoints:
                backend.untrace(frame)
                del self.states[frame]
        if not self.states:
            backend.disarm()

    # ==========================================================================================================
    # Helpers shared with commands/snapshot
    # ==========================================================================================================

    def is_resume(self, code: CodeType) -> bool:
        info = self.generated_info(code)
        if info is not None:
            return bool(info[2])
        return code.co_name.startswith("torch_dynamo_resume_in_")

    def generated_info(self, code: CodeType) -> tuple[CodeType, str, bool] | None:
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
        from .disasm import code_view

        info = self.generated_info(code)
        cid = info[1] if info else self.compile_ids.get(id(code))
        return code_view(code, generated=id(code) in self.generated, compile_id=cid)

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
