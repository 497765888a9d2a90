"""The guard-tree pane: the guard tree of the cache entry serving the current frame, expanded lazily.

A node's children become tree nodes only when the node is expanded, and at most `CHUNK` at a time (a
``… N more`` node brings the next chunk; failing children are always shown), so first paint costs the same for
20 guards or 20,000. After a tree is
loaded, the path to the first failing guard is expanded and the cursor put on it.

Failing guards, located once per tree (`dynadbg.core.guard_failures.failure_index`): every manager with failing
guards below it says how many (``✗ 22 of 958 guards failing  L['self']``); `jump_failing` opens the path to the
next or previous one (in the tree's order, wrapping around) and puts the cursor on it; `failing_only` hides every
path that leads to no failing guard (the pane's subtitle and the root say the tree is filtered). At a recompile
stop the app hands the record's groups of repeating failing guards (`groups`); a failing guard in one says so on
its label (``[group: 3 of 8]``), as the Recompile view lists the group as one line.
"""

from __future__ import annotations


from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Tree
from textual.strip import Strip
from textual.widgets.tree import TreeNode

from dynadbg.core.format.guards import caveat_lines, short_leaf_code
from dynadbg.core.guard_failures import EMPTY, FailingPath, FailureIndex, failure_index
from dynadbg.core.guards import location_text
from dynadbg.core.model import GuardGroup, GuardNodeView, GuardStatus, GuardTree, LeafGuardView

from . import highlight
from .lines_view import marked_cut

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

    failing_only: reactive[bool] = reactive(False, init=False, repaint=False)
    """Show only the paths that lead to a failing guard (kept across trees; `toggle_failing_only` flips it)."""

    class Jumped(Message):
        """`jump_failing` was asked for the next or previous failing guard.

        Attributes:
            position: the 0-based position of the guard the cursor went to among `total`, or None when the tree
                has no failing guard to go to (not evaluated, all pass).
            total: the failing guards that hang in the tree.
            wrapped: True when the jump went past the last (or before the first) one and came round.
            forward: True for "next", False for "previous".
            leaf: the failing leaf the cursor is on, or None.
        """

        def __init__(self, position: int | None, total: int, wrapped: bool, forward: bool,
                     leaf: LeafGuardView | None) -> None:
            super().__init__()
            self.position = position
            self.total = total
            self.wrapped = wrapped
            self.forward = forward
            self.leaf = leaf

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("guards", name=name, id=id, classes=classes)
        self.auto_expand = True
        self.guide_depth = 2
        self._populated: set[int] = set()
        self._index: FailureIndex = EMPTY
        self._position: int | None = None
        self._styles: dict[str, Style] = {}
        self.groups: tuple[GuardGroup, ...] = ()
        """The recompile record's groups of failing guards (`RecompileRecord.groups`), set before `guards`; the
        leaves of the shown entry's groups are marked."""
        self._group_of: dict[str, tuple[int, int]] = {}
        self.opened_source: str | None = None
        """A guarded value's source (``"L['offset']"``) whose manager is opened, its leaves shown with the line each
        came from, in every tree shown while it is set and nothing fails (a lesson step about that guard sets it)."""

    def open_source(self, source: str | None) -> None:
        """Open the manager of `source` now and in every later tree (None: no longer)."""
        self.opened_source = source
        if source is not None and self.guards is not None and not self._index.paths:
            self._open_source(source)

    def _open_source(self, source: str) -> None:
        tree = self.guards
        path = _managers_to(tree.root, source) if tree is not None else None
        if not path:
            return
        node: TreeNode[object] = self.root
        for manager in path[1:]:                  # path[0] is the root's, shown as the root
            node = self._child_for(node, lambda data, m=manager: data is m)
        self._populate(node)
        node.expand()
        self.call_after_refresh(self._show_opened, node)

    def _show_opened(self, node: TreeNode[object]) -> None:
        """The cursor on an opened manager, its leaves in sight below it (a short pane shows it at the top)."""
        self.move_cursor(node)
        last = node.children[-1] if node.children else node
        if last.line >= 0:
            self.scroll_to_line(last.line, animate=False)
            self.scroll_to_node(node, animate=False)

    # Data ------------------------------------------------------------------------------------------------------

    @property
    def failures(self) -> FailureIndex:
        """Where the shown tree's failing guards sit (computed once per tree; `EMPTY` for none)."""
        return self._index

    @property
    def failing_position(self) -> int | None:
        """The position (in `failures.paths`) of the failing guard the cursor was last put on, or None."""
        return self._position

    def watch_guards(self, tree: GuardTree | None) -> None:
        self._index = failure_index(tree) if tree is not None else EMPTY
        self._position = None
        # leaf id → (its place in its group, the group's size), for the shown entry's groups
        self._group_of = {lid: (k, len(g.leaf_ids)) for g in self.groups
                          if tree is not None and g.compile_id == tree.compile_id
                          for k, lid in enumerate(g.leaf_ids, 1)}
        self._fill(tree)

    def watch_failing_only(self, failing_only: bool) -> None:
        self.border_subtitle = "failing paths only" if failing_only else ""
        keep = self._cursor_position()
        self._fill(self.guards, keep if keep is not None else self._position)

    def toggle_failing_only(self) -> None:
        """Show only the paths to failing guards, or everything again."""
        self.failing_only = not self.failing_only

    def _fill(self, tree: GuardTree | None, position: int | None = None) -> None:
        """Rebuild the nodes of `tree` (first chunks only) and put the cursor on failing guard `position` (the
        first one by default)."""
        self._populated.clear()
        self._styles.clear()
        self.reset(self._root_label(tree), tree)
        if tree is None:
            self.root.allow_expand = False
            return
        self._populate(self.root)
        self.root.expand()
        paths = self._index.paths
        if paths:
            self._position = position if position is not None and position < len(paths) else 0
            target = self._reveal(paths[self._position])
            self.root.set_label(self._root_label(tree))
            self.call_after_refresh(self.move_cursor, target)
        elif self.opened_source is not None:
            self._open_source(self.opened_source)

    def _root_label(self, tree: GuardTree | None) -> Text:
        dim = self._style("guards--dim")
        if tree is None:
            return Text("no guard tree for this stop", dim)
        text = Text(f"entry {tree.compile_id}", Style(bold=True))
        text.append(f"  {tree.leaf_count:,} guards", dim)
        if tree.evaluated:
            if tree.failing:
                text.append(f"  {len(tree.failing):,} failing", self._style("guards--fail"))
                total = len(self._index.paths)
                if self._position is not None and total > 1:
                    text.append(f"  at {self._position + 1:,} of {total:,}", dim)
            else:
                text.append("  all pass", self._style("guards--pass"))
        if self.failing_only:
            text.append("  · failing paths only" if self._index.paths else "  · failing paths only: none fail",
                        self._style("guards--fail"))
        return text

    def _items_of(self, data: object) -> tuple[GuardNodeView | LeafGuardView | _Items, ...]:
        if isinstance(data, GuardTree):
            items: tuple = (*data.root.leaves, *data.root.children)
            epilogue = data.epilogue
            if self.failing_only:
                items = self._on_failing_paths(items)
                epilogue = self._on_failing_paths(epilogue)
            if epilogue:
                items += (_Items(epilogue, more=False),)
            return items
        if isinstance(data, GuardNodeView):
            items = (*data.leaves, *data.children)
        elif isinstance(data, _Items):
            items = data.items
        else:
            return ()
        return self._on_failing_paths(items) if self.failing_only else items

    def _on_failing_paths(self, items: tuple) -> tuple:
        """The items that are, or lead to, a failing guard."""
        index = self._index
        return tuple(
            item for item in items
            if (isinstance(item, GuardNodeView) and index.count(item))
            or (isinstance(item, LeafGuardView) and index.is_failing(item))
        )

    def _leads_to_failure(self, item: object) -> bool:
        if isinstance(item, GuardNodeView):
            return self._index.count(item) > 0
        if isinstance(item, LeafGuardView):
            return self._index.is_failing(item)
        return _status_of(item) == GuardStatus.FAIL

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
        promoted = [item for item in rest if self._leads_to_failure(item)][:CHUNK]
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
            if self._index.epilogue:
                label.append(f"  {self._index.epilogue:,} failing", self._style("guards--fail"))
            parent.add(label, item)

    def _add_details(self, node: TreeNode[object], leaf: LeafGuardView) -> None:
        dim = self._style("guards--dim")
        for line in leaf.code:
            node.add_leaf(Text.assemble(*((s.text, s.style) for s in highlight.python_segments(line))), _Detail())
        caveat = leaf.caveat
        if leaf.user_line or leaf.location:
            # torch says the line of a 0/1- or NaN-specialization guard is only the value's first use
            text = Text(caveat_lines(caveat)[0] + ": " if caveat is not None else "from ", dim)
            if leaf.user_line:
                text.append_text(self._user_line(leaf.user_line))
            if leaf.location:
                text.append(f"  ({location_text(leaf.location)})", dim)
            node.add_leaf(text, _Detail())
        if leaf.expected is not None or leaf.actual is not None:
            node.add_leaf(Text(f"expected {leaf.expected or '?'}, actual {leaf.actual or '?'}", dim), _Detail())
        if caveat is not None:
            node.add_leaf(Text("caveat: " + caveat_lines(caveat)[1], dim), _Detail())
        if leaf.reason:
            node.add_leaf(Text(leaf.reason, self._style("guards--fail")), _Detail())
        node.add_leaf(Text(f"id {leaf.id} · source {leaf.source}", dim), _Detail())

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[object]) -> None:
        node = event.node
        if isinstance(node.data, _Items) and node.data.more:
            self._open_more(node)
            return
        self._populate(node)

    def _open_more(self, node: TreeNode[object]) -> None:
        """Replace a ``… N more`` node by the next chunk of its items."""
        assert isinstance(node.data, _Items)
        parent = node.parent
        items = node.data.items
        node.remove()
        if parent is not None:
            self._add_items(parent, items)

    # Failing guards --------------------------------------------------------------------------------------------

    def jump_failing(self, step: int = 1) -> FailingPath | None:
        """Put the cursor on the next (`step` 1) or previous (-1) failing guard, opening the path to it and
        scrolling it into view; past the last one it comes round to the first (and back). Starts from the
        failing guard under the cursor (on a manager's line: from just before the failing guards under it),
        else from the last one jumped to.

        Posts `Jumped` (with `wrapped`), and returns the path gone to, or None when nothing fails here.
        """
        paths = self._index.paths
        forward = step >= 0
        if not paths:
            self.post_message(self.Jumped(None, 0, False, forward, None))
            return None
        current = self._cursor_position()
        first_below = self._first_below_cursor() if current is None else None
        if current is None and first_below is None:
            current = self._position
        if first_below is not None:
            # a manager's line comes just before everything under it: "next" is its first failing guard,
            # "previous" the one before that
            target = first_below if forward else first_below - 1
        elif current is None:
            target = 0 if forward else len(paths) - 1
        else:
            target = current + (1 if forward else -1)
        wrapped = not 0 <= target < len(paths)
        target %= len(paths)
        self._position = target
        path = paths[target]
        node = self._reveal(path)
        self.root.set_label(self._root_label(self.guards))
        self.last_line  # noqa: B018 - builds the tree lines now, so the node has its line for the cursor
        self.center_scroll = True
        try:
            self.move_cursor(node)
        finally:
            self.center_scroll = False
        self.post_message(self.Jumped(target, len(paths), wrapped, forward, path.leaf))
        return path

    def _cursor_position(self) -> int | None:
        """The position of the failing guard under the cursor (on its line or one of its detail lines)."""
        node = self.cursor_node
        while node is not None and isinstance(node.data, _Detail):
            node = node.parent
        if node is None or not isinstance(node.data, LeafGuardView) or not self._index.is_failing(node.data):
            return None
        leaf_id = node.data.id
        return next((i for i, p in enumerate(self._index.paths) if p.leaf.id == leaf_id), None)

    def _first_below_cursor(self) -> int | None:
        """When the cursor is on a manager with failing guards below it: the position of the first of them."""
        node = self.cursor_node
        data = node.data if node is not None else None
        if not isinstance(data, GuardNodeView) or not self._index.count(data):
            return None
        return next((i for i, p in enumerate(self._index.paths) if any(m is data for m in p.managers)), None)

    def _reveal(self, path: FailingPath) -> TreeNode[object]:
        """Build and expand the nodes down to `path`'s leaf (bringing chunks out from behind ``… more`` where
        needed); return the leaf's node."""
        node: TreeNode[object] = self.root
        self._populate(node)
        if path.epilogue:
            node = self._child_for(node, lambda data: isinstance(data, _Items) and not data.more)
        else:
            for manager in path.managers[1:]:                  # managers[0] is the root's, shown as the root
                node = self._child_for(node, lambda data, m=manager: data is m)
        leaf = self._child_for(node, lambda data: data is path.leaf)
        return leaf

    def _child_for(self, parent: TreeNode[object], match: Callable[[object], bool]) -> TreeNode[object]:
        """`parent`'s child whose data `match`es, expanding `parent` and opening ``… more`` chunks until it is
        there. Falls back to `parent` itself (the data does not hang there)."""
        self._populate(parent)
        if not parent.is_expanded:
            parent.expand()
        while True:
            more = None
            for child in parent.children:
                if match(child.data):
                    return child
                if isinstance(child.data, _Items) and child.data.more:
                    more = child
            if more is None:
                return parent
            self._open_more(more)

    # Labels ----------------------------------------------------------------------------------------------------

    def _style(self, component: str) -> Style:
        # looked up once per tree: a label is built for every node added, and the lookup costs as much as the
        # rest of a label (the styles cannot change under a tree's built labels anyway)
        style = self._styles.get(component)
        if style is None:
            style = self._styles[component] = self.get_component_rich_style(component, partial=True)
        return style

    def render_line(self, y: int) -> Strip:
        """Textual's row, ending in ``…`` when the row goes on past the pane's right edge (the tree scrolls
        sideways; a row cut without a mark read as a whole one)."""
        strip = super().render_line(y)
        # the rows' room: without the vertical scrollbar once there is one (a row cut under it lost its "…")
        width = self.scrollable_content_region.width
        node = self.get_node_at_line(y + self.scroll_offset.y)
        if node is None or width < 2:
            return strip
        depth = 0
        parent = node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        guides = (depth if self.show_root else max(0, depth - 1)) * self.guide_depth
        if guides + self.get_label_width(node) <= self.scroll_offset.x + width:
            return strip
        return marked_cut(strip, width)

    def get_label_width(self, node: TreeNode[object]) -> int:
        """A node's width in cells, from its label's length and the expand icon (Textual's default renders every
        label again each time a node is expanded or collapsed, which is most of a jump's time in a big tree)."""
        label = node.label
        width = label.cell_len if isinstance(label, Text) else cell_len(label)
        if node.allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        return width

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
        plural = "s" if node.leaf_count != 1 else ""
        failing = self._index.count(node)
        if failing:
            # the count first: a narrow pane cuts a long source, never what fails under it
            text.append(f"{failing:,} of {node.leaf_count:,} guard{plural} failing  ", self._style("guards--fail"))
            text.append(node.source, Style(bold=True))
        else:
            text.append(node.source, Style(bold=True))
            text.append(f"  {node.leaf_count:,} guard{plural}", dim)
        if node.accessor:
            text.append(f"  {node.accessor}", dim)
        return text

    def _leaf_label(self, leaf: LeafGuardView) -> Text:
        status_style = self._status_style(leaf.status)
        text = Text(f"{_ICONS[leaf.status]} ", status_style)
        text.append(leaf.guard_type, status_style if leaf.status == GuardStatus.FAIL else Style(bold=True))
        if leaf.id in self._group_of:  # before the code: a narrow pane cuts the code, never the mark
            k, n = self._group_of[leaf.id]
            text.append(f" [group: {k} of {n}]", status_style)
        code = Text()
        if leaf.code:
            code.append("  ")
            short = short_leaf_code(leaf.code[0])
            code.append_text(Text.assemble(*((s.text, s.style) for s in highlight.python_segments(short))))
            if len(leaf.code) > 1:
                code.append(f" (+{len(leaf.code) - 1})", self._style("guards--dim"))
        line = Text()
        if leaf.user_line:
            arrow = "  ← first use: " if leaf.caveat is not None else "  ← "
            line.append(arrow, self._style("guards--dim"))
            line.append_text(self._user_line(leaf.user_line))
        # the code, then the line of the user's source it came from; where the row would not fit the pane, the
        # source line comes first: the pane cuts the code, never the user's line (at 80 columns a TYPE_MATCH row
        # lost its `← return x + offset`)
        width = self.size.width or (self.app.size.width if self.is_attached else 0)  # not laid out yet: the screen's
        fits = width <= 0 or text.cell_len + code.cell_len + line.cell_len <= width - _LEAF_INDENT
        text.append_text(code if fits else line)
        text.append_text(line if fits else code)
        return text

    def _user_line(self, line: str) -> Text:
        """The user source line a guard came from, highlighted as Python, in the `guards--userline` style."""
        text = Text.assemble(*((s.text, s.style) for s in highlight.python_segments(line.strip())))
        text.stylize(self._style("guards--userline"))
        return text


#: Cells left of a leaf's label in the tree (guides of a leaf under a value's manager, its expand icon).
_LEAF_INDENT = 8


def _managers_to(root: GuardNodeView, source: str) -> list[GuardNodeView] | None:
    """The managers from `root` down to the one guarding `source` (inclusive), or None when none does."""
    if root.source == source:
        return [root]
    for child in root.children:
        below = _managers_to(child, source)
        if below is not None:
            return [root, *below]
    return None
