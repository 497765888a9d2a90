"""Plain text of a graph break that no resume function follows: where the frame broke, why, and what Dynamo did
instead (ran the frame eagerly, or skipped the resume function), from `model.EagerFallback`."""

from __future__ import annotations

from ..model import EagerFallback
from ..values import cut, one_line


def eager_fallback_text(fallback: EagerFallback) -> str:
    """The graph-break stop's block for an eager fallback (`Stop.eager_fallback`)."""
    short = fallback.filename.rsplit("/", 1)[-1]
    lines = []
    if fallback.resume_of is not None:
        name, filename, first = fallback.resume_of
        lines.append(f"{fallback.code_name} (the resume function of {name}, {filename.rsplit('/', 1)[-1]}:{first}) "
                     f"is not compiled: {cut(one_line(fallback.skip_reason), 200)}")
        lines.append("what Dynamo did instead: the rest of the frame after the break runs as plain Python, this "
                     "call and every later one (no generated code runs for it)")
    else:
        lines.append(f"{fallback.code_name} ({short}:{fallback.firstlineno}) is not compiled: "
                     f"{cut(one_line(fallback.skip_reason), 200)}")
        lines.append("what Dynamo did instead: no resume function could be made at this break, so the whole frame "
                     "runs as plain Python, this call and every later one (functions it calls may still compile)")
    for brk in fallback.breaks:
        where = f"{brk.filename}:{brk.lineno}" if brk.filename else "(location unknown)"
        lines.append(f"graph break [{brk.logged_id}] at {where}")
        if brk.user_line:
            lines.append(f"  {brk.lineno} | {brk.user_line.strip()}")
        lines.append(f"reason: {cut(one_line(brk.summary), 200)}")
    return "\n".join(lines)
