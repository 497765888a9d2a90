"""The Graph view: the FX graphs' code, with a cursor over the lines that define a node (the views follow its user
line)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Static

from .output_view import OutputView


@dataclass(frozen=True)
class NodeRow:
    """A line of a graph's code that defines an FX node.

    Attributes:
        graph: the graph's name (``GraphView.name``).
        code_line: 1-based line in ``GraphView.code``.
        node: the FX node's name.
        line: the user source line the node was traced from (``GraphView.node_lines``), or None.
    """

    graph: str
    code_line: int
    node: str
    line: int | None


class GraphPane(OutputView):
    """The FX graphs, rendered by the screen; a cursor walks the node rows (`rows`), shown while the pane has focus.

    | Key | Action |
    | :- | :- |
    | up / down | The previous / next line that defines an FX node. |
    | home / end | The first / last such line. |
    | pageup / pagedown | Scroll a page. |
    """

    BINDINGS = [
        Binding("up", "node(-1)", "Previous node", show=False),
        Binding("down", "node(1)", "Next node", show=False),
        Binding("home", "node_to(0)", "First node", show=False),
        Binding("end", "node_to(-1)", "Last node", show=False),
    ]

    class CursorMoved(Message):
        """The user moved the node cursor (the bytecode and source views mark what its user line made)."""

        def __init__(self, view: GraphPane, row: NodeRow) -> None:
            self.view = view
            """The pane."""
            self.row = row
            """The node row under the cursor."""
            super().__init__()

        @property
        def line(self) -> int | None:
            """The user line of the node under the cursor."""
            return self.row.line

        @property
        def control(self) -> GraphPane:
            """The pane."""
            return self.view

    class FocusChanged(Message):
        """The pane took or lost the focus (the cursor is shown only while it has it)."""

        def __init__(self, view: GraphPane) -> None:
            self.view = view
            """The pane."""
            super().__init__()

        @property
        def control(self) -> GraphPane:
            """The pane."""
            return self.view

    def __init__(self, placeholder: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(placeholder, name=name, id=id, classes=classes)
        self.rows: tuple[NodeRow, ...] = ()
        """The node rows of the graphs shown, in display order."""
        self.cursor: int | None = None
        """Position in `rows` of the cursor; None until the user moves it."""
        self.cursor_y: int | None = None
        """The content row of the cursor as last rendered (the screen sets it), to keep it in sight."""
        self._keep_scroll = False

    @property
    def cursor_row(self) -> NodeRow | None:
        """The node row under the cursor (None: no cursor yet)."""
        return self.rows[self.cursor] if self.cursor is not None and self.cursor < len(self.rows) else None

    def set_rows(self, rows: tuple[NodeRow, ...]) -> None:
        """The node rows of the graphs about to be shown; the cursor stays on a re-render of the same graphs."""
        if rows != self.rows:
            self.rows, self.cursor = rows, None

    def repaint(self, content: RenderableType) -> None:
        """Show `content` (the same graphs, repainted for a cursor move) without scrolling back to the top."""
        self._keep_scroll = True
        try:
            self.content = content
        finally:
            self._keep_scroll = False

    def watch_content(self, content: RenderableType) -> None:
        for body in self.query(".output-body").results(Static):
            body.update(content)
        if not self._keep_scroll:
            self.scroll_home(animate=False)
        else:
            self.call_after_refresh(self._show_cursor)

    def _show_cursor(self) -> None:
        y, height, top = self.cursor_y, self.scrollable_content_region.height, self.scroll_offset.y
        if y is None or height <= 0:
            return
        if y < top:
            self.scroll_to(y=max(0, y - 2), animate=False, immediate=True, force=True)
        elif y >= top + height:
            self.scroll_to(y=y - height + 2, animate=False, immediate=True, force=True)

    def action_node(self, delta: int) -> None:
        if not self.rows:
            self.scroll_relative(y=delta, animate=False)
            return
        start = (0 if delta > 0 else len(self.rows) - 1) if self.cursor is None else self.cursor + delta
        self._move(start)

    def action_node_to(self, position: int) -> None:
        if not self.rows:
            (self.scroll_home if position == 0 else self.scroll_end)(animate=False)
            return
        self._move(position if position >= 0 else len(self.rows) - 1)

    def _move(self, position: int) -> None:
        self.cursor = max(0, min(position, len(self.rows) - 1))
        self.post_message(self.CursorMoved(self, self.rows[self.cursor]))

    def on_focus(self) -> None:
        self.post_message(self.FocusChanged(self))

    def on_blur(self) -> None:
        self.post_message(self.FocusChanged(self))
