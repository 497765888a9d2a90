"""`dynadbg report`: run a script with `Capture` installed and no stops, then describe every compiled frame.

`run_report(script, argv)` runs the program (its stdout and stderr go where they always go) and returns a
`ReportResult`; `ReportResult.text()` is the summary (`build_summary` → `format.report.summary_text`),
`format_report(frames)` the full text report and `report_json(frames)` the JSON one. Nothing here
prints: the front end writes the program's traceback (if any) to stderr and the report after the program's
output, and exits with `ReportResult.status` (the script's own status).

JSON shape (``report_json``; ``"schema": "dynadbg.report/3"``; keys are always present, unknown values are null).
Schema history: ``/1`` → ``/2`` added ``summary.guards``, ``summary.guard_eval_us``, ``entries[].guard_cost``,
``guard_cost_advice`` and (from ``run_report(...).json()``) ``rank``/``world_size``; ``/2`` → ``/3`` added
``"trace"``, the per-compile summaries of Dynamo's own tracing (its shape is in `dynadbg.core.trace_report`:
instructions traced, attempts, restarts with reasons, the breaking instruction of each graph break); nothing was
removed or renamed, so a reader of ``/1`` or ``/2`` reads ``/3``::

    {
      "schema": "dynadbg.report/3",
      "summary": {"frames": int, "entries": int, "graph_breaks": int, "recompiles": int, "graphs": int,
                  "skipped_frames": int,
                  "misses": int,                   # cache misses of code with entries (recompile_timeline)
                  "recompile_limit_hits": int,     # misses whose compile hit the recompile limit
                  "guards": int,                   # leaf guards over all entries (0 without guard trees)
                  "guard_eval_us": float | null},  # sum of the entries' eval_us (null: none measured)
      "frames": [                                  # first-compile order
        {
          "index": int,                            # position in this list; resume links point here
          "name": str, "filename": str, "firstlineno": int,
          "is_resume": bool,
          "resume_origin": str | null,             # "f (demo.py:10)" for a resume function
          "resume_offset": int | null,             # byte offset in the original code where it resumes
          "skipped": str | null,                   # torch's reason when Dynamo gave up on / skipped the frame
          "source": str | null,                    # the original source (for a resume function: its origin's)
          "original": [Instruction, ...],          # the original bytecode
          "entries": [                             # cache entries, oldest first
            {
              "compile_id": "0/1", "backend": str | null,
              "hits": int,                         # calls served during the run (-1: not counted)
              "invalidated": bool,                 # torch invalidated it (it has no code any more)
              "dropped": bool,                     # no longer in torch's cache (reset, reset_code)
              "replaced": bool,                    # code replaced at the compile stop
              "graphs": [str, ...],                # "__compiled_fn_*" globals its code loads
              "resume_functions": [{"global": "__resume_at_76_3", "name": str | null, "frame": int | null}],
              "code": [Instruction, ...],          # the transformed bytecode
              "guards": str | null,                # the guard tree as text
              "guard_tree": object | null,         # dataclasses.asdict(model.GuardTree), when core.guards exists
              "guard_cost": {                      # core.guard_cost
                "guards": int | null,              # leaf guards of the tree (relational once, epilogue included)
                "eval_us": float | null,           # torch's profile_guard_manager at compile time: µs per
                                                   # evaluation of the whole tree, cold cache ("Guard eval latency")
                "eval_iterations": int | null,     # evaluations torch averaged (Dynamo uses 1)
                "by_source": {group: {"guards": int, "tensors": int}}}  # L['x'], L['self']._modules['enc'], G ...
            }
          ],
          "graphs": [{"name": str, "compile_id": str, "code": str, "graph": str, "node_count": int}],
          "graph_breaks": [
            {"compile_id": str, "reason": str,     # torch's full text, as TORCH_LOGS=graph_breaks prints it
             "short_reason": str,                  # up to "Explanation:", whitespace collapsed
             "filename": str | null, "lineno": int | null, "user_line": str | null,
             "duplicate": bool,                    # torch: "user stack suppressed due to duplicate graph break"
             "trace_id": str,                      # the id torch logs it under ("2/0_1": restart 1 of 2/0)
             "resume_functions": [str, ...]}
          ],
          "recompiles": [{"compile_id": str,       # the id of the new compile
                          "reasons": [str, ...],   # torch's strings, one per failing entry, newest entry first
                          "analysis": Analysis | null}],  # the miss that led to it, checked when it happened
          "guard_diffs": [GuardDiffs, ...]         # consecutive entries in compile order (0/0 → 0/1, ...)
        }
      ],
      "skipped_frames": [{"name": str, "filename": str, "firstlineno": int, "reason": str}],
      "recompile_timeline": [                      # every cache miss of code with entries, in order
        {"seq": int, "frame": int | null, "name": str, "compile_id": str | null, "decision": str,
         "outcome": str, "limit_hit": bool, "torch_reasons": [str, ...], "failing_guards": int}
      ],
      "guard_cost_advice": [                       # torch's documented cuts that fit an entry's guards
        {"frame": int, "compile_id": str, "cut": str, "text": str}]
    }

    Analysis = {                                   # core.recompile.record_json: one cache miss
      "seq": int,                                  # position in recompile_timeline (1-based)
      "compile_id": str | null,                    # the compile that followed (predicted from Dynamo's counter)
      "decision": "recompile" | "eager" | "skip", "action": str | null, "outcome": str,
      "limit": {"entries": int, "counted": int, "total": int, "limit": int, "accumulated_limit": int,
                "exceeds": str | null, "hit_now": bool, "hit_next": bool, "is_recompile": bool} | null,
      "limit_hit": bool,                           # this compile hit torch._dynamo.config.recompile_limit
      "entries_checked": [                         # every old entry, on the inputs of that call, torch's order
        {"compile_id": str, "passed": bool, "invalidated": str | null,
         "first_failure": str | null,              # what torch's check_verbose reports first
         "torch_reason": str | null,               # as torch prints it: "0/0: self.counter == 0  # ..."
         "leaf_count": int, "error": str | null,
         "failing": [FailingGuard, ...]}           # ALL failing guards, not only the first
      ],
      "not_about_inputs": [{"kind": str, "compile_id": str, "text": str}],  # global state, invalidated, ...
      "inputs": [{"name": str, "value": str}],     # the call's locals, summarised
      "guard_diffs": [GuardDiffs, ...],            # of the entries that existed then
      "automatic_dynamic": [                       # dims torch's automatic dynamic shapes makes dynamic in the
         {"source": str, "dim": int,                #   compile that follows ("L['x']", 1)
          "seen": [int, ...], "already": bool}],    # sizes seen there (8, 16); already: an earlier compile did it
      "guard_groups": [                            # failing guards that repeat (one type, one expected/actual pair,
         {"compile_id": str, "guard_type": str,     #   sibling sources; two or more), as the stop says them once
          "expected": str | null, "actual": str | null, "ids": [str, ...], "sources": [str, ...],
          "pattern": str,                           # "L['self']._modules['blocks']._modules[*]._modules['bn'].training"
          "owner_types": [str, ...],                # ["BatchNorm2d"]
          "cause": "train to eval" | "eval to train" | null}],
      "error": str | null
    }
    FailingGuard = {"id": "g6", "guard_type": str, "source": str, "code": [str, ...],
                    "status": "fail" | "no value" | "error", "expected": str | null, "actual": str | null,
                    "reason": str | null, "user_line": str | null, "location": str | null, "note": str | null,
                    "kind": "input" | "global" | "shape" | "global state" | "invalidated" | ...,
                    "torch_reports": bool}        # the one torch's recompile log names
    GuardDiffs = {"old": "0/0", "new": "0/1", "diffs": [{"kind": "added" | "removed" | "changed",
                  "source": str, "guard_type": str, "old_code": str | null, "new_code": str | null}]}

    Instruction = {"index": int, "offset": int, "opname": str, "arg": int | null, "argrepr": str,
                   "lineno": int | null, "jump_target": int | null}

`run_report(...).json()` adds ``"exit_status"`` (int), ``"exception"`` (str | null), ``"disabled"``
(messages for capture hooks missing on this torch), and ``"rank"``/``"world_size"`` (int | null: the torchrun
worker that wrote it, from ``RANK``/``WORLD_SIZE``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from . import compat
from .capture import Capture
from .model import (
    CacheEntryView,
    CodeView,
    CompiledFrameView,
    EntryDiff,
    GraphBreakView,
    LeafGuardView,
    LimitStatus,
    RecompileRecord,
)
from .format import arg_text
from .format.recompile import action_text, outcome_text
from .guards import location_text
from .recompile import RecompileLog, failure_kind
from .report_summary import (
    DistinctBreak,
    EntryCostLine,
    FrameSummary,
    Progress,
    ProgressKind,
    RecompileLine,
    ReportSummary,
    distinct_breaks,
    dynamic_dims,
    look_at_first,
)
from .runner import ExitResult, check_script, run_script

SCHEMA = "dynadbg.report/3"
SUMMARY_SCHEMA = "dynadbg.report-summary/1"
#: The summary's line width when stdout is no terminal (the CLI uses the terminal's width when it is one).
SUMMARY_WIDTH = 120
#: The full report cuts a line longer than this (FX signatures of big models run to thousands of characters).
FULL_WIDTH = 1000
NO_FRAMES = "no frame was compiled by torch.compile"

#: (name, filename, firstlineno, reason) — a frame Dynamo skipped before any compile attempt.
SkippedFrame = tuple[str, str, int, str]


@dataclass(frozen=True)
class ReportResult:
    """What `run_report` produced.

    Attributes:
        exit: how the script ended (its status, traceback if it raised).
        frames: every compiled frame, with guard trees.
        skipped_frames: frames Dynamo skipped without trying to compile them (no tensors, ...).
        disabled: messages for capture hooks this torch lacks (that part of the report is missing).
        errors: errors inside the capture's recording code (never raised into the program).
        recompile_records: every cache miss of code with entries, analysed when it happened
            (`recompile.RecompileRecord`, in order).
        guard_costs: torch's guard-eval latency per compile id (`guard_cost.EntryCost`).
        trace: per compile id, the summary of Dynamo's tracing (`trace_model.TraceCompileView`; empty when this
            torch lacks the trace hooks).
    """

    exit: ExitResult
    frames: tuple[CompiledFrameView, ...]
    skipped_frames: tuple[SkippedFrame, ...] = ()
    disabled: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    recompile_records: tuple[Any, ...] = ()
    guard_costs: Any = None
    trace: tuple[Any, ...] = ()

    @property
    def status(self) -> int:
        """The script's exit status (what ``dynadbg report`` exits with)."""
        return self.exit.status

    def text(self, *, full: bool = False, frame: int | None = None, width: int | None = None) -> str:
        """The text report: the summary (default), today's whole detail (`full`), or the detail of one frame
        (`frame`: its 1-based number, as the summary shows it; `ValueError` for a number out of range).

        `width`: lines longer than this are cut with a visible marker (0: never; None: `SUMMARY_WIDTH` for the
        summary, `FULL_WIDTH` for the detail).
        """
        if frame is not None:
            if not 1 <= frame <= len(self.frames):
                raise ValueError(f"no frame {frame}: this report has frames 1..{len(self.frames)}"
                                 if self.frames else f"no frame {frame}: nothing was compiled")
            return format_report(self.frames, recompile_records=self.recompile_records,
                                 guard_costs=self.guard_costs, only=frame,
                                 width=FULL_WIDTH if width is None else width)
        if full:
            return format_report(self.frames, skipped_frames=self.skipped_frames, disabled=self.disabled,
                                 recompile_records=self.recompile_records, guard_costs=self.guard_costs,
                                 trace=self.trace, width=FULL_WIDTH if width is None else width)
        from .format.report import summary_text

        return summary_text(self.summary(), width=SUMMARY_WIDTH if width is None else width)

    def summary(self) -> "ReportSummary":
        """The summary as data (`report_summary.ReportSummary`)."""
        return build_summary(self.frames, recompile_records=self.recompile_records, guard_costs=self.guard_costs,
                             skipped_frames=self.skipped_frames, disabled=self.disabled)

    def summary_json(self) -> dict[str, Any]:
        """``report --json --summary``: the summary as JSON-able data (shape in `summary_json`)."""
        data = summary_json(self.summary())
        data["exit_status"] = self.exit.status
        data["exception"] = self.exit.exception
        rank = compat.torchrun_rank()
        data["rank"], data["world_size"] = rank if rank is not None else (None, None)
        return data

    def json(self) -> dict[str, Any]:
        data = report_json(self.frames, skipped_frames=self.skipped_frames, recompile_records=self.recompile_records,
                           guard_costs=self.guard_costs)
        from .trace_report import trace_json

        data["trace"] = trace_json(self.trace)
        data["exit_status"] = self.exit.status
        data["exception"] = self.exit.exception
        data["disabled"] = list(self.disabled)
        rank = compat.torchrun_rank()
        data["rank"], data["world_size"] = rank if rank is not None else (None, None)
        return data


def run_report(script: str, argv: Sequence[str] = (), *, guards: bool = True,
               progress: Callable[[Progress], None] | None = None) -> ReportResult:
    """Run `script` as ``__main__`` with `argv`, recording every compile; no stops.

    Hit counts come from a bytecode-debugger callback installed for the run. Hooks and the callback are
    restored when the script ends, however it ends. Every cache miss of code that has entries is analysed when
    it happens (`recompile.RecompileLog`: all failing guards of every entry on that call's inputs), then Dynamo
    recompiles as usual.

    Args:
        guards: build each entry's guard tree (set False for a faster report without guards).
        progress: called on the program's thread after each compile and at each cache miss of code with
            entries (`report_summary.Progress`); an exception it raises is dropped, never raised into the program.

    Raises:
        ScriptError: the script cannot be run (missing, a directory, unreadable).
    """
    path = check_script(script)
    compat.load()
    from .guard_cost import GuardCostLog

    from .trace import TraceRecorder

    log = RecompileLog()
    costs = GuardCostLog()
    # Dynamo's tracing, light records (its patches go under the capture's, and come off after them)
    tracer = TraceRecorder().install()
    on_compiled: Callable[[Any], None] = log.on_compiled
    on_cache_miss: Callable[[Any], None] = log.on_cache_miss
    if progress is not None:
        on_compiled, on_cache_miss = _with_progress(log, progress)
    capture = Capture(on_compiled=on_compiled, on_cache_miss=on_cache_miss, count_hits=True)
    capture.install()
    costs.install()
    try:
        result = run_script(path, list(argv))
    finally:
        costs.uninstall()
        capture.uninstall()
        tracer.uninstall()
    return ReportResult(
        exit=result,
        frames=tuple(capture.frames(guards=guards)),
        skipped_frames=tuple(capture.skipped_frames()),
        disabled=tuple(capture.disabled),
        errors=tuple(capture.errors),
        recompile_records=log.records(),
        guard_costs=costs.costs(),
        trace=tracer.compile_views() if tracer.available else (),
    )


def _with_progress(log: RecompileLog, progress: Callable[[Progress], None]) -> tuple[Callable[[Any], None],
                                                                                   Callable[[Any], None]]:
    """`log`'s compile and cache-miss hooks, each also telling `progress`."""
    compiles = [0]

    def tell(event: Progress) -> None:
        try:
            progress(event)
        except Exception:  # noqa: BLE001 - a progress line must never break the program
            pass

    def on_compiled(event: Any) -> None:
        log.on_compiled(event)
        compiles[0] += 1
        tell(Progress(ProgressKind.COMPILED, event.frame_name, str(event.compile_id), compiles[0]))

    def on_cache_miss(event: Any) -> None:
        tell(Progress(ProgressKind.CACHE_MISS, event.frame_name, None, compiles[0]))
        return log.on_cache_miss(event)

    return on_compiled, on_cache_miss


# --------------------------------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------------------------------


def build_summary(frames: Sequence[CompiledFrameView], *, recompile_records: Sequence[Any] = (),
                  guard_costs: Any = None, skipped_frames: Iterable[SkippedFrame] = (),
                  disabled: Iterable[str] = ()) -> ReportSummary:
    """The report's summary (`report_summary.ReportSummary`): per frame its entries with hits and guard cost,
    its recompiles with torch's first reason, the distinct graph breaks it took; and what to look at first."""
    from .guard_cost import advice

    frames = list(frames)
    every_break = distinct_breaks(frames)
    rows = []
    for number, frame in enumerate(frames, 1):
        mine = [r for r in recompile_records if r.code_key == frame.key]
        entries = []
        for entry in frame.entries:
            cost = _entry_cost(entry, guard_costs)
            cuts = advice(cost["by_source"], entries=len(frame.entries), total=cost["guards"]) if cost["guards"] else []
            made_by = next((r for r in reversed(mine) if r.compile_id == entry.compile_id), None)
            dynamic = dynamic_dims(entry.guard_tree, made_by.auto_dynamic if made_by is not None else ())
            entries.append(EntryCostLine(entry.compile_id, entry.hits, cost["guards"], cost["eval_us"], tuple(cuts),
                                         dynamic))
        recompiles = []
        for rec in frame.recompiles:
            record = next((r for r in reversed(mine) if r.compile_id == rec.compile_id), None)
            failing = sum(len(v.failing) for v in record.entries) if record is not None else None
            recompiles.append(RecompileLine(rec.compile_id, (rec.reasons[0].splitlines() or [""])[0]
                                            if rec.reasons else None, max(0, len(rec.reasons) - 1), failing,
                                            bool(record is not None and record.limit_hit)))
        compiled = {r.compile_id for r in frame.recompiles}
        for record in mine:  # a miss whose compile hit the limit made no entry: torch logs no recompile for it
            if record.limit_hit and record.compile_id not in compiled:
                reasons = record.torch_reasons
                recompiles.append(RecompileLine(record.compile_id or "?", reasons[0] if reasons else None,
                                                max(0, len(reasons) - 1),
                                                sum(len(v.failing) for v in record.entries), True))
        keys = {b.key for b in distinct_breaks([frame])}
        rows.append(FrameSummary(number, frame.name, frame.filename, frame.firstlineno, frame.is_resume,
                                 frame.resume_origin, frame.skipped, tuple(entries), tuple(recompiles),
                                 tuple(b for b in every_break if b.key in keys),
                                 len(frame.graph_breaks)))
    return ReportSummary(
        frames=tuple(rows), breaks=every_break, look_at=look_at_first(rows, every_break),
        skipped_frames=tuple(skipped_frames), disabled=tuple(disabled),
        graph_breaks=sum(len(f.graph_breaks) for f in frames),
        limit_hits=sum(1 for r in recompile_records if r.limit_hit))


def summary_json(summary: ReportSummary) -> dict[str, Any]:
    """``report --json --summary`` (schema ``dynadbg.report-summary/1``, documented in the README)."""
    def brk(b: DistinctBreak) -> dict[str, Any]:
        return {"filename": b.filename, "lineno": b.lineno, "user_line": b.user_line, "reason": b.reason,
                "frames": list(b.frames), "compile_ids": list(b.compile_ids), "torch_count": b.count}

    def rec(r: RecompileLine) -> dict[str, Any]:
        return {"compile_id": r.compile_id, "reason": r.reason, "more_reasons": r.more_reasons,
                "failing_guards": r.failing_guards, "limit_hit": r.limit_hit}

    index = {b.key: i for i, b in enumerate(summary.breaks)}
    return {
        "schema": SUMMARY_SCHEMA,
        "totals": {"frames": len(summary.frames), "entries": summary.entries, "recompiles": summary.recompiles,
                   "graph_breaks": len(summary.breaks), "torch_graph_breaks": summary.graph_breaks,
                   "recompile_limit_hits": summary.limit_hits, "guards": summary.guards,
                   "guard_eval_us": round(summary.guard_eval_us, 3) if summary.guard_eval_us is not None else None,
                   "skipped_frames": len(summary.skipped_frames)},
        "frames": [{"number": f.number, "name": f.name, "filename": f.filename, "firstlineno": f.firstlineno,
                    "is_resume": f.is_resume, "resume_origin": f.resume_origin, "skipped": f.skipped,
                    "hits": f.hits, "guards": f.guards,
                    "guard_eval_us": round(f.eval_us, 3) if f.eval_us is not None else None,
                    "entries": [{"compile_id": e.compile_id, "hits": e.hits, "guards": e.guards,
                                 "eval_us": e.eval_us, "cuts": list(e.cuts),
                                 "dynamic": [{"source": d.source, "dims": list(d.dims),
                                              "automatic": {str(dim): list(sizes) for dim, sizes in d.seen}}
                                             for d in e.dynamic]} for e in f.entries],
                    "recompiles": [rec(r) for r in f.recompiles],
                    "graph_breaks": [index[b.key] for b in f.breaks], "torch_graph_breaks": f.graph_breaks}
                   for f in summary.frames],
        "graph_breaks": [brk(b) for b in summary.breaks],
        "look_at": [{"kind": look.kind.value, "frame": look.frame,
                     "graph_break": index[look.brk.key] if look.brk is not None else None,
                     "compile_id": (look.entry.compile_id if look.entry is not None
                                    else look.recompiles[0].compile_id if look.recompiles else None)}
                    for look in summary.look_at],
        "skipped_frames": [{"name": n, "filename": f, "firstlineno": line, "reason": r}
                           for n, f, line, r in summary.skipped_frames],
        "disabled": list(summary.disabled),
    }


# --------------------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------------------

_RULE = "=" * 100
_THIN = "-" * 100


def format_listing(code: CodeView | None, indent: str = "    ") -> list[str]:
    """One line per instruction: index, offset, opname, argument (``>>`` marks a jump target)."""
    if code is None:
        return [f"{indent}(no code: the entry was invalidated)"]
    lines = [f"{indent}{'idx':>5} {'offset':>6}    {'opname':<28} argument"]
    for ins in code.instructions:
        mark = ">>" if ins.is_jump_target else "  "
        lines.append(f"{indent}{ins.index:>5} {ins.offset:>6} {mark} {ins.opname:<28} {arg_text(ins, raw=True)}"
                     .rstrip())
    return lines


def _indent(text: str, prefix: str) -> list[str]:
    return [f"{prefix}{line}".rstrip() for line in text.rstrip("\n").splitlines()] or [prefix.rstrip()]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names_by_key(frames: Sequence[CompiledFrameView]) -> dict[int, tuple[int, CompiledFrameView]]:
    return {f.key: (i, f) for i, f in enumerate(frames)}


def _resume_line(entry: CacheEntryView, by_key: dict[int, tuple[int, CompiledFrameView]]) -> str:
    parts = []
    keys = entry.resume_keys or (None,) * len(entry.resume_functions)
    for name, key in zip(entry.resume_functions, keys):
        target = by_key.get(key) if key is not None else None
        parts.append(f"{name} -> {target[1].name} [frame {target[0] + 1}]" if target else name)
    return ", ".join(parts)


def _where(brk: GraphBreakView) -> str:
    if brk.filename is None:
        return "(location unknown)"
    return f"{brk.filename}:{brk.lineno}"


def summary_counts(frames: Sequence[CompiledFrameView]) -> dict[str, int]:
    """Counts for the summary line / JSON summary."""
    return {
        "frames": len(frames),
        "entries": sum(len(f.entries) for f in frames),
        "graph_breaks": sum(len(f.graph_breaks) for f in frames),
        "recompiles": sum(len(f.recompiles) for f in frames),
        "graphs": sum(len(f.graphs) for f in frames),
    }


def format_report(
    frames: Sequence[CompiledFrameView],
    *,
    skipped_frames: Iterable[SkippedFrame] = (),
    disabled: Iterable[str] = (),
    recompile_records: Sequence[Any] = (),
    guard_costs: Any = None,
    only: int | None = None,
    width: int = 0,
    trace: Sequence[Any] = (),
) -> str:
    """The full text report: one section per compiled frame, then skipped frames, the recompile timeline, then
    a summary line. `recompile_records` (`recompile.RecompileRecord`s) add every failing guard of every entry to
    each recompile. `only`: the section of that frame alone (1-based). `width`: a longer line is cut with a
    marker saying how many characters were left out (`format.report.fit_long`; 0: never)."""
    from .format.report import fit_long

    frames = list(frames)
    skipped_frames = list(skipped_frames)
    out: list[str] = [_RULE, "dynadbg report", _RULE]
    for msg in disabled:
        out.append(f"note: {msg}")
    if not frames:
        out.append(NO_FRAMES)
    by_key = _names_by_key(frames)
    for number, frame in enumerate(frames, 1):
        if only is not None and number != only:
            continue
        out.extend(_format_frame(number, frame, by_key, guard_costs))
        out.extend(_format_recompile_insight(frame, recompile_records))
    if only is not None:
        return "\n".join(fit_long(line, width) for line in out) + "\n"
    if skipped_frames:
        out += ["", _THIN, "frames Dynamo skipped without compiling", _THIN]
        for name, filename, line, reason in skipped_frames:
            out.append(f"  {name} ({filename}:{line}): {reason}")
    if recompile_records:
        from .format.recompile import timeline_lines

        out += ["", _THIN, "recompile timeline (every cache miss of code with entries, in order)", _THIN]
        out += timeline_lines(recompile_records)[1:]
    if trace:
        from .trace_report import trace_lines

        out += ["", _THIN] + trace_lines(trace)[:1] + [_THIN] + trace_lines(trace)[1:]
    counts = summary_counts(frames)
    distinct = distinct_breaks(frames)
    out += [
        "",
        _RULE,
        "summary: "
        + ", ".join(
            [
                _plural(counts["frames"], "frame"),
                _plural(counts["entries"], "cache entry").replace("entrys", "entries"),
                _plural(counts["graph_breaks"], "graph break") + (
                    f" ({len(distinct)} distinct)" if len(distinct) != counts["graph_breaks"] else ""),
                _plural(counts["recompiles"], "recompile"),
            ]
        ),
    ]
    return "\n".join(fit_long(line, width) for line in out) + "\n"


def _format_recompile_insight(frame: CompiledFrameView, records: Sequence[Any]) -> list[str]:
    """Per frame: every failing guard of every entry for each recompile, and the guard diffs of its entries."""
    from .format.recompile import auto_dynamic_lines, diffs_text, failing_text, limit_text
    from .recompile import frame_guard_diffs

    out: list[str] = []
    mine = [r for r in records if r.code_key == frame.key]
    if mine:
        out += ["", _THIN, "recompiles, every failing guard (each entry checked on the inputs of that call):", _THIN]
        for r in mine:
            flag = "  [RECOMPILE LIMIT HIT]" if r.limit_hit else ""
            out.append(f"  [{r.compile_id or 'not compiled'}] {r.decision.value}; {outcome_text(r)}{flag}")
            out += _indent(failing_text(r), "    ")
            for f in r.non_input:
                out.append(f"    not about the inputs: {f.compile_id}: [{f.kind}] {f.text}")
            out += [f"    automatic dynamic: {line}" for line in auto_dynamic_lines(r)]
            if r.limit is not None:
                out.append(f"    recompile limit: {limit_text(r.limit)}")
    diffs = frame_guard_diffs(frame) if len(frame.entries) > 1 else ()
    if diffs:
        out += ["", _THIN, "guard diffs of consecutive entries:", _THIN]
        out += _indent(diffs_text(diffs, max_per_pair=50), "  ")
    return out


def _format_frame(number: int, frame: CompiledFrameView, by_key: dict[int, tuple[int, CompiledFrameView]],
                  guard_costs: Any = None) -> list[str]:
    out = ["", _RULE]
    kind = "resume function" if frame.is_resume else "frame"
    out.append(f"[{number}] {kind} {frame.name}  ({frame.filename}:{frame.firstlineno})")
    if frame.is_resume:
        at = f" at offset {frame.resume_offset}" if frame.resume_offset is not None else ""
        out.append(f"    resumes {frame.resume_origin}{at}")
    ids = ", ".join(e.compile_id for e in frame.entries) or "none"
    out.append(f"    cache entries: {ids}")
    if frame.skipped:
        out.append(f"    skipped by Dynamo: {frame.skipped}")
    out.append(_RULE)
    if frame.source:
        out += ["", "source" + (" (of the resumed function):" if frame.is_resume else ":")]
        out += _indent(frame.source, "    ")
    out += ["", "original bytecode:"]
    out += format_listing(frame.original)
    for entry in frame.entries:
        out += ["", _THIN]
        flags = [f"backend {entry.backend or '?'}",
                 "hits not counted" if entry.hits < 0 else _plural(entry.hits, "hit")]
        if entry.invalidated:
            flags.append("invalidated")
        if entry.dropped:
            flags.append("no longer in torch's cache")
        if entry.replaced:
            flags.append("code replaced at the compile stop")
        out.append(f"cache entry {entry.compile_id}  ({', '.join(flags)})")
        out.append(_THIN)
        if entry.graphs:
            out.append(f"  graphs: {', '.join(entry.graphs)}")
        if entry.resume_functions:
            out.append(f"  resume functions: {_resume_line(entry, by_key)}")
        out += ["", "  transformed bytecode:"]
        out += format_listing(entry.code)
        if entry.guards_text is not None:
            out += ["", "  guards:"]
            out += _indent(entry.guards_text, "    ")
        if entry.guard_tree is not None or guard_costs:
            from .guard_cost import cost_text

            out += [""] + cost_text(_entry_cost(entry, guard_costs), entries=len(frame.entries))
        for graph in frame.graphs:
            if graph.name in entry.graphs:
                out += ["", f"  FX graph {graph.name} ({_plural(graph.node_count, 'node')}):"]
                out += _indent(graph.code.strip("\n"), "    ")
    if frame.graph_breaks:
        out += ["", _THIN, "graph breaks:", _THIN]
        for brk in frame.graph_breaks:
            dup = " (duplicate: torch suppresses its user stack)" if brk.duplicate else ""
            out.append(f"  [{brk.logged_id}] at {_where(brk)}{dup}")
            if brk.user_line:
                out.append(f"      {brk.user_line}")
            out.append(f"    reason: {brk.summary}")
            out += _indent(brk.reason, "      | ")
            if brk.resume_functions:
                out.append(f"    resumes in: {', '.join(brk.resume_functions)}")
    if frame.recompiles:
        out += ["", _THIN, "recompiles:", _THIN]
        for rec in frame.recompiles:
            out.append(f"  [{rec.compile_id}] recompiling {frame.name}, triggered by the following guard failure(s):")
            for reason in rec.reasons:
                first, *rest = reason.splitlines() or [""]
                out.append(f"    - {first}")
                out += [f"      {line}".rstrip() for line in rest]
            if not rec.reasons:
                out.append("    - (torch gave no reason)")
    return out


# --------------------------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------------------------


def _listing_json(code: CodeView | None) -> list[dict[str, Any]] | None:
    if code is None:
        return None
    return [
        {"index": i.index, "offset": i.offset, "opname": i.opname, "arg": i.arg, "argrepr": i.argrepr,
         "lineno": i.lineno, "jump_target": i.jump_target}
        for i in code.instructions
    ]


def _jsonable(value: Any) -> Any:
    if isinstance(value, LeafGuardView):
        # a leaf's origin as the report has always written it: the source line, then "file:line in fn"
        out = {}
        for f in dataclasses.fields(value):
            if f.name == "location":
                out["user_line"] = value.user_line
                out["location"] = location_text(value.location) or None
            else:
                out[f.name] = _jsonable(getattr(value, f.name))
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name != "obj"}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value.value if hasattr(value, "value") and isinstance(value, str) else value
    return repr(value)


def report_json(
    frames: Sequence[CompiledFrameView], *, skipped_frames: Iterable[SkippedFrame] = (),
    recompile_records: Sequence[Any] = (), guard_costs: Any = None,
) -> dict[str, Any]:
    """The report as plain JSON-able data (shape in this module's docstring).

    Args:
        guard_costs: compile id -> `guard_cost.EntryCost` (torch's guard-eval latency); None: not measured.
    """
    from .guard_cost import advice, advice_text
    from .recompile import frame_guard_diffs

    advice_rows: list[dict[str, Any]] = []

    frames = list(frames)
    skipped_frames = list(skipped_frames)
    by_key = _names_by_key(frames)
    out_frames: list[dict[str, Any]] = []
    for index, frame in enumerate(frames):
        entries = []
        for entry in frame.entries:
            keys = entry.resume_keys or (None,) * len(entry.resume_functions)
            resumes = []
            for name, key in zip(entry.resume_functions, keys):
                target = by_key.get(key) if key is not None else None
                resumes.append({"global": name, "name": target[1].name if target else None,
                                "frame": target[0] if target else None})
            entries.append({
                "compile_id": entry.compile_id,
                "backend": entry.backend,
                "hits": entry.hits,
                "invalidated": entry.invalidated,
                "dropped": entry.dropped,
                "replaced": entry.replaced,
                "graphs": list(entry.graphs),
                "resume_functions": resumes,
                "code": _listing_json(entry.code),
                "guards": entry.guards_text,
                "guard_tree": _jsonable(entry.guard_tree) if entry.guard_tree is not None else None,
            })
            cost = _entry_cost(entry, guard_costs, entries[-1]["guard_tree"])
            entries[-1]["guard_cost"] = cost
            for cut in advice(cost["by_source"], entries=len(frame.entries), total=cost["guards"]):
                advice_rows.append({"frame": index, "compile_id": entry.compile_id, "cut": cut,
                                    "text": advice_text(cut)})
        out_frames.append({
            "index": index,
            "name": frame.name,
            "filename": frame.filename,
            "firstlineno": frame.firstlineno,
            "is_resume": frame.is_resume,
            "resume_origin": frame.resume_origin,
            "resume_offset": frame.resume_offset,
            "skipped": frame.skipped,
            "source": frame.source,
            "original": _listing_json(frame.original),
            "entries": entries,
            "graphs": [{"name": g.name, "compile_id": g.compile_id, "code": g.code, "graph": g.graph_text,
                        "node_count": g.node_count} for g in frame.graphs],
            "graph_breaks": [{"compile_id": b.compile_id, "reason": b.reason, "short_reason": b.summary,
                              "filename": b.filename, "lineno": b.lineno, "user_line": b.user_line,
                              "duplicate": b.duplicate, "trace_id": b.logged_id,
                              "resume_functions": list(b.resume_functions)}
                             for b in frame.graph_breaks],
            "recompiles": [{"compile_id": r.compile_id, "reasons": list(r.reasons),
                            "analysis": _analysis_json(recompile_records, frame.key, r.compile_id, record_json)}
                           for r in frame.recompiles],
            "guard_diffs": [diff_json(d) for d in frame_guard_diffs(frame)] if len(frame.entries) > 1 else [],
        })
    summary: dict[str, Any] = summary_counts(frames)  # the counts, then figures that are not counts
    summary["skipped_frames"] = len(skipped_frames)
    summary["misses"] = len(recompile_records)
    summary["recompile_limit_hits"] = sum(1 for r in recompile_records if r.limit_hit)
    all_costs = [e["guard_cost"] for f in out_frames for e in f["entries"]]
    summary["guards"] = sum(c["guards"] or 0 for c in all_costs)
    timed = [c["eval_us"] for c in all_costs if c["eval_us"] is not None]
    summary["guard_eval_us"] = round(sum(timed), 3) if timed else None
    return {
        "schema": SCHEMA,
        "summary": summary,
        "frames": out_frames,
        "skipped_frames": [{"name": n, "filename": f, "firstlineno": line, "reason": r}
                           for n, f, line, r in skipped_frames],
        "recompile_timeline": timeline_json(recompile_records, {f.key: i for i, f in enumerate(frames)}),
        "guard_cost_advice": advice_rows,
    }


def _entry_cost(entry: CacheEntryView, guard_costs: Any, tree_json: Any = None) -> dict[str, Any]:
    """`guard_cost.entry_cost_json` of one entry (its tree as JSON, torch's latency for its compile id)."""
    from .guard_cost import entry_cost_json

    if tree_json is None and entry.guard_tree is not None:
        tree_json = _jsonable(entry.guard_tree)
    cost = guard_costs.get(entry.compile_id) if guard_costs else None
    return entry_cost_json(tree_json, cost)


def _analysis_json(records: Sequence[Any], code_key: int, compile_id: str, record_json: Any) -> dict[str, Any] | None:
    """The analysis of the miss whose compile got `compile_id` (the last such record), else None."""
    found = None
    for r in records:
        if r.code_key == code_key and r.compile_id == compile_id:
            found = r
    return record_json(found) if found is not None else None


# --------------------------------------------------------------------------------------------------------------
# JSON of recompile records
# --------------------------------------------------------------------------------------------------------------


def leaf_json(leaf: LeafGuardView, torch_leaf: str | None = None) -> dict[str, Any]:
    return {
        "id": leaf.id, "guard_type": leaf.guard_type, "source": leaf.source, "code": list(leaf.code),
        "status": leaf.status.value, "expected": leaf.expected, "actual": leaf.actual, "reason": leaf.reason,
        "user_line": leaf.user_line, "location": location_text(leaf.location) or None, "note": leaf.note,
        "kind": failure_kind(leaf),
        "torch_reports": leaf.id == torch_leaf,
    }


def diff_json(d: EntryDiff) -> dict[str, Any]:
    return {"old": d.old, "new": d.new,
            "diffs": [{"kind": x.kind.value, "source": x.source, "guard_type": x.guard_type, "old_code": x.old_code,
                       "new_code": x.new_code} for x in d.diffs]}


def limit_json(limit: LimitStatus | None) -> dict[str, Any] | None:
    if limit is None:
        return None
    return {"entries": limit.entries, "counted": limit.counted, "total": limit.total, "limit": limit.limit,
            "accumulated_limit": limit.accumulated_limit, "exceeds": limit.exceeds, "hit_now": limit.hit_now,
            "hit_next": limit.hit_next, "is_recompile": limit.is_recompile, "limit_source": limit.limit_source,
            "raises": limit.raises}


def record_json(record: RecompileRecord) -> dict[str, Any]:
    """One record as JSON-able data (shape in `dynadbg.core.report`'s docstring)."""
    return {
        "seq": record.seq,
        "compile_id": record.compile_id,
        "decision": record.decision.value,
        "action": action_text(record) or None,
        "outcome": outcome_text(record),
        "limit": limit_json(record.limit),
        "limit_hit": record.limit_hit,
        "entries_checked": [
            {"compile_id": v.compile_id, "passed": v.passed, "invalidated": v.invalidated,
             "first_failure": v.first_failure, "torch_reason": v.torch_reason, "leaf_count": v.leaf_count,
             "error": v.error, "failing": [leaf_json(leaf, v.torch_leaf) for leaf in v.failing]}
            for v in record.entries
        ],
        "not_about_inputs": [{"kind": f.kind, "compile_id": f.compile_id, "text": f.text} for f in record.non_input],
        "inputs": [{"name": n, "value": t} for n, t in record.inputs],
        "guard_diffs": [diff_json(d) for d in record.diffs],
        "automatic_dynamic": [{"source": d.source, "dim": d.dim, "seen": list(d.seen), "already": d.already}
                              for d in record.auto_dynamic],
        "guard_groups": [{"compile_id": g.compile_id, "guard_type": g.guard_type, "expected": g.expected,
                          "actual": g.actual, "ids": list(g.leaf_ids), "sources": list(g.sources),
                          "pattern": g.pattern, "owner_types": list(g.owner_types),
                          "cause": g.cause.value if g.cause is not None else None} for g in record.groups],
        "error": record.error,
    }


def timeline_json(records: Sequence[RecompileRecord], frame_index: dict[int, int]) -> list[dict[str, Any]]:
    """The report's ``recompile_timeline``: one row per miss (`frame_index`: code key → report frame index)."""
    return [{"seq": r.seq, "frame": frame_index.get(r.code_key), "name": r.frame_name, "compile_id": r.compile_id,
             "decision": r.decision.value, "outcome": outcome_text(r), "limit_hit": r.limit_hit,
             "torch_reasons": list(r.torch_reasons), "failing_guards": sum(len(v.failing) for v in r.entries)}
            for r in records]
