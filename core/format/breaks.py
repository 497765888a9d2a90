"""Plain text of a graph break that no resume function follows: where the frame broke, why, and what Dynamo did
instead (ran the frame eagerly, or skipped the resume function), from `capture.EagerFallbackEvent`."""

from __future__ import annotations

from typing import Any

from ..values import cut
from .recompile import short_reason


def eager_fallback_text(event: Any) -> str:
    """The graph-break stop's block for an eager fallback (`capture.EagerFallbackEvent`)."""
    code = event.code
    lines = []
    if event.resume_of is not None:
        origin = event.resume_of
        lines.append(f"{code.co_name} (the resume function of {origin.co_name}, "
                     f"{origin.co_filename.rsplit('/', 1)[-1]}:{origin.co_firstlineno}) is not compiled: "
                     f"{cut(event.skip_reason, 200)}")
        lines.append("what Dynamo did instead: the rest of the frame after the break runs as plain Python, this "
                     "call and every later one (no generated code runs for it)")
    else:
        lines.append(f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}) is not compiled: "
                     f"{cut(event.skip_reason, 200)}")
        lines.append("what Dynamo did instead: no resume function could be made at this break, so the whole frame "
                     "runs as plain Python, this call and every later one (functions it calls may still compile)")
    for brk in event.breaks:
        where = f"{brk.filename}:{brk.lineno}" if brk.filename else "(location unknown)"
        lines.append(f"graph break [{brk.logged_id}] at {where}")
        if brk.user_line:
            lines.append(f"  {brk.lineno} | {brk.user_line.strip()}")
        lines.append(f"reason: {short_reason(brk.reason)}")
    return "\n".join(lines)
