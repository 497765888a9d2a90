"""Views in step with a cursor: the bytecode cursor marks its user source line, the original-bytecode rows and the
FX graph nodes of that line; the source cursor and the Graph view's node cursor mark the generated rows (and the
others) of their line; the Original view's cursor marks the generated rows of its line.

`SyncedViews` is composed into `MainScreen` (which forwards the cursor messages to it). It needs no engine call: a
generated instruction carries the user's line number (Dynamo copies it), the original listing carries line
numbers too, and each FX node carries the user line it was traced from (`GraphView.node_lines`). It also renders
the Graph view, whose highlight follows that line.
"""

from __future__ import annotations

from enum import Enum

from rich.console import Group, RenderableType
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import TabbedContent

from dynadbg.core.facts import short_graph_name
from dynadbg.core.model import GraphView

from . import highlight
from .bytecode_view import BytecodeView
from .graph_pane import GraphPane, NodeRow
from .source_view import SourceView
from .views import View

#: How the Graph view marks the FX nodes traced from the cursor's user line.
_RELATED = Style(bgcolor="grey30", bold=True)
#: How the Graph view shows its own cursor (the node line it is on), while it has the focus.
_CURSOR = Style(reverse=True, bold=True)


class Origin(Enum):
    """Which view's cursor chose the user line the others mark."""

    BYTECODE = "bytecode"
    SOURCE = "source"
    GRAPH = "graph"


class SyncedViews:
    """Keeps the bytecode, Original, source and Graph views marking one user line (see the module docstring).

    Args:
        views: the tabbed views (whether the Graph view is open).
        bytecode: the generated-code pane.
        original: the Original view's listing.
        source: the source pane.
        graph: the Graph view.
    """

    def __init__(self, views: TabbedContent, bytecode: BytecodeView, original: BytecodeView, source: SourceView,
                 graph: GraphPane) -> None:
        self._views = views
        self._bytecode = bytecode
        self._original = original
        self._source = source
        self._graph = graph
        self.graphs: tuple[GraphView, ...] = ()
        """The FX graphs last shown in the Graph view (their nodes' user lines drive its highlight)."""
        self.cursor_line: int | None = None
        """The user source line the views mark: of the last moved cursor's instruction, source line or FX node."""
        self._graph_line_shown: int | None = -1
        self._followed: tuple[int | None, Origin] | None = None

    # Cursor moves (forwarded by the screen) ------------------------------------------------------------------------

    def bytecode_cursor_moved(self, event: BytecodeView.CursorMoved) -> None:
        view = event.view
        if view is self._original:
            if view.has_focus:
                # the other way: the original row's line marks the generated rows Dynamo made from it
                instr = view.cursor_instruction
                self._bytecode.related = self._generated_rows(instr.lineno if instr is not None else None)
                self._followed = None  # the generated pane's own cursor clears these marks when it moves next
            return
        if view is self._bytecode:
            instr = view.cursor_instruction
            self.follow_line(instr.lineno if instr is not None else None, Origin.BYTECODE)

    def source_cursor_moved(self, event: SourceView.CursorMoved) -> None:
        if event.view.has_focus:
            self.follow_line(event.line, Origin.SOURCE)

    def graph_cursor_moved(self, event: GraphPane.CursorMoved) -> None:
        if event.view.has_focus:
            self.follow_line(event.line, Origin.GRAPH)
            self.render_graph(force=True)  # its cursor moved, maybe within the same line's nodes

    def graph_focus_changed(self, event: GraphPane.FocusChanged) -> None:
        if self.graphs and event.view.cursor is not None:
            self.show_graph(self.graphs)

    def follow_line(self, line: int | None, origin: Origin) -> None:
        """Make `line` the user line the views mark, from the cursor of view `origin`: the source line (unless the
        source's own cursor is on it), the generated rows of that line (unless the generated pane's own cursor
        moved), the Original rows and the Graph view's nodes of that line."""
        if (line, origin) == self._followed:
            return
        self._followed = (line, origin)
        self.cursor_line = line
        self._source.related = None if origin is Origin.SOURCE else line
        self._bytecode.related = frozenset() if origin is Origin.BYTECODE else self._generated_rows(line)
        self.sync_original()
        if self._views.active == View.GRAPH.pane_id and origin is not Origin.GRAPH:
            self.render_graph()  # the Graph view's own moves repaint it

    def _generated_rows(self, line: int | None) -> frozenset[int]:
        """Indexes of the generated instructions that carry user line `line` (Dynamo copies the line of the user
        code each instruction stands for; the graph's CALL carries the line of the call site)."""
        code = self._bytecode.code
        if code is None or line is None:
            return frozenset()
        return frozenset(i.index for i in code.instructions if i.lineno == line)

    def sync_original(self) -> None:
        """Mark the original-bytecode rows of the cursor's user line (also when the listing arrives)."""
        code, line = self._original.code, self.cursor_line
        self._original.related = frozenset(
            i.index for i in code.instructions if line is not None and i.lineno == line) if code is not None \
            else frozenset()

    # The Graph view ------------------------------------------------------------------------------------------------

    def related_graph_nodes(self) -> dict[str, tuple[str, ...]]:
        """Graph name → the FX nodes traced from the cursor's user line."""
        line = self.cursor_line
        if line is None:
            return {}
        return {g.name: tuple(n for n, ln in g.node_lines if ln == line) for g in self.graphs}

    def render_graph(self, *, force: bool = False) -> None:
        """Repaint the Graph view when the cursor's line changed since it was last painted (or `force`: its own
        cursor moved)."""
        if (force or self._graph_line_shown != self.cursor_line) and self.graphs:
            self._graph_line_shown = self.cursor_line
            self.show_graph(self.graphs)

    def graph_highlight(self, graph: GraphView) -> tuple[set[int], RenderableType | None]:
        """The 1-based lines of `graph.code` that define a node traced from the cursor's line, and a note naming
        those nodes (None when there are none)."""
        nodes = self.related_graph_nodes().get(graph.name, ())
        if not nodes:
            return set(), None
        wanted = set(nodes)
        lines = {k for name, k in graph.code_lines if name in wanted}
        note = Text(f"▶ line {self.cursor_line} of the user's code made: {', '.join(nodes)}", style="bold")
        return lines, note

    def show_graph(self, graphs: tuple[GraphView, ...] | str) -> None:
        """Fill the Graph view with the entry's FX graphs (or why there are none); repainting the same graphs (the
        cursor's line changed) keeps the view's scroll position and node cursor."""
        view = self._graph
        if isinstance(graphs, str) or not graphs:
            self.graphs = ()
            view.set_rows(())
            view.content = Text(graphs or "(no FX graph)")
            return
        same = graphs == self.graphs
        self.graphs = graphs
        self._graph_line_shown = self.cursor_line
        rows: list[NodeRow] = []
        for graph in graphs:
            node_line = dict(graph.node_lines)
            rows += [NodeRow(graph.name, k, name, node_line[name]) for name, k in graph.code_lines if name in node_line]
        view.set_rows(tuple(rows))
        cursor = view.cursor_row if view.has_focus else None
        parts: list[RenderableType] = []
        y = 0
        view.cursor_y = None
        for graph in graphs:
            # one row (the cursor's row count below relies on it), named as the bytecode's headers name it
            parts.append(Text(f"{short_graph_name(graph.name)}  ·  compile {graph.compile_id}  ·  "
                              f"{graph.node_count} nodes", style="bold", no_wrap=True, overflow="ellipsis"))
            # the FX nodes traced from the cursor's user line are highlighted (and named above)
            lines, note = self.graph_highlight(graph)
            if note is not None:
                parts.append(note)
            y += 1 + (note is not None)
            # FX's code starts with blank lines: not shown (a line k of `graph.code` is row k - lead)
            code_lines = graph.code.splitlines()
            lead = next((k for k, text in enumerate(code_lines) if text.strip()), 0)
            code_lines = code_lines[lead:]
            syntax = Syntax("\n".join(code_lines).rstrip(), "python", theme=highlight.STYLE_NAME,
                            background_color="default", line_numbers=False)
            for k in lines:
                if k > lead:
                    syntax.stylize_range(_RELATED, (k - lead, 0), (k - lead, len(code_lines[k - lead - 1])))
            if cursor is not None and cursor.graph == graph.name and cursor.code_line > lead:
                k = cursor.code_line - lead
                syntax.stylize_range(_CURSOR, (k, 0), (k, len(code_lines[k - 1])))
                view.cursor_y = y + k - 1
            parts.append(syntax)
            parts.append(Text(""))
            y += len(code_lines) + 1
        if same:
            view.repaint(Group(*parts))
        else:
            view.content = Group(*parts)
