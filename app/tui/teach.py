"""The teaching views of the TUI: roles in the bytecode pane, the Explain pane, stack-slot provenance, and the
views in step with a cursor: the bytecode cursor marks its user source line, the original-bytecode rows and the FX
graph nodes of that line; the source cursor and the Graph view's node cursor mark the generated rows (and the
others) of their line.

Two mixins keep this apart from the screen's and the app's other work:

* `TeachingScreen` (for `MainScreen`): shows what the engine answered and syncs the other views to the cursor of
  the bytecode pane, the source pane or the Graph view (and the generated rows to the Original view's cursor).
  The syncing needs no engine call: a generated instruction carries the user's line number (Dynamo copies it),
  the original listing carries line numbers too, and each FX node carries the user line it was traced from
  (`GraphView.node_lines`).
* `TeachingApp` (for `DebuggerApp`): asks the engine — `roles()` once per code object, `stack_provenance()` at each
  stop, `explain(index)` for the cursor's instruction while the Explain pane shows — through the app's engine-call
  queue (the program's worker thread runs them; never the UI thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text

from dynadbg.core.model import CodeRoles, EngineError, Explanation, GraphView, Provenance, Stop

from .bytecode_view import BytecodeView
from .explain_view import ExplainView
from .graph_pane import GraphPane
from .source_view import SourceView
from .stack_view import StackView

if TYPE_CHECKING:
    from textual.widgets import TabbedContent


class TeachingScreen:
    """Mixin of `MainScreen`: roles, Explain pane, provenance, synced views."""

    def _teach_init(self) -> None:
        self.teach_graphs: tuple[GraphView, ...] = ()
        """The FX graphs last shown in the Graph view (their nodes' user lines drive its highlight)."""
        self.cursor_line: int | None = None
        """The user source line the views mark: of the last moved cursor's instruction, source line or FX node."""
        self._graph_line_shown: int | None = -1
        self._followed: tuple[int | None, str] | None = None

    # What the engine answered -------------------------------------------------------------------------------------

    @property
    def explain_shown(self) -> bool:
        """The Explain pane is open."""
        return bool(self.has_class("-explain"))  # type: ignore[attr-defined]

    def toggle_explain(self) -> bool:
        """Open or close the Explain pane; whether it is open now."""
        self.toggle_class("-explain")  # type: ignore[attr-defined]
        return self.explain_shown

    def show_roles(self, roles: CodeRoles | EngineError | None) -> None:
        """Roles of the bytecode pane's code (an error or None: no role gutter)."""
        view: BytecodeView = self.query_one("#bytecode", BytecodeView)  # type: ignore[attr-defined]
        view.roles = roles if isinstance(roles, CodeRoles) else None

    def show_provenance(self, provenance: Provenance | EngineError | None) -> None:
        """Who pushed each value-stack slot, for the stack pane (an error or None: values only)."""
        self.query_one(StackView).provenance = (  # type: ignore[attr-defined]
            provenance if isinstance(provenance, Provenance) else None)

    def show_explanation(self, ex: Explanation | EngineError | None, *, live: bool = False,
                         recorded: bool = False) -> None:
        """The Explain pane's content (`recorded`: the stop shown is a recorded one, from the history)."""
        pane: ExplainView = self.query_one("#explain", ExplainView)  # type: ignore[attr-defined]
        pane.show_explanation(ex.message if isinstance(ex, EngineError) else ex, live=live, recorded=recorded)

    # Synced views -------------------------------------------------------------------------------------------------

    def on_bytecode_view_cursor_moved(self, event: BytecodeView.CursorMoved) -> None:
        if event.view.id == "orig-bytecode" and event.view.has_focus:
            # the other way: the original row's line marks the generated rows Dynamo made from it
            instr = event.view.cursor_instruction
            line = instr.lineno if instr is not None else None
            generated = self.query_one("#bytecode", BytecodeView)  # type: ignore[attr-defined]
            generated.related = self._generated_rows(line)
            self._followed = None  # the generated pane's own cursor clears these marks when it moves next
            return
        if event.view.id != "bytecode":
            return
        instr = event.view.cursor_instruction
        self.follow_line(instr.lineno if instr is not None else None, "bytecode")

    def on_source_view_cursor_moved(self, event: SourceView.CursorMoved) -> None:
        if event.view.has_focus:
            self.follow_line(event.line, "source")

    def on_graph_pane_cursor_moved(self, event: GraphPane.CursorMoved) -> None:
        if event.view.has_focus:
            self.follow_line(event.line, "graph")
            self.render_graph(force=True)  # its cursor moved, maybe within the same line's nodes

    def on_graph_pane_focus_changed(self, event: GraphPane.FocusChanged) -> None:
        if self.teach_graphs and event.view.cursor is not None:
            self.show_graph(self.teach_graphs)  # type: ignore[attr-defined]

    def follow_line(self, line: int | None, origin: str) -> None:
        """Make `line` the user line the views mark, from the cursor of view `origin` (``"bytecode"``,
        ``"source"`` or ``"graph"``): the source line (unless the source's own cursor is on it), the generated rows
        of that line (unless the generated pane's own cursor moved), the Original rows and the Graph view's nodes
        of that line. Only data already on screen is used: each instruction's line number and each node's line."""
        if (line, origin) == self._followed:
            return
        self._followed = (line, origin)
        self.cursor_line = line
        self.query_one(SourceView).related = None if origin == "source" else line  # type: ignore[attr-defined]
        generated = self.query_one("#bytecode", BytecodeView)  # type: ignore[attr-defined]
        generated.related = frozenset() if origin == "bytecode" else self._generated_rows(line)
        self.sync_original()
        views: TabbedContent = self.query_one("#views")  # type: ignore[attr-defined]
        if views.active == "tab-graph" and origin != "graph":  # the Graph view's own moves repaint it
            self.render_graph()

    def _generated_rows(self, line: int | None) -> frozenset[int]:
        """Indexes of the generated instructions that carry user line `line` (Dynamo copies the line of the user
        code each instruction stands for; the graph's CALL carries the line of the call site)."""
        code = self.query_one("#bytecode", BytecodeView).code  # type: ignore[attr-defined]
        if code is None or line is None:
            return frozenset()
        return frozenset(i.index for i in code.instructions if i.lineno == line)

    def sync_original(self) -> None:
        """Mark the original-bytecode rows of the bytecode cursor's user line (also when the listing arrives)."""
        orig: BytecodeView = self.query_one("#orig-bytecode", BytecodeView)  # type: ignore[attr-defined]
        code, line = orig.code, self.cursor_line
        orig.related = frozenset(i.index for i in code.instructions if line is not None and i.lineno == line) \
            if code is not None else frozenset()

    def related_graph_nodes(self) -> dict[str, tuple[str, ...]]:
        """Graph name → the FX nodes traced from the cursor's user line."""
        line = self.cursor_line
        if line is None:
            return {}
        return {g.name: tuple(n for n, ln in g.node_lines if ln == line) for g in self.teach_graphs}

    def render_graph(self, *, force: bool = False) -> None:
        """Repaint the Graph view when the cursor's line changed since it was last painted (or `force`: its own
        cursor moved)."""
        if (force or self._graph_line_shown != self.cursor_line) and self.teach_graphs:
            self._graph_line_shown = self.cursor_line
            self.show_graph(self.teach_graphs)  # type: ignore[attr-defined]

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


class TeachingApp:
    """Mixin of `DebuggerApp`: asks the engine for the teaching views, on the engine-call queue."""

    def _teach_init(self) -> None:
        self._roles_key: int | None = None
        self._explained: tuple[Any, ...] | None = None

    def fetch_teaching(self, stop: Stop) -> None:
        """At a stop (or a changed stop): the roles of a code object not seen yet, the stack's provenance, and
        the Explain pane's instruction (when the pane is open)."""
        screen = self._main  # type: ignore[attr-defined]
        frame = stop.selected_frame
        if frame is None or not frame.code.generated:
            self._roles_key = None
            screen.show_roles(None)
            screen.show_provenance(None)
            screen.show_explanation("no generated code here")
            return
        engine = self.session  # type: ignore[attr-defined]
        want_roles = self._roles_key != frame.code.key
        self._roles_key = frame.code.key
        want_provenance = frame.index >= 0 and bool(frame.stack)
        if not want_provenance:
            screen.show_provenance(None)

        def call() -> Any:
            return (engine.roles() if want_roles else None,
                    engine.stack_provenance() if want_provenance else None)

        def done(result: Any) -> None:
            roles, provenance = result if isinstance(result, tuple) else (result, result)
            if self.last_stop is not stop:  # type: ignore[attr-defined]
                if want_roles and self._roles_key == frame.code.key and isinstance(roles, CodeRoles):
                    screen.show_roles(roles)
                return
            if want_roles:
                screen.show_roles(roles)
            if want_provenance:
                screen.show_provenance(provenance)

        self._enqueue(_call(call, done, "teaching views"))  # type: ignore[attr-defined]
        self._explained = None
        self.explain_cursor()

    def explain_cursor(self) -> None:
        """Fill the Explain pane for the bytecode cursor's instruction (only while the pane is open)."""
        screen = self._main  # type: ignore[attr-defined]
        stop = self.last_stop  # type: ignore[attr-defined]
        if not screen.explain_shown or stop is None or not self.stopped:  # type: ignore[attr-defined]
            return
        frame = stop.selected_frame
        instr = screen.bytecode.cursor_instruction
        if frame is None or instr is None or not frame.code.generated:
            return
        key = (stop.seq, stop.selected, frame.code.key, instr.index)
        if key == self._explained:
            return
        self._explained = key
        engine, index, live = self.session, instr.index, instr.index == frame.index  # type: ignore[attr-defined]
        recorded = stop.history is not None

        def done(result: Any) -> None:
            if self._explained == key:
                screen.show_explanation(result, live=live, recorded=recorded)

        self._enqueue(_call(lambda: engine.explain(index), done, "explain"))  # type: ignore[attr-defined]

    def on_bytecode_view_cursor_moved(self, event: BytecodeView.CursorMoved) -> None:
        if event.view.id == "bytecode":
            self.explain_cursor()


def _call(fn: Any, done: Any, what: str) -> Any:
    from .app import _Call  # the app's queued-call record (imported late: app imports this module)

    return _Call(fn, done, False, what)
