"""The ``sys.monitoring`` tracing back end (Python 3.12+), same interface as `tracing.SettraceBackend`.

On 3.12 settrace delivers no opcode events for straight-line code (torch-internals §8), so instruction stepping
uses PEP 669 events instead: PY_START, INSTRUCTION and PY_RETURN are switched on per code object
(``set_local_events``) only for generated code that has a reason to stop, RAISE globally only while something is
traced. Events are per code object, not per frame: the back end keeps the set of frames it was asked to trace and
ignores events from other frames of the same code (other threads, other calls), which is what settrace's
per-frame trace functions give on 3.11.

Tool id: ``sys.monitoring.DEBUGGER_ID`` (the one PEP 669 reserves for debuggers).
"""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any

from .protocol import TraceHandler

mon = getattr(sys, "monitoring", None)


class MonitoringBackend:
    """Python 3.12+: per-code-object ``sys.monitoring`` events, armed lazily."""

    name = "sys.monitoring"

    def __init__(self, handler: TraceHandler) -> None:
        if mon is None:
            raise RuntimeError("sys.monitoring needs Python 3.12 or newer")
        self.handler = handler
        self.tool = mon.DEBUGGER_ID
        self.armed = False
        self._codes: dict[int, CodeType] = {}  # by id: code objects may be unhashable
        self._frames: set[FrameType] = set()
        self._thread = threading.get_ident()
        self._registered = False

    # -- tool registration ---------------------------------------------------------------------------------------
    def _register(self) -> None:
        if self._registered:
            return
        current = mon.get_tool(self.tool)
        if current is not None and current != "dynadbg":
            raise RuntimeError(f"sys.monitoring tool id {self.tool} is taken by {current!r}")
        if current is None:
            mon.use_tool_id(self.tool, "dynadbg")
        E = mon.events
        mon.register_callback(self.tool, E.PY_START, self._on_start)
        mon.register_callback(self.tool, E.INSTRUCTION, self._on_instruction)
        mon.register_callback(self.tool, E.PY_RETURN, self._on_return)
        mon.register_callback(self.tool, E.RAISE, self._on_raise)
        self._registered = True

    def release(self) -> None:
        """Give the tool id back (end of session)."""
        self.disarm()
        if self._registered:
            E = mon.events
            for ev in (E.PY_START, E.INSTRUCTION, E.PY_RETURN, E.RAISE):
                mon.register_callback(self.tool, ev, None)
            if mon.get_tool(self.tool) == "dynadbg":
                mon.free_tool_id(self.tool)
            self._registered = False

    # -- arming ------------------------------------------------------------------------------------------------
    def watch(self, code: CodeType) -> None:
        """Deliver events for new frames of `code` (called from the debugger callback, before the frame starts)."""
        self._thread = threading.get_ident()
        self._register()
        if id(code) not in self._codes:
            E = mon.events
            mon.set_local_events(self.tool, code, E.PY_START | E.INSTRUCTION | E.PY_RETURN)
            self._codes[id(code)] = code
        if not self.armed:
            self.armed = True
            mon.set_events(self.tool, mon.events.RAISE)

    def arm(self) -> None:
        """Nothing to do until a code object is watched (events are per code object)."""
        self._thread = threading.get_ident()
        self._register()

    def disarm(self) -> None:
        for code in self._codes.values():
            mon.set_local_events(self.tool, code, 0)
        self._codes.clear()
        self._frames.clear()
        if self.armed:
            self.armed = False
            mon.set_events(self.tool, 0)

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
            mon.set_local_events(self.tool, code, 0)
            self._codes.pop(id(code), None)

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
        if frame not in self._frames:
            return None
        self._frames.discard(frame)
        self.handler.on_return(frame, value)
        return None

    def _on_raise(self, code: CodeType, offset: int, exc: BaseException) -> Any:
        if threading.get_ident() != self._thread:
            return None
        frame = sys._getframe(1)
        if frame in self._frames:
            self.handler.on_exception(frame, offset, exc)
        return None
