"""Locating failing guards in real guard trees (`guard_failures.failure_index`): paths, per-manager counts, order."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from dynadbg.core import compat
from dynadbg.core.guard_failures import EMPTY, failure_index
from dynadbg.core.guards import entry_guard_tree, iter_leaves, iter_managers
from dynadbg.core.model import GuardNodeView, GuardStatus, LeafGuardView

compat.load()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class Blocks(torch.nn.Module):
    """Linear + BatchNorm blocks: compiled in train(), called in eval(), each BatchNorm's ``.training`` fails."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            [torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)) for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def _blocks_entry(n: int = 5):
    net, x = Blocks(n), torch.randn(3, 4)
    torch.compile(net, backend="eager")(x)
    entries = compat.cache_entries(Blocks.forward.__code__)
    assert len(entries) == 1
    return net, x, entries[0]


def _subtree_failing(node: GuardNodeView, failing_ids: set[str]) -> int:
    """Failing leaves under `node`, counted by walking its subtree (the definition the index must meet)."""
    own = sum(leaf.id in failing_ids for leaf in node.leaves)
    return own + sum(_subtree_failing(child, failing_ids) for child in node.children)


def test_train_to_eval_every_batchnorm_is_located_and_counted_on_every_manager_above_it():
    net, x, entry = _blocks_entry(5)
    net.eval()
    tree = entry_guard_tree(entry, {"self": net, "x": x})
    index = failure_index(tree)
    assert len(tree.failing) >= 5                       # one `.training` guard per BatchNorm, at least
    # every failing leaf found, in the tree's order, none left without a path
    assert [p.leaf.id for p in index.paths] == [leaf.id for leaf in tree.failing]
    assert index.unplaced == 0 and index.epilogue == 0
    training = [p for p in index.paths if p.leaf.source.endswith(".training")]
    assert len(training) == 5
    failing_ids = {leaf.id for leaf in tree.failing}
    for path in index.paths:
        # the chain runs root → ... → the manager holding the leaf, each a child of the one before
        assert path.managers[0] is tree.root and path.leaf in path.managers[-1].leaves
        for parent, child in zip(path.managers, path.managers[1:]):
            assert any(c is child for c in parent.children)
    for _, manager in iter_managers(tree):
        assert index.count(manager) == _subtree_failing(manager, failing_ids), manager.source
        if index.count(manager):
            assert manager.status == GuardStatus.FAIL
    assert index.count(tree.root) == len(tree.failing)
    # the ModuleList's manager holds all five, each block's manager one
    blocks = next(m for _, m in iter_managers(tree) if m.source == "L['self']._modules['blocks']")
    assert index.count(blocks) == 5
    for i in range(5):
        block = next(m for _, m in iter_managers(tree) if m.source == f"L['self']._modules['blocks']._modules['{i}']")
        assert index.count(block) == len([p for p in index.paths if block in p.managers]) >= 1
    assert all(index.is_failing(p.leaf) for p in index.paths)
    assert not any(index.is_failing(leaf) for leaf in iter_leaves(tree) if leaf.id not in failing_ids)


def test_a_passing_or_unevaluated_tree_has_nothing_to_locate():
    net, x, entry = _blocks_entry(2)
    assert failure_index(entry_guard_tree(entry, {"self": net, "x": x})) is EMPTY
    assert failure_index(entry_guard_tree(entry)) is EMPTY


def test_a_failing_shape_guard_of_the_epilogue_has_a_path_with_no_manager():
    def double(x):
        return x * 2

    torch.compile(double, backend="eager", dynamic=True)(torch.ones(5))
    entry = compat.cache_entries(double.__code__)[0]
    tree = entry_guard_tree(entry, {"x": torch.ones(1)})   # size 1: the dynamic entry was traced for sizes >= 2
    index = failure_index(tree)
    assert tree.failing and [p.leaf.id for p in index.paths] == [leaf.id for leaf in tree.failing]
    in_epilogue = [leaf for leaf in tree.failing if leaf.epilogue]
    assert index.epilogue == len(in_epilogue)
    assert all(p.epilogue == p.leaf.epilogue for p in index.paths)
    assert index.count(tree.root) + index.epilogue == len(tree.failing)


def test_a_pseudo_leaf_that_hangs_nowhere_is_counted_as_unplaced():
    net, x, entry = _blocks_entry(2)
    net.eval()
    tree = entry_guard_tree(entry, {"self": net, "x": x})
    pseudo = LeafGuardView("torch-check", "CHECK_VERBOSE", "L", ("torch says no",), status=GuardStatus.FAIL)
    index = failure_index(replace(tree, failing=(*tree.failing, pseudo)))
    assert index.unplaced == 1 and len(index.paths) == len(tree.failing)
    assert not index.is_failing(pseudo)
