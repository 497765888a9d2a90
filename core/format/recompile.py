"""Plain text of recompile records: the recompile stop's blocks, ``why``, ``entries``, ``compiles``, ``report``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .. import compat
from ..decisions import (
    LIMIT_WHY_NOT,
    config_hints,
    recompile_choices,
)
from ..model import (
    GuardCostView,
    CompilesData,
    DecisionKind,
    EntryDiff,
    FrameRecompiles,
    GuardStatus,
    LeafGuardView,
    RecompileChoice,
    RecompileRecord,
)
from ..guards import expected_actual_text
from ..recompile import analyze_miss, failure_kind, reason_head, stack_arg_variable
from ..values import cut
from ..caveats import caveat_of
from .advice import caveat_lines, describe_choices

if TYPE_CHECKING:
    from ..protocol import Host
    from ..state import PauseContext


_IND = "  "


def _leaf_lines(leaf: LeafGuardView, torch_leaf: str | None) -> list[str]:
    shown = "no value" if leaf.status is GuardStatus.NO_VALUE else leaf.status.value
    status = "" if leaf.status is GuardStatus.FAIL else f" [{shown}]"
    mark = "  <- torch reports this one" if leaf.id == torch_leaf else ""
    kind = failure_kind(leaf)
    kind_text = "" if kind == "input" else f" ({kind})"
    lines = [f"{_IND}{leaf.id} {leaf.guard_type}{status}{kind_text}  {cut('; '.join(leaf.code), 300)}{mark}"]
    caveat = caveat_of(leaf)
    where = leaf.user_line or ""
    if leaf.location:
        where = f"{where}  ({leaf.location})" if where else f"({leaf.location})"
    if caveat is not None:
        label, sentence = caveat_lines(caveat)
        if where:
            lines.append(f"{_IND}   {label}: {where}")
        lines.append(f"{_IND}   caveat: {sentence}")
    elif where:
        lines.append(f"{_IND}   line: {where}")
    if leaf.expected is not None or leaf.actual is not None:
        lines.append(f"{_IND}   {expected_actual_text(leaf)}")
    if leaf.reason and leaf.reason not in leaf.code:
        lines.append(f"{_IND}   reason: {cut(leaf.reason, 300)}")
    if leaf.note:
        lines.append(f"{_IND}   note: {cut(leaf.note, 400)}")
    return lines


_HINT = re.compile(r"\s*\(HINT: (?P<hint>.*)\)\s*$", re.S)


def _without_repeated_hint(reason: str, failing: Sequence[LeafGuardView]) -> str:
    """torch's reason without its trailing ``(HINT: ...)`` when a failing guard shows that hint as its note."""
    m = _HINT.search(reason)
    if m is None or not any(leaf.note and m.group("hint") in leaf.note for leaf in failing):
        return reason
    return reason[:m.start()] + " (its hint is under the guard)"


def failing_text(record: RecompileRecord) -> str:
    """Every failing guard of every entry (torch's order), torch's own reason first for each entry."""
    if record.error and not record.entries:
        return f"analysis failed: {record.error}"
    blocks = []
    for v in record.entries:
        if v.error:
            blocks.append(f"{v.compile_id}: could not analyse ({v.error})" +
                          (f"\n{_IND}torch reports: {v.first_failure}" if v.first_failure else ""))
            continue
        if v.invalidated:
            blocks.append(f"{v.compile_id}: invalidated: {v.invalidated}\n{_IND}torch reports: {v.torch_reason}")
            continue
        if v.passed:
            blocks.append(f"{v.compile_id}: every guard passes")
            continue
        n = len(v.failing)
        lines = [f"{v.compile_id}: {n} failing guard{'s' if n != 1 else ''} of {v.leaf_count}",
                 f"{_IND}torch reports: {cut(_without_repeated_hint(v.torch_reason or '?', v.failing), 800)}"]
        for leaf in v.failing:
            lines += _leaf_lines(leaf, v.torch_leaf)
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "no entries"


def diffs_text(diffs: Iterable[EntryDiff], *, max_per_pair: int = 20) -> str:
    """``0/0 → 0/1: 1 changed`` then one line per difference."""
    blocks = []
    for d in diffs:
        counts: dict[str, int] = {}
        for x in d.diffs:
            counts[x.kind] = counts.get(x.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "same guards"
        lines = [f"{d.old} → {d.new}: {summary}"]
        for x in d.diffs[:max_per_pair]:
            if x.kind == "changed":
                lines.append(f"{_IND}changed {x.guard_type} {x.source}: "
                             f"{cut(x.old_code or '', 160)} → {cut(x.new_code or '', 160)}")
            elif x.kind == "added":
                lines.append(f"{_IND}added   {x.guard_type} {x.source}: {cut(x.new_code or '', 160)}")
            else:
                lines.append(f"{_IND}removed {x.guard_type} {x.source}: {cut(x.old_code or '', 160)}")
        if len(d.diffs) > max_per_pair:
            lines.append(f"{_IND}... {len(d.diffs) - max_per_pair} more")
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "only one entry: nothing to compare"


def inputs_text(record: RecompileRecord) -> str:
    """The call's inputs, one per line (``n = int 2``); the values failing guards saw, first."""
    lines = [f"{name} = {text}" for name, text in record.inputs]
    newest = record.entries[0] if record.entries else None
    changed = []
    if newest is not None:
        seen: set[str] = set()
        for leaf in newest.failing:
            # one line per input: its first failing guard with both values (a tensor input can fail several)
            if leaf.actual is None or failure_kind(leaf) not in ("input", "global", "shape"):
                continue
            name = compat.strip_local_scope(leaf.source if not leaf.epilogue else "; ".join(leaf.code))
            if name in seen:
                continue
            seen.add(name)
            before = leaf.expected if leaf.expected is not None else "(not readable off the guard)"
            variable = stack_arg_variable(record, name)
            shown = f"{name} ({variable})" if variable else name
            changed.append(f"{shown}: {before} → {leaf.actual}")
    head = (["changed since " + newest.compile_id + ":"] + [_IND + c for c in changed]) if changed else []
    return "\n".join(head + lines) or "(no inputs)"


def stack_args_text(record: RecompileRecord) -> str:
    """What a resume function's ``___stack*`` arguments carry, and why a ``.item()`` value recompiles (empty for
    any other code object)."""
    lines = [f"{name} is {what}" for name, what in record.stack_args]
    if lines:
        lines.append(f"{_IND}(handed over from the original frame's value stack at the graph break)")
    if record.scalar_break:
        lines += [f"{_IND}Turning a tensor into a Python number (.item(), int(t), float(t)) left the graph (the graph",
                  f"{_IND}break); the resume function's guards then pin that number, so every new value recompiles.",
                  f"{_IND}torch._dynamo.config.capture_scalar_outputs = True keeps .item() in the graph as a symbolic",
                  f"{_IND}value: no graph break, no guard on the number."]
    return "\n".join(lines)


def choices_text(record: RecompileRecord) -> str:
    """The commands available at the recompile stop, each with the code that gets its effect permanently
    (`recompile_choices` as text)."""
    return choices_lines(describe_choices(recompile_choices(record), record.advice, record.frame_name),
                         config_hints(record))


def choices_lines(choices: Sequence[RecompileChoice], hints: Sequence[str]) -> str:
    """Plain text of a recompile stop's choices (line mode)."""
    lines = []
    limit_said = False
    codes: list[str] = []
    for c in choices:
        if c.kind in (DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP):
            lines.append(f"{c.kind.value:<14} {c.summary}")
            if c.kind in (DecisionKind.EAGER, DecisionKind.SKIP) and c.permanent:
                first, *others = c.permanent.splitlines()
                codes.append(f"{c.kind.value} permanently: {first}")
                codes += [f"{_IND}or: {other}" for other in others]
        elif not c.available:
            if c.why_not == LIMIT_WHY_NOT:
                if not limit_said:
                    lines.append(f"drop, dynamic  not available: {c.why_not}")
                    limit_said = True
            elif c.why_not:
                lines.append(f"{c.kind.value:<14} not available: {c.why_not}")
        elif c.kind is DecisionKind.DROP:
            lines.append(f"drop [ID...]   {c.summary} ({c.detail.replace('default: ', 'default: ', 1)})")
            lines.append(f"{_IND}permanently: {c.permanent}")
            for w in c.warnings[:3]:
                lines.append(f"{_IND}WARNING: {w}")
        elif c.kind is DecisionKind.DYNAMIC and c.decision.name is not None:
            lines.append(f"dynamic {c.decision.name} {c.decision.dim}   {c.summary}")
            lines.append(f"{_IND}permanently: {c.permanent}")
    lines += codes
    for hint in hints:
        lines.append(f"torch suggests: {hint}")
    return "\n".join(lines)


def record_text(record: RecompileRecord) -> str:
    """The whole record as one block (``report`` text, the ``why`` command)."""
    head = f"#{record.seq} {record.frame_name} → {record.compile_id or 'not compiled'}: {record.decision}"
    if record.action:
        head += f" ({record.action})"
    head += f"; {record.outcome_text()}"
    parts = [head, "failing guards:"] + [_IND + ln for ln in failing_text(record).splitlines()]
    if record.non_input:
        parts.append("not about the inputs:")
        parts += [f"{_IND}{f.compile_id}: {f.text}" for f in record.non_input]
    if record.limit is not None:
        parts.append(f"recompile limit: {record.limit.text()}")
    if record.diffs:
        parts.append("guard diffs of the entries (compile order):")
        parts += [_IND + ln for ln in diffs_text(record.diffs).splitlines()]
    return "\n".join(parts)


def stop_detail(session: "Host", ctx: "PauseContext") -> list[tuple[str, str]]:
    """The (title, text) blocks of a recompile stop: failing guards, non-input failures, inputs, guard diffs,
    recompile limit, choices. Falls back to a fresh analysis when the session kept no record."""
    record = ctx.extra.get("recompile")
    ev = ctx.miss_event
    if record is None and ev is not None:
        record = analyze_miss(ev.code, ev.f_locals, ev.entries)
        ctx.extra["recompile"] = record
    if record is None:
        return []
    title = f"next compile: {record.compile_id or '?'}; entries in torch's order (most recently used first)"
    blocks = [("failing guards", title + "\n" + failing_text(record))]
    if record.non_input:
        blocks.append(("not about the inputs",
                       "\n".join(f"{f.compile_id}: [{f.kind}] {f.text}" for f in record.non_input)))
    carried = stack_args_text(record)
    if carried:
        blocks.append(("what the ___stack arguments are", carried))
    blocks.append(("inputs", inputs_text(record)))
    if record.limit is not None:
        blocks.append(("recompile limit", record.limit.text()))
    blocks.append(("guard diffs", diffs_text(record.diffs)))
    blocks.append(("choices", choices_text(record)))
    return blocks


def _hits(n: int) -> str:
    return "?" if n < 0 else str(n)


def entries_text(fr: FrameRecompiles) -> str:
    n = len(fr.entries)
    live = sum(1 for e in fr.entries if not e.dropped and not e.invalidated)
    lines = [f"{fr.name} ({fr.filename}:{fr.firstlineno}): {n} cache entr{'y' if n == 1 else 'ies'}"
             + (f"; {live} live, recompile_limit {fr.limit.limit}" if fr.limit is not None else "")]
    if fr.skipped:
        lines.append(f"  skipped by Dynamo: {fr.skipped}")
    total = sum(e.hits for e in fr.entries if e.hits > 0)
    for e in reversed(fr.entries):
        here = "▶ " if fr.serving is not None and e.compile_id == fr.serving and not e.dropped else "  "
        share = f" ({100 * e.hits // total}% of calls)" if total and e.hits >= 0 else ""
        flags = "".join(["  (invalidated)" if e.invalidated else "",
                         "  (dropped from torch's cache)" if e.dropped else ""])
        lines.append(f"{here}{e.compile_id:<6} backend={e.backend}  hits={_hits(e.hits)}{share}  "
                     f"graphs={len(e.graphs)}  "
                     f"resume={', '.join(e.resume_functions) or '-'}{flags}")
    if not fr.hits_counted:
        lines.append("  (hits are not counted in this run)")
    for cost in fr.guard_costs:
        lines += guard_cost_lines(cost)
    lines += timeline_lines(fr.timeline, fr.recompiles, with_frame=False)
    return "\n".join(lines)


def guard_cost_lines(cost: GuardCostView, *, max_groups: int = 5, indent: str = "  ") -> list[str]:
    """What one entry's guards cost per call: count, torch's guard-eval latency, the largest source groups and
    the documented cuts that apply."""
    n = "?" if cost.guards is None else str(cost.guards)
    us = (f", {cost.eval_us:.1f} µs per evaluation (torch's profile_guard_manager, cold cache)"
          if cost.eval_us is not None else ", evaluation time not measured (compiled before the session started)")
    lines = [f"{indent}guard cost of {cost.compile_id}: {n} guards{us}"]
    for group, guards, tensors in cost.by_source[:max_groups]:
        tensor_text = f"  ({tensors} tensor guard{'' if tensors == 1 else 's'})" if tensors else ""
        lines.append(f"{indent}  {guards:>6}  {group}{tensor_text}")
    if len(cost.by_source) > max_groups:
        rest = sum(g for _, g, _ in cost.by_source[max_groups:])
        more = len(cost.by_source) - max_groups
        lines.append(f"{indent}  {rest:>6}  ({more} more group{'' if more == 1 else 's'})")
    lines += [f"{indent}  cut: {a}" for a in cost.advice]
    return lines


def timeline_lines(records: Sequence[RecompileRecord], recompiles: Sequence[Any] = (), *,
                   with_frame: bool = True, names: dict[int, str] | None = None) -> list[str]:
    """The recompile timeline: one line per recompile in the order they happened, torch's reasons and the
    outcome; records not seen (no log) fall back to the capture's recompile list."""
    lines: list[str] = []
    if records:
        lines.append("recompiles (in the order they happened):")
        for r in records:
            who = f"{r.frame_name} " if with_frame else ""
            nearly = r.limit is not None and r.limit.hit_next and r.decision == "recompile"
            flag = "  [RECOMPILE LIMIT HIT]" if r.limit_hit else ("  [next recompile hits the limit]" if nearly else "")
            lines.append(f"  #{r.seq} {who}→ {r.compile_id or 'not compiled'}: {r.decision}"
                         f"{f' ({r.action})' if r.action else ''}; {r.outcome_text()}{flag}")
            for reason in r.torch_reasons:
                lines.append(f"      {cut(reason_head(reason), 200)}")
            n_fail = sum(len(v.failing) for v in r.entries)
            if n_fail > len(r.torch_reasons):
                lines.append(f"      ({n_fail} failing guards in all)")
    elif recompiles:
        lines.append("recompiles (torch's reasons):")
        for rc in recompiles:
            lines.append(f"  → {rc.compile_id}: " + "; ".join(cut(x.splitlines()[0], 200) for x in rc.reasons))
    return lines


def compiles_text(data: CompilesData) -> str:
    if not data.frames and not data.without_entries:
        return "no frame was compiled yet"
    lines = []
    for f in data.frames:
        kind = f"resume function of {f.resume_origin}" if f.is_resume else "frame"
        n = len(f.entries)
        lines.append(f"{f.name}  ({f.filename}:{f.firstlineno})  {kind}: {n} entr{'y' if n == 1 else 'ies'}, "
                     f"{len(f.graph_breaks)} graph break(s), {len(f.recompiles)} recompile(s)"
                     + (f"  [RECOMPILE LIMIT HIT {len(f.limit_hits)}x]" if f.limit_hits else ""))
        if f.skipped:
            lines.append(f"    skipped by Dynamo: {f.skipped}")
        for e in f.entries:
            lines.append(f"    {e.compile_id:<6} hits={_hits(e.hits)}" + ("  (invalidated)" if e.invalidated else ""))
        for gb in f.graph_breaks:
            lines.append(f"    graph break [{gb.logged_id}] line {gb.lineno}: {short_reason(gb.reason)}")
    if data.without_entries:
        lines.append("tried, no cache entry: " + ", ".join(
            n + (f" ({cut(r, 60)})" if r else "") for n, r in data.without_entries[:12])
            + (f" ... {len(data.without_entries) - 12} more" if len(data.without_entries) > 12 else ""))
    if data.timeline:
        lines += timeline_lines(data.timeline)
    else:
        recs = [(f.name, r) for f in data.frames for r in f.recompiles]
        if recs:
            lines.append("recompiles (torch's reasons):")
            for name, r in recs:
                lines.append(f"  {name} → {r.compile_id}: " + "; ".join(cut(x.splitlines()[0], 200) for x in r.reasons))
    if data.limit_hits:
        lines.append(f"recompile limit hit {len(data.limit_hits)} time(s): " +
                     ", ".join(f"{r.frame_name} at {r.compile_id}" for r in data.limit_hits))
    return "\n".join(lines)


def short_reason(reason: str | None) -> str:
    if not reason:
        return ""
    head = re.split(r"\n\s*Explanation:", reason, maxsplit=1)[0]
    return cut(" ".join(head.split()), 200)
