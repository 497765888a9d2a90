"""Stepping back: a bounded record of the stops the program made at instructions, browsed read-only.

`History` keeps one `model.HistoryEntry` per stop at an instruction of generated code (a step, a breakpoint, an
entry, a graph-break entry, a return or exception stop with a live frame). An entry holds the stop's frames as
they were built for the front ends (`model.FrameView`: value stack and locals as `model.ValueSummary`, reprs
already cut to `values.MAX_REPR`), never the live objects: a tensor is kept only as its shape/dtype/device text,
and its memory can be freed by the program. Recording adds no reads of the frame: the stop snapshot is built
anyway, the entry points at it.

Bounds: at most `limit` entries (default 10,000) and at most `max_bytes` of estimated memory (default 4 MiB); the
oldest entries are dropped first. The estimate counts each summary's strings plus a fixed overhead per object
(`ENTRY_OVERHEAD`, `SUMMARY_OVERHEAD`); the `CodeView` listings are shared with the stops and not counted.

Positions are 1-based, oldest first. `HistoryCursor` is the browsing state of one session: the entry shown, or
the present (None).
"""

from __future__ import annotations

import types
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any

from .model import FrameView, HistoryEntry, HistoryInfo, HistoryMark, Stop, StopKind, ValueSummary

__all__ = ["History", "HistoryCursor", "SummaryCache", "DEFAULT_LIMIT", "DEFAULT_MAX_BYTES", "HistoryError"]

#: entries kept by default (the issue's "last 10,000 instructions")
DEFAULT_LIMIT = 10_000
#: memory cap of the kept entries by default (bytes, estimated)
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
#: estimated bytes of one entry beyond its summaries (the entry and its instance dict, the frames tuple)
ENTRY_OVERHEAD = 600
#: estimated bytes of one frame beyond its summaries (a `FrameView` and its instance dict, its two tuples)
FRAME_OVERHEAD = 400
#: estimated bytes of one `ValueSummary` beyond its text (the dataclass and its instance dict: 352 bytes on
#: CPython 3.11, the text's str header, the tuple slot); calibrated against a deep `sys.getsizeof` of a real run
SUMMARY_OVERHEAD = 320

#: stop kinds that happen at an instruction of a live frame (the others, compile and recompile, have none)
_AT_INSTRUCTION = frozenset({StopKind.STEP, StopKind.BREAKPOINT, StopKind.ENTRY, StopKind.GRAPH_BREAK,
                             StopKind.INTERRUPT, StopKind.RETURN, StopKind.EXCEPTION})


class HistoryError(ValueError):
    """A bad history request (count out of range, nothing recorded); the message is for the user."""


def _summary_bytes(v: ValueSummary) -> int:
    return SUMMARY_OVERHEAD + len(v.text) + len(v.type_name) + (8 * len(v.shape) if v.shape else 0)


def _frame_bytes(fv: FrameView) -> int:
    n = FRAME_OVERHEAD + sum(_summary_bytes(v) for v in fv.stack)
    n += sum(64 + _summary_bytes(v) for _name, v in fv.locals)  # the pair tuple; names are the code's own
    return n + 8 * len(fv.changed)


class History:
    """The recorded stops of one session, oldest first, within `limit` entries and `max_bytes`.

    Args:
        limit: most entries kept (≥ 0; 0 turns recording off).
        max_bytes: most estimated bytes kept (≥ 0; 0 turns recording off).
        every: the session also records instructions it runs through without stopping (``s N``); the recorder
            only keeps the flag.

    Raises:
        HistoryError: a negative bound.
    """

    def __init__(self, limit: int = DEFAULT_LIMIT, max_bytes: int = DEFAULT_MAX_BYTES, every: bool = False) -> None:
        self.every = every
        self._entries: deque[HistoryEntry] = deque()
        self.nbytes = 0
        #: entries dropped so far to stay within the bounds
        self.evicted = 0
        self.limit = DEFAULT_LIMIT
        self.max_bytes = DEFAULT_MAX_BYTES
        self.set_bounds(limit, max_bytes)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def enabled(self) -> bool:
        return self.limit > 0 and self.max_bytes > 0

    def set_bounds(self, limit: int | None = None, max_bytes: int | None = None, every: bool | None = None) -> None:
        """Change the bounds (None keeps one); entries beyond the new bounds are dropped, oldest first."""
        if every is not None:
            self.every = every
        if limit is not None:
            if limit < 0:
                raise HistoryError(f"history limit must be 0 or more, not {limit}")
            self.limit = limit
        if max_bytes is not None:
            if max_bytes < 0:
                raise HistoryError(f"history memory cap must be 0 or more, not {max_bytes}")
            self.max_bytes = max_bytes
        self._evict()

    def clear(self) -> None:
        self._entries.clear()
        self.nbytes = 0

    def record(self, stop: Stop) -> HistoryEntry | None:
        """Keep `stop` if it is at an instruction of a live frame; the entry, or None when not kept."""
        if not self.enabled or stop.kind not in _AT_INSTRUCTION or not stop.frames or stop.history is not None:
            return None
        fv = stop.frames[-1]
        if fv.index < 0 or fv.index >= len(fv.code.instructions):
            return None
        if self._entries and self._entries[-1].seq == stop.seq:
            return None  # the same stop again (a rebuilt snapshot): keep the first one
        ins = fv.code.instructions[fv.index]
        nbytes = ENTRY_OVERHEAD + len(stop.message) + sum(_frame_bytes(f) for f in stop.frames)
        entry = HistoryEntry(
            seq=stop.seq,
            kind=stop.kind,
            message=stop.message,
            code_name=fv.code.name,
            compile_id=stop.compile_id if stop.compile_id is not None else fv.code.compile_id,
            code_key=fv.code.key,
            index=fv.index,
            offset=ins.offset,
            opname=ins.opname,
            argrepr=ins.argrepr,
            frames=stop.frames,
            selected=stop.selected,
            nbytes=nbytes,
        )
        self._entries.append(entry)
        self.nbytes += nbytes
        self._evict()
        return entry if self._entries and self._entries[-1] is entry else None

    def _evict(self) -> None:
        while self._entries and (len(self._entries) > self.limit or self.nbytes > self.max_bytes):
            old = self._entries.popleft()
            self.nbytes -= old.nbytes
            self.evicted += 1

    def entry(self, position: int) -> HistoryEntry:
        """Entry `position` (1-based, oldest first). Raises IndexError outside 1..len."""
        if not 1 <= position <= len(self._entries):
            raise IndexError(position)
        return self._entries[position - 1]

    def newest_seq(self) -> int | None:
        return self._entries[-1].seq if self._entries else None

    def info(self, position: HistoryMark | None, recent: int = 10) -> HistoryInfo:
        n = len(self._entries)
        first = max(1, n - recent + 1)
        rows = tuple((i, self._entries[i - 1]) for i in range(first, n + 1))
        return HistoryInfo(n, self.limit, self.nbytes, self.max_bytes, self.evicted, position, rows, self.every)


#: types whose summary cannot change while the object lives (held strongly between two recorded instructions)
_STABLE = (int, float, bool, str, type(None), types.FunctionType, types.BuiltinFunctionType)


class SummaryCache:
    """Summaries of the values seen at the previous recorded instruction, reused while the very same object is
    there again (``history every on`` records one instruction after another, and most values stay put).

    A tensor is matched through a weak reference (it is never kept alive; its shape, dtype, device and
    requires_grad are taken as unchanged while it is the same object: an in-place ``resize_`` or
    ``requires_grad_`` between two instructions would show the earlier metadata); ints, floats, strings, None and
    functions, whose summary cannot change, are held until the next instruction; anything else is summarised
    afresh each time. `turn` forgets what was not seen at the last instruction.
    """

    def __init__(self) -> None:
        self._prev: dict[int, tuple[Any, ValueSummary]] = {}
        self._now: dict[int, tuple[Any, ValueSummary]] = {}

    def summary(self, obj: Any) -> ValueSummary:
        from .snapshot import value

        key = id(obj)
        hit = self._now.get(key) or self._prev.get(key)
        if hit is not None:
            ref, found = hit
            if (ref() if isinstance(ref, weakref.ref) else ref) is obj:
                self._now[key] = hit
                return found
        found = value(obj)
        if found.is_tensor:
            try:
                self._now[key] = (weakref.ref(obj), found)
            except TypeError:
                pass
        elif isinstance(obj, _STABLE) or found.is_null:
            self._now[key] = (obj, found)
        return found

    def turn(self) -> None:
        self._prev, self._now = self._now, {}


@dataclass
class HistoryCursor:
    """Which recorded entry a session shows (`position`, 1-based), or the present (`position` None).

    `present_seq` is the `Stop.seq` of the live stop; the present counts as the newest entry when that stop was
    recorded, else as one past it.
    """

    history: History
    position: int | None = None

    def present_number(self, present_seq: int) -> int:
        n = len(self.history)
        return n if self.history.newest_seq() == present_seq else n + 1

    def mark(self, present_seq: int) -> HistoryMark | None:
        if self.position is None:
            return None
        return HistoryMark(self.position, len(self.history), self.present_number(present_seq))

    def back(self, count: int, present_seq: int) -> int:
        """Move `count` entries back; the new position. Raises HistoryError (and does not move)."""
        if count < 1:
            raise HistoryError(f"back: count must be at least 1, not {count}")
        present = self.present_number(present_seq)
        here = present if self.position is None else self.position
        earlier = here - 1
        if earlier < 1:
            if len(self.history) == 0 or (present == 1 and self.position is None):
                raise HistoryError("back: no history recorded yet (history records each stop at an instruction; "
                                   "step first)")
            raise HistoryError("back: already at the oldest recorded stop"
                               + (f" ({self.history.evicted} older ones dropped: `history limit N` keeps more)"
                                  if self.history.evicted else ""))
        if count > earlier:
            raise HistoryError(f"back {count}: only {earlier} earlier stop{'s' if earlier != 1 else ''} recorded")
        self.position = here - count
        return self.position

    def forward(self, count: int, present_seq: int) -> int | None:
        """Move `count` entries toward the present; the new position, None at the present. Raises HistoryError."""
        if count < 1:
            raise HistoryError(f"forward: count must be at least 1, not {count}")
        if self.position is None:
            raise HistoryError("forward: already at the present (`back [N]` shows earlier stops)")
        present = self.present_number(present_seq)
        later = present - self.position
        if count > later:
            raise HistoryError(f"forward {count}: the present is {later} stop{'s' if later != 1 else ''} ahead")
        target = self.position + count
        self.position = None if target == present else target
        return self.position


def history_stop(entry: HistoryEntry, mark: HistoryMark) -> Stop:
    """The `Stop` a front end renders for a recorded entry: its frames, kind and message, marked as history."""
    return Stop(
        kind=entry.kind,
        message=f"history {mark.position} of {mark.total}: {entry.message}",
        frames=entry.frames,
        compile_id=entry.compile_id,
        seq=entry.seq,
        selected=entry.selected,
        history=mark,
    )
