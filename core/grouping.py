"""Grouping what repeats in a recompile record: failing guards of one guard type with one expected/actual pair on
sibling sources (``20 × ....training == True``, now False), and the "changed since" inputs the same way.

Sources are split into their accessors (``L``, ``['self']``, ``._modules``, ``['bn']``, ``.training``); two
failing leaves of one entry go together when they have the same guard type, status, expected and actual value,
and the same last accessor. A group's `model.GuardGroup.head` and `tail` are the accessors all its sources share
at the start and at the end. A group of module ``.training`` flags names its cause (`model.GroupCause`) only when
the entry's guard tree shows it: every guarded ``.training`` flag of the entry failed the same way.

Pure functions over `model` records (the leaves and the guard tree the analysis already has); no torch, no text
parsing of sentences. `dynadbg.core.format.recompile` says the groups.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from . import compat
from .model import (
    ChangeGroup,
    EntryVerdict,
    GroupCause,
    GuardGroup,
    GuardTree,
    InputChange,
    LeafGuardView,
)

__all__ = ["accessors", "group_changes", "group_failing", "group_of", "spans"]

#: One accessor of a guard source: a subscript (``['bn']``, ``[0]``) or an attribute (``.training``); the root
#: name (``L``, ``G``, ``self``) is the text before the first one.
_ACCESSOR = re.compile(r"\[(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\]]*)\]|\.[A-Za-z_][A-Za-z0-9_]*")

#: The guard types a module's ``training`` flag is guarded with (a bool constant: TRUE_MATCH / FALSE_MATCH on
#: torch 2.13; ID_MATCH / EQUALS_MATCH spell the same check on other builds).
_FLAG_TYPES = frozenset({"TRUE_MATCH", "FALSE_MATCH", "ID_MATCH", "EQUALS_MATCH", "CONSTANT_MATCH"})


def accessors(source: str) -> tuple[str, ...]:
    """``"L['self']._modules['bn'].training"`` → ``("L", "['self']", "._modules", "['bn']", ".training")``: the
    root name, then each accessor. A source the pattern does not cover whole is one part."""
    first = _ACCESSOR.search(source)
    root = source if first is None else source[:first.start()]
    parts = [root]
    pos = len(root)
    for m in _ACCESSOR.finditer(source, pos):
        if m.start() != pos:
            return (source,)
        parts.append(m.group())
        pos = m.end()
    return tuple(parts) if pos == len(source) else (source,)


def spans(sources: Sequence[str]) -> tuple[str, str, bool]:
    """(head, tail, one_slot) of sources: the accessors all of them start with, those all end with (after the
    head), and whether each is head + exactly one accessor + tail."""
    split = [accessors(s) for s in sources]
    shortest = min(len(p) for p in split)
    n_head = 0
    while n_head < shortest and len({p[n_head] for p in split}) == 1:
        n_head += 1
    n_tail = 0
    while n_tail < shortest - n_head and len({p[len(p) - 1 - n_tail] for p in split}) == 1:
        n_tail += 1
    head = "".join(split[0][:n_head])
    tail = "".join(split[0][len(split[0]) - n_tail:]) if n_tail else ""
    one_slot = all(len(p) == n_head + n_tail + 1 for p in split)
    return head, tail, one_slot


def _key(leaf: LeafGuardView) -> tuple[object, ...] | None:
    """What two leaves must share to be one group; None for a leaf that is never grouped (global state, shape
    guards, the debugger's pseudo-leaves, a leaf with no expected/actual pair)."""
    if leaf.epilogue or leaf.relational or leaf.source in ("", "L") or (leaf.expected is None and leaf.actual is None):
        return None
    parts = accessors(leaf.source)
    if len(parts) < 2:
        return None
    return (leaf.guard_type, leaf.status, leaf.expected, leaf.actual, parts[-1])


def _owner_types(tree: GuardTree | None) -> dict[str, str]:
    """source → class name of the value it is an attribute of (``X.training`` → the class of ``X``), read off
    the managers' ``value_type`` (``"<class 'torch.nn.modules.batchnorm.BatchNorm2d'>"`` → ``"BatchNorm2d"``)."""
    if tree is None:
        return {}
    types: dict[str, str] = {}
    stack = [tree.root]
    while stack:
        node = stack.pop()
        m = re.match(r"<class '(?:[\w.]*\.)?(\w+)'>", node.value_type or "")
        if m:
            types[node.source] = m.group(1)
        stack.extend(node.children)
    out = {}
    for source in types:
        parts = accessors(source)
        owner = "".join(parts[:-1])
        if len(parts) > 1 and owner in types:
            out[source] = types[owner]
    return out


def _is_module_path(parts: Sequence[str]) -> bool:
    """The source reads an attribute of ``self`` or of a submodule (``L['self']...``, ``._modules[...]``)."""
    return any(p == "._modules" for p in parts) or (len(parts) >= 2 and parts[1] == "['self']")


def _flags(tree: GuardTree | None) -> list[LeafGuardView]:
    """Every leaf of the entry that guards a module's ``.training`` flag (failing or not)."""
    if tree is None:
        return []
    out = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        for leaf in node.leaves:
            if leaf.guard_type in _FLAG_TYPES and leaf.source.endswith(".training"):
                out.append(leaf)
        stack.extend(node.children)
    return out


def _cause(members: Sequence[LeafGuardView], tree: GuardTree | None) -> tuple[GroupCause | None, int]:
    """The train/eval switch a group of ``.training`` failures shows, and how many such flags the entry guards:
    a cause only when every guarded ``.training`` flag of the entry is in the group (none passed, none failed
    the other way) and the pair is True → False (or the reverse)."""
    first = members[0]
    if not first.source.endswith(".training") or not all(_is_module_path(accessors(m.source)) for m in members):
        return None, 0
    pair = (first.expected, first.actual)
    flags = _flags(tree)
    if pair == ("True", "False"):
        cause = GroupCause.TRAIN_TO_EVAL
    elif pair == ("False", "True"):
        cause = GroupCause.EVAL_TO_TRAIN
    else:
        return None, len(flags)
    ids = {m.id for m in members}
    if tree is None or not flags or any(f.id not in ids for f in flags):
        return None, len(flags)
    return cause, len(flags)


def group_of(compile_id: str, members: Sequence[LeafGuardView], tree: GuardTree | None = None,
             owners: dict[str, str] | None = None) -> GuardGroup:
    """The `GuardGroup` of leaves that share a `_key` (two or more)."""
    first = members[0]
    sources = tuple(m.source for m in members)
    head, tail, one_slot = spans(sources)
    locations = {m.location for m in members}
    owners = _owner_types(tree) if owners is None else owners
    types = tuple(sorted({owners[s] for s in sources if s in owners}))
    cause, total = _cause(members, tree)
    return GuardGroup(compile_id, first.guard_type, first.expected, first.actual, tuple(m.id for m in members),
                      sources, head, tail, one_slot, next(iter(locations)) if len(locations) == 1 else None,
                      types, cause, total)


def group_failing(verdicts: Iterable[EntryVerdict], trees: Iterable[GuardTree | str] = ()) -> tuple[GuardGroup, ...]:
    """The groups of two or more failing leaves per entry, in the order their first leaf is listed; `trees` are
    the entries' evaluated guard trees (by compile id) for the owners' class names and the train/eval cause."""
    by_id = {t.compile_id: t for t in trees if isinstance(t, GuardTree)}
    out: list[GuardGroup] = []
    for v in verdicts:
        buckets: dict[tuple[object, ...], list[LeafGuardView]] = {}
        for leaf in v.failing:
            key = _key(leaf)
            if key is not None:
                buckets.setdefault(key, []).append(leaf)
        tree = by_id.get(v.compile_id)
        owners = _owner_types(tree)
        out += [group_of(v.compile_id, members, tree, owners) for members in buckets.values() if len(members) > 1]
    return tuple(out)


def group_changes(changes: Sequence[InputChange], groups: Sequence[GuardGroup] = ()) -> tuple[ChangeGroup, ...]:
    """The `changed` inputs of sibling sources with one pair, two or more each; a group whose inputs are the
    sources of a failing-guard group with a cause carries that cause."""
    buckets: dict[tuple[object, ...], list[InputChange]] = {}
    for c in changes:
        parts = accessors(c.name)
        if c.variable is not None or len(parts) < 2:
            continue
        buckets.setdefault((c.expected, c.actual, parts[-1]), []).append(c)
    out = []
    for members in buckets.values():
        if len(members) < 2:
            continue
        names = tuple(c.name for c in members)
        head, tail, one_slot = spans(names)
        cause = None
        for g in groups:
            spelled = {compat.strip_local_scope(s) for s in g.sources}
            if g.cause is not None and set(names) <= spelled:
                cause = g.cause
        out.append(ChangeGroup(names, members[0].expected, members[0].actual, head, tail, one_slot, cause))
    return tuple(out)

