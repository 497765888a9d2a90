"""Plain text of every engine result: stops, listings, value stacks, locals, watches, breakpoints, guard trees,
recompile records and choices, edits. Used by `--plain`, the command language (`commands`), the console log and
golden tests; JSON is `report`'s.

One formatting path (like `dis.Formatter`): the TUI renders the same dataclasses with widgets, everything else
prints these strings. Output is deterministic for a given snapshot. Recompile records are in `format.recompile`,
edits in `format.edits`, guard trees in `format.guards`; an instruction's argument is `arg_text`'s everywhere.
"""

from __future__ import annotations

import dis
from typing import Sequence

from ..model import (
    BreakContext,
    BreakpointView,
    CodeRoles,
    CodeView,
    EditOutcome,
    FrameView,
    GraphView,
    GuardEditKind,
    GuardEditView,
    GuardTree,
    Instr,
    PatchView,
    Provenance,
    RecompileChoice,
    ResumeAction,
    Resumed,
    Stop,
    StopKind,
    TracedBreak,
    ValueSummary,
    WatchValue,
)
from ..values import cut
from .advice import plan_check_text
from .breaks import eager_fallback_text
from .drop_default import held_back_lines
from .edits import format_diff, format_stack, patch_contents
from .guards import format_failing, format_guard_tree
from .history import history_info_text, history_line, history_view_text
from .recompile import (
    choices_lines,
    compiles_text,
    diffs_text,
    drop_result_text,
    drop_warning_text,
    dropped_refs_texts,
    entries_text,
    permanent_text,
    record_text,
    recompile_blocks,
    stack_arg_text,
    warning_line,
    warning_lines,
)
from .teach import (
    ROLE_WIDTH,
    explanation_text,
    guard_types_text,
    provenance_lines,
    provenance_note,
    region_header,
    role_legend,
    role_tag,
    slot_suffix,
)

__all__ = [
    "arg_text",
    "backtrace_text",
    "breakpoint_set_text",
    "breakpoints_text",
    "choices_lines",
    "compiles_text",
    "diffs_text",
    "drop_result_text",
    "drop_warning_text",
    "edit_outcome_text",
    "entries_text",
    "explanation_text",
    "failing_guards_text",
    "format_diff",
    "format_stack",
    "globals_text",
    "graph_break_text",
    "graphs_text",
    "guard_edit_line",
    "guard_trees_text",
    "guard_types_text",
    "held_back_lines",
    "history_info_text",
    "history_line",
    "history_view_text",
    "instr_line",
    "listing",
    "locals_text",
    "patches_text",
    "permanent_text",
    "provenance_lines",
    "provenance_note",
    "record_text",
    "recompile_blocks",
    "recompile_choices_text",
    "resumed_head",
    "resumed_text",
    "role_legend",
    "source_text",
    "stack_note",
    "stack_text",
    "stop_blocks",
    "stop_text",
    "value_text",
    "warning_line",
    "watch_line",
    "watches_text",
    "whatif_text",
    "where_line",
]

#: Width of the opname column in listings.
OPNAME_WIDTH = 22


def arg_text(ins: "Instr | dis.Instruction", *, raw: bool = False) -> str:
    """An instruction's argument, as every listing of dynadbg shows it (line mode, ``report``, the TUI's bytecode
    pane, verbose mode): `dis`'s reading of it (``x``, ``to 24``, ``NULL + __compiled_fn_1``), else the raw oparg
    (``COPY 1``, ``CALL 2``); empty for none. `raw`: the oparg, then its reading in parentheses (``2 (x)``), as
    ``report --full`` lists code for a reader of raw bytecode."""
    number = "" if ins.arg is None else str(ins.arg)
    if raw:
        return f"{number} ({ins.argrepr})" if number and ins.argrepr else ins.argrepr or number
    return ins.argrepr or number


def instr_line(ins: Instr, *, current: bool = False, breakpoint: bool = False, tag: str | None = None) -> str:
    """One listing line: marker, breakpoint, index, offset, source line, [role tag,] opname, argument, jump target.

    Example: ``"▶ ●   12    24  L18  LOAD_FAST              x"``; with `tag` (the role column, see
    `format.teach.ROLE_TAGS`): ``"▶ ●   12    24  L18  g-input  LOAD_FAST              x"``.
    """
    mark = "▶" if current else " "
    bp = "●" if breakpoint else " "
    line = f"L{ins.lineno}" if ins.lineno is not None else ""
    arg = arg_text(ins)
    if ins.jump_target is not None and "to " not in arg:
        arg = f"{arg} → {ins.jump_target}".strip()
    elif ins.jump_target is not None:
        arg = f"{arg} (→ {ins.jump_target})"
    target = ">>" if ins.is_jump_target else "  "
    role = "" if tag is None else f"{tag:<{ROLE_WIDTH}} "
    return (f"{mark}{bp}{target}{ins.index:>5} {ins.offset:>6}  {line:<6}{role}{ins.opname:<{OPNAME_WIDTH}} "
            f"{arg}").rstrip()


def listing(code: CodeView, *, current: int = -1, breakpoints: tuple[int, ...] = (), around: int | None = None,
            span: tuple[int, int] | None = None, roles: CodeRoles | None = None) -> str:
    """The listing of `code`: whole, `around` instructions either side of `current`, or the index range `span`
    (first, end exclusive). With `roles` (`Engine.roles()`): a role column, and a header line above the first
    instruction of each region (and above the first row shown, when it starts mid-region)."""
    rows = code.instructions
    if span is not None:
        rows = rows[max(0, span[0]):max(0, span[1])]
    elif around is not None and current >= 0:
        lo, hi = max(0, current - around), min(len(rows), current + around + 1)
        rows = rows[lo:hi]
    if roles is not None and len(roles.roles) != len(code.instructions):
        roles = None  # roles of another code object (edited since): no column rather than a wrong one
    bps = set(breakpoints)
    head = f"{code.name}  ({code.filename}:{code.firstlineno})"
    head += f"  compile {code.compile_id}" if code.compile_id else ""
    lines = [head]
    for k, r in enumerate(rows):
        tag = None
        if roles is not None:
            header = region_header(roles, r.index)
            if header is None and k == 0:
                region = roles.region_at(r.index)
                header = f"      -- (continued) {region.title}  [{region.source}]" if region is not None else None
            if header is not None:
                lines.append(header)
            tag = role_tag(roles.roles[r.index])
        lines.append(instr_line(r, current=r.index == current, breakpoint=r.index in bps, tag=tag))
    return "\n".join(lines)


def value_text(v: ValueSummary) -> str:
    if v.is_null:
        return "NULL"
    if v.unknown:
        return "<unknown>"
    if v.is_tensor:
        return v.text
    return f"{v.type_name:<10} {v.text}"


def stack_note(frame: FrameView) -> str:
    """Which slots a frame's `stack` holds and how their depth is known, when it is not the running frame's
    tracked stack: ``"below the pending call, whose operands are consumed"``, ``"depth from the code's flow: not
    traced from its start"``; empty otherwise."""
    parts = []
    if frame.below_call:
        parts.append("below the pending call, whose operands are consumed")
    if frame.depth_from_flow:
        parts.append("depth from the code's flow: not traced from its start")
    return "; ".join(parts)


def stack_text(frame: FrameView, provenance: Provenance | None = None) -> str:
    """The value stack, bottom first, TOS marked; with `provenance` (`Engine.stack_provenance()`), after each
    slot the instruction that pushed it and what it stands for (``<- pushed by 12 LOAD_FAST x``)."""
    note = stack_note(frame)
    if not frame.stack:
        return "value stack: empty" + (f" ({note})" if note else "")
    if len(frame.stack) == 1 and frame.stack[0].unknown:
        return "value stack: unknown (this frame was not traced from its start, or it has unwound: post-mortem)"
    shown = "" if frame.stack_exact else " (depth tracked per instruction: this Python exposes no stack top)"
    if note:
        shown = f" ({note})"
    n = len(frame.stack)
    lines = [f"value stack: {n} slot{'s' if n != 1 else ''}, TOS last{shown}"]
    for i, v in enumerate(frame.stack):
        lines.append(f"  [{i}] {value_text(v)}{slot_suffix(provenance, i, n)}")
    if provenance is not None and not note:  # a caller's origins are those before its call
        if len(provenance.slots) != n:
            lines.append(f"(no origins: the code's flow gives {len(provenance.slots)} slots here)")
        elif provenance_note(provenance):
            lines.append(provenance_note(provenance))
    return "\n".join(lines)


def locals_text(frame: FrameView) -> str:
    if not frame.locals:
        return "locals: none bound"
    width = max(len(n) for n, _ in frame.locals)
    lines = ["locals:"]
    for name, v in frame.locals:
        star = "*" if name in frame.changed else " "
        lines.append(f" {star}{name:<{width}}  {value_text(v)}")
    return "\n".join(lines)


def where_line(stop: Stop) -> str:
    """``"[entry] f  index 3 (offset 6)  line 12  compile 0/0, entry 1 of 2"``."""
    parts = [f"[{stop.kind.value}]"]
    frame = stop.frame
    if frame is not None:
        parts.append(frame.code.name)
        if frame.index >= 0:
            ins = frame.code.instructions[frame.index]
            parts.append(f"index {frame.index} (offset {ins.offset}) {ins.opname}")
        if frame.lineno is not None:
            parts.append(f"line {frame.lineno}")
    cid = stop.compile_id
    if cid:
        entry = (f", {entry_position_text(stop.entry_index, stop.entry_count)}"
                 if stop.entry_index and stop.entry_count else "")
        parts.append(f"compile {cid}{entry}")
    return "  ".join(parts)


def traced_break_text(t: TracedBreak) -> str:
    """Where Dynamo's recorded trace holds a break, and the command that lists the steps up to it."""
    line = f" at line {t.line}" if t.line is not None else ""
    depth = f", inline depth {t.depth}" if t.depth else ""
    return (f"Dynamo traced it: step {t.ordinal} of compile {t.compile_id} attempt {t.attempt}, {t.opname}{line}"
            f"{depth} (`trace steps {t.compile_id} {t.attempt}` lists the steps up to it)")


def graph_break_text(gb: BreakContext) -> str:
    """Why a resume function runs, as the stop shows it: the resume function and where it continues the
    original function, the graph break that made it (where, torch's reason and notes), and what was handed to
    it: the ``___stack*`` arguments (what was on the original frame's value stack at the break, each with what it
    carries) and the locals carried over."""
    if not gb.known:
        return f"{gb.resume_name}: graph-break details are not available"
    lines: list[str] = []
    head = f"resume function {gb.resume_name} (compile {gb.compile_id})"
    point = gb.resumes
    if point is not None:
        at = ""
        if point.offset is not None:
            at = f" at offset {point.offset}"
            if point.opname is not None:
                line = point.lineno if point.lineno is not None else "?"
                at += f" ({point.opname} {point.argrepr or ''}".rstrip() + f", line {line})"
        head += f" continues {point.function} ({point.filename}:{point.firstlineno}){at}"
    lines.append(head)
    brk = gb.brk
    if brk is not None:
        loc = f"{brk.filename}:{brk.lineno}" if brk.filename else "(location unknown)"
        lines.append(f"graph break in {gb.break_frame} during compile {gb.break_compile_id}, at {loc}")
        if brk.user_line:
            lines.append(f"  {brk.lineno} | {brk.user_line.strip()}")
        lines.append(f"reason: {cut(brk.summary, 200)}")
        lines += [f"  {cut(note, 240)}" for note in brk.notes[:4]]
        if brk.duplicate:
            lines.append("  (torch logged it as a duplicate and suppressed its user stack)")
        if gb.traced is not None:
            lines.append(traced_break_text(gb.traced))
    else:
        lines.append("graph break: no record (the break happened before the debugger attached?)")
    if gb.stack:
        lines.append("stack passed to it (what was on the original frame's stack at the break, bottom first):")
        lines += [f"  {h.name} = {h.value.text}" + (f"  ({stack_arg_text(h.carries)})" if h.carries else "")
                  for h in gb.stack]
    else:
        lines.append("stack passed to it: nothing")
    if gb.carried:
        lines.append("locals carried over:")
        lines += [f"  {h.name} = {h.value.text}" for h in gb.carried]
    if gb.bookkeeping:
        lines.append(f"(Dynamo bookkeeping arguments: {', '.join(gb.bookkeeping)})")
    return "\n".join(lines)


def stop_blocks(stop: Stop, *, graph_break: bool | None = None) -> list[tuple[str, str]]:
    """The (title, text) blocks a stop's kind carries, in the order line mode prints them: the recompile
    record's (`recompile_blocks`), the graph break behind a resume function (at a graph-break stop and a resume
    function's entry; `graph_break`: True at every stop that has one, False never), the graph break no resume
    function follows (`Stop.eager_fallback`), the exception."""
    blocks: list[tuple[str, str]] = []
    if stop.recompile is not None:
        blocks += recompile_blocks(stop.recompile, stop.choices, stop.hints)
    if graph_break is None:
        graph_break = stop.kind in (StopKind.GRAPH_BREAK, StopKind.ENTRY)
    if graph_break and stop.graph_break is not None:
        blocks.append(("graph break", graph_break_text(stop.graph_break)))
    if stop.eager_fallback is not None:
        blocks.append(("graph break", eager_fallback_text(stop.eager_fallback)))
    if stop.exception_lines:
        blocks.append(("exception", "\n".join(stop.exception_lines)))
    return blocks


def stop_text(stop: Stop, *, context: int = 2, roles: CodeRoles | None = None) -> str:
    """What the plain front end prints when the program stops: where, why, and the instructions around it; with
    `roles` (`Engine.roles()` of the stop's code) the same role column and region headers as `ll`."""
    if stop.trace is not None:  # inside Dynamo's tracing: the symbolic state, not a frame (format.trace)
        from .trace import trace_stop_text

        return trace_stop_text(stop)
    lines = [f"--- {stop.message}", where_line(stop)]
    for title, text in stop_blocks(stop):
        body = text.splitlines()
        if len(body) == 1 and len(title) + len(body[0]) <= 118:
            lines.append(f"{title}: {body[0]}")     # a one-line block on its title's line
            continue
        lines.append(f"{title}:")
        lines.extend("  " + t for t in body)
    if stop.return_value is not None:
        lines.append(f"return value: {value_text(stop.return_value)}")
    if stop.exception and not stop.exception_lines:
        lines.append(f"exception: {stop.exception}")
    frame = stop.frame
    if frame is not None and frame.index >= 0:
        if roles is not None and roles.key != frame.code.key:
            roles = None  # another code object's roles: no column rather than a wrong one
        text = listing(frame.code, current=frame.index, breakpoints=frame.breakpoints, around=context, roles=roles)
        lines.append(text.split("\n", 1)[1])
    elif frame is not None and stop.kind is StopKind.COMPILE:
        lines.append(f"({len(frame.code.instructions)} instructions; `ll` lists them)")
    watches = watches_text(stop.watches)
    if watches:
        lines.append(watches)
    return "\n".join(lines)


#: What each plain decision does, as its answer says it (not the command's name again: the echo shows that).
_DECIDED = {
    ResumeAction.RECOMPILE: "recompile: Dynamo compiles a new cache entry for this call",
    ResumeAction.EAGER: "eager: this call runs without compiling; the cache entries stay as they are",
    ResumeAction.SKIP: "skip: this code object is not compiled again while dynadbg runs; its cache entries still serve",
    ResumeAction.QUIT: "quit",
}


def resumed_head(result: Resumed) -> str:
    """What a resuming command or a decision did, before its warnings and permanent fix: ``"recompiling
    without: g18 EQUALS_MATCH L['self'].counter == 0"``, ``"marked x dimension 0 dynamic (size now 5);
    recompiling"``, what the decision does (`_DECIDED`); ``"back to the present"`` first when history was
    shown. Empty for a plain step or a detach."""
    action = result.action
    if action is ResumeAction.DROP:
        head = "recompiling without: " + ", ".join(dropped_refs_texts(result.dropped, result.groups))
    elif action is ResumeAction.DYNAMIC:
        head = "\n".join(f"marked {d.name} dimension {d.dim} dynamic"
                         + (f" (size now {d.size})" if d.size is not None else "")
                         + "; recompiling (the new entry is checked when it is built)"
                         for d in result.dynamic)
    elif action in _DECIDED:
        head = _DECIDED[action]
    elif action is ResumeAction.TRACE_REWIND and result.rewind is not None:
        r = result.rewind
        head = f"rewinding: Dynamo traces {r.code_name} again from its start (attempt {r.attempt})"
    elif result.default_recompile:
        head = ("at a recompile stop this lets Dynamo compile a new cache entry for the call (the default "
                "decision; `eager` or `skip` decide otherwise)")
    else:
        head = ""
    if result.left_history:
        return "back to the present" + (f"; {head}" if head else "")
    return head


def resumed_text(result: Resumed) -> str:
    """Everything a resuming command or a decision says, each thing once: `resumed_head`, one ``WARNING:``
    line per warning, then ``permanently:`` and the code that gets the decision's effect for good."""
    lines = [resumed_head(result)] if resumed_head(result) else []
    lines += held_back_lines(result.held_back)
    lines += warning_lines(result.warnings, result.groups, limit=len(result.warnings))
    if result.plan is not None:
        lines.append(plan_check_text(result.plan))
    if result.permanent is not None:
        lines += ["permanently:", permanent_text(result.permanent)]
    return "\n".join(lines)


def guard_edit_line(edit: GuardEditView) -> str:
    """One guard edit as ``guard`` lists it (``"1. drop forward 0/0: EQUALS_MATCH L['n'] == 3"``)."""
    state = "" if edit.active else "  (undone)"
    where = f"{edit.code_name} {edit.compile_id or ''}".strip()
    copy = f"  (copy {edit.copy_id})" if edit.copy_id else ""
    if edit.kind is GuardEditKind.ADD:
        leaf = f"{edit.guard_type} " if edit.guard_type != "LAMBDA_GUARD" else ""
        return f"{edit.number}. add  {where}: {leaf}{edit.text}{copy}{state}"
    return f"{edit.number}. drop {where}: {edit.guard_type} {edit.text}{copy}{state}"


def globals_text(rows: Sequence[tuple[str, ValueSummary]], pattern: str | None = None) -> str:
    """``globals [PATTERN]``: one global a line, name then summary."""
    if not rows:
        return f"no globals matching {pattern!r}" if pattern else "no globals"
    width = min(max(len(n) for n, _ in rows), 48)
    return "\n".join(f"  {name:<{width}}  {value_text(v)}" for name, v in rows)


def ordinal(n: int) -> str:
    """``1`` → ``"1st"``, ``2`` → ``"2nd"``, ``11`` → ``"11th"``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def entry_position_text(index: int, count: int) -> str:
    """Where the serving cache entry stands in torch's lookup order (most recently used first), said the same
    way by every front end: ``"checked 1st of 2 entries"``; entries are named by compile id elsewhere."""
    return f"checked {ordinal(index)} of {count} entr{'y' if count == 1 else 'ies'}"


def backtrace_text(stop: Stop, selected: int) -> str:
    if not stop.frames:
        return "no generated frames on the stack"
    lines = []
    for i, f in enumerate(stop.frames):
        mark = ">" if i == selected else " "
        if f.index >= 0:
            lines.append(f"{mark} #{i} {f.code.name}  index {f.index}  line {f.lineno}  ({f.code.filename})")
        else:  # e.g. the call a recompile stop holds: nothing of it has run yet
            lines.append(f"{mark} #{i} {f.code.name}  not started (the call is about to run)  "
                         f"({f.code.filename}:{f.code.firstlineno})")
    return "\n".join(lines)


def watch_line(w: WatchValue) -> str:
    """``"x.sum() = tensor(6.)"``; ``*`` after the number marks a value changed since the previous stop."""
    if not w.evaluated:
        return f"{w.expr} = (not evaluated: no frame at this stop)"
    if w.error is not None:
        return f"{w.expr} !! {w.error}"
    return f"{w.expr} = {w.text}"


def watches_text(watches: Sequence[WatchValue]) -> str:
    """The watch block after a stop (empty when there are no watches)."""
    if not watches:
        return ""
    lines = ["watches:"]
    for w in watches:
        mark = "*" if w.changed else " "
        lines.append(f" {mark}{w.number}: {watch_line(w)}")
    return "\n".join(lines)


def breakpoint_set_text(bp: BreakpointView) -> str:
    return f"breakpoint {bp.number} at {bp.code_name} index {bp.index} ({bp.opname})" + (
        f" if {bp.condition}" if bp.condition else "")


def breakpoints_text(bps: Sequence[BreakpointView]) -> str:
    if not bps:
        return "no breakpoints"
    return "\n".join(
        f"{bp.number:>3}  {bp.code_name} index {bp.index}  hits {bp.hits}"
        + (f"  if {bp.condition}" if bp.condition else "")
        + ("  (marker: set_trace() / bytecode_debugger.breakpoint())" if bp.marker else "")
        for bp in bps
    )


def source_text(filename: str, start: int, lines: Sequence[str], current: int | None) -> str:
    """A function's source, the current line marked with ``▶``."""
    out = [f"{filename}:{start}"]
    for i, text in enumerate(lines):
        no = start + i
        out.append(f"{'▶' if no == current else ' '}{no:>5}  {text.rstrip()}")
    return "\n".join(out)


def guard_trees_text(trees: Sequence[GuardTree], *, explain: bool = False) -> str:
    """Each guard tree (`format.guards.format_guard_tree`); `explain`: then one line per guard type present saying
    what it checks and what change of input makes it fail."""
    text = "\n\n".join(format_guard_tree(t) for t in trees)
    legend = guard_types_text(trees) if explain else ""
    return f"{text}\n{legend}" if legend else text


def failing_guards_text(trees: Sequence[GuardTree]) -> str:
    return format_failing(list(trees))


def whatif_text(trees: Sequence[GuardTree]) -> str:
    """``whatif`` (the command and the TUI's ``w`` key): each entry's verdict on this call's inputs, with its
    guard count, then every failing guard by id (what ``drop`` and ``guard drop`` take), type and code."""
    lines = []
    for t in trees:
        n = len(t.failing)
        verdict = (f"PASS (would serve this call; {t.leaf_count:,} guards)" if t.passed
                   else f"FAIL ({n} failing guard{'s' if n != 1 else ''} of {t.leaf_count:,})")
        lines.append(f"entry {t.compile_id}: {verdict}")
        for leaf in t.failing:
            where = f"   # {leaf.user_line}" if leaf.user_line else ""
            lines.append(f"    {leaf.id} {leaf.guard_type:<14} {' and '.join(leaf.code)}{where}")
    return "\n".join(lines) if lines else "no cache entries"


def graphs_text(graphs: Sequence[GraphView]) -> str:
    return "\n\n".join(f"# {g.name}  (compile {g.compile_id}, {g.node_count} nodes)\n{g.code.strip()}" for g in graphs)


def edit_outcome_text(outcome: EditOutcome) -> str:
    text = outcome.message
    if outcome.diff is not None:
        text += "\n" + format_diff(outcome.diff, context=2)
    return text


def patches_text(views: Sequence[PatchView]) -> str:
    if not views:
        return "no patches"
    lines = []
    for v in views:
        state = "pending (no compile matched yet)" if v.pending else f"applied to {', '.join(v.compile_ids) or '-'}"
        lines.append(f"{v.key.describe()}: {patch_contents(len(v.ops), v.guard_ops)}, {state}")
        lines.extend(f"    {op.text}" for op in v.ops)
    return "\n".join(lines)


def recompile_choices_text(choices: Sequence[RecompileChoice], hints: Sequence[str] = ()) -> str:
    """A recompile stop's choices as line mode prints them."""
    return choices_lines(choices, hints)

