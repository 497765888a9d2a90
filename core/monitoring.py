"""The ``sys.monitoring`` tracing back end (Python 3.12+), same interface as `tracing.SettraceBackend`.

On 3.12 settrace delivers no opcode events for straight-line code (torch-internals §8), so instruction stepping
uses PEP 669 events instead: PY_START, INSTRUCTION and PY_RETURN are switched on per code object
(``set_local_events``) only for generated code that has a reason to stop. Events are per code object, not per
frame: the back end keeps the set of frames it was asked to trace and ignores events from other frames of the
same code (other threads, other calls), which is what settrace's per-frame trace functions give on 3.11.

Two kinds of event reach frames that are not traced, at no cost to calls that neither raise nor return to a
reporting session:

* RAISE (and RERAISE) while exception stops are on (`set_exception_stops`): PEP 669 offers them only as
  process-wide events (``set_local_events`` refuses them: "invalid local event set", checked on 3.12.1 and
  3.13.0), so they cost a callback per exception raised anywhere, nothing per call that raises none; the
  callback passes on only those raised in (or through) generated code (`TraceHandler.is_generated`), with the
  frame still live: its value stack is there to read.
* PY_RETURN of generated code whose returns are reported (`watch_returns`): a local event; after the one return
  the handler wants per run, the callback answers ``sys.monitoring.DISABLE`` and that instruction costs nothing
  until `new_run` (``sys.monitoring.restart_events``) switches it back on.

Tool id: ``sys.monitoring.DEBUGGER_ID`` (the one PEP 669 reserves for debuggers). A back end made while another
one holds the tool (a nested ``dynadbg.debug()``) takes over its callbacks and events and gives them back on
`release`.
"""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any

from .protocol import TraceHandler

# Any: typeshed declares sys.monitoring only for 3.12+, and on 3.11 this is None (the back end refuses to start)
mon: Any = getattr(sys, "monitoring", None)


class MonitoringBackend:
    """Python 3.12+: per-code-object ``sys.monitoring`` events, armed lazily."""

    name = "sys.monitoring"
    #: returns of untraced generated frames come from PY_RETURN events here (no tracing needed for them)
    returns_untraced = True

    def __init__(self, handler: TraceHandler) -> None:
        if mon is None:
            raise RuntimeError("sys.monitoring needs Python 3.12 or newer")
        self.handler = handler
        self.tool = mon.DEBUGGER_ID
        self.armed = False
        self._codes: dict[int, CodeType] = {}  # by id: code objects may be unhashable
        self._return_codes: dict[int, CodeType] = {}
        self._frames: set[FrameType] = set()
        self._thread = threading.get_ident()
        self._registered = False
        self._owns_tool = False
        self._exceptions = False
        self._disabled = False  # some callback answered DISABLE since the last restart_events()
        self._previous: dict[int, Any] = {}  # event -> the callback another session had registered
        self._previous_events = 0

    # -- tool registration ---------------------------------------------------------------------------------------
    def _events(self) -> tuple[tuple[int, Any], ...]:
        E = mon.events
        return ((E.PY_START, self._on_start), (E.INSTRUCTION, self._on_instruction),
                (E.PY_RETURN, self._on_return), (E.RAISE, self._on_raise), (E.RERAISE, self._on_reraise))

    def _register(self) -> None:
        if self._registered:
            return
        current = mon.get_tool(self.tool)
        if current is not None and current != "dynadbg":
            raise RuntimeError(f"sys.monitoring tool id {self.tool} is taken by {current!r}")
        if current is None:
            mon.use_tool_id(self.tool, "dynadbg")
            self._owns_tool = True
        else:
            self._previous_events = mon.get_events(self.tool)
        for event, callback in self._events():
            self._previous[event] = mon.register_callback(self.tool, event, callback)
        self._registered = True

    def release(self) -> None:
        """Give the tool id back (end of session), or the callbacks and events of the session that held it."""
        self.disarm()
        for code in self._return_codes.values():
            mon.set_local_events(self.tool, code, 0)
        self._return_codes.clear()
        self._exceptions = False
        self._sync_global()
        if self._registered:
            for event, _callback in self._events():
                mon.register_callback(self.tool, event, self._previous.get(event))
            if self._owns_tool:
                if mon.get_tool(self.tool) == "dynadbg":
                    mon.free_tool_id(self.tool)
            else:
                mon.set_events(self.tool, self._previous_events)
            self._registered = False
            self._owns_tool = False

    # -- arming ------------------------------------------------------------------------------------------------
    def _local(self, key: int) -> int:
        E = mon.events
        traced = E.PY_START | E.INSTRUCTION | E.PY_RETURN if key in self._codes else 0
        return traced | (E.PY_RETURN if key in self._return_codes else 0)

    def _sync_global(self) -> None:
        if not self._registered:
            return
        E = mon.events
        mon.set_events(self.tool, E.RAISE | E.RERAISE if (self.armed or self._exceptions) else 0)

    def _restart_if_disabled(self) -> None:
        if self._disabled:
            self._disabled = False
            mon.restart_events()

    def watch(self, code: CodeType) -> None:
        """Deliver events for new frames of `code` (called from the debugger callback, before the frame starts)."""
        self._thread = threading.get_ident()
        self._register()
        self._restart_if_disabled()  # a return answered DISABLE may sit where this frame will return
        if id(code) not in self._codes:
            self._codes[id(code)] = code
            mon.set_local_events(self.tool, code, self._local(id(code)))
        if not self.armed:
            self.armed = True
            self._sync_global()

    def watch_returns(self, code: CodeType) -> None:
        """Report the returns of untraced frames of `code` (`TraceHandler.on_untraced_return`)."""
        self._thread = threading.get_ident()
        self._register()
        if id(code) not in self._return_codes:
            self._return_codes[id(code)] = code
            mon.set_local_events(self.tool, code, self._local(id(code)))

    def set_exception_stops(self, on: bool) -> None:
        """Deliver RAISE events of untraced generated frames (`TraceHandler.on_untraced_exception`) or not."""
        if on == self._exceptions:
            return
        self._thread = threading.get_ident()
        self._register()
        self._exceptions = on
        self._sync_global()

    def reclaim(self) -> None:
        """A nested session ended and gave the tool back: switch this one's events on again (the nested session
        cleared the per-code events it had set, some of them on codes this one watches too)."""
        if not self._registered:
            return
        for event, callback in self._events():
            mon.register_callback(self.tool, event, callback)
        for key, code in {**self._return_codes, **self._codes}.items():
            mon.set_local_events(self.tool, code, self._local(key))
        self._sync_global()

    def new_run(self) -> None:
        """The program runs on from a stop: switch back on the returns answered with DISABLE in the last run."""
        self._restart_if_disabled()

    def arm(self) -> None:
        """Nothing to do until a code object is watched (events are per code object)."""
        self._thread = threading.get_ident()
        self._register()

    def disarm(self) -> None:
        codes = list(self._codes.values())
        self._codes.clear()
        for code in codes:
            mon.set_local_events(self.tool, code, self._local(id(code)))
        self._frames.clear()
        if self.armed:
            self.armed = False
            self._sync_global()

    def trace_existing(self, frame: FrameType) -> None:
        self._frames.add(frame)
        self.watch(frame.f_code)

    def is_traced(self, frame: FrameType) -> bool:
        """Whether `frame` gets instruction events now."""
        return frame in self._frames and id(frame.f_code) in self._codes

    def untrace(self, frame: FrameType) -> None:
        self._frames.discard(frame)
        code = frame.f_code
        if id(code) in self._codes and not any(f.f_code is code for f in self._frames):
            self._codes.pop(id(code), None)
            mon.set_local_events(self.tool, code, self._local(id(code)))

    def return_only(self, frame: FrameType) -> None:
        """Keep only the return of `frame` (3.12+: the PY_RETURN of a return-watched code needs no tracing)."""
        self.untrace(frame)

    # -- callbacks -----------------------------------------------------------------------------------------------
    def _on_start(self, code: CodeType, offset: int) -> Any:
        if threading.get_ident() != self._thread or not self.handler.wants_frame(code):
            return None
        frame = sys._getframe(1)
        self._frames.add(frame)
        self.handler.on_call(frame)
        return None

    def _on_instruction(self, code: CodeType, offset: int) -> Any:
        if threading.get_ident() != self._thread:
            return None
        frame = sys._getframe(1)
        if frame not in self._frames:
            return None
        self.handler.on_instruction(frame, offset)
        return None

    def _on_return(self, code: CodeType, offset: int, value: Any) -> Any:
        if threading.get_ident() != self._thread:
            return None
        frame = sys._getframe(1)
        if frame in self._frames:
            self._frames.discard(frame)
            self.handler.on_return(frame, value)
            return None
        if id(code) in self._return_codes and not self.handler.on_untraced_return(frame, value):
            if id(code) in self._codes:
                return None  # other frames of this code are traced: their returns must keep coming
            self._disabled = True
            return mon.DISABLE
        return None

    def _on_raise(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        if threading.get_ident() != self._thread:
            return None
        frame = sys._getframe(1)
        if frame in self._frames:
            self.handler.on_exception(frame, offset, exc)
        elif self._exceptions and self.handler.is_generated(code):
            self.handler.on_untraced_exception(frame, offset, exc)
        return None

    def _on_reraise(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        # a RERAISE in an untraced generated frame re-raises what a handler there caught: the first RAISE was
        # seen already (the session stops once per exception object); traced frames re-base their depth on the
        # handler's next instruction
        if self._exceptions and threading.get_ident() == self._thread and self.handler.is_generated(code):
            frame = sys._getframe(1)
            if frame not in self._frames:
                self.handler.on_untraced_exception(frame, offset, exc)
        return None
