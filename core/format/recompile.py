"""Plain text of recompile records: the recompile stop's blocks, ``why``, ``entries``, ``compiles``, ``report``;
and of what a decision did: its warnings (`drop_warning_text`), its permanent fix (`permanent_text`), what the
guard filter of ``drop`` left out (`drop_result_text`), what came of a miss (`outcome_text`)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable, Sequence

from ..decisions import LIMIT_WHY_NOT
from ..model import (
    CompilesData,
    DecisionKind,
    DiffKind,
    DropResult,
    DropRisk,
    DropWarning,
    EntryDiff,
    FrameRecompiles,
    GroupCause,
    GuardCostView,
    GuardGroup,
    GuardRef,
    LeafGuardView,
    LimitStatus,
    OutcomeKind,
    PermanentFix,
    RecompileChoice,
    RecompileRecord,
    StackArg,
)
from ..guard_cost import COLD_SAMPLE
from ..guards import location_text
from ..recompile import reason_head
from ..values import cut, cut_pair
from .. import stances
from .advice import (
    auto_dynamic_check_text,
    auto_dynamic_text,
    choice_detail_text,
    choice_why_not_text,
    dynamic_outcome_text,
    dynamic_warning,
    fix_lines,
)
from .drop_default import held_back_lines, listed_once
from .guards import expected_actual_text, failing_leaf_lines

_IND = "  "


# --------------------------------------------------------------------------------------------------------------
# Guards, locations, warnings and fixes
# --------------------------------------------------------------------------------------------------------------


def where_text(leaf: LeafGuardView) -> str:
    """The user line a guard came from and its location: ``"y = y + n  (demo.py:18 in f)"``; empty if unknown."""
    where = leaf.user_line or ""
    if leaf.location is not None:
        loc = location_text(leaf.location)
        where = f"{where}  ({loc})" if where else f"({loc})"
    return where


def guard_ref_text(ref: GuardRef, *, limit: int = 120) -> str:
    """``"g18 EQUALS_MATCH L['self'].counter == 0"``: the leaf, its type and its code (cut to `limit`)."""
    return f"{ref.leaf_id} {ref.guard_type} {'; '.join(ref.code)[:limit]}"


def dropped_refs_texts(refs: Sequence[GuardRef], groups: Sequence[GuardGroup] = ()) -> list[str]:
    """The dropped guards, the leaves of one of `groups` (all of them dropped) as one item: ``"g45 g88 … g346:
    8 × TRUE_MATCH L['self']._modules['blocks']._modules[*]._modules['bn'].training"``; the others as
    `guard_ref_text`."""
    by_leaf = {(g.compile_id, lid): g for g in groups for lid in g.leaf_ids}
    dropped = {(r.compile_id or "", r.leaf_id) for r in refs}
    out: list[str] = []
    said: set[int] = set()
    for r in refs:
        g = by_leaf.get((r.compile_id or "", r.leaf_id))
        if g is not None and all((g.compile_id, lid) in dropped for lid in g.leaf_ids):
            if id(g) not in said:
                said.add(id(g))
                ids = (" ".join(g.leaf_ids) if len(g.leaf_ids) <= 4
                       else f"{g.leaf_ids[0]} {g.leaf_ids[1]} … {g.leaf_ids[-1]}")
                out.append(f"{ids}: {len(g.leaf_ids)} × {g.guard_type} {g.pattern}")
            continue
        out.append(guard_ref_text(r))
    return out


def drop_warning_text(w: DropWarning) -> str:
    """What dropping the guard costs, one paragraph (no ``WARNING:`` prefix; `warning_line` adds it)."""
    g = w.guard
    code = "; ".join(g.code)
    if w.risk is DropRisk.CONSTANT_FOLDED:
        pinned = f"{g.source} == {w.expected}" if w.expected else code
        served = f"the entry compiled for {w.actual}" if w.actual else "this code"
        return (f"{g.source} is a constant to Dynamo: {g.guard_type} pins {pinned}. Dynamo specialised the code on "
                f"that value and may have baked it into the FX graph or the generated code (constant folding). "
                f"Without this guard {served} serves every later value unchecked and can give silently wrong "
                f"results — RESULTS MAY BE WRONG")
    if w.risk is DropRisk.TRACED_FOR:
        return (f"{g.guard_type} on {g.source} ({code}) is what the graph was traced for: calls where it does not "
                f"hold reuse code traced for other dtypes, devices, shapes, types or keys — results may be wrong or "
                f"the code may fail")
    if w.risk is DropRisk.SHAPE_RELATIONS:
        return ("symbolic-shape guard: dropping SHAPE_ENV drops every shape relation of the new entry; a call with "
                "other sizes may run a graph traced for these — results may be wrong")
    if w.risk is DropRisk.GLOBAL_STATE:
        return ("global-state guard: the new entry will also serve calls under other global state (grad mode, "
                "autocast, ...) with a graph traced under this one — results may be wrong")
    return (f"the compiled code assumes {g.guard_type} ({code}) holds; without it calls where it does not can give "
            f"wrong results")


#: The terms of `format.glossary` each warning's text uses (`drop_warning_text`).
WARNING_TERMS: dict[DropRisk, frozenset[str]] = {
    DropRisk.CONSTANT_FOLDED: frozenset({"FX graph", "generated code"}),
}


def warning_line(w: DropWarning) -> str:
    """``"WARNING: <drop_warning_text>"``: how every front end shows a warning."""
    return f"WARNING: {drop_warning_text(w)}"


def filter_snippet(fix: PermanentFix) -> str:
    """The ``torch.compile(...)`` line of a drop's permanent fix: a ``guard_filter_fn`` leaving out its terms.

    >>> filter_snippet(PermanentFix(DecisionKind.DROP, "model", (FilterTerm("s.counter", ("CONSTANT_MATCH",
    ...     "EQUALS_MATCH")),)))
    'torch.compile(model, options={"guard_filter_fn": lambda entries: [not (e.name == "s.counter" and \
e.guard_type in ("CONSTANT_MATCH", "EQUALS_MATCH")) for e in entries]})'
    """
    terms = []
    for term in fix.filter_terms:
        shown = term.guard_types
        types = f'e.guard_type == "{shown[0]}"' if len(shown) == 1 else \
            "e.guard_type in (" + ", ".join(f'"{t}"' for t in shown) + ")"
        terms.append(f'(e.name == "{term.name}" and {types})')
    unique = list(dict.fromkeys(terms))
    cond = unique[0] if len(unique) == 1 else "(" + " or ".join(unique) + ")"
    return (f'torch.compile({fix.fn_name}, options={{"guard_filter_fn": lambda entries: '
            f'[not {cond} for e in entries]}})')


def permanent_lines(fix: PermanentFix) -> list[str]:
    """The Python a user writes to get `fix`'s decision for good, comment-annotated, then torch's own hints: the
    stance and config lines with their one description each (`stances`; skip's per-call limit on the user's own
    call when its call site is known), a drop's checked filter on that call, ``mark_dynamic`` (``mark_unbacked``
    for a size torch specialises) where it goes."""
    from ..callsites import with_keyword

    kind = fix.kind
    if kind is DecisionKind.SKIP and fix.limit_hit:
        lines = ["# nothing to write: this code has hit its recompile limit, torch compiles it no more (what skip "
                 "does)"]
    elif kind.value in stances.CHOICE_EFFECTS:
        n = fix.recompile_limit if kind is DecisionKind.SKIP else None
        site = fix.call_site
        call = with_keyword(site, "recompile_limit", str(n)) if site is not None and n else None
        where = f"in place of {site.text} at {site.where}" if call is not None and site is not None else ""
        lines = stances.choice_lines(kind.value, n=n or None, call_with_limit=call, where=where)
    else:
        advised = fix_lines(fix)
        if advised is not None:
            lines = advised
        elif kind is DecisionKind.DROP:
            lines = [filter_snippet(fix)]
        else:
            lines = [f"torch._dynamo.mark_dynamic({d.name}, {d.dim})   # on the tensor, before the call"
                     for d in fix.dims]
    return lines + [f"{hint}   # torch's own hint" for hint in fix.hints]


def choice_warning_texts(c: RecompileChoice) -> list[str]:
    """A choice's warnings as sentences: a drop's (`drop_warning_text`), and a dynamic choice's on a size torch
    specialises (0 or 1; `format.advice.dynamic_warning`)."""
    out = [drop_warning_text(w) for w in c.warnings]
    if c.permanent is not None:
        out += [w for w in (dynamic_warning(d) for d in c.permanent.dims) if w]
    return out


def permanent_text(fix: PermanentFix) -> str:
    """`permanent_lines` as one block."""
    return "\n".join(permanent_lines(fix))


def limit_text(limit: LimitStatus) -> str:
    """One line, e.g. ``"2 of recompile_limit 8 used; after this compile 3 of 8"``."""
    head = f"{limit.counted} of recompile_limit {limit.limit} used"
    if limit.counted != limit.entries:
        head += f" ({limit.entries} entries; only those for the same ID_MATCH'd objects count)"
    if limit.limit_source != "torch._dynamo.config.recompile_limit":
        head += f" (set by {limit.limit_source})"
    if limit.exceeds is not None:
        if limit.exceeds == "recompile_limit":
            where = (limit.limit_source if limit.limit_source != "torch._dynamo.config.recompile_limit"
                     else f"torch._dynamo.config.recompile_limit ({limit.limit})")
        else:
            where = f"torch._dynamo.config.accumulated_recompile_limit ({limit.accumulated_limit})"
        if limit.raises is not None:
            return (f"{head}: LIMIT HIT — this compile exceeds {where}; Dynamo will not compile and RAISES "
                    f"FailOnRecompileLimitHit in the program ({limit.raises})")
        return (f"{head}: LIMIT HIT — this compile exceeds {where}; "
                f"Dynamo will not compile: the code runs its existing entries only, else eagerly, from now on")
    if limit.hit_next:
        return (f"{head}; after this compile {limit.counted + 1} of {limit.limit}: "
                f"the NEXT recompile of this code hits the limit")
    return f"{head}; after this compile {limit.counted + 1} of {limit.limit}"


def _guarded_instead_text(ref: GuardRef, have: tuple[str, ...] | None, cid: str) -> str:
    """What compile `cid` guards on a chosen guard's source instead (`DropResult.instead`)."""
    what = f"{ref.guard_type} {ref.source}"
    if have is None:
        return f"{what} ({cid}'s guard filter entries were not recorded: what it guards there is not known)"
    why = (": automatic dynamic made it symbolic, only its type is guarded" if have and set(have) <= {"TYPE_MATCH"}
           else "")
    return f"{what} ({cid} guards it with " + (", ".join(have) if have else "nothing") + why + ")"


def _drop_head(r: DropResult) -> str:
    """What the filter of a drop did, one line without the ``drop:`` lead."""
    if not r.fired:
        return f"the guard filter did not run for {r.compile_id}; nothing was dropped"
    if not r.dropped:
        asked = ", ".join(f"{g.leaf_id} {g.guard_type} {g.source}" for g in r.requested)
        return f"{r.compile_id} built none of the guards asked for ({asked}); nothing was dropped"
    # one guard may come as several filter entries of one name and type (a BatchNorm's `.training` as four):
    # each is said once, with how many entries it was
    what = ", ".join(listed_once(f"{gtype} {source}" for source, gtype in r.dropped))
    return f"compiled {r.compile_id} without {len(r.dropped)} guard(s): {what}"


def drop_result_text(r: DropResult) -> str:
    """What the guard filter of ``drop`` left out of the compile that followed the stop (the session's message
    when that compile is done): the guards dropped, those the new compile did not build (with what it guards
    there instead, from its recorded filter entries), and the numbers the new code carries as constants where a
    dropped value guard risks constant folding."""
    lines = [f"drop: {_drop_head(r)}"]
    instead = dict(r.instead)
    if r.fired and not r.dropped:
        lines += [f"{_IND}{_guarded_instead_text(g, instead.get(g), r.compile_id)}" for g in r.requested]
    if r.missed:
        lines.append(f"{_IND}not built in {r.compile_id}, so nothing to drop for them: " + "; ".join(
            _guarded_instead_text(g, instead.get(g), r.compile_id) for g in r.missed))
    if r.constants:
        lines.append(f"{_IND}numbers the new code carries as constants (e.g. a replayed attribute update): "
                     + "; ".join(f"LOAD_CONST {text} at offset {offset}" for text, offset in r.constants))
    return "\n".join(lines)


def action_text(record: RecompileRecord) -> str:
    """What the user did on top of the decision: ``"drop g4 g5"``, ``"mark_dynamic(x, 0)"``; empty for none."""
    action = record.action
    if action is None:
        return ""
    if action.kind is DecisionKind.DYNAMIC:
        return f"mark_dynamic({action.name}, {action.dim})"
    return action.command


def outcome_text(record: RecompileRecord) -> str:
    """``"compiled 0/2"``, ``"recompile limit hit: not compiled"``, ``"ran eagerly"``, ``"compiling stopped"``,
    ``"no entry"`` (the compile gave none: a failure or a skip) or ``"pending"``."""
    outcome = record.outcome
    if outcome is not None:
        if outcome.kind is OutcomeKind.AFTER_LIMIT:
            return ("ran eagerly: the recompile limit was hit earlier, torch compiles this code no more (its "
                    "entries still serve calls they accept)")
        if outcome.dynamic is not None:
            return dynamic_outcome_text(outcome.dynamic, lead=False)
        drop = outcome.drop
        if drop is not None:
            head = _drop_head(drop)
            return head if drop.dropped else f"compiled {outcome.compile_id}; {head}"
        if outcome.auto_dynamic:
            checks = "; ".join(auto_dynamic_check_text(o) for o in outcome.auto_dynamic)
            return f"compiled {outcome.compile_id} (automatic dynamic read back: {checks})"
        return f"compiled {outcome.compile_id}"
    if record.pending:
        return "pending (the program is paused at this recompile stop)"
    if record.decision is DecisionKind.EAGER:
        return "ran eagerly (not compiled)"
    if record.decision is DecisionKind.SKIP:
        return "compiling stopped for this code; existing entries still serve"
    if record.limit_hit:
        if record.limit is not None and record.limit.raises is not None:
            return f"recompile limit hit: not compiled; torch raised FailOnRecompileLimitHit ({record.limit.raises})"
        return "recompile limit hit: not compiled"
    return "no entry (the compile gave none)"


def stack_arg_text(arg: StackArg) -> str:
    """What a ``___stack*`` argument carries: ``"peak in forward: the value of `h.abs().max().item()` (line 26)"``."""
    line = f" (line {arg.line})" if arg.line else ""
    if arg.top and arg.variable is not None:
        return f"{arg.variable} in {arg.function}: the value of `{arg.expression or ''}`{line}"
    if arg.top and arg.expression:
        return f"the value on top of {arg.function}'s stack at line {arg.line}: part of `{arg.expression}`"
    return f"value {arg.position} of {arg.function}'s value stack at the graph break{line}"


# --------------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------------


_HINT = re.compile(r"\s*\(HINT: (?P<hint>.*)\)\s*$", re.S)


def _without_repeated_hint(reason: str, failing: Sequence[LeafGuardView]) -> str:
    """torch's reason without its trailing ``(HINT: ...)`` when a failing guard shows that hint as its note."""
    m = _HINT.search(reason)
    if m is None or not any(leaf.note and m.group("hint") in leaf.note for leaf in failing):
        return reason
    return reason[:m.start()] + " (its hint is under the guard)"


#: What each `GroupCause` is, in words (only set when the entry's guards show it: `grouping`).
CAUSE_TEXT: dict[GroupCause, str] = {
    GroupCause.TRAIN_TO_EVAL: "the model switched from train() to eval()",
    GroupCause.EVAL_TO_TRAIN: "the model switched from eval() to train()",
}


def _ids_text(ids: Sequence[str]) -> str:
    """``"g45 g88 g131"``, or ``"g45 g88 … g432"`` for more than four."""
    return " ".join(ids) if len(ids) <= 4 else f"{ids[0]} {ids[1]} … {ids[-1]}"


def group_lines(group: GuardGroup, *, full: bool = False) -> list[str]:
    """One group of failing guards: the count, type, sources in one spelling, the pair, the cause when the data
    shows it; then the user line they share and their ids (`full`: every leaf's source, one per line)."""
    owners = f" ({', '.join(group.owner_types)})" if group.owner_types else ""
    pair = expected_actual_text(LeafGuardView("", group.guard_type, "", (), expected=group.expected,
                                              actual=group.actual))
    head = f"{_IND}{len(group.leaf_ids)} × {group.guard_type} on {group.pattern}{owners}: {pair}"
    if group.cause is not None:
        head += (f": {CAUSE_TEXT[group.cause]} (all {group.flags_total} .training flags its guards read are now "
                 f"{group.actual})")
    lines = [head]
    where = where_text(LeafGuardView("", "", "", (), location=group.location)) if group.location else ""
    if full:
        if where:
            lines.append(f"{_IND}   line: {where}")
        lines += [f"{_IND}   {lid} {src}" for lid, src in zip(group.leaf_ids, group.sources)]
    else:
        ids = f"{_ids_text(group.leaf_ids)} (`why --all` lists each)"
        lines.append(f"{_IND}   line: {where}; {ids}" if where else f"{_IND}   {ids}")
    return lines


def failing_text(record: RecompileRecord, *, full: bool = False) -> str:
    """Every failing guard of every entry (torch's order), torch's own reason first for each entry; failing
    guards that repeat (`RecompileRecord.groups`) as one group each (`full`: with every source listed)."""
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
        groups = [g for g in record.groups if g.compile_id == v.compile_id]
        first_of = {g.leaf_ids[0]: g for g in groups}
        grouped = {lid for g in groups for lid in g.leaf_ids}
        for leaf in v.failing:
            if leaf.id in first_of:
                lines += group_lines(first_of[leaf.id], full=full)
            elif leaf.id not in grouped:
                if (leaf.id == v.torch_leaf and leaf.reason and v.first_failure
                        and leaf.reason.strip() == v.first_failure.strip()):
                    leaf = replace(leaf, reason=None)      # the "torch reports" line above says it
                lines += failing_leaf_lines(leaf, v.torch_leaf)
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
            if x.kind is DiffKind.CHANGED:
                old, new = cut_pair(x.old_code or "", x.new_code or "", 160)
                lines.append(f"{_IND}changed {x.guard_type} {x.source}: {old} → {new}")
            elif x.kind is DiffKind.ADDED:
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
    changed = []
    grouped = {name for g in record.changed_groups for name in g.names}
    for g in record.changed_groups:
        cause = f" ({CAUSE_TEXT[g.cause]})" if g.cause is not None else ""
        before = g.expected if g.expected is not None else "(not readable off the guard)"
        changed.append(f"{len(g.names)} × {g.pattern}: {before} → {g.actual}{cause}")
    for change in record.changed:
        if change.name in grouped:
            continue
        before = change.expected if change.expected is not None else "(not readable off the guard)"
        shown = f"{change.name} ({change.variable})" if change.variable else change.name
        changed.append(f"{shown}: {before} → {change.actual}")
    since = "changed since " + record.entries[0].compile_id + ":" if changed else ""
    if len(changed) == 1 and len(changed[0]) <= 160:
        head = [f"{since} {changed[0]}"]        # one change: on the line that says since when
    else:
        head = ([since] + [_IND + c for c in changed]) if changed else []
    return "\n".join(head + lines) or "(no inputs)"


def auto_dynamic_lines(record: RecompileRecord) -> list[str]:
    """What torch's automatic dynamic shapes does at this miss, one line per dimension (empty when nothing, and
    when the call ran eagerly or compiling stopped: then no new entry was made)."""
    if record.decision is not DecisionKind.RECOMPILE:
        return []
    return [auto_dynamic_text(d, record.compile_id) for d in record.auto_dynamic]


def stack_args_text(record: RecompileRecord) -> str:
    """What a resume function's ``___stack*`` arguments carry, and why a ``.item()`` value recompiles (empty for
    any other code object)."""
    lines = [f"{arg.name} is {stack_arg_text(arg)}" for arg in record.stack_args]
    if lines:
        lines.append(f"{_IND}(handed over from the original frame's value stack at the graph break)")
    if record.scalar_break:
        lines += [f"{_IND}Turning a tensor into a Python number (.item(), int(t), float(t)) left the graph (the graph",
                  f"{_IND}break); the resume function's guards then pin that number, so every new value recompiles.",
                  f"{_IND}torch._dynamo.config.capture_scalar_outputs = True keeps .item() in the graph as a symbolic",
                  f"{_IND}value: no graph break, no guard on the number."]
    return "\n".join(lines)


def group_warning_text(group: GuardGroup, w: DropWarning) -> str:
    """One warning for the guards of a group that share a risk (`w` is one of theirs)."""
    n = len(group.leaf_ids)
    if w.risk is DropRisk.CONSTANT_FOLDED:
        pinned = f" == {w.expected}" if w.expected else ""
        served = f"the entry compiled for {w.actual}" if w.actual else "this code"
        return (f"{n} × {group.pattern} are constants to Dynamo: {group.guard_type} pins each{pinned}. Dynamo "
                f"specialised the code on those values and may have baked them into the FX graph or the generated "
                f"code (constant folding). Without these guards {served} serves every later value unchecked and can "
                f"give silently wrong results — RESULTS MAY BE WRONG")
    return f"{n} × {group.pattern}: " + drop_warning_text(w)


def warning_lines(warnings: Sequence[DropWarning], groups: Sequence[GuardGroup] = (), *, limit: int = 3) -> list[str]:
    """``WARNING: ...`` lines of a choice: the warnings of a group's guards with one risk as one line (when
    every guard of the group has one: a drop of some of them says each), the others one each; at most `limit`
    lines."""
    warned = {(w.guard.compile_id or "", w.guard.leaf_id) for w in warnings}
    by_leaf = {(g.compile_id, lid): g for g in groups for lid in g.leaf_ids
               if all((g.compile_id, other) in warned for other in g.leaf_ids)}
    seen: set[tuple[int, DropRisk]] = set()
    lines = []
    for w in warnings:
        g = by_leaf.get((w.guard.compile_id or "", w.guard.leaf_id))
        if g is not None:
            if (id(g), w.risk) in seen:
                continue
            seen.add((id(g), w.risk))
            lines.append(f"WARNING: {group_warning_text(g, w)}")
        else:
            lines.append(warning_line(w))
    return lines[:limit]


def choices_lines(choices: Sequence[RecompileChoice], hints: Sequence[str],
                  groups: Sequence[GuardGroup] = ()) -> str:
    """Plain text of a recompile stop's choices (line mode); warnings about the guards of one of `groups` (the
    record's `RecompileRecord.groups`) are one line per group."""
    lines = []
    limit_said = False
    codes: list[str] = []
    said_under: list[str] = []
    for c in choices:
        if c.kind in (DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP):
            lines.append(f"{c.kind.value:<14} {c.summary}")
            if c.kind in (DecisionKind.EAGER, DecisionKind.SKIP) and c.permanent:
                first, *others = permanent_lines(c.permanent)
                codes.append(f"{c.kind.value} permanently: {first}")
                for other in others:
                    if other.endswith("# torch's own hint"):
                        continue
                    if other in said_under:
                        continue            # the same line, described under eager already: said once
                    codes.append(f"{_IND}or: {other}")
                    said_under.append(other)
        elif not c.available:
            why_not = choice_why_not_text(c)
            if why_not == LIMIT_WHY_NOT:
                if not limit_said:
                    lines.append(f"drop, dynamic  not available: {why_not}")
                    limit_said = True
            elif why_not:
                lines.append(f"{c.kind.value:<14} not available: {why_not}")
                lines += [f"{_IND}{line}" for line in held_back_lines(c.held_back)]
        elif c.kind is DecisionKind.DROP and not c.decision.guard_ids:
            # the default is empty: every droppable failing guard is one it leaves out (each still by id)
            lines.append(f"drop [ID...]   {c.summary} (default: nothing — name ids to drop)")
            lines += [f"{_IND}{line}" for line in held_back_lines(c.held_back)]
        elif c.kind is DecisionKind.DROP:
            lines.append(f"drop [ID...]   {c.summary} ({choice_detail_text(c)})")
            lines += [f"{_IND}{line}" for line in held_back_lines(c.held_back)]
            if c.permanent:
                lines.append(f"{_IND}permanently: {permanent_text(c.permanent)}")
            lines += [f"{_IND}{text}" for text in warning_lines(c.warnings, groups)]
        elif c.kind is DecisionKind.DYNAMIC and c.decision.name is not None:
            lines.append(f"dynamic {c.decision.name} {c.decision.dim}   {c.summary}")
            if c.permanent:
                lines.append(f"{_IND}permanently: {permanent_text(c.permanent)}")
            for text in choice_warning_texts(c)[:3]:
                lines.append(f"{_IND}WARNING: {text}")
    lines += codes
    for hint in hints:
        lines.append(f"torch suggests: {hint}")
    return "\n".join(lines)


def record_text(record: RecompileRecord, *, full: bool = False) -> str:
    """The whole record as one block (``report`` text, the ``why`` command; `full`: ``why --all``, every
    grouped guard's source listed)."""
    head = f"#{record.seq} {record.frame_name} → {record.compile_id or 'not compiled'}: {record.decision.value}"
    action = action_text(record)
    if action:
        head += f" ({action})"
    head += f"; {outcome_text(record)}"
    parts = [head, "failing guards:"] + [_IND + ln for ln in failing_text(record, full=full).splitlines()]
    if record.non_input:
        parts.append("not about the inputs:")
        parts += [f"{_IND}{f.compile_id}: {f.text}" for f in record.non_input]
    automatic = auto_dynamic_lines(record)
    if automatic:
        parts.append("automatic dynamic:")
        parts += [_IND + ln for ln in automatic]
    if record.limit is not None:
        parts.append(f"recompile limit: {limit_text(record.limit)}")
    if record.diffs:
        parts.append("guard diffs of the entries (compile order):")
        parts += [_IND + ln for ln in diffs_text(record.diffs).splitlines()]
    return "\n".join(parts)


def recompile_blocks(record: RecompileRecord, choices: Sequence[RecompileChoice] | None = None,
                     hints: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """The (title, text) blocks line mode prints at a recompile stop: failing guards, non-input failures, what a
    resume function's ``___stack*`` arguments are, inputs, recompile limit, guard diffs (when there are two entries
    or more to compare), choices (`choices` and
    `hints` as the stop carries them; by default the ones `decisions.recompile_choices` gives the record)."""
    if choices is None or hints is None:
        from ..decisions import config_hints, recompile_choices

        choices = recompile_choices(record) if choices is None else choices
        hints = config_hints(record) if hints is None else hints
    nxt = f"next compile: {record.compile_id or '?'}"
    if len(record.entries) == 1:
        # one entry: no order to explain; the next compile's id goes on the entry's own line
        first, _, rest = failing_text(record).partition("\n")
        text = f"{first}  ({nxt})" + (f"\n{rest}" if rest else "")
    else:
        text = f"{nxt}; entries in torch's order (most recently used first)\n{failing_text(record)}"
    blocks = [("failing guards", text)]
    if record.non_input:
        blocks.append(("not about the inputs",
                       "\n".join(f"{f.compile_id}: [{f.kind}] {f.text}" for f in record.non_input)))
    carried = stack_args_text(record)
    if carried:
        blocks.append(("what the ___stack arguments are", carried))
    blocks.append(("inputs", inputs_text(record)))
    automatic = auto_dynamic_lines(record)
    if automatic:
        blocks.append(("automatic dynamic", "\n".join(automatic)))
    if record.limit is not None:
        blocks.append(("recompile limit", limit_text(record.limit)))
    if record.diffs:
        blocks.append(("guard diffs", diffs_text(record.diffs)))
    blocks.append(("choices", choices_lines(choices, hints, record.groups)))
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
    us = (f", {cost.eval_us:.1f} µs for one evaluation {COLD_SAMPLE}"
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
            nearly = r.limit is not None and r.limit.hit_next and r.decision is DecisionKind.RECOMPILE
            flag = "  [RECOMPILE LIMIT HIT]" if r.limit_hit else ("  [next recompile hits the limit]" if nearly else "")
            action = action_text(r)
            lines.append(f"  #{r.seq} {who}→ {r.compile_id or 'not compiled'}: {r.decision.value}"
                         f"{f' ({action})' if action else ''}; {outcome_text(r)}{flag}")
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
            lines.append(f"    graph break [{gb.logged_id}] line {gb.lineno}: {cut(gb.summary, 200)}")
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
