"""The report's per-compile summaries of Dynamo's tracing (``dynadbg report`` text and JSON, schema ``/3``).

Made from the trace recorder's light records (`trace.TraceRecorder`, installed for the whole run): for each
compile id, the instructions Dynamo traced, each attempt with its outcome, the restarts with torch's reasons, the
breaking instruction of each graph break (its path, what Dynamo emitted for it), and the graph cuts.

JSON (``report_json()["trace"]``, one object per compile id, in compile order)::

    {"compile_id": "0/0", "name": str, "filename": str, "firstlineno": int,
     "instructions": int,                        # traced over every attempt, every inline depth
     "restarts": int,
     "attempts": [{"attempt": int, "instructions": int, "max_depth": int,
                   "outcome": "done" | "restart" | "error" | "running",
                   "replay_until": int | null,   # a re-trace replays the previous attempt up to this step
                   "restart": {"reason": str, "at_step": int | null, "line": int | null} | null,
                   "error": {"type": str, "message": str, "gb_type": str | null, "fullgraph": bool,
                             "skip_frame": bool} | null}],
     "breaks": [{"attempt": int, "path": "call" | "jump" | "step" | "frame" | "other",
                 "reason": str, "gb_type": str | null, "filename": str | null, "line": int | null,
                 "instruction": {"opname": str, "argrepr": str, "code": str, "line": int | null, "depth": int,
                                 "offset": int | null} | null,   # the breaking instruction (innermost)
                 "restart": bool, "eager": str | null,          # the instruction run eagerly at depth 0
                 "eager_line": int | null,                      # its line in the frame being compiled
                 "resume_function": str | null,                 # the resume function Dynamo made for the rest
                 "returns": bool,                               # no resume function: the frame returns the
                                                                # eager result right away
                 "graphs": [str, ...]}],
     "cuts": [{"attempt": int, "reason": str, "nodes": int, "graph_break": bool}],
     "evicted": int}                             # steps dropped to stay within the trace bounds
"""

from __future__ import annotations

from typing import Any, Sequence

from .format.trace import report_lines
from .trace_model import TraceBreak, TraceCompileView


def _break_json(b: TraceBreak) -> dict[str, Any]:
    step = b.step
    return {
        "attempt": b.attempt, "path": b.path.value, "reason": b.reason, "gb_type": b.gb_type,
        "filename": b.filename, "line": b.line,
        "instruction": None if step is None else {
            "opname": step.opname, "argrepr": step.argrepr, "code": step.code_name, "line": step.line,
            "depth": step.depth, "offset": step.user_offset},
        "restart": b.plan.restart, "eager": b.plan.eager, "eager_line": b.plan.eager_line,
        "resume_function": b.plan.resume_name, "returns": b.plan.returns,
        "graphs": list(b.plan.graph_names),
    }


def trace_json(compiles: Sequence[TraceCompileView]) -> list[dict[str, Any]]:
    """The ``"trace"`` list of the JSON report (shape in the module docstring)."""
    out = []
    for c in compiles:
        attempts = []
        for a in c.attempts:
            attempts.append({
                "attempt": a.attempt, "instructions": a.steps, "max_depth": a.max_depth, "outcome": a.outcome,
                "replay_until": a.replay_until,
                "restart": None if a.restart is None else {"reason": a.restart.reason, "at_step": a.restart.at_ordinal,
                                                           "line": a.restart.line},
                "error": None if a.error is None else {"type": a.error.exc_type, "message": a.error.message,
                                                       "gb_type": a.error.gb_type, "fullgraph": a.error.fullgraph,
                                                       "skip_frame": a.error.skip_frame},
            })
        out.append({
            "compile_id": c.compile_id, "name": c.code_name, "filename": c.filename, "firstlineno": c.firstlineno,
            "instructions": c.steps, "restarts": len(c.restarts), "attempts": attempts,
            "breaks": [_break_json(b) for b in c.breaks],
            "cuts": [{"attempt": cut.attempt, "reason": cut.reason, "nodes": cut.nodes, "graph_break": cut.graph_break}
                     for cut in c.cuts],
            "evicted": c.evicted,
        })
    return out


def trace_lines(compiles: Sequence[TraceCompileView]) -> list[str]:
    """The report's text section: a head line, then one block per compile id (`format.trace.report_lines`)."""
    return report_lines(compiles)
