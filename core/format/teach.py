"""Plain text of the teaching views: the role column and region headers of `ll`/`l`, `explain IDX`, the
provenance of each value-stack slot in `stack`, and the one-line guard-type explanations under `guards`.

Pure functions of the frozen records `dynadbg.core.roles`, `explain` and `provenance` build (model types in,
strings out); the TUI renders the same records with widgets.
"""

from __future__ import annotations

from typing import Sequence

from .. import compat
from ..explain import guard_line
from ..guards import iter_leaves
from ..model import (
    CodeRoles,
    Explanation,
    GuardTree,
    InstrRole,
    Provenance,
    Role,
    SlotOrigin,
    ValueSummary,
)
from ..roles import ROLE_HELP

_V = compat.PYTHON_VERSION

#: The short tag of each role in the listing's role column (at most `ROLE_WIDTH` characters).
ROLE_TAGS: dict[Role, str] = {
    Role.PROLOGUE: "prolog",
    Role.RESUME_PROLOGUE: "r-prolog",
    Role.PRE_GRAPH: "pregraph",
    Role.GRAPH_INPUT: "g-input",
    Role.GRAPH_CALL: "g-call",
    Role.GRAPH_OUTPUT: "g-output",
    Role.SIDE_EFFECT: "effect",
    Role.REBUILD: "rebuild",
    Role.GRAPH_BREAK: "BREAK",
    Role.RESUME_CALL: "resume",
    Role.RETURN: "return",
    Role.USER_CODE: "user",
    Role.UNKNOWN: "?",
}

#: Width of the role column in listings.
ROLE_WIDTH = 8


def role_tag(role: InstrRole | None) -> str:
    """The role column's text for one instruction (``"g-call"``); empty without a role."""
    return "" if role is None else ROLE_TAGS[role.role]


def region_header(roles: CodeRoles, index: int) -> str | None:
    """The header line printed above instruction `index` when a region starts there, else None.

    Example: ``"      -- call of the FX graph __compiled_fn_2 (2 inputs)  [capture]"``.
    """
    region = roles.region_at(index)
    if region is None or region.start != index:
        return None
    return f"      -- {region.title}  [{region.source}]"


def role_legend() -> list[str]:
    """One line per role: its tag, name and meaning (the key to the listing's role column)."""
    return [f"{ROLE_TAGS[r]:<{ROLE_WIDTH}} {r.value:16} {ROLE_HELP[r]}" for r in Role if r != Role.UNKNOWN]


def explanation_text(ex: Explanation) -> str:
    """`explain IDX` as plain text: the instruction, what it does, version note, stack effect, role."""
    head = f"{ex.index} {ex.opname}" + (f" {ex.argrepr}" if ex.argrepr else "")
    lines = [head, f"  what it does: {ex.meaning}"]
    if ex.version_note:
        lines.append(f"  other Pythons: {ex.version_note} (this is {_V})")
    if ex.stack is not None:
        lines.append(f"  stack: {ex.stack.text}")
    if ex.role_sentence:
        lines.append(f"  role: {ex.role_sentence}")
    return "\n".join(lines)


def pushed_by(s: SlotOrigin) -> str:
    """``"pushed by 12 LOAD_FAST x"``, or how the interpreter pushed it on entering an exception handler."""
    if s.index < 0:
        return f"pushed on entering the handler: {s.argrepr}"
    return f"pushed by {s.index} {s.opname}" + (f" {s.argrepr}" if s.argrepr else "")


def provenance_lines(prov: Provenance, values: Sequence[ValueSummary] | None = None) -> list[str]:
    """One line per value-stack slot, TOS first: value, who pushed it, what it stands for in Dynamo's code."""
    out = []
    n = len(prov.slots)
    for s in reversed(prov.slots):
        val = values[s.slot].text if values is not None and s.slot < len(values) else (
            "NULL" if s.is_null else s.expression)
        tos = " (TOS)" if s.slot == n - 1 else ""
        note = f"  — {s.note}" if s.note else ""
        out.append(f"[{s.slot}]{tos} {val}  <- {pushed_by(s)}{note}")
    note = provenance_note(prov)
    if note:
        out.append(note)
    return out


def provenance_note(prov: Provenance) -> str:
    """The line saying how the origins were found, when they follow the code's flow (not an executed path)."""
    if prov.path != "static":
        return ""
    return "(origins follow the code's control flow" + (
        "; paths with different origins meet here)" if prov.ambiguous else ")")


def slot_suffix(prov: Provenance | None, slot: int, depth: int) -> str:
    """What `stack` appends to slot `slot`: ``"  <- pushed by 12 LOAD_FAST x  — output 0 of ..."`` (``"  <- TOS,
    pushed by ..."`` for the top slot); without origins (none given, or the provenance does not cover this
    depth: the tracked and the modelled depth disagree) only the TOS mark."""
    tos = slot == depth - 1
    if prov is None or len(prov.slots) != depth or not 0 <= slot < depth:
        return "  <- TOS" if tos else ""
    s = prov.slots[slot]
    return f"  <- {'TOS, ' if tos else ''}{pushed_by(s)}" + (f"  — {s.note}" if s.note else "")


def guard_types_text(trees: Sequence[GuardTree]) -> str:
    """One line per guard type present in `trees`: what it checks and what change of input makes it fail."""
    seen: list[str] = []
    for tree in trees:
        for leaf in iter_leaves(tree):
            if leaf.guard_type not in seen:
                seen.append(leaf.guard_type)
    if not seen:
        return ""
    width = max(len(t) for t in seen)
    return "\n".join(["guard types:"] + [f"  {t:<{width}}  {guard_line(t)}" for t in seen])


__all__ = [
    "ROLE_TAGS", "ROLE_WIDTH", "explanation_text", "guard_types_text", "provenance_lines", "provenance_note",
    "pushed_by", "region_header", "role_legend", "role_tag", "slot_suffix",
]
