"""Instruction-level tracing back ends.

A back end turns interpreter events for *selected* generated code objects into four handler calls:
`TraceHandler.on_call`, `on_instruction`, `on_return`, `on_exception`. Tracing is armed lazily: nothing is traced
until the engine asks (`arm`), and only frames whose code the handler accepts get instruction events, so a
program running with no reason to stop pays nothing per call (torch-internals §10).

One back end per Python: `SettraceBackend` (3.11: ``sys.settrace`` + ``f_trace_opcodes``); a ``sys.monitoring``
back end for 3.12+ implements the same interface. `make_backend` picks one through `compat`.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType
from typing import Any

from .protocol import TraceHandler


class SettraceBackend:
    """Python 3.11: a thread-local ``sys.settrace`` function, armed only while some frame needs events.

    The global trace function is consulted on each new Python frame while armed; it returns the local tracer only
    for frames the handler wants, and turns ``f_trace_opcodes`` on for them.
    """

    name = "settrace"
    #: the return of a frame is seen only while it is traced (`return_only` keeps just that)
    returns_untraced = False

    def __init__(self, handler: TraceHandler) -> None:
        self.handler = handler
        # a handler without `wants_instructions` gets instruction events in every frame it wants
        self._wants_instructions = getattr(handler, "wants_instructions", lambda code: True)
        self.armed = False
        self._frames: set[FrameType] = set()

    # -- arming ------------------------------------------------------------------------------------------------
    def arm(self) -> None:
        """Start delivering 'call' events on this thread (idempotent)."""
        if not self.armed:
            self.armed = True
            sys.settrace(self._global)

    def watch(self, code: CodeType) -> None:
        """New frames of `code` need events (called from the debugger callback): settrace sees them at 'call'."""
        self.arm()

    def release(self) -> None:
        """End of session."""
        self.disarm()

    def disarm(self) -> None:
        """Stop all events on this thread; frames already traced lose their local tracer too."""
        if self.armed:
            self.armed = False
            sys.settrace(None)
        for frame in self._frames:
            frame.f_trace = None
            frame.f_trace_opcodes = False
        self._frames.clear()

    def trace_existing(self, frame: FrameType) -> None:
        """Give a frame that is already running instruction events (used for `next`/`return` in a parent)."""
        frame.f_trace = self._local
        frame.f_trace_opcodes = True
        self._frames.add(frame)
        self.arm()

    def return_only(self, frame: FrameType) -> None:
        """Keep `frame`'s call-level events (its return, an exception raised in it) and drop its instruction
        events: the global trace function stays armed until the frame returns."""
        frame.f_trace_opcodes = False

    def watch_returns(self, code: CodeType) -> None:
        """3.11: returns are seen by tracing the frame (`TraceHandler.wants_frame`); nothing to switch on."""

    def set_exception_stops(self, on: bool) -> None:
        """3.11: no event reaches an untraced frame; exceptions leaving a compiled call are seen after it."""

    def reclaim(self) -> None:
        """A nested session ended (it set the thread's trace function to None): nothing is traced here now."""
        self.disarm()

    def new_run(self) -> None:
        """Nothing to switch back on (settrace has no per-instruction DISABLE)."""

    def is_traced(self, frame: FrameType) -> bool:
        """Whether `frame` gets instruction events now."""
        return self.armed and frame in self._frames and frame.f_trace is not None and frame.f_trace_opcodes

    def untrace(self, frame: FrameType) -> None:
        """Stop instruction events for one frame."""
        frame.f_trace = None
        frame.f_trace_opcodes = False
        self._frames.discard(frame)

    # -- sys.settrace callbacks ----------------------------------------------------------------------------------
    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event != "call" or not self.handler.wants_frame(frame.f_code):
            return None
        frame.f_trace_opcodes = self._wants_instructions(frame.f_code)
        self._frames.add(frame)
        self.handler.on_call(frame)
        return self._local

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            self.handler.on_instruction(frame, frame.f_lasti)
        elif event == "return":
            self._frames.discard(frame)
            self.handler.on_return(frame, arg)
        elif event == "exception":
            self.handler.on_exception(frame, frame.f_lasti, arg[1])
        return self._local if frame in self._frames else None


def make_backend(handler: TraceHandler) -> SettraceBackend:
    """The back end for this Python (see `compat.USE_SYS_MONITORING`)."""
    from . import compat

    if compat.USE_SYS_MONITORING:
        from .monitoring import MonitoringBackend  # sys.monitoring exists from 3.12 only

        return MonitoringBackend(handler)  # type: ignore[return-value]
    return SettraceBackend(handler)
