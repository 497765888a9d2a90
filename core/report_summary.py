"""The report's summary as data: per compiled frame its entries, hits, recompiles, graph breaks and guard cost;
graph breaks counted as a user counts them (one per user location and reason, with the frames that saw it); and
the few things to look at first. `dynadbg.core.report.build_summary` fills these from a run; the sentences are
made in `dynadbg.core.format.report`.

Pure data and pure functions over `model` views: no torch, no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Iterable, Sequence

from .facts import tensor_check_in
from .model import CompiledFrameView, GuardTree

__all__ = ["BreakKey", "DistinctBreak", "DynamicDims", "EntryCostLine", "FrameSummary", "LookAt", "LookKind",
           "Progress", "ProgressKind", "RecompileLine", "ReportSummary", "GUARDS_WORTH_A_LOOK", "distinct_breaks",
           "dynamic_dims", "look_at_first"]

#: (filename, lineno, reason head): what makes two graph breaks the same break for a user.
BreakKey = tuple[str | None, int | None, str]


@dataclass(frozen=True)
class DistinctBreak:
    """One graph break as a user counts it: a user location and a reason, however many frames took it.

    A break inside a function called from compiled code is taken once by every frame on the way down (Dynamo
    compiles each caller, breaks at the call, then compiles the callee as a frame of its own and breaks again):
    torch logs it once per frame, the user wrote it once.

    Attributes:
        filename, lineno: the user line the break is at (None when torch gave no location).
        user_line: that line's source text, when known.
        reason: torch's reason head (`GraphBreakView.summary`).
        frames: names of the frames whose compiles took it, first seen first (a name once per frame).
        compile_ids: the compiles that took it, in order.
        count: how many times torch logged it (what ``TORCH_LOGS=graph_breaks`` and `summary.graph_breaks` count).
    """

    filename: str | None
    lineno: int | None
    user_line: str | None
    reason: str
    frames: tuple[str, ...]
    compile_ids: tuple[str, ...]
    count: int

    @property
    def key(self) -> BreakKey:
        return (self.filename, self.lineno, self.reason)


def distinct_breaks(frames: Iterable[CompiledFrameView]) -> tuple[DistinctBreak, ...]:
    """The graph breaks of `frames` counted once per (user file, line, reason head), in first-seen order.

    Breaks without a location are grouped by their reason alone.
    """
    order: list[BreakKey] = []
    rows: dict[BreakKey, dict[str, Any]] = {}
    for frame in frames:
        for brk in frame.graph_breaks:
            head = brk.summary or (brk.reason.strip().splitlines() or [""])[0]
            key: BreakKey = (brk.filename, brk.lineno, head)
            row = rows.get(key)
            if row is None:
                order.append(key)
                row = rows[key] = {"user_line": brk.user_line, "frames": {}, "ids": [], "count": 0}
            row["frames"].setdefault(frame.key, frame.name)  # a frame once, however many of its compiles took it
            row["ids"].append(brk.compile_id)
            row["count"] += 1
            row["user_line"] = row["user_line"] or brk.user_line
    return tuple(DistinctBreak(k[0], k[1], rows[k]["user_line"], k[2], tuple(rows[k]["frames"].values()),
                               tuple(rows[k]["ids"]), rows[k]["count"]) for k in order)


@dataclass(frozen=True)
class RecompileLine:
    """One recompile of a frame, in a line.

    Attributes:
        compile_id: the new compile (``"0/1"``).
        reason: torch's first reason (the newest failing entry's: ``"0/0: L['n'] == 3"``), None when torch gave none.
        more_reasons: how many more reasons torch gave (one per other failing entry).
        failing_guards: failing guards over every entry when the miss was analysed (None: no analysis).
        limit_hit: this compile hit ``torch._dynamo.config.recompile_limit``.
    """

    compile_id: str
    reason: str | None
    more_reasons: int = 0
    failing_guards: int | None = None
    limit_hit: bool = False


@dataclass(frozen=True)
class DynamicDims:
    """The dimensions of one tensor an entry serves at any size: its ``TENSOR_MATCH`` pins ``None`` there.

    Attributes:
        source: the tensor (``"L['x']"``).
        dims: the dynamic dimensions, in order.
        seen: for the dimensions torch's automatic dynamic shapes made dynamic at the recompile that built this
            entry (`model.AutoDynamicDim`, predicted at the miss and read back off the entry): (dim, sizes seen
            there before it became dynamic) each; empty when another cause made them dynamic (``mark_dynamic``,
            ``dynamic=True``, an earlier recompile) or it is not known.
    """

    source: str
    dims: tuple[int, ...]
    seen: tuple[tuple[int, tuple[int, ...]], ...] = ()


def dynamic_dims(tree: GuardTree | None, auto: Sequence[Any] = ()) -> tuple[DynamicDims, ...]:
    """Each tensor of `tree` with dynamic dimensions, read off its ``TENSOR_MATCH`` code (``check_tensor(L['x'],
    ..., size=[2, None], ...)``), in tree order. `auto`: the `model.AutoDynamicDim`s of the recompile that built
    the entry (what automatic dynamic made dynamic there)."""
    if tree is None:
        return ()
    out: list[DynamicDims] = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        for leaf in node.leaves:
            if leaf.guard_type != "TENSOR_MATCH":
                continue
            check = tensor_check_in(leaf.code)
            if check is None:
                continue
            dims = tuple(i for i, size in enumerate(check.size) if size is None)
            if dims:
                seen = tuple((d.dim, tuple(d.seen)) for d in auto
                             if d.source == leaf.source and d.dim in dims and not d.already)
                out.append(DynamicDims(leaf.source, dims, seen))
        stack.extend(reversed(node.children))
    return tuple(out)


@dataclass(frozen=True)
class EntryCostLine:
    """One cache entry's hits and guard cost.

    Attributes:
        compile_id: ``"0/0"``.
        hits: calls it served (-1: not counted).
        guards: leaf guards of its tree (None: no tree).
        eval_us: torch's µs per evaluation of the whole tree at compile time, cold cache (None: not measured).
        cuts: torch's documented guard-overhead cuts that fit it (`guard_cost.advice` names).
        dynamic: the tensors it serves at any size in some dimension (`DynamicDims`), from its guard tree.
    """

    compile_id: str
    hits: int
    guards: int | None
    eval_us: float | None
    cuts: tuple[str, ...] = ()
    dynamic: tuple[DynamicDims, ...] = ()


@dataclass(frozen=True)
class FrameSummary:
    """One compiled frame, as the summary shows it.

    Attributes:
        number: its number in the full report and for ``report --frame N`` (1-based, first-compile order).
        name, filename, firstlineno: the code object.
        is_resume: a resume function; `resume_origin` names the function it resumes (``"f (demo.py:10)"``).
        skipped: torch's reason when Dynamo gave up on the frame, else None.
        entries: its cache entries, oldest first.
        recompiles: its recompiles, in order.
        breaks: the distinct graph breaks its compiles took (`DistinctBreak`, shared with `ReportSummary.breaks`).
        graph_breaks: the graph breaks torch logged for it (its count, not the distinct one).
    """

    number: int
    name: str
    filename: str
    firstlineno: int
    is_resume: bool
    resume_origin: str | None
    skipped: str | None
    entries: tuple[EntryCostLine, ...]
    recompiles: tuple[RecompileLine, ...]
    breaks: tuple[DistinctBreak, ...]
    graph_breaks: int

    @property
    def hits(self) -> int | None:
        """Calls its entries served, None when they were not counted."""
        counted = [e.hits for e in self.entries if e.hits >= 0]
        return sum(counted) if counted else None

    @property
    def guards(self) -> int | None:
        known = [e.guards for e in self.entries if e.guards is not None]
        return sum(known) if known else None

    @property
    def eval_us(self) -> float | None:
        known = [e.eval_us for e in self.entries if e.eval_us is not None]
        return sum(known) if known else None


class LookKind(StrEnum):
    """What a `LookAt` points at, most pressing first."""

    LIMIT_HIT = "recompile limit hit"   # a frame hit the recompile limit: later calls run its old code or eagerly
    RECOMPILE = "recompile"             # a frame recompiled
    GRAPH_BREAK = "graph break"         # a distinct graph break
    GUARD_COST = "guard cost"           # the costliest guards, where a documented cut fits


@dataclass(frozen=True)
class LookAt:
    """One of the things to look at first.

    Attributes:
        kind: what it is.
        frame: the frame's number (`FrameSummary.number`); for a graph break, the first frame that took it.
        recompiles: the frame's recompiles (LIMIT_HIT, RECOMPILE).
        brk: the break (GRAPH_BREAK).
        entry: the costliest entry (GUARD_COST).
    """

    kind: LookKind
    frame: int
    recompiles: tuple[RecompileLine, ...] = ()
    brk: DistinctBreak | None = None
    entry: EntryCostLine | None = None


@dataclass(frozen=True)
class ReportSummary:
    """The whole summary.

    Attributes:
        frames: every compiled frame, first-compile order.
        breaks: every distinct graph break, first seen first.
        look_at: at most three things to look at first, most pressing first.
        skipped_frames: frames Dynamo skipped without compiling ((name, filename, firstlineno, reason)).
        disabled: capture hooks missing on this torch (that part of the report is missing).
        graph_breaks: torch's count of graph breaks (one per frame that took each).
        limit_hits: compiles that hit the recompile limit.
    """

    frames: tuple[FrameSummary, ...]
    breaks: tuple[DistinctBreak, ...]
    look_at: tuple[LookAt, ...]
    skipped_frames: tuple[tuple[str, str, int, str], ...] = ()
    disabled: tuple[str, ...] = ()
    graph_breaks: int = 0
    limit_hits: int = 0

    @property
    def entries(self) -> int:
        return sum(len(f.entries) for f in self.frames)

    @property
    def recompiles(self) -> int:
        return sum(len(f.recompiles) for f in self.frames)

    @property
    def guards(self) -> int | None:
        known = [f.guards for f in self.frames if f.guards is not None]
        return sum(known) if known else None

    @property
    def guard_eval_us(self) -> float | None:
        known = [f.eval_us for f in self.frames if f.eval_us is not None]
        return sum(known) if known else None


#: An entry with fewer guards than this is not worth a "look at first" line for its guard cost (a small
#: function has 5-20; a model's forward has hundreds to thousands, one per parameter and module attribute).
GUARDS_WORTH_A_LOOK = 100


def look_at_first(frames: Sequence[FrameSummary], breaks: Sequence[DistinctBreak],
                  limit: int = 3) -> tuple[LookAt, ...]:
    """The `limit` most pressing things: frames that hit the recompile limit, then frames that recompiled (most
    recompiles first), then distinct graph breaks (seen by most frames first), then the costliest entry with at
    least `GUARDS_WORTH_A_LOOK` guards where a documented cut fits."""
    out: list[LookAt] = []
    hit = [f for f in frames if any(r.limit_hit for r in f.recompiles)]
    out += [LookAt(LookKind.LIMIT_HIT, f.number, f.recompiles) for f in hit]
    recompiling = sorted((f for f in frames if f.recompiles and f not in hit), key=lambda f: -len(f.recompiles))
    out += [LookAt(LookKind.RECOMPILE, f.number, f.recompiles) for f in recompiling]
    first_frame: dict[BreakKey, int] = {}
    for f in frames:
        for b in f.breaks:
            first_frame.setdefault(b.key, f.number)
    for b in sorted(breaks, key=lambda b: -len(b.frames)):
        out.append(LookAt(LookKind.GRAPH_BREAK, first_frame.get(b.key, 0), brk=b))
    costly = [(e, f) for f in frames for e in f.entries if e.cuts and (e.guards or 0) >= GUARDS_WORTH_A_LOOK]
    if costly:
        entry, frame = max(costly, key=lambda ef: (ef[0].eval_us or 0.0, ef[0].guards or 0))
        out.append(LookAt(LookKind.GUARD_COST, frame.number, entry=entry))
    return tuple(out[:limit])


class ProgressKind(StrEnum):
    """What happened, for a progress line while the program runs."""

    COMPILED = "compiled"       # Dynamo finished a compile
    CACHE_MISS = "cache miss"   # a code object with entries missed them all: a recompile is next


@dataclass(frozen=True)
class Progress:
    """One progress event of `report.run_report` (``progress=`` callback).

    Attributes:
        kind: what happened.
        frame_name: the code object's qualified name.
        compile_id: the compile's id (COMPILED), else None.
        compiles: compiles finished so far in this run.
    """

    kind: ProgressKind
    frame_name: str
    compile_id: str | None = None
    compiles: int = 0
