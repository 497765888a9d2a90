"""Applying a list of guard operations (`toolkit_model.GuardOp`) to a copy of a guard tree: what a toolkit
draft does to its entry's guards, and what a replayed patch file does to the guards of the compile it is applied
to. Drops leave managers out of ``clone_manager``'s copy (a single leaf: its manager comes back with its other
leaves); transports, adds and expression guards are rebuilt on live objects (`toolkit_guards`). Worker thread.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from . import compat
from .facts import PINNING_GUARDS
from .guards import parse_code_part
from .toolkit_guards import Scope, add_guard, add_lambda, carry, find_raw
from .toolkit_model import AddedGuard, GuardOp, GuardOpKind, Problem, ProblemKind
from .toolkit_sources import parse_source


@dataclass
class Applied:
    """The copied root with the operations applied, and what they did."""

    clone: Any
    added: list[AddedGuard] = field(default_factory=list)
    dropped: list[tuple[str, str | None]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def apply_guard_ops(base_root: Any, guard_ops: Sequence[GuardOp], scope: Scope, *, check_baked: bool) -> Applied:
    """A copy of `base_root` (a ``RootGuardManager``) with `guard_ops` applied. `check_baked`: a drop of a guard
    that pins a value Dynamo specialised on is a `ProblemKind.BAKED_VALUE` (the toolkit refuses it unless
    forced; a replayed patch file carries drops the user already chose)."""
    problems: list[Problem] = []
    added: list[AddedGuard] = []
    dropped: list[tuple[str, str | None]] = []
    base_raw = compat.read_guard_manager(base_root)
    whole: list[str] = []         # managers left out of the clone, with everything below them
    rebuild: list[tuple[str, str]] = []   # (source, leaf type) to leave out when the rest is rebuilt
    transports: list[GuardOp] = []
    for op in guard_ops:
        if op.kind is GuardOpKind.DROP:
            node = find_raw(base_raw, op.source)
            if node is None:
                problems.append(Problem(ProblemKind.NOT_FOUND, op.source, op.guard_type,
                                        detail="this compile has no guards there"))
                continue
            if op.guard_type is not None and op.guard_type not in {lf.guard_type for lf in node.leaves}:
                problems.append(Problem(ProblemKind.NOT_FOUND, op.source, op.guard_type,
                                        detail="this compile has no such guard there"))
                continue
            whole.append(op.source)
            if op.guard_type is not None:
                rebuild.append((op.source, op.guard_type))
            dropped.append((op.source, op.guard_type))
            for leaf in _leaves_below(node):
                if check_baked and (op.guard_type is None or (leaf[0] == op.source and leaf[1] == op.guard_type)) \
                        and leaf[1] in PINNING_GUARDS:
                    problems.append(Problem(ProblemKind.BAKED_VALUE, leaf[0], leaf[1], leaf[2],
                                            detail="Dynamo specialised the code on this value"))
        elif op.kind is GuardOpKind.TRANSPORT:
            transports.append(op)
            if op.description != "keep old":
                whole.append(op.source)
    clone = base_root.clone_manager(lambda m: not _covered(m.get_source(), whole))
    if clone is None:
        raise ValueError("torch's clone_manager dropped the whole tree")
    # a dropped leaf: its manager comes back with its other leaves and everything below it
    for source, leaf_type in rebuild:
        node = find_raw(base_raw, source)
        src = parse_source(source)
        if node is None or src is None:
            continue
        done = carry(_without(node, leaf_type), clone, src, scope, why="kept")
        problems.extend(done.problems)
    for op in transports:
        node = find_raw(base_raw, op.source)
        new = parse_source(op.target or "")
        if node is None or new is None:
            problems.append(Problem(ProblemKind.NOT_FOUND, op.source, detail="no guards to transport"))
            continue
        done = carry(node, clone, new, scope)
        problems.extend(done.problems)
        added.extend(done.added)
    for op in guard_ops:
        if op.kind is GuardOpKind.ADD:
            like, key = op.fn if isinstance(op.fn, tuple) else (None, None)
            if key is None and op.description is not None and op.guard_type == "DICT_CONTAINS":
                key = ast.literal_eval(op.description)
            try:
                added.append(add_guard(clone, _src(op.source), scope, op.guard_type, key=key, like=like))
            except Exception as exc:  # noqa: BLE001 - no live value there, or torch refused the leaf
                kind = ProblemKind.NO_VALUE if isinstance(exc, (KeyError, AttributeError, IndexError)) else \
                    ProblemKind.UNSUPPORTED
                problems.append(Problem(kind, op.source, op.guard_type, detail=f"{type(exc).__name__}: {exc}"))
        elif op.kind is GuardOpKind.LAMBDA:
            if op.fn is None:
                problems.append(Problem(ProblemKind.UNSUPPORTED, op.source, "LAMBDA_GUARD",
                                        op.description, detail="a lambda guard from a patch file has no function"))
                continue
            try:
                add_lambda(clone, None if op.source == "L" else _src(op.source), scope, op.fn,
                           op.description or "lambda guard")
            except Exception as exc:  # noqa: BLE001
                problems.append(Problem(ProblemKind.NO_VALUE, op.source, "LAMBDA_GUARD",
                                        detail=f"{type(exc).__name__}: {exc}"))
        elif op.kind is GuardOpKind.EXPR:
            try:
                compat.add_manager_lambda_guard(clone, _ExprGuard(op.description or "True", scope.f_globals),
                                                [f"DEBUGGER: {op.description}"])
            except SyntaxError as exc:
                problems.append(Problem(ProblemKind.UNSUPPORTED, "L", "LAMBDA_GUARD", op.description,
                                        detail=f"syntax error: {exc.msg}"))
    return Applied(clone, added, dropped, problems)


class _ExprGuard:
    """A guard expression over ``L`` (the frame's f_locals) and ``G`` (its globals), as the debugger's
    ``guard add EXPR`` makes one; an exception counts as False (a miss), as torch treats a raising guard."""

    __slots__ = ("code", "g")

    def __init__(self, expr: str, g: dict[str, Any]) -> None:
        self.code = compile(expr, "<guard add>", "eval")
        self.g = g

    def __call__(self, f_locals: dict[str, Any]) -> bool:
        try:
            return bool(eval(self.code, {"__builtins__": builtins, "L": f_locals, "G": self.g}))  # noqa: S307
        except Exception:  # noqa: BLE001 - a guard that cannot be evaluated rejects the entry
            return False


def _src(text: str) -> Any:
    src = parse_source(text)
    if src is None:
        raise ValueError(f"{text!r} is not a source")
    return src


def _covered(source: str, prefixes: Iterable[str]) -> bool:
    return any(source == p or source.startswith((p + ".", p + "[")) for p in prefixes)


def _leaves_below(node: compat.RawGuardManager) -> list[tuple[str, str, str]]:
    out = [(node.source, lf.guard_type, parse_code_part(lf.parts[0])[0] if lf.parts else "") for lf in node.leaves]
    for child in node.children:
        out.extend(_leaves_below(child))
    return out


def _without(node: compat.RawGuardManager, leaf_type: str) -> compat.RawGuardManager:
    """A shallow copy of `node` without its leaves of `leaf_type` (its children kept)."""
    copy = compat.RawGuardManager(node.manager, node.source, node.manager_type, node.accessor_type, node.accessor,
                                  node.attr_name, node.value_type)
    copy.leaves = [lf for lf in node.leaves if lf.guard_type != leaf_type]
    copy.children = node.children
    return copy
