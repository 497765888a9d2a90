"""Shared state types of the engine: stepping mode, breakpoints, the pause context and the session's error.

A low module (it imports only `model` and `stack`): the session, the command language and the services
(patches, guard edits, recompile analysis) all use these types without importing each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import CodeType, TracebackType
from typing import TYPE_CHECKING, Any

from .disasm import code_view
from .model import BreakpointView, Stop, StopKind
from .stack import FrameState

if TYPE_CHECKING:
    from .events import CacheMissEvent, CompileEvent


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
    #: set by a breakpoint marker compiled into the code (`model.BreakpointView.marker`)
    marker: bool = False

    def view(self) -> BreakpointView:
        try:
            rows = code_view(self.code).instructions
            ins = rows[self.index] if 0 <= self.index < len(rows) else None
        except Exception:  # noqa: BLE001
            ins = None
        return BreakpointView(self.number, id(self.code), self.code.co_name, self.index,
                              ins.opname if ins is not None else "?", self.condition, self.hits, self.marker)


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
    compile_event: CompileEvent | None = None  # at a compile stop
    miss_event: CacheMissEvent | None = None   # at a recompile stop
    decision: str | None = None             # what to do at a recompile stop
    post_mortem: bool = False
    extra: dict[str, Any] = field(default_factory=dict)     # per-stop data ("recompile": the RecompileRecord)
    message: str = ""                       # the stop's status line, kept to rebuild the snapshot
    list_next: int = -1                     # where a bare `l` continues (-1: around the current instruction)

    @property
    def frame(self) -> FrameState | None:
        return self.frames[self.selected] if self.frames else None


class SessionError(Exception):
    """Misuse of the session API (starting twice, ...)."""
