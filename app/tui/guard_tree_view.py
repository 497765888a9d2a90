"""The guard-tree pane: the guard tree of the cache entry serving the current frame, expanded lazily.

A node's children become tree nodes only when the node is expanded, and at most `CHUNK` at a time (a
``… N more`` node brings the next chunk; failing children are always shown), so first paint costs the same for
20 guards or 20,000. After a tree is
loaded, the path to the first failing guard is expanded and the cursor put on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from dynadbg.core.guards import location_text
from dynadbg.core.model import GuardNodeView, GuardStatus, GuardTree, LeafGuardView

from . import highlight

#: Children added per expansion; the rest wait behind a ``… N more`` node.
CHUNK = 100

_ICONS = {
    GuardStatus.PASS: "✓",
    GuardStatus.FAIL: "✗",
    GuardStatus.NO_VALUE: "?",
    GuardStatus.ERROR: "!",
    GuardStatus.NOT_EVALUATED: "·",
}


@dataclass(frozen=True)
class _Items:
    """A tree node standing for a list of items: the epilogue group, or the ``… N more`` remainder."""

    items: tuple[GuardNodeView | LeafGuardView, ...]
    more: bool


@dataclass(frozen=True)
class _Detail:
    """A detail line under a leaf guard (expression, location, expected/actual, reason)."""


def _status_of(item: object) -> GuardStatus | None:
    return item.status if isinstance(item, (GuardNodeView, LeafGuardView)) else None


class GuardTreeView(Tree[object]):
    """Guard managers as branches, leaf guards as leaves: status mark, guard type, expression, user source line.

    Node data: `GuardTree` (the root), `GuardNodeView` (a guard manager), `LeafGuardView` (a leaf guard; expands
    to its expressions, location, expected/actual values and failure reason).
    """

    COMPONENT_CLASSES = Tree.COMPONENT_CLASSES | {
        "guards--pass",
        "guards--fail",
        "guards--novalue",
        "guards--dim",
        "guards--userline",
    }
    """
    | Class | Description |
    | :- | :- |
    | `guards--pass` | A passing guard's mark. |
    | `guards--fail` | A failing guard's mark and type. |
    | `guards--novalue` | A guard whose value could not be produced, or that raised. |
    | `guards--dim` | Accessors, counts, unevaluated marks. |
    | `guards--userline` | The user source line a guard came from (over its Python highlighting). |
    """

    guards: reactive[GuardTree | None] = reactive(None, repaint=False, always_update=True)
    """The tree shown; None shows a note (no cache entry serves the current frame)."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("guards", name=name, id=id, classes=classes)
        self.auto_expand = True
        self.guide_depth = 2
        self._populated: set[int] = set()

    # Data ------------------------------------------------------------------------------------------------------

    def watch_guards(self, tree: GuardTree | None) -> None:
        self._populated.clear()
        self.reset(self._root_label(tree), tree)
        if tree is None:
            self.root.allow_expand = False
            return
        self._populate(self.root)
        self.root.expand()
        target = self._expand_first_failure(tree)
        if target is not None:
            self.call_after_refresh(self.move_cursor, target)

    def _root_label(self, tree: GuardTree | None) -> Text:
        dim = self._style("guards--dim")
        if tree is None:
            return Text("no guard tree for this stop", dim)
        text = Text(f"entry {tree.compile_id}", Style(bold=True))
        text.append(f"  {tree.leaf_count:,} guards", dim)
        if tree.evaluated:
            if tree.failing:
                text.append(f"  {len(tree.failing):,} failing", self._style("guards--fail"))
            else:
                text.append("  all pass", self._style("guards--pass"))
        return text

    def _items_of(self, data: object) -> tuple[GuardNodeView | LeafGuardView | _Items, ...]:
        if isinstance(data, GuardTree):
            items: tuple = (*data.root.leaves, *data.root.children)
            if data.epilogue:
                items += (_Items(data.epilogue, more=False),)
            return items
        if isinstance(data, GuardNodeView):
            return (*data.leaves, *data.children)
        if isinstance(data, _Items):
            return data.items
        return ()

    def _populate(self, node: TreeNode[object]) -> None:
        """Add `node`'s children (first `CHUNK` of them) if that was not done yet."""
        if node.id in self._populated:
            return
        self._populated.add(node.id)
        data = node.data
        if isinstance(data, LeafGuardView):
            self._add_details(node, data)
            return
        self._add_items(node, self._items_of(data))

    def _add_items(self, parent: TreeNode[object], items: tuple) -> None:
        """Add the first `CHUNK` items, then failing ones from further on (so failures are never hidden behind
        ``… more``; at most `CHUNK` of them), then a ``… N more`` node for the rest."""
        head, rest = items[:CHUNK], items[CHUNK:]
        promoted = [item for item in rest if _status_of(item) == GuardStatus.FAIL][:CHUNK]
        if promoted:
            chosen = {id(item) for item in promoted}
            rest = tuple(item for item in rest if id(item) not in chosen)
        for item in (*head, *promoted):
            self._add_item(parent, item)
        if rest:
            label = Text(f"… {len(rest):,} more", self._style("guards--dim"))
            parent.add(label, _Items(tuple(rest), more=True))

    def _add_item(self, parent: TreeNode[object], item: object) -> None:
        if isinstance(item, GuardNodeView):
            parent.add(self._manager_label(item), item, allow_expand=bool(item.leaves or item.children))
        elif isinstance(item, LeafGuardView):
            parent.add(self._leaf_label(item), item, allow_expand=True)
        elif isinstance(item, _Items):
            label = Text(f"epilogue guards ({len(item.items):,})", Style(bold=True))
            parent.add(label, item)

    def _add_details(self, node: TreeNode[object], leaf: LeafGuardView) -> None:
        dim = self._style("guards--dim")
        for line in leaf.code:
            node.add_leaf(Text.assemble(*((s.text, s.style) for s in highlight.python_segments(line))), _Detail())
        if leaf.user_line or leaf.location:
            text = Text("from ", dim)
            if leaf.user_line:
                text.append_text(self._user_line(leaf.user_line))
            if leaf.location:
                text.append(f"  ({location_text(leaf.location)})", dim)
            node.add_leaf(text, _Detail())
        if leaf.expected is not None or leaf.actual is not None:
            node.add_leaf(Text(f"expected {leaf.expected or '?'}, actual {leaf.actual or '?'}", dim), _Detail())
        if leaf.reason:
            node.add_leaf(Text(leaf.reason, self._style("guards--fail")), _Detail())
        node.add_leaf(Text(f"id {leaf.id} · source {leaf.source}", dim), _Detail())

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[object]) -> None:
        node = event.node
        if isinstance(node.data, _Items) and node.data.more:
            parent = node.parent
            items = node.data.items
            node.remove()
            if parent is not None:
                self._add_items(parent, items)
            return
        self._populate(node)

    def _expand_first_failure(self, tree: GuardTree) -> TreeNode[object] | None:
        """Expand managers down to the first failing leaf; return that leaf's node (None if nothing fails)."""
        if not tree.evaluated or not tree.failing:
            return None
        node: TreeNode[object] = self.root
        for _ in range(64):
            child = next(
                (c for c in node.children
                 if isinstance(c.data, (GuardNodeView, LeafGuardView)) and c.data.status == GuardStatus.FAIL),
                None,
            )
            if child is None:
                return node if node is not self.root else None
            if isinstance(child.data, LeafGuardView):
                return child
            self._populate(child)
            child.expand()
            node = child
        return node

    # Labels ----------------------------------------------------------------------------------------------------

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def _status_style(self, status: GuardStatus) -> Style:
        if status == GuardStatus.PASS:
            return self._style("guards--pass")
        if status == GuardStatus.FAIL:
            return self._style("guards--fail")
        if status in (GuardStatus.NO_VALUE, GuardStatus.ERROR):
            return self._style("guards--novalue")
        return self._style("guards--dim")

    def _manager_label(self, node: GuardNodeView) -> Text:
        dim = self._style("guards--dim")
        text = Text(f"{_ICONS[node.status]} ", self._status_style(node.status))
        text.append(node.source, Style(bold=True))
        text.append(f"  {node.leaf_count:,} guard{'s' if node.leaf_count != 1 else ''}", dim)
        if node.accessor:
            text.append(f"  {node.accessor}", dim)
        return text

    def _leaf_label(self, leaf: LeafGuardView) -> Text:
        status_style = self._status_style(leaf.status)
        text = Text(f"{_ICONS[leaf.status]} ", status_style)
        text.append(leaf.guard_type, status_style if leaf.status == GuardStatus.FAIL else Style(bold=True))
        if leaf.code:
            text.append("  ")
            text.append_text(Text.assemble(*((s.text, s.style) for s in highlight.python_segments(leaf.code[0]))))
            if len(leaf.code) > 1:
                text.append(f" (+{len(leaf.code) - 1})", self._style("guards--dim"))
        if leaf.user_line:
            text.append("  ← ", self._style("guards--dim"))
            text.append_text(self._user_line(leaf.user_line))
        return text

    def _user_line(self, line: str) -> Text:
        """The user source line a guard came from, highlighted as Python, in the `guards--userline` style."""
        text = Text.assemble(*((s.text, s.style) for s in highlight.python_segments(line.strip())))
        text.stylize(self._style("guards--userline"))
        return text
