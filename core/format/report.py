"""The report's summary as plain text (`summary_text`), line fitting for the text report (`fit`), and the progress
lines ``dynadbg report`` writes while the program runs (`progress_text`).

Everything here is made from `dynadbg.core.report_summary` data; nothing is parsed back.
"""

from __future__ import annotations

import os

from ..report_summary import (
    BreakKey,
    DistinctBreak,
    EntryCostLine,
    FrameSummary,
    LookAt,
    LookKind,
    Progress,
    ProgressKind,
    RecompileLine,
    ReportSummary,
)

__all__ = ["ELIDED", "budget_breaks_lines", "budget_head", "fit", "fit_long", "progress_text", "summary_text"]

#: Ends a line the summary cut at its width.
ELIDED = "…"
#: At most this many frames get their own lines; the rest (no recompile, no break) are named in one line.
MAX_FRAMES = 20


def fit(line: str, width: int, max_lines: int = 3) -> list[str]:
    """`line` wrapped to `width` characters, its continuation lines indented 4 more than it; past `max_lines`
    the rest is cut and the last line ends in `ELIDED` (`width` 0: the line as it is)."""
    if width <= 0 or len(line) <= width:
        return [line]
    import textwrap

    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    if len(indent) * 2 >= width:  # too narrow to indent
        indent = ""
    lines = textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False,
                          drop_whitespace=True) or [line[:width]]
    if line.startswith(" "):  # textwrap keeps the first line's own indent only with drop_whitespace off
        lead = " " * (len(line) - len(line.lstrip(" ")))
        lines[0] = (lead + lines[0].lstrip(" "))[:width]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1] + ELIDED
    return lines


def fit_long(line: str, width: int) -> str:
    """For the full report: a line over `width` characters is cut with a marker that says how much is left out
    (``… [+5,766 characters; the JSON report has the whole line]``); `width` 0: never cut."""
    if width <= 0 or len(line) <= width:
        return line
    return f"{line[:width]}{ELIDED} [+{len(line) - width:,} characters; the JSON report has the whole line]"


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def short_path(filename: str | None) -> str:
    """A file as a reader finds it: relative to the working directory when under it, from ``site-packages/``
    for an installed library, else whole."""
    if not filename:
        return "(location unknown)"
    marker = "site-packages" + os.sep
    if marker in filename:
        return filename.rsplit(marker, 1)[1]
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive
        return filename
    return filename if rel.startswith("..") else rel


def _where(brk: DistinctBreak) -> str:
    return f"{short_path(brk.filename)}:{brk.lineno}" if brk.filename else "(location unknown)"


def _frame_head(f: FrameSummary) -> str:
    if f.is_resume:  # its name says where it resumes; the file is its origin's
        return f"[{f.number}] {f.name}  ({os.path.basename(f.filename)}:{f.firstlineno})"
    return f"[{f.number}] {f.name}  {short_path(f.filename)}:{f.firstlineno}"


def _us(value: float) -> str:
    return f"{value:,.1f} µs"


def _entries_line(f: FrameSummary) -> str:
    if not f.entries:
        return "no cache entry"
    parts = [_plural(len(f.entries), "cache entry", "cache entries")]
    hits = f.hits
    parts.append("hits not counted" if hits is None else _plural(hits, "hit"))
    guards = [e.guards for e in f.entries if e.guards is not None]
    if guards:
        each = "" if len(guards) == 1 else f" ({' + '.join(str(g) for g in guards)})"
        parts.append(f"{sum(guards)} guards{each}")
    timed = [e.eval_us for e in f.entries if e.eval_us is not None]
    if timed:
        each = "" if len(timed) == 1 else f" ({' + '.join(f'{t:,.1f}' for t in timed)})"
        parts.append(f"guard eval {_us(sum(timed))}{each}")
    return ", ".join(parts)


def _dynamic_line(e: EntryCostLine) -> str:
    """``entry 0/1 serves any size at L['x'] dim 1 (torch's automatic dynamic, after sizes 8 then 16)``."""
    parts = []
    for d in e.dynamic:
        seen = dict(d.seen)
        dims = ", ".join(str(dim) for dim in d.dims)
        if len(d.dims) == 1:
            why = [f"torch's automatic dynamic, after sizes {' then '.join(map(str, seen[dim]))}"
                   for dim in d.dims if dim in seen]
        else:
            why = [f"dim {dim} by torch's automatic dynamic after sizes {' then '.join(map(str, seen[dim]))}"
                   for dim in d.dims if dim in seen]
        parts.append(f"{d.source} dim{'s' if len(d.dims) > 1 else ''} {dims}"
                     + (f" ({'; '.join(why)})" if why else ""))
    return f"entry {e.compile_id} serves any size at " + "; ".join(parts)


def _recompile_line(r: RecompileLine) -> str:
    reason = " ".join(r.reason.split()) if r.reason is not None else "(torch gave no reason)"
    more = f" (+{_plural(r.more_reasons, 'reason')} for older entries)" if r.more_reasons else ""
    flag = "  [RECOMPILE LIMIT HIT]" if r.limit_hit else ""
    return f"recompile {r.compile_id}: {reason}{more}{flag}"


def _break_lines(b: DistinctBreak, first_frame: dict[BreakKey, int], number: int) -> list[str]:
    """A break under the frame that first took it, whole; under the others, a pointer to it."""
    first = first_frame[b.key]
    if first != number:
        return [f"graph break at {_where(b)}: the same break as under [{first}]"]
    notes = [f"seen by {_plural(len(b.frames), 'frame')}"] if len(b.frames) > 1 else []
    if b.count != len(b.frames):  # a frame recompiled and broke there again
        notes.append(f"torch counts {b.count}")
    seen = f" ({', '.join(notes)})" if notes else ""
    line = f"graph break at {_where(b)}{seen}"
    out = [line + (f": {b.user_line.strip()}" if b.user_line else "")]
    out.append(f"    {b.reason}")
    return out


def _look_line(look: LookAt, frames: dict[int, FrameSummary]) -> str:
    f = frames.get(look.frame)
    name = f"[{look.frame}] {f.name}" if f is not None else f"[{look.frame}]"
    if look.kind in (LookKind.LIMIT_HIT, LookKind.RECOMPILE):
        first = look.recompiles[0] if look.recompiles else None
        what = "hit the recompile limit" if look.kind is LookKind.LIMIT_HIT else "recompiled"
        times = "" if look.kind is LookKind.LIMIT_HIT else (
            " once" if len(look.recompiles) == 1 else f" {len(look.recompiles)} times")
        ids = ", ".join(r.compile_id for r in look.recompiles[:3]) + (", ..." if len(look.recompiles) > 3 else "")
        cause = (f"; torch's first reason: {' '.join(first.reason.split())}"
                 if first is not None and first.reason else "")
        return f"{name} {what}{times} ({ids}; every failing guard: dynadbg report --frame {look.frame}){cause}"
    if look.kind is LookKind.GRAPH_BREAK and look.brk is not None:
        b = look.brk
        frames_part = f", taken by {_plural(len(b.frames), 'frame')}" if len(b.frames) > 1 else ""
        line = f" `{b.user_line.strip()}`" if b.user_line else ""
        return f"graph break at {_where(b)}{line}{frames_part}: {b.reason}"
    e: EntryCostLine | None = look.entry
    if e is None:
        return name
    cost = f", {_us(e.eval_us)} per evaluation" if e.eval_us is not None else ""
    return (f"{name}: entry {e.compile_id} checks {e.guards} guards on every call{cost}; torch's documented "
            f"cuts that fit: {', '.join(e.cuts)} (what each drops: dynadbg report --frame {look.frame})")


def summary_text(summary: ReportSummary, *, width: int = 120) -> str:
    """The summary ``dynadbg report`` prints by default: totals, one block per compiled frame (entries, hits,
    guard count and cost, recompiles with torch's first reason, distinct graph breaks with their reason and
    user line), frames Dynamo skipped, then at most three things to look at first. Every line fits `width`
    characters (0: no cut); a cut line ends in `ELIDED`."""
    out: list[str] = []
    one_line: set[int] = set()  # indexes of lines cut to one line rather than wrapped
    for msg in summary.disabled:
        out.append(f"note: {msg}")
    n_breaks = len(summary.breaks)
    torch_count = f" (torch counts {summary.graph_breaks})" if summary.graph_breaks != n_breaks else ""
    totals = [_plural(len(summary.frames), "frame"), _plural(summary.entries, "cache entry", "cache entries"),
              _plural(summary.recompiles, "recompile"), _plural(n_breaks, "graph break") + torch_count]
    if summary.guards is not None:
        totals.append(f"{summary.guards} guards")
    out.append("dynadbg report: " + ", ".join(totals))
    if not summary.frames:
        out.append("no frame was compiled by torch.compile")
    first_frame: dict[BreakKey, int] = {}
    for f in summary.frames:
        for b in f.breaks:
            first_frame.setdefault(b.key, f.number)
    shown = list(summary.frames)
    rest: list[FrameSummary] = []
    if len(shown) > MAX_FRAMES:
        busy = [f for f in shown if f.recompiles or f.breaks or f.skipped]
        quiet = [f for f in shown if f not in busy]
        keep = max(0, MAX_FRAMES - len(busy))
        shown = sorted(busy + quiet[:keep], key=lambda f: f.number)
        rest = quiet[keep:]
    quiet_before = False
    for f in shown:
        if not (f.recompiles or f.breaks or f.skipped):  # nothing but its entries: one line, no blank before
            if not quiet_before:
                out.append("")
            one_line.add(len(out))
            out.append(f"{_frame_head(f)}: {_entries_line(f)}")
            quiet_before = True
            continue
        quiet_before = False
        out += ["", _frame_head(f), "    " + _entries_line(f)]
        if f.skipped:
            one_line.add(len(out))
            out.append(f"    skipped by Dynamo: {' '.join(f.skipped.split())}")
        for r in f.recompiles:  # one line each: the whole reason is in "look at first" and --frame N
            one_line.add(len(out))
            out.append("    " + _recompile_line(r))
        for e in f.entries:
            if e.dynamic:
                out.append("    " + _dynamic_line(e))
        for b in f.breaks:
            out += ["    " + line for line in _break_lines(b, first_frame, f.number)]
    if rest:
        out += ["", f"{_plural(len(rest), 'more frame')} without recompiles or graph breaks: "
                + ", ".join(f"[{f.number}] {f.name}" for f in rest)]
    if summary.skipped_frames:
        names = ", ".join(name for name, *_ in summary.skipped_frames)
        out += ["", f"Dynamo skipped {_plural(len(summary.skipped_frames), 'frame')} without compiling: {names}"]
    if summary.look_at:
        by_number = {f.number: f for f in summary.frames}
        out += ["", "look at first:"]
        out += [f"  {i}. {_look_line(look, by_number)}" for i, look in enumerate(summary.look_at, 1)]
    else:
        out += ["", "nothing to look at: no recompile, no graph break, no guard cut that fits"]
    if summary.guard_eval_us is not None:
        out += ["", "guard eval: torch's time for one evaluation of an entry's guards, one cold-cache sample taken "
                    "when it compiled"]
    out += ["more: dynadbg report --full (bytecode, guard trees, FX graphs, every failing guard), "
                "--frame N (one frame), --json"]
    return "\n".join(part for i, line in enumerate(out)
                     for part in fit(line, width, 1 if i in one_line else 3)) + "\n"


def progress_text(event: Progress) -> str:
    """One progress line for stderr while the program runs."""
    if event.kind is ProgressKind.CACHE_MISS:
        return f"dynadbg: cache miss in {event.frame_name}: recompiling"
    return f"dynadbg: compiled {event.compile_id} {event.frame_name} ({_plural(event.compiles, 'compile')} so far)"


def budget_head(breaks: "tuple[DistinctBreak, ...] | list[DistinctBreak]", limit: int, *, torch_count: bool) -> str:
    """The pytest plugin's graph-break part of "over its budget": ``1 graph break (limit 0; torch counts 4)``,
    or, when the budget is on torch's count, ``4 graph breaks as torch counts them (limit 1; 1 distinct)``."""
    distinct, logged = len(breaks), sum(b.count for b in breaks)
    if torch_count:
        return f"{_plural(logged, 'graph break')} as torch counts them (limit {limit}; {distinct} distinct)"
    also = f"; torch counts {logged}" if logged != distinct else ""
    return f"{_plural(distinct, 'graph break')} (limit {limit}{also})"


def budget_breaks_lines(breaks: "tuple[DistinctBreak, ...] | list[DistinctBreak]") -> list[str]:
    """Each distinct break for the plugin's failure text: where, the user line, the reason, the frames that
    took it."""
    lines: list[str] = []
    for b in breaks:
        where = f"{b.filename}:{b.lineno}" if b.filename else "(location unknown)"
        lines += ["", f"graph break in {b.frames[0] if b.frames else '?'} [{', '.join(b.compile_ids)}] at {where}"]
        if b.user_line:
            lines.append(f"  line: {b.user_line}")
        lines.append(f"  reason: {b.reason}")
        if len(b.frames) > 1:
            lines.append(f"  seen by {len(b.frames)} frames (one break, taken by each frame on the call path): "
                         + ", ".join(b.frames))
    return lines
