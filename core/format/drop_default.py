"""Plain text of the default ``drop``: what it leaves out and why (`model.HeldBack`, made by
`decisions.held_back`), one line per reason; and `listed_once` for lists of dropped guards.

Engine data in, sentences out; the TUI's dialog uses `reason_text` for its rows.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..model import HeldBack, HeldBackReason

__all__ = ["empty_default_text", "held_back_lines", "listed_once", "reason_text", "REASON_ORDER"]

#: The order the reasons are said in.
REASON_ORDER: tuple[HeldBackReason, ...] = (HeldBackReason.GLOBAL_STATE, HeldBackReason.MODE_FLAG,
                                            HeldBackReason.DISPATCH_MODE, HeldBackReason.WHOLE_TENSOR)

_WHY: dict[HeldBackReason, tuple[str, str]] = {
    HeldBackReason.GLOBAL_STATE: (
        "global state",
        "the graph was traced under this grad mode / autocast state; without the guard it serves calls under "
        "any other"),
    HeldBackReason.MODE_FLAG: (
        "module mode flags",
        "train() and eval() run different code (BatchNorm statistics, Dropout); without the guard one mode's "
        "graph serves the other"),
    HeldBackReason.DISPATCH_MODE: (
        "dispatch / torch-function mode",
        "the graph was traced under these modes; without the guard it serves calls under others"),
    HeldBackReason.WHOLE_TENSOR: (
        "whole tensors",
        "a TENSOR_MATCH checks shape, dtype, device and requires_grad; without it any tensor is served by a graph "
        "traced for one (a size change: `dynamic NAME DIM`)"),
}


def reason_text(reason: HeldBackReason) -> tuple[str, str]:
    """(a short name for the reason, why the default leaves such a guard out)."""
    return _WHY[reason]


def listed_once(labels: Iterable[str]) -> list[str]:
    """Each label once, in first-seen order, with ``×N`` where it came N > 1 times (a guard torch builds as
    several filter entries of one name and type): ``["GLOBAL_STATE", "CONSTANT_MATCH L['m'].training ×4"]``."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return [label if n == 1 else f"{label} ×{n}" for label, n in counts.items()]


def _sources(group: Sequence[HeldBack], most: int = 3) -> str:
    names = [h.guard.source if h.guard.source != "L" else h.guard.guard_type for h in group]
    shown = ", ".join(dict.fromkeys(names[:most]))
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def held_back_lines(held: Sequence[HeldBack]) -> list[str]:
    """One line per reason: the ids the default ``drop`` left out, what they guard, why, and how to drop them
    anyway (``left out (module mode flags): g37 g57 — L['self']._modules['bn1'].training, ...: train() and ...;
    to drop them anyway: drop g37 g57``)."""
    lines = []
    for reason in REASON_ORDER:
        group = [h for h in held if h.reason is reason]
        if not group:
            continue
        name, why = _WHY[reason]
        ids = " ".join(h.guard.leaf_id for h in group)
        lines.append(f"left out ({name}): {ids} — {_sources(group)}: {why}; to drop them anyway: drop {ids}")
    return lines


def empty_default_text(held: Sequence[HeldBack], compile_id: str | None) -> str:
    """What ``drop`` with no ids says when its default is empty: it drops nothing, and why each failing guard
    was left out."""
    of = f" of {compile_id}" if compile_id else ""
    head = (f"drop: nothing to drop by default{of}: every failing guard a filter could drop is one the default "
            f"leaves out; nothing was dropped, the program stays paused")
    return "\n".join([head, *held_back_lines(held)])
