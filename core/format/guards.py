"""Plain text of guard trees: the tree (`format_guard_tree`), every failing guard (`format_failing`), and the one
renderer of a failing guard both that and the recompile stop use (`failing_leaf_lines`)."""

from __future__ import annotations

from typing import Sequence

from ..facts import tensor_check, type_check, without_object_ids
from ..guards import iter_managers, location_text
from ..model import Caveat, CaveatKind, GuardNodeView, GuardStatus, GuardTree, LeafGuardView
from ..recompile import failure_kind
from ..values import cut

_STATUS_WORD = {
    GuardStatus.PASS: "PASS",
    GuardStatus.FAIL: "FAIL",
    GuardStatus.NO_VALUE: "NOVAL",
    GuardStatus.ERROR: "ERROR",
    GuardStatus.NOT_EVALUATED: "",
}

_INDENT = "  "


def _leaf_line(leaf: LeafGuardView) -> str:
    word = _STATUS_WORD[leaf.status]
    head = f"{leaf.id} {word} {leaf.guard_type}" if word else f"{leaf.id} {leaf.guard_type}"
    line = f"{head}  {leaf.code[0] if leaf.code else ''}"
    if leaf.user_line:
        line += f"  # {leaf.user_line}"
    if leaf.location:
        line += f"  ({location_text(leaf.location)})"
    return line


def _leaf_detail(leaf: LeafGuardView) -> list[str]:
    """Continuation lines: further code parts, then what failed."""
    lines = [f"  {code}" for code in leaf.code[1:]]
    if leaf.status in (GuardStatus.FAIL, GuardStatus.ERROR, GuardStatus.NO_VALUE):
        if leaf.expected is not None or leaf.actual is not None:
            lines.append(f"  {_expected_actual(leaf)}")
        if leaf.reason and leaf.reason not in leaf.code:
            lines.append(f"  reason: {leaf.reason}")
    if leaf.note and leaf.status is GuardStatus.FAIL:
        lines.append(f"  note: {leaf.note}")
    return lines


def _manager_line(node: GuardNodeView) -> str:
    word = _STATUS_WORD[node.status]
    via = f" via {node.accessor}" if node.accessor else ""
    head = f"{node.source}  [{node.manager_type}{via}]"
    return f"{head}  {word}" if word and node.status is not GuardStatus.PASS else head


def format_guard_tree(tree: GuardTree, *, max_leaves: int | None = None) -> str:
    """Render `tree` as deterministic plain text (``--plain``, ``report``, golden tests).

    Layout: a header ``guards of 0/1: N leaves[, K failing]``; one line per manager
    (``L['cfg']  [DictGuardManager via FrameLocalsGuardAccessor(key='cfg', framelocals_idx=2)]``, with FAIL /
    NOVAL / ERROR appended when it does not pass), indented two spaces per level; under it one line per leaf
    (``g3 PASS TYPE_MATCH  ___check_type_id(L['x'], ...)  # y = x + 1  (demo.py:18 in f)``), further code parts
    and, for leaves that do not pass, ``expected ..., actual ...`` and ``reason: ...`` on continuation lines;
    then an ``epilogue:`` section, and a ``failing (K):`` summary plus torch's ``first failure:``.

    Args:
        tree: the tree to render.
        max_leaves: print at most this many leaf lines (tree and epilogue together), then say how many were
            left out; the failing summary is always complete. None: no limit.
    """
    lines: list[str] = []
    header = f"guards of {tree.compile_id}: {tree.leaf_count} leaves"
    if tree.evaluated:
        header += f", {len(tree.failing)} failing" if tree.failing else ", all pass"
    lines.append(header)
    if tree.invalidated:
        lines.append(f"invalidated: {tree.invalidated}")
    shown = 0
    cut_off = False
    for depth, node in iter_managers(tree):
        if max_leaves is not None and shown >= max_leaves:
            cut_off = True
            break
        pad = _INDENT * depth
        lines.append(pad + _manager_line(node))
        for leaf in node.leaves:
            if max_leaves is not None and shown >= max_leaves:
                cut_off = True
                break
            lines.append(pad + _INDENT + _leaf_line(leaf))
            lines.extend(pad + _INDENT + extra for extra in _leaf_detail(leaf))
            shown += 1
        if cut_off:
            break
    if tree.epilogue and not cut_off:
        lines.append("epilogue:")
        for leaf in tree.epilogue:
            if max_leaves is not None and shown >= max_leaves:
                cut_off = True
                break
            lines.append(_INDENT + _leaf_line(leaf))
            lines.extend(_INDENT + extra for extra in _leaf_detail(leaf))
            shown += 1
    if cut_off:
        lines.append(f"... {tree.leaf_count - shown} more leaves not shown")
    if tree.failing:
        lines.append(f"failing ({len(tree.failing)}):")
        for leaf in tree.failing:
            lines.append(_INDENT + _failing_line(leaf))
    if tree.first_failure:
        lines.append(f"first failure: {tree.first_failure}")
    return "\n".join(lines)


def _failing_line(leaf: LeafGuardView) -> str:
    text = f"{leaf.id} {leaf.guard_type} {leaf.source}: {'; '.join(leaf.code)}"
    if leaf.status is not GuardStatus.FAIL:
        text += f"  [{_STATUS_WORD[leaf.status]}]"
    if leaf.expected is not None or leaf.actual is not None:
        text += f"  ({_expected_actual(leaf)})"
    return text


def expected_actual_text(leaf: LeafGuardView) -> str:
    """``"expected 3, actual 4"``; a side that cannot be read says so in words (never a bare ``?``)."""
    expected = leaf.expected if leaf.expected is not None else "(not readable off the guard)"
    if leaf.actual is not None:
        actual = leaf.actual
    else:
        actual = "no value" if leaf.status is GuardStatus.NO_VALUE else "(not evaluated)"
    return f"expected {expected}, actual {actual}"


_expected_actual = expected_actual_text


def format_failing(trees: Sequence[GuardTree]) -> str:
    """Every failing guard of every entry, as the recompile stop and ``report`` print them.

    One block per tree, in the given order (newest entry first when it comes from `all_failing_guards`)::

        0/1: 3 failing guards (torch reports: L['n'] == 3  # y = x + n  # demo.py:18 in f)
          g5 EQUALS_MATCH  L['n'] == 3
             line: y = x + n  (demo.py:18 in f)
             expected 3, actual 4

    Trees that were not evaluated say so; an invalidated entry gives torch's reason.
    """
    blocks: list[str] = []
    for tree in trees:
        if tree.invalidated:
            blocks.append(f"{tree.compile_id}: invalidated: {tree.invalidated}")
            continue
        if not tree.evaluated:
            blocks.append(f"{tree.compile_id}: not evaluated")
            continue
        if not tree.failing:
            blocks.append(f"{tree.compile_id}: all guards pass")
            continue
        n = len(tree.failing)
        head = f"{tree.compile_id}: {n} failing guard{'s' if n != 1 else ''}"
        if tree.first_failure:
            head += f" (torch reports: {tree.first_failure})"
        lines = [head]
        for leaf in tree.failing:
            lines += failing_leaf_lines(leaf)
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def failing_leaf_lines(leaf: LeafGuardView, torch_leaf: str | None = None) -> list[str]:
    """One failing guard as every failing-guard list shows it (``guards fail``, the recompile stop, ``why``,
    ``report``): id, type, status when not plain FAIL, what it is about when not the inputs, its code (marked
    when torch's own reason is about it, `torch_leaf`), then the user line it came from, expected against
    actual, torch's reason and note."""
    shown = "no value" if leaf.status is GuardStatus.NO_VALUE else leaf.status.value
    status = "" if leaf.status is GuardStatus.FAIL else f" [{shown}]"
    mark = "  <- torch reports this one" if torch_leaf is not None and leaf.id == torch_leaf else ""
    kind = failure_kind(leaf)
    kind_text = "" if kind == "input" else f" ({kind})"
    lines = [f"{_INDENT}{leaf.id} {leaf.guard_type}{status}{kind_text}  {cut('; '.join(leaf.code), 300)}{mark}"]
    where = leaf.user_line or ""
    if leaf.location is not None:
        loc = location_text(leaf.location)
        where = f"{where}  ({loc})" if where else f"({loc})"
    if leaf.caveat is not None:
        # torch says the line is only the value's first use, not what made the guard
        label, sentence = caveat_lines(leaf.caveat)
        if where:
            lines.append(f"{_INDENT}   {label}: {where}")
        lines.append(f"{_INDENT}   caveat: {sentence}")
    elif where:
        lines.append(f"{_INDENT}   line: {where}")
    if leaf.expected is not None or leaf.actual is not None:
        lines.append(f"{_INDENT}   {expected_actual_text(leaf)}")
    if leaf.reason and leaf.reason not in leaf.code:
        lines.append(f"{_INDENT}   reason: {cut(leaf.reason, 300)}")
    if leaf.note:
        lines.append(f"{_INDENT}   note: {cut(leaf.note, 400)}")
    return lines


def caveat_lines(caveat: Caveat) -> tuple[str, str]:
    """(label for the user line, the caveat in a sentence) of a guard torch says the user's code did not make."""
    from .. import compat

    if caveat.kind is CaveatKind.ZERO_ONE:
        fix = ""
        if caveat.tensor is not None and caveat.dim is not None:
            fix = (f"; torch._dynamo.decorators.mark_unbacked({compat.strip_local_scope(caveat.tensor)}, "
                   f"{caveat.dim}) keeps that size symbolic for every value")
        return ("first use of the value (not what made the guard)",
                "torch made this guard, not the line: it specialises sizes 0 and 1, so a size it traces as a "
                "symbol is guarded to be at least 2, and a call where it is 0 or 1 misses" + fix)
    return ("no user line made it",
            "torch made this guard, not your code: a float input it traces as a symbol is guarded to be no NaN, "
            "so a call with NaN there misses")


def short_leaf_code(code: str) -> str:
    """A leaf's code part for one row of a narrow pane: object addresses as ``…`` (`facts.without_object_ids`), and
    a ``TENSOR_MATCH`` with what tells tensors apart first (size, stride, dtype) and the rest as ``…`` (at 80
    columns the sizes at the end were cut off), a ``TYPE_MATCH`` with its type first (``type=int  ___check_type_id(
    L['x'], …)``). The leaf's details keep the whole code part."""
    code = without_object_ids(code)
    typed = type_check(code)
    if typed is not None:   # the type first: a narrow pane cut `type=<class 'int'>` off the end of the row
        return f"type={typed[1].rpartition('.')[2]}  {typed[0]}"
    check = tensor_check(code)
    if check is None:
        return code
    grad = ", requires_grad=True" if check.requires_grad else ""
    return (f"check_tensor({check.source}, size=[{check.size_text}], stride=[{check.stride_text}], "
            f"{check.dtype.removeprefix('torch.')}{grad}, …)")
