"""Plain text of instruction edits: a patch's diff against Dynamo's code, and the validator's stack depths."""

from __future__ import annotations

from typing import Iterable

from ..model import PatchDiff, StackAnalysis


def format_diff(diff: PatchDiff, *, context: int | None = 3) -> str:
    """Unified-diff-like text: ``--- dynamo`` / ``+++ edited`` headers, ``@@`` hunks, one instruction a line
    (``-  12      RETURN_VALUE`` / ``+       14 POP_TOP``). `context` rows around changes; None: every row."""
    if not diff.changed:
        return f"{diff.name}: no change from Dynamo's code"
    lines = [f"--- {diff.name} (Dynamo)", f"+++ {diff.name} (edited)  {diff.removed} removed, {diff.added} added"]
    keep = [False] * len(diff.lines)
    for k, line in enumerate(diff.lines):
        if line.tag != " ":
            lo = 0 if context is None else max(0, k - context)
            hi = len(diff.lines) if context is None else min(len(diff.lines), k + context + 1)
            for m in range(lo, hi):
                keep[m] = True
    if context is None:
        keep = [True] * len(diff.lines)
    previous = -2
    for k, line in enumerate(diff.lines):
        if not keep[k]:
            continue
        if k != previous + 1:
            old = next((d.old_index for d in diff.lines[k:] if d.old_index is not None), "-")
            new = next((d.new_index for d in diff.lines[k:] if d.new_index is not None), "-")
            lines.append(f"@@ Dynamo row {old}, edited row {new} @@")
        previous = k
        old_col = "" if line.old_index is None else str(line.old_index)
        new_col = "" if line.new_index is None else str(line.new_index)
        lines.append(f"{line.tag} {old_col:>4} {new_col:>4}  {line.text}")
    return "\n".join(lines)


def format_stack(analysis: StackAnalysis, *, rows: Iterable[int] | None = None) -> str:
    """Plain text of a stack analysis: one line per instruction with its depth before and after, then problems."""
    wanted = set(rows) if rows is not None else None
    lines = [f"max depth {analysis.max_depth}, co_stacksize {analysis.stacksize}"]
    for row in analysis.rows:
        if wanted is not None and row.index not in wanted:
            continue
        depth = "-" if row.depth is None else str(row.depth)
        after = "-" if row.depth is None else str(row.depth + row.effect)
        lines.append(f"{row.index:>4}  {depth:>3} -> {after:<3} {row.opname} {row.argrepr}".rstrip())
    lines.extend(str(p) for p in analysis.problems)
    return "\n".join(lines)


def patch_contents(edits: int, guard_ops: int) -> str:
    """What a patch carries: ``2 edit(s)``, ``3 guard operation(s)`` (a patch of guard edits only), or both."""
    parts = [f"{edits} edit(s)"] if edits or not guard_ops else []
    if guard_ops:
        parts.append(f"{guard_ops} guard operation(s)")
    return ", ".join(parts)


def guard_edits_gone(numbers: tuple[int, ...]) -> str:
    """The sentence `patch undo` adds when guard edits made on an instruction edit's copy went with it (numbers
    as ``guard`` lists them); empty when none did."""
    if not numbers:
        return ""
    which = ", ".join(str(n) for n in numbers)
    edits = "guard edit" if len(numbers) == 1 else "guard edits"
    return (f"; {edits} {which}, made on the edit's copy, went with it (Dynamo's cache entries never had "
            f"{'it' if len(numbers) == 1 else 'them'}: `guard add` them again to guard those entries)")
