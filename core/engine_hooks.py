"""The session's Dynamo hooks: torch's bytecode-debugger callback (every call of generated code), what Capture
calls at a compile, a cache miss, a conversion and an eager fallback, the return notices, and the post-mortem stop
of an exception leaving generated code.

`DynamoHooks` is composed into `Session` (its `host`, typed by `HookHost`); every hook runs on the thread torch
calls it on, and only the program's worker thread may pause."""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any, Callable, Protocol

from . import compat
from .model import DecisionKind, GeneratedInfo, ReturnedView, ReturnsOmitted, StopKind
from .runner import QuitProgram
from .stack import FrameState, code_index
from .state import Breakpoint, PauseContext

#: return lines printed per stop-to-stop run (one per generated code object); the rest are counted
#: (`model.ReturnsOmitted`) and reported at the next stop or at the end
RETURN_LINES_PER_RUN = 10


def _owner_name(frame: FrameType) -> str | None:
    """The class of the frame's ``self`` when its code is a method (``MLP`` for a module's ``forward``)."""
    code = frame.f_code
    if code.co_argcount < 1 or code.co_varnames[0] != "self":
        return None
    try:
        owner = frame.f_locals.get("self")
    except Exception:  # noqa: BLE001
        return None
    return type(owner).__name__ if owner is not None else None


def _value_line(value: Any) -> str:
    """A returned value on one line: its repr (a tensor's values too), cut to 200 characters."""
    from .values import cut, one_line

    try:
        return cut(one_line(repr(value)), 200)
    except Exception as exc:  # noqa: BLE001 - user reprs can raise anything
        return f"<{type(value).__name__} (repr failed: {type(exc).__name__})>"


class HookHost(Protocol):
    """The session state and helpers the hooks read and write (`Session` provides each)."""

    listener: Any
    break_on: set[str]
    generated: dict[int, CodeType]
    compile_ids: dict[int, str]
    compile_hooks: list[Callable[[Any], None]]
    recompiles: Any
    backend: Any
    _worker_ident: int | None
    _suspended: bool
    _quitting: bool
    _last_exc_id: int
    _scanned: set[int]
    _converting: list[CodeType]
    _returns_reported: set[int]
    _return_lines: int
    _returns_omitted: int
    capture: Any
    breakpoints: dict[int, dict[int, Breakpoint]]
    teardown_hooks: list[Callable[[], None]]
    seen_codes: list[CodeType]
    _quiet: set[int]
    _note_call: Callable[[CodeType], None]
    _hooked_contexts: list[Any]
    _enter_hook: Callable[[], Callable[[], None]]

    def _message(self, text: str) -> None: ...  # noqa: D102
    def _pause(self, ctx: PauseContext, message: str) -> None: ...  # noqa: D102
    def is_resume(self, code: CodeType) -> bool: ...  # noqa: D102
    def generated_info(self, code: CodeType) -> GeneratedInfo | None: ...  # noqa: D102
    def add_breakpoint(self, code: CodeType, index: int, condition: str | None) -> Breakpoint: ...  # noqa: D102
    def _on_generated_code(self, code: CodeType) -> None: ...  # noqa: D102


class DynamoHooks:
    """The session's Dynamo hooks, return notices and post-mortem stops (`host`: the session)."""

    def __init__(self, host: HookHost) -> None:
        self.host = host

    def after_compiled_call(self, _exception: Callable[[], BaseException | None] = sys.exception) -> None:
        # Hot path on 3.11 (every compiled call's end, exception stops on): one C call and a test when nothing
        # is raised. `sys.exception()` makes no tuple, unlike `sys.exc_info()`.
        exc = _exception()
        if exc is None:
            return
        if id(exc) == self.host._last_exc_id or "exception" not in self.host.break_on:
            return
        if threading.get_ident() != self.host._worker_ident or self.host._quitting or isinstance(exc, QuitProgram):
            return
        if self.host._suspended:
            return
        if not self.leaves_this_call(exc, sys._getframe(1)):  # noqa: SLF001 - torch's wrapper, in its finally
            return
        frames = self.traceback_frames(exc)
        if not frames:
            return
        self.host._last_exc_id = id(exc)
        ctx = PauseContext(StopKind.EXCEPTION, frames, len(frames) - 1, exception=exc, post_mortem=True)
        st = frames[-1]
        where = st.table.instructions[st.index].opname if 0 <= st.index < len(st.table.instructions) else "?"
        self.host._pause(ctx, f"{type(exc).__name__} raised in generated code at index {st.index} ({where}); "
                         "the frame has unwound (post-mortem)")

    def note_return(self, frame: FrameType, value: Any) -> None:
        """The "NAME returned: VALUE" line of a generated frame: one per code object per stop-to-stop run, the
        first `RETURN_LINES_PER_RUN` of a run; the others are counted (`flush_returns`)."""
        key = id(frame.f_code)
        host = self.host
        if host._quitting or host._suspended or key in host._returns_reported or key not in host.generated:
            return
        self.host._returns_reported.add(key)
        if self.host._return_lines >= RETURN_LINES_PER_RUN:
            self.host._returns_omitted += 1
            return
        self.host._return_lines += 1
        code = frame.f_code
        from .snapshot import value as summary

        # the frame returns inside the compiled call: Dynamo's frame callback is on, and the reprs run here would
        # be offered to it for compiling (reprlib's functions got recompile stops of their own)
        with compat.dynamo_off():
            view = ReturnedView(code.co_name, _owner_name(frame), _value_line(value), summary(value),
                                self.host.is_resume(code))
            self.notice(view)

    def flush_returns(self) -> None:
        """A stop or the end of the session: the count of the run's returns past the limit, and a new run."""
        if self.host._returns_omitted:
            with compat.dynamo_off():
                self.notice(ReturnsOmitted(self.host._returns_omitted))
        self.host._returns_reported.clear()
        self.host._return_lines = self.host._returns_omitted = 0

    def notice(self, item: "ReturnedView | ReturnsOmitted") -> None:
        """Hand a return notice to the front end: ``Listener.on_returned`` when it has one, else its text."""
        hook = getattr(self.host.listener, "on_returned", None)
        try:
            if hook is not None:
                hook(item)
                return
        except Exception as exc:  # noqa: BLE001 - a front-end bug must not kill the program
            self.host._message(f"front end failed to show a return: {exc}")
            return
        from .format.notices import returned_line, returns_omitted_line

        self.host._message(returned_line(item) if isinstance(item, ReturnedView) else returns_omitted_line(item))

    @staticmethod
    def leaves_this_call(exc: BaseException, wrapper: FrameType) -> bool:
        """Whether `exc` is propagating out of this compiled call (its traceback passes the wrapper's frame), not
        an exception the program is handling around the call."""
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame is not wrapper:
            tb = tb.tb_next
        return tb is not None

    def traceback_frames(self, exc: BaseException) -> list[FrameState]:
        tb = exc.__traceback__
        frames: list[FrameState] = []
        while tb is not None:
            code = tb.tb_frame.f_code
            if id(code) in self.host.generated or self.adopt_frame_code(code):
                st = FrameState(tb.tb_frame, code_index(code))
                st.index = st.table.index_of_offset.get(tb.tb_lasti, -1)
                st.depth = -1
                frames.append(st)
            tb = tb.tb_next
        return frames

    def adopt_frame_code(self, code: CodeType) -> bool:
        """Whether `code` is Dynamo-generated code the session had not seen (running since before it started)."""
        if compat.dynamo_original_of(code) is None:
            return False
        self.host.generated[id(code)] = code
        if id(code) not in self.host._scanned:
            self.first_sight(code)
        return True

    def on_compiled(self, event: Any) -> None:
        """Capture's compile hook: Dynamo produced `event.code` (with its guards) for `event.original`.

        `compile_hooks` run first (e.g. re-applying an instruction edit or a guard filter to this compile), then
        the compile stop, if active. Runs inside Dynamo's compile lock.
        """
        for hook in list(self.host.compile_hooks):
            try:
                hook(event)
            except Exception as exc:  # noqa: BLE001 - an edit hook must not break the user's compile
                self.host._message(f"compile hook failed: {type(exc).__name__}: {exc}")
        self.host.generated[id(event.code)] = event.code
        self.host.compile_ids[id(event.code)] = str(event.compile_id)
        host = self.host
        if "compile" in host.break_on and threading.get_ident() == host._worker_ident and not host._suspended:
            ctx = PauseContext(StopKind.COMPILE, [], 0, compile_event=event)
            name = getattr(event.original, "co_name", "?")
            self.host._pause(ctx, f"compiled {name} as {event.compile_id}; it has not run yet")
            # an instruction edit at this stop may have replaced event.code
            self.host.generated[id(event.code)] = event.code
            self.host.compile_ids[id(event.code)] = str(event.compile_id)

    def on_cache_miss(self, event: Any) -> str | None:
        """Capture's cache-miss hook: a code object with entries is about to be compiled again."""
        if getattr(event, "after_limit", False):   # past the recompile limit: no recompile follows, no stop
            self.host.recompiles.record_miss(event)
            return None
        stopping = ("recompile" in self.host.break_on and threading.get_ident() == self.host._worker_ident
                    and not self.host._suspended)
        record = self.host.recompiles.record_miss(event, pending=stopping)  # analysed now, stop or not
        if not stopping:
            return None
        ctx = PauseContext(StopKind.RECOMPILE, [], 0, miss_event=event)
        ctx.extra["recompile"] = record
        name = getattr(event.code, "co_name", "?")
        n = len(event.entries)
        try:
            entries = f"{n} cache entr{'y' if n == 1 else 'ies'}"
            self.host._pause(ctx, f"{name} is about to recompile: its {entries} rejected this call")
        except Exception as exc:  # noqa: BLE001 - a debugger fault costs the stop, said, never the user's call
            self.host._message(f"dynadbg: internal error at the recompile stop of {name} "
                               f"({type(exc).__name__}: {exc}); no stop here, torch recompiles")
            ctx.decision = None
        finally:
            decision = DecisionKind(ctx.decision or DecisionKind.RECOMPILE)
            # eager and skip compile nothing: the id predicted at the miss names no entry
            no_entry = {"compile_id": None} if decision in (DecisionKind.EAGER, DecisionKind.SKIP) else {}
            self.host.recompiles.update(record, decision=decision, pending=False, **no_entry)
        return ctx.decision

    def on_convert(self, code: CodeType | None) -> None:
        """Capture's hook around torch's conversion of a frame (`code`, then None when it returned): the front end
        is told what compiles, so a first compile that takes tens of seconds does not read as a hang."""
        if threading.get_ident() != self.host._worker_ident or self.host._suspended:
            return
        if code is not None:
            self.host._converting.append(code)
        elif self.host._converting:
            self.host._converting.pop()
        try:
            self.host.listener.on_running(self.running_text())
        except Exception:  # noqa: BLE001 - a front end's fault costs the progress line, never the compile
            pass

    def running_text(self) -> str:
        """What the program does now, for `Listener.on_running`: ``"running"``, or ``"compiling NAME (FILE:LINE)"``
        while torch's frame callback converts a frame (Dynamo traces it, then the backend compiles its graph)."""
        if not self.host._converting:
            return "running"
        code = self.host._converting[-1]
        name = getattr(code, "co_qualname", code.co_name)
        return f"compiling {name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"

    def on_eager_fallback(self, event: Any) -> None:
        """Capture's hook: after a graph break a frame runs eagerly with no resume function (a break in a ``try``
        block or a generator, a resume function Dynamo skipped). With ``graph-break`` on, stop before it runs."""
        if "graph-break" not in self.host.break_on or threading.get_ident() != self.host._worker_ident:
            return
        ctx = PauseContext(StopKind.GRAPH_BREAK, [], 0)
        ctx.extra["fallback"] = event
        what = (f"the resume function {event.code.co_name} is skipped" if event.resume_of is not None
                else f"{event.code.co_name} falls back to eager")
        self.host._pause(ctx, f"graph break with no resume function: {what}; it runs eagerly now")

    def post_mortem(self, exc: BaseException) -> None:
        """The script raised: stop on the innermost generated frame its traceback passes through."""
        if "exception" not in self.host.break_on or self.host._quitting or id(exc) == self.host._last_exc_id:
            return
        frames = self.traceback_frames(exc)
        if not frames:
            return
        ctx = PauseContext(StopKind.EXCEPTION, frames, len(frames) - 1, exception=exc, post_mortem=True)
        self.host._pause(ctx, f"uncaught {type(exc).__name__} raised through generated code (post-mortem)")

    def make_callback(self) -> Callable[[CodeType], None]:
        """The callback torch calls before any Dynamo-generated code runs (``set_bytecode_debugger_callback``).

        Hot path (every call of compiled code): a hit count and one set lookup when the code has no reason to
        be traced. `_quiet` caches that answer (ids of codes); anything that could change it (a stop, a
        breakpoint, a stop kind switched on, an interrupt, quit) clears it.
        """
        host = self.host
        quiet, note, slow, report = host._quiet, host._note_call, host._on_generated_code, self.callback_failed
        counted = getattr(self.host.capture, "hit_records", None)  # id(code) -> record with `hits` (note_call inline)
        hit_records: dict[int, Any] = counted if isinstance(counted, dict) else {}  # used only when it is one

        def on_generated_code(code: CodeType) -> None:
            # torch calls this from C++: an exception escaping it aborts the interpreter on 3.13
            # (pybind11::error_already_set), so none may leave; a failure is reported and the program goes on.
            try:
                key = id(code)
                record = hit_records.get(key)
                if record is not None:
                    record.hits += 1
                if key not in quiet:
                    slow(code)
            except BaseException as exc:  # noqa: BLE001
                report(code, exc)

        def on_generated_code_noted(code: CodeType) -> None:
            try:
                note(code)
                if id(code) not in quiet:
                    slow(code)
            except BaseException as exc:  # noqa: BLE001
                report(code, exc)

        return on_generated_code if isinstance(counted, dict) else on_generated_code_noted

    def callback_failed(self, code: CodeType, exc: BaseException) -> None:
        if isinstance(exc, QuitProgram):
            return
        self.host._message(f"dynadbg: internal error before {getattr(code, 'co_name', '?')} ran "
                      f"({type(exc).__name__}: {exc}); the program goes on")

    def first_sight(self, code: CodeType) -> None:
        """The first call of a generated code object in this session: learn what the session missed."""
        self.host._scanned.add(id(code))
        self.host.seen_codes.append(code)
        self.host.backend.watch_returns(code)  # 3.12+: its returns reach `on_untraced_return` (once per run)
        if self.host.capture is not None and self.host.capture.generated_info(code) is None:
            # compiled before this session started (a set_trace or debug() attached late): adopt torch's entries
            try:
                self.host.capture.adopt(code)
            except Exception as exc:  # noqa: BLE001 - knowing less must not stop the program
                self.host._message(f"could not read the earlier compiles of {code.co_name}: {exc}")
        markers = compat.breakpoint_marker_indexes(code)
        for index in markers:
            known = self.host.breakpoints.get(id(code), {}).get(index)
            if known is None:
                self.host.add_breakpoint(code, index, None).marker = True
        if markers and not self.host.teardown_hooks.count(self.forget_marker_code):
            self.host.teardown_hooks.append(self.forget_marker_code)
        if not compat.USE_SYS_MONITORING and "exception" in self.host.break_on:
            self.hook_wrapper()  # 3.12+: RAISE events see an exception live, in the generated frame itself

    def forget_marker_code(self) -> None:
        """Teardown: drop the cache entries whose code holds a breakpoint marker. With no debugger callback set,
        torch hands a marker to its own line debugger; recompiled after the session, ``dynadbg.set_trace()``
        starts a dynadbg session again and ``breakpoint()`` is a graph break again."""
        originals: dict[int, CodeType] = {}
        for code in list(self.host.generated.values()):
            if compat.breakpoint_marker_indexes(code):
                info = self.host.generated_info(code)
                original = info.original if info is not None else compat.dynamo_original_of(code)
                if original is not None:
                    originals[id(original)] = original
        for original in originals.values():
            try:
                compat.reset_code(original)
            except Exception as exc:  # noqa: BLE001
                self.host._message(f"could not drop the marker code of {original.co_name}: {exc}")

    def hook_wrapper(self) -> None:
        """Python 3.11: see every compiled call end while nothing is traced (continue mode), for the exceptions
        leaving it (3.11 has no event for an untraced frame; 3.12+ uses ``sys.monitoring`` RAISE instead).

        torch's compiled-function wrapper runs its context's exit hooks in a ``finally`` after the generated code
        returns or raises; one more hook there sees the exception while it propagates, before the program's own
        ``except`` runs, at the cost of two small calls per compiled call and no tracing (the frame has unwound:
        the stop is post-mortem).
        """
        context, running = compat.running_dynamo_context(sys._getframe(1))  # noqa: SLF001 - the callback's callers
        if context is None or any(c is context for c in self.host._hooked_contexts):
            return
        if compat.add_exit_hook(context, self.host._enter_hook):
            self.host._hooked_contexts.append(context)
            if running is not None:
                running.append(self.after_compiled_call)  # this very call too: its cleanups are already made
