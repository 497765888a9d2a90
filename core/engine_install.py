"""The session's install and teardown: every hook a session puts in place while it runs (torch's debugger callback,
the tracing back end, the trace service, the capture's Dynamo patches, the guard-cost log, the toolkit's copies),
the worker thread that runs the program between them, and their removal, in reverse, at the end.

`Installer` is composed into `Session` (its `host`, typed by `InstallHost`)."""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Protocol

from . import compat
from .engine_hooks import DynamoHooks
from .engine_stepping import Stepping
from .protocol import Host
from .runner import ExitResult, QuitProgram
from .stack import FrameState
from .state import PauseContext, SessionError

#: thread ident -> the installed session debugging that thread (`session.session_on_thread`)
BY_THREAD: dict[int, Any] = {}


class InstallHost(Host, Protocol):
    """The session state the install and teardown read and write (`Session` provides each); a `protocol.Host`,
    as the trace service and the toolkit take it."""

    listener: Any
    break_on: set[str]
    guard_costs: Any
    backend: Any
    trace_stops: Any
    stop_seq: int
    target: Any
    states: dict[Any, FrameState]
    _hooks: DynamoHooks
    _stepping: Stepping
    _thread: threading.Thread | None
    _worker_ident: int | None
    _result: ExitResult | None
    _done: threading.Event
    _quitting: bool
    _installed: bool
    _trace_wanted: bool
    _undo_skip: Callable[[], None]
    _prev_callback: Any
    _outer: Any
    _note_call: Callable[[Any], None]
    _hooked_contexts: list[Any]
    _enter_hook: Callable[[], Callable[[], None]]

    def _message(self, text: str) -> None: ...  # noqa: D102
    def _pause(self, ctx: PauseContext, message: str) -> None: ...  # noqa: D102
    def _on_worker_thread(self) -> bool: ...  # noqa: D102
    def capture_has_frames(self) -> bool: ...  # noqa: D102


class Installer:
    """The session's install, worker thread and teardown (`host`: the session)."""

    def __init__(self, host: InstallHost) -> None:
        self.host = host

    def start(self, body: Callable[[], ExitResult], name: str) -> None:
        if self.host._thread is not None:
            raise SessionError("this session already started a program")
        self.host._thread = threading.Thread(target=self.main, args=(body,), name=name, daemon=True)
        self.host._thread.start()

    def main(self, body: Callable[[], ExitResult]) -> None:
        self.host._worker_ident = threading.get_ident()
        result = ExitResult(1, exception="the debugger failed to start")
        try:
            self.install()
            result = body()
        except QuitProgram:
            result = ExitResult(0, quit=True)
        except BaseException as exc:  # noqa: BLE001 - a debugger bug must still end the session cleanly
            import traceback

            result = ExitResult(1, "".join(traceback.format_exception(exc)), f"dynadbg internal error: {exc}")
        finally:
            try:
                self.teardown()
                compat.release_thread_python_objects()   # before this thread ends: see its docstring
            finally:
                if self.host._quitting and not result.quit:
                    result = ExitResult(result.status, result.traceback, result.exception, quit=True)
                if self.host.capture is not None and not self.host.capture_has_frames() and not result.quit:
                    self.host._message("no frame was compiled by torch.compile in this run")
                self.host._result = result
                self.host._done.set()
                self.host.listener.on_exit(result)

    def install(self) -> None:
        compat.load()
        self.host._undo_skip = compat.skip_own_files()
        # breakpoint() in a function compiled while the session runs: a marker, no graph break
        self.host.teardown_hooks.append(compat.install_breakpoint_substitute())
        # copies of cache entries installed while it runs (its guard edits, a script's toolkit calls) go with it
        from . import toolkit

        toolkit.begin_session(self.host)
        self.host.teardown_hooks.append(lambda: self.end_toolkit(toolkit))
        for msg in compat.missing_features():
            self.host._message(msg)
        from .tracing import make_backend

        self.host.backend = make_backend(self.host._stepping)
        # Dynamo's tracing, before the capture: its patches sit under the capture's and come off after them
        from .trace_stops import TraceStops

        if self.host._trace_wanted:
            self.host.trace_stops = TraceStops(self.host, pause=self.host._pause, on_worker=self.host._on_worker_thread,
                                          break_on=self.host.break_on, stop_seq=lambda: self.host.stop_seq).install()
        try:
            from .capture import Capture

            hooks = self.host._hooks
            self.host.capture = Capture(on_compiled=hooks.on_compiled, on_cache_miss=hooks.on_cache_miss)
            self.host.capture.on_eager_fallback = hooks.on_eager_fallback
            self.host.capture.on_convert = hooks.on_convert
            self.host.capture.install()
        except ImportError:
            self.host.capture = None
        from .guard_cost import GuardCostLog

        self.host.guard_costs = GuardCostLog().install()  # torch's own guard-eval latency of each compile
        if self.host.capture is not None:
            # a session that starts late (set_trace, debug() after the first calls) knows the earlier compiles
            for code in compat.generated_codes_so_far():
                try:
                    if self.host.capture.generated_info(code) is None:
                        self.host.capture.adopt(code)
                except Exception as exc:  # noqa: BLE001 - knowing less must not stop the program
                    self.host._message(f"could not read the earlier compiles of {code.co_name}: {exc}")
        self.host._note_call = self.host.capture.note_call if self.host.capture is not None else (lambda code: None)
        if self.host.capture is not None:
            self.host.capture.hits_counted = True  # `_on_generated_code` calls note_call for every call
        self.host._prev_callback = compat.set_debugger_callback(self.host._hooks.make_callback())
        self.host._installed = True
        if self.host._worker_ident is not None:
            self.host._outer = BY_THREAD.get(self.host._worker_ident)
            BY_THREAD[self.host._worker_ident] = self.host

    def teardown(self) -> None:
        if not self.host._installed:
            return
        self.host._installed = False
        self.host._hooks.flush_returns()
        if self.host._worker_ident is not None and BY_THREAD.get(self.host._worker_ident) is self.host:
            if self.host._outer is not None and self.host._outer.installed:
                BY_THREAD[self.host._worker_ident] = self.host._outer
            else:
                del BY_THREAD[self.host._worker_ident]
        compat.set_debugger_callback(self.host._prev_callback)
        for context in self.host._hooked_contexts:
            compat.remove_exit_hook(context, self.host._enter_hook)
        self.host._hooked_contexts.clear()
        if self.host.backend is not None:
            self.host.backend.release()
        if not compat.USE_SYS_MONITORING:
            sys.settrace(None)
        if self.host.capture is not None:
            self.host.capture.uninstall()
        if self.host.guard_costs is not None:
            self.host.guard_costs.uninstall()
        self.host._undo_skip()
        for undo in reversed(self.host.teardown_hooks):
            try:
                undo()
            except Exception as exc:  # noqa: BLE001
                self.host._message(f"teardown hook failed: {type(exc).__name__}: {exc}")
        self.host.teardown_hooks.clear()
        self.host.states.clear()
        self.host.target = None

    def end_toolkit(self, toolkit: Any) -> None:
        removed = toolkit.end_session(self.host)
        if removed:
            self.host._message(f"removed {len(removed)} cache-entry cop{'y' if len(removed) == 1 else 'ies'} installed "
                          f"in this session ({', '.join(removed)}); an entry a copy replaced comes back at its next "
                          f"call")
