"""The main screen: every pane at once (pudb's lesson), fed one-way from the `stop` reactive.

Data flow: the app sets `MainScreen.stop` (and `activity`, `exit_result`, `guards`, `breakpoints`); the screen
derives the selected `frame` (`Stop.selected_frame`: ``u``/``d`` select it in the engine) and hands each child
widget only what it renders (status line, stack, locals and watches panes through `data_bind`, the listing and
source panes through their `show` methods, which repaint only what changed). The views filled by an engine query
(`QUERY_VIEWS`) get the query's typed answer through `show_query`.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, RichLog, TabbedContent, TabPane

from dynadbg.core.model import (
    BreakpointView,
    CodeView,
    CompiledFrameView,
    EditError,
    EngineError,
    FrameView,
    GraphView,
    GuardTree,
    PatchDiff,
    RecompileRecord,
    Stop,
    StopKind,
)
from dynadbg.core import format as fmt
from dynadbg.core.format.recompile import guard_cost_lines
from dynadbg.core.runner import ExitResult

from . import highlight
from .bytecode_view import BytecodeView
from .console import Console
from .diff_view import DiffView
from .explain_view import ExplainView
from .graph_pane import GraphPane, NodeRow
from .guard_tree_view import GuardTreeView
from .locals_view import LocalsView
from .output_view import OutputView
from .recompile_view import RecompileView
from .source_view import SourceView
from .stack_view import StackView
from .status_line import StatusLine
from .teach import TeachingScreen
from .watches_view import WatchesView

#: Tab pane id → the `dynadbg.core.protocol.Engine` query that fills it (the other views show the stop itself).
QUERY_VIEWS: dict[str, str] = {
    "tab-orig": "original_code",
    "tab-graph": "graphs",
    "tab-entries": "entries",
    "tab-diff": "patch_diff",
    "tab-recompile": "recompile_records",
}


#: How the Graph view marks the FX nodes traced from the cursor's user line.
_RELATED = Style(bgcolor="grey30", bold=True)
#: How the Graph view shows its own cursor (the node line it is on), while it has the focus.
_CURSOR = Style(reverse=True, bold=True)

#: Tab pane id → the widget that takes the focus when the pane is shown.
_VIEW_FOCUS: dict[str, str] = {
    "tab-bytecode": "#bytecode",
    "tab-stop": "#stop-detail",
    "tab-diff": "#diff",
    "tab-recompile": "#recompile",
    "tab-graph": "#graph",
    "tab-entries": "#entries",
    "tab-stderr": "#stderr",
}


class KeysFooter(Footer):
    """The footer: under `NARROW_FOOTER` columns it packs the keys tighter, drops the palette hint (Ctrl+P still
    opens it; the help lists it) and shows ``? Help`` and ``q Quit`` first, so they never fall off the end."""

    FIRST = ("dbg('help')", "dbg('quit')")
    """The actions shown first on a narrow footer."""

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_FOOTER
        if narrow != self.compact:
            self.compact = narrow
            self.show_command_palette = not narrow

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        if self.compact:
            first = [k for k in keys if getattr(k, "action", None) in self.FIRST]
            keys = first + [k for k in keys if k not in first]
        yield from keys


#: Terminal width under which the footer is compact (`KeysFooter`).
NARROW_FOOTER = 120


class MainScreen(TeachingScreen, Screen[None]):
    """Status line; bytecode views and source on the left; value stack, locals and guard tree on the right;
    the console below.

    Width under 100 columns (``-narrow``; under 60, ``-cramped``) or height under 32 rows (``-short``; under 16,
    ``-tiny``) reflow and hide panes (``dynadbg.tcss``). At a recompile stop (``-recompile``) the source and the
    (empty) value stack make room for the Recompile view, the inputs (locals) and the failing guards.
    """

    ALLOW_IN_MAXIMIZED_VIEW = "#status, Footer"
    """A maximised pane keeps the status line above it and the footer (its keys) below."""

    HORIZONTAL_BREAKPOINTS = [(0, "-cramped"), (60, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (16, "-short"), (32, "-tall")]

    stop: reactive[Stop | None] = reactive(None, init=False, repaint=False)
    """The stop the program is paused on, or last paused on while it runs (None before the first stop and after
    it ended). Screen reactives never repaint the screen themselves: each pane repaints what changed."""
    frame: var[FrameView | None] = var(None)
    """The frame shown: the stop's selected frame (`Stop.selected_frame`)."""
    breakpoints: reactive[tuple[BreakpointView, ...] | None] = reactive(None, init=False, repaint=False)
    """Every breakpoint of the session as the engine listed it after a breakpoint change (None: the stop's own
    `FrameView.breakpoints` hold)."""
    activity: reactive[str | None] = reactive("starting", repaint=False)
    """What the running program is doing (``"running"``, ``"compiling f"``); None while stopped."""
    exit_result: reactive[ExitResult | None] = reactive(None, init=False, repaint=False)
    """How the program ended, once it did."""
    guards: reactive[GuardTree | None] = reactive(None, always_update=True, init=False, repaint=False)
    """The guard tree of the entry serving the current frame, once loaded."""
    guards_loading: reactive[bool] = reactive(False, init=False, repaint=False)
    """True while the guard tree is being fetched (the pane shows a loading indicator)."""

    class ViewRequested(Message):
        """A view tab was opened whose content comes from an engine query (`QUERY_VIEWS`)."""

        def __init__(self, pane_id: str) -> None:
            self.pane_id = pane_id
            """The tab pane id (``"tab-orig"``): which view, hence which query."""
            super().__init__()

    class BreakpointRequested(Message):
        """The user clicked a bytecode gutter: toggle the breakpoint at `index`."""

        def __init__(self, index: int) -> None:
            self.index = index
            """Instruction index."""
            super().__init__()

    class Ready(Message):
        """The screen and all its panes are mounted: engine events can be shown from now on."""

    def __init__(self) -> None:
        super().__init__()
        self._teach_init()
        self._stop_detail_stale = False
        self.resume_aliases: dict[str, str] = {}
        """A resume function's global name (``__resume_at_196_3``) → its code name
        (``torch_dynamo_resume_in_forward_at_26``), learnt from `Engine.entries` and `Engine.compiles`."""

    def learn_resume_aliases(self, frame: object, compiles: object) -> None:
        """Pair each resume function's global name with its code's name (`CacheEntryView.resume_keys` against
        `CompilesData.frames`), for the Entries view and the status line."""
        names = {f.key: f.name for f in getattr(compiles, "frames", ())}
        for entry in getattr(frame, "entries", ()):
            for global_name, key in zip(entry.resume_functions, entry.resume_keys):
                if key in names:
                    self.resume_aliases[global_name] = names[key]
        status = self.query_one(StatusLine)
        status.aliases = {code: glob for glob, code in self.resume_aliases.items()}
        status.refresh()

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status").data_bind(MainScreen.stop, MainScreen.activity, MainScreen.exit_result)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with TabbedContent(id="views", initial="tab-bytecode"):
                    with TabPane("Bytecode", id="tab-bytecode"):
                        yield BytecodeView(id="bytecode")
                        yield ExplainView("explanations of the cursor's instruction: shown when stopped",
                                          id="explain", classes="pane")
                    with TabPane("Original", id="tab-orig"):
                        yield BytecodeView(id="orig-bytecode")
                        yield OutputView("original bytecode: shown when stopped", id="orig-text")
                    with TabPane("Graph", id="tab-graph"):
                        yield GraphPane("FX graph: shown when stopped", id="graph")
                    with TabPane("Entries", id="tab-entries"):
                        yield OutputView("cache entries: shown when stopped", id="entries")
                    with TabPane("Stop", id="tab-stop"):
                        yield OutputView("not stopped yet", id="stop-detail")
                    with TabPane("Diff", id="tab-diff"):
                        yield DiffView(id="diff")
                    with TabPane("Recompile", id="tab-recompile"):
                        yield RecompileView(id="recompile")
                    with TabPane("Stderr", id="tab-stderr"):
                        yield RichLog(id="stderr", max_lines=10_000, wrap=True, min_width=20)
                yield SourceView(id="source")
            with Vertical(id="right"):
                yield StackView(id="stack", classes="pane").data_bind(MainScreen.frame)
                yield LocalsView(id="locals", classes="pane").data_bind(MainScreen.frame)
                yield WatchesView(id="watches", classes="pane -empty").data_bind(MainScreen.stop)
                yield GuardTreeView(id="guards")
        yield Console(id="console")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#bytecode").border_title = "bytecode"
        self.query_one("#source").border_title = "source"
        self.query_one("#stack").border_title = "value stack"
        self.query_one("#locals").border_title = "locals"
        self.query_one("#watches").border_title = "watches"
        self.query_one("#guards").border_title = "guards"
        self.query_one("#orig-bytecode").border_title = "original bytecode"
        self.query_one("#diff").border_title = "instruction edits"
        self.query_one("#recompile").border_title = "why it recompiles"
        self.query_one("#stderr").border_title = "the program's stderr (torch warnings, library messages)"
        self.query_one("#explain").border_title = "explain"
        self.query_one("#stop-detail").border_title = "why it stopped"
        self.query_one("#graph").border_title = "FX graph"
        self.query_one("#entries").border_title = "cache entries"
        self.query_one("#orig-bytecode").display = False
        self.query_one("#bytecode", BytecodeView).focus()
        # After the first refresh: the tabs have activated their initial pane, so a stop may switch views.
        self.call_after_refresh(self.post_message, self.Ready())

    # Accessors -------------------------------------------------------------------------------------------------

    @property
    def console(self) -> Console:
        """The console (log and command input)."""
        return self.query_one("#console", Console)

    @property
    def bytecode(self) -> BytecodeView:
        """The transformed-bytecode pane."""
        return self.query_one("#bytecode", BytecodeView)

    @property
    def guard_tree(self) -> GuardTreeView:
        """The guard-tree pane."""
        return self.query_one("#guards", GuardTreeView)

    @property
    def views(self) -> TabbedContent:
        """The switchable views (bytecode, original, graph, entries, stop, diff, recompile)."""
        return self.query_one("#views", TabbedContent)

    @property
    def recompile_view(self) -> RecompileView:
        """The Recompile view."""
        return self.query_one("#recompile", RecompileView)

    @property
    def diff_view(self) -> DiffView:
        """The Diff view (instruction edits)."""
        return self.query_one("#diff", DiffView)

    # Reactive data flow ----------------------------------------------------------------------------------------

    def watch_stop(self, stop: Stop | None) -> None:
        self.breakpoints = None
        self._show_frame()
        self.set_class(stop is not None and stop.kind is StopKind.RECOMPILE, "-recompile")
        self.set_class(stop is not None and stop.history is not None, "-history")
        self.recompile_view.show_stop(stop)
        if stop is not None:
            self._stop_detail_stale = True
            if self.views.active == "tab-stop":
                self._fill_stop_detail()
            mark = stop.history
            # a recorded stop (`back`): the stack and locals panes say so under their values
            recorded = f"recorded: history {mark.position}/{mark.total}" if mark is not None else ""
            self.query_one("#locals").border_subtitle = recorded
            frame = stop.selected_frame
            self.query_one("#stack").border_subtitle = recorded or (
                "" if frame is None else "below the pending call" if frame.below_call
                else "depth from the code's flow" if frame.depth_from_flow
                else "" if frame.stack_exact else "tracked depth")
            self.query_one(StackView).return_value = stop.return_value

    def _fill_stop_detail(self) -> None:
        """Render the Stop view (only while it is visible: a relayout per step would cost more than a step)."""
        if self._stop_detail_stale and self.stop is not None:
            self._stop_detail_stale = False
            self.query_one("#stop-detail", OutputView).content = self._stop_details(self.stop)

    def watch_breakpoints(self) -> None:
        frame = self.frame
        if frame is not None:
            self.bytecode.breakpoints = self._breakpoints_of(frame)

    def watch_exit_result(self, result: ExitResult | None) -> None:
        if result is not None:
            self._stop_detail_stale = False
            self.query_one("#stop-detail", OutputView).content = self._exit_details(result)

    def watch_guards(self, tree: GuardTree | None) -> None:
        self.guard_tree.guards = tree

    def watch_guards_loading(self, loading: bool) -> None:
        self.guard_tree.loading = loading

    def _show_frame(self) -> None:
        stop = self.stop
        frame = stop.selected_frame if stop is not None else None
        self.frame = frame
        if frame is None:
            self.bytecode.show(None)
            self.bytecode.border_subtitle = ""
            self.query_one(SourceView).show(None, None)
            return
        self.bytecode.show(frame.code, frame.index, self._breakpoints_of(frame))
        self.bytecode.border_subtitle = f"{frame.code.name} · {len(frame.code.instructions)} instructions"
        self.query_one(SourceView).show(frame.code.filename, frame.lineno)

    def _breakpoints_of(self, frame: FrameView) -> frozenset[int]:
        """Instruction indexes with a breakpoint in `frame`'s code: the engine's latest list, else the stop's."""
        if self.breakpoints is None:
            return frozenset(frame.breakpoints)
        return frozenset(b.index for b in self.breakpoints if b.code_key == frame.code.key)

    # Views -----------------------------------------------------------------------------------------------------

    def show_view(self, pane_id: str) -> None:
        """Switch the left pane to `pane_id` (``"tab-orig"``, …).

        The keyboard focus follows (so the view scrolls with the arrow keys) unless the console input has it.
        """
        self.views.active = pane_id
        if isinstance(self.focused, Input):
            return
        target = self._view_widget(pane_id)
        if target is not None:
            target.focus()

    def _view_widget(self, pane_id: str) -> Widget | None:
        """The widget of view `pane_id` that takes the focus (the Original view: its listing, or its note)."""
        if pane_id == "tab-orig":
            listing = self.query_one("#orig-bytecode", BytecodeView)
            return listing if listing.display else self.query_one("#orig-text")
        target = _VIEW_FOCUS.get(pane_id)
        return self.query_one(target) if target is not None else None

    def toggle_maximize(self) -> None:
        """Maximise the focused pane (the active view when the tab row has the focus), or restore the maximised
        one. Nothing focused: the bytecode pane."""
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        if focused is None or focused is self.query_one("#views").query_one("ContentTabs"):
            focused = self._view_widget(self.views.active or "tab-bytecode") or self.bytecode
            focused.focus()
        # the pane itself, not its container (the tabbed views would keep their tab row and lose the title)
        if not self.maximize(focused, container=False):
            self.app.bell()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        if pane_id == "tab-stop":
            self._fill_stop_detail()
        if pane_id in QUERY_VIEWS:
            self.post_message(self.ViewRequested(pane_id))
        if pane_id == "tab-graph":
            self.render_graph()

    def on_bytecode_view_breakpoint_toggled(self, event: BytecodeView.BreakpointToggled) -> None:
        if event.view.id == "bytecode":
            self.post_message(self.BreakpointRequested(event.index))

    def on_console_stderr_written(self, event: Console.StderrWritten) -> None:
        """The program's stderr goes to the Stderr view; the status line counts its lines."""
        self.query_one("#stderr", RichLog).write(Text(event.text))
        status = self.query_one(StatusLine)
        status.stderr_lines += event.text.count("\n") + 1
        status.refresh()

    def on_console_left(self) -> None:
        """Escape in the console: back to the open view (the view stays as it was)."""
        target = self._view_widget(self.views.active or "tab-bytecode")
        (target if target is not None and target.display else self.bytecode).focus()

    def show_query(self, pane_id: str, result: object) -> None:
        """Fill the view `pane_id` with its query's answer (`QUERY_VIEWS`); an error value shows as its line."""
        if isinstance(result, (EngineError, EditError)):
            result = result.message
        {"tab-orig": self.show_original, "tab-graph": self.show_graph, "tab-entries": self.show_entries,
         "tab-recompile": self.show_recompile, "tab-diff": self.show_diff}[pane_id](result)

    def show_original(self, code: CodeView | str) -> None:
        """Fill the Original view with the original bytecode listing (or why there is none)."""
        listing = self.query_one("#orig-bytecode", BytecodeView)
        text = self.query_one("#orig-text", OutputView)
        if isinstance(code, CodeView):
            listing.show(code)
            self.sync_original()
            listing.border_subtitle = f"{code.name} (original) · {len(code.instructions)} instructions"
            listing.display, text.display = True, False
            if self.focused is text:
                listing.focus()
        else:
            text.content = Text(code or "(no output)")
            listing.display, text.display = False, True
            if self.focused is listing:
                text.focus()

    def show_graph(self, graphs: tuple[GraphView, ...] | str) -> None:
        """Fill the Graph view with the entry's FX graphs (or why there are none); repainting the same graphs (the
        cursor's line changed) keeps the view's scroll position and node cursor."""
        view = self.query_one("#graph", GraphPane)
        if isinstance(graphs, str) or not graphs:
            self.teach_graphs = ()
            view.set_rows(())
            view.content = Text(graphs or "(no FX graph)")
            return
        same = graphs == self.teach_graphs
        self.teach_graphs = graphs
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
            parts.append(Text(f"{graph.name}  ·  compile {graph.compile_id}  ·  {graph.node_count} nodes",
                              style="bold"))
            # the FX nodes traced from the cursor's user line are highlighted (and named above)
            lines, note = self.graph_highlight(graph)
            if note is not None:
                parts.append(note)
            y += 1 + (note is not None)
            syntax = Syntax(graph.code.rstrip(), "python", theme=highlight.STYLE_NAME,
                            background_color="default", line_numbers=False)
            code_lines = graph.code.splitlines()
            for k in lines:
                syntax.stylize_range(_RELATED, (k, 0), (k, len(code_lines[k - 1])))
            if cursor is not None and cursor.graph == graph.name:
                k = cursor.code_line
                syntax.stylize_range(_CURSOR, (k, 0), (k, len(code_lines[k - 1])))
                view.cursor_y = y + k - 1
            parts.append(syntax)
            parts.append(Text(""))
            y += len(code_lines) + 1
        if same:
            view.repaint(Group(*parts))
        else:
            view.content = Group(*parts)

    def show_diff(self, diff: PatchDiff | str) -> None:
        """Fill the Diff view with Dynamo's code against the edited code (or why there is none)."""
        self.diff_view.show(diff)

    def show_recompile(self, records: tuple[RecompileRecord, ...] | str) -> None:
        """Fill the Recompile view with the recompile record(s) of this stop or code object."""
        self.recompile_view.show_records(records)

    def show_entries(self, frame: CompiledFrameView | str) -> None:
        """Fill the Entries view with the code object's cache entries (or why there are none)."""
        view = self.query_one("#entries", OutputView)
        if isinstance(frame, str) or not frame.entries:
            view.content = Text(frame if isinstance(frame, str) else "(no cache entries)")
            return
        stop = self.stop
        # Entries are named by compile id, not numbered: the status line's "checked i of n" is torch's lookup order
        # (most recently used first), which a position in this list would contradict.
        parts: list[RenderableType] = [Text("in compile order; ▶ serves this frame", style="dim")]
        for entry in frame.entries:
            serving = stop is not None and stop.compile_id == entry.compile_id
            head = Text(f"{'▶' if serving else ' '} entry {entry.compile_id}", style="bold")
            head.append(f"  backend {entry.backend or '?'}  hits {'?' if entry.hits < 0 else entry.hits}",
                        style="default")
            if entry.invalidated or entry.code is None:
                head.append("  invalidated", style="red")
            else:
                head.append(f"  {entry.code.name} ({len(entry.code.instructions)} instructions)", style="default")
            parts.append(head)
            cost = next((c for c in getattr(frame, "guard_costs", ()) if c.compile_id == entry.compile_id), None)
            if cost is not None:
                parts.append(Text("\n".join(f"  {line}" for line in guard_cost_lines(cost, max_groups=3)),
                                  style="dim"))
            parts.append(Text(f"     graphs: {', '.join(entry.graphs) or '-'}", style="dim"))
            resumes = [f"{name} (= {self.resume_aliases[name]})" if name in self.resume_aliases else name
                       for name in entry.resume_functions]
            parts.append(Text(f"     resume functions: {', '.join(resumes) or '-'}", style="dim"))
        view.content = Group(*parts)

    # Detail text -----------------------------------------------------------------------------------------------

    def _stop_details(self, stop: Stop) -> RenderableType:
        parts: list[RenderableType] = [Text(f"{stop.kind.value} stop", style="bold"), Text(stop.message)]
        if stop.exception:
            parts.append(Text(stop.exception, style="bold red"))
        if stop.return_value is not None:
            parts.append(Text("return value: ") + highlight.value_text(stop.return_value))
        # what the stop's kind carries, as line mode prints it; the graph break behind a resume function at every
        # stop in one (line mode prints it where the resume function is entered)
        for title, body in fmt.stop_blocks(stop, graph_break=True):
            parts.extend([Text(""), Text(title, style="bold underline"), Text(body)])
        if len(stop.frames) > 1:
            parts.extend([Text(""), Text("frames (outermost first)", style="bold underline")])
            selected = stop.selected_frame
            for frame in stop.frames:
                mark = "▶" if frame is selected else " "
                alias = {code: glob for glob, code in self.resume_aliases.items()}.get(frame.code.name)
                name = frame.code.name + (f" (= {alias})" if alias else "")
                parts.append(Text(f"{mark} {name}  index {frame.index}  line {frame.lineno}"))
        return Group(*parts)

    def _exit_details(self, result: ExitResult) -> RenderableType:
        head = "program ended (quit)" if result.quit else f"program exited with status {result.status}"
        parts: list[RenderableType] = [Text(head, style="bold")]
        if result.exception:
            parts.append(Text(result.exception, style="bold red"))
        if result.traceback:
            parts.extend([Text(""), Text(result.traceback.rstrip(), style="red")])
        return Group(*parts)
