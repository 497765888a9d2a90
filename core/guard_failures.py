"""Where the failing guards of an evaluated guard tree sit: the path of managers to each one, and how many fail
under each manager.

A front end that shows a big tree (995 guards, 22 failing; or 20,000 guards) needs both to be cheap per repaint:
`failure_index` walks the tree once (one visit per manager and per leaf) and the answer is a frozen lookup, so a
label asks for a count in O(1) and a "next failing guard" key finds its path without walking the tree again.

What counts as failing is exactly `GuardTree.failing`, as `guards.build_guard_tree` filled it: every FAIL and
ERROR leaf, the one NO_VALUE leaf that stands for each missing value, the ``DICT_LENGTH`` leaves. Pseudo-leaves
that are in `failing` but hang nowhere in the tree (``CHECK_VERBOSE``, ``BACKEND_MATCH``) have no path; they are
counted in `FailureIndex.unplaced`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .model import GuardNodeView, GuardStatus, GuardTree, LeafGuardView


@dataclass(frozen=True)
class FailingPath:
    """One failing leaf guard and the managers that lead to it.

    Attributes:
        leaf: the failing leaf (the object held in `GuardTree.failing` and in its manager's ``leaves``).
        managers: the managers from the root (first) down to the one whose ``leaves`` hold `leaf` (last); empty
            for an epilogue guard, which hangs on the tree itself (`GuardTree.epilogue`).
    """

    leaf: LeafGuardView
    managers: tuple[GuardNodeView, ...]

    @property
    def epilogue(self) -> bool:
        """True for an epilogue guard (listed in `GuardTree.epilogue`, under no manager)."""
        return not self.managers


@dataclass(frozen=True)
class FailureIndex:
    """The failing guards of one tree, located.

    Attributes:
        paths: one per failing leaf that hangs in the tree, in `GuardTree.failing`'s order (the tree's preorder:
            a manager's leaves, then its children, the epilogue last).
        counts: manager id (``"m4"``) → failing leaves in that manager's subtree (its own leaves included);
            managers with none are absent.
        epilogue: failing epilogue guards.
        unplaced: failing pseudo-leaves that hang nowhere in the tree (torch's check fails with no single leaf
            failing; another backend).
        leaf_ids: the ids of the leaves in `paths`.
    """

    paths: tuple[FailingPath, ...]
    counts: Mapping[str, int]
    epilogue: int = 0
    unplaced: int = 0
    leaf_ids: frozenset[str] = frozenset()

    def count(self, node: GuardNodeView) -> int:
        """Failing leaves under `node` (0 for a manager with none)."""
        return self.counts.get(node.id, 0)

    def is_failing(self, leaf: LeafGuardView) -> bool:
        """Whether `leaf` is one of the located failing leaves."""
        return leaf.id in self.leaf_ids


#: The index of a tree with nothing failing (or not evaluated).
EMPTY = FailureIndex((), MappingProxyType({}))


def failure_index(tree: GuardTree) -> FailureIndex:
    """Locate every failing leaf of `tree` (`GuardTree.failing`) and count the failing leaves under each manager.

    One walk of the tree that skips passing managers (nothing below them fails), so it costs about the failing
    paths, not the tree; leaves are matched to `failing` by their id (``"g17"``, ``"m4.len"``), unique within a
    tree.

    Args:
        tree: a tree from `guards.build_guard_tree` (or of the same shape); an unevaluated or passing tree gives
            `EMPTY`.

    Returns:
        The frozen `FailureIndex`; never raises.
    """
    if not tree.failing:
        return EMPTY
    order = {leaf.id: i for i, leaf in enumerate(tree.failing)}
    found: list[tuple[int, FailingPath]] = []
    counts: dict[str, int] = {}
    # iterative preorder (deep module nesting must not meet the recursion limit); each entry: a manager and the
    # managers above it
    stack: list[tuple[GuardNodeView, tuple[GuardNodeView, ...]]] = [(tree.root, ())]
    while stack:
        node, above = stack.pop()
        if node.status is GuardStatus.PASS:
            continue                       # every leaf below passes (`GuardNodeView.status`): nothing to find
        chain = (*above, node)
        for leaf in node.leaves:
            position = order.get(leaf.id)
            if position is not None:
                found.append((position, FailingPath(leaf, chain)))
                for manager in chain:
                    counts[manager.id] = counts.get(manager.id, 0) + 1
        stack.extend((child, chain) for child in reversed(node.children))
    epilogue = 0
    for leaf in tree.epilogue:
        position = order.get(leaf.id)
        if position is not None:
            found.append((position, FailingPath(leaf, ())))
            epilogue += 1
    found.sort(key=lambda item: item[0])
    paths = tuple(path for _, path in found)
    return FailureIndex(paths, MappingProxyType(counts), epilogue, len(tree.failing) - len(paths),
                        frozenset(path.leaf.id for path in paths))
