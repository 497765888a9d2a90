"""The main screen: every pane at once (pudb's lesson), fed one-way from the `stop` reactive.

Data flow: the app sets `MainScreen.stop` (and `activity`, `exit_result`, `guards`, `breakpoints`); the screen
derives the selected `frame` (`Stop.selected_frame`: ``u``/``d`` select it in the engine) and hands each child
widget only what it renders, once per stop, through its `show` method (status line, bytecode with its roles,
source, value stack with its provenance, locals, watches): each repaints only the rows that changed. The teaching
data (`Stop.teaching`) arrives with the stop, so a step paints each pane once. The views filled by an engine query
(`View`, `MainScreen.show_query`) get the query's typed answer.

The screen holds a typed reference to each of its widgets (made in ``__init__``, yielded by `compose`); the
synced cursors are a composed `SyncedViews`.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, TabbedContent, TabPane, Tabs


from dynadbg.core.model import (
    BreakpointView,
    CodeView,
    CompiledFrameView,
    EditError,
    EngineError,
    FrameView,
    GraphView,
    GuardTree,
    Provenance,
    PatchDiff,
    RecompileRecord,
    Stop,
    StopKind,
)
from dynadbg.core import format as fmt
from dynadbg.core.format.recompile import guard_cost_lines
from dynadbg.core.runner import ExitResult

from . import actions, highlight
from .actions import display_keys
from .bytecode_view import BytecodeView
from .console import Console
from .diff_view import DiffView
from .explain_view import ExplainView
from .graph_pane import GraphPane
from .guard_tree_view import GuardTreeView
from .locals_view import LocalsView
from .output_view import OutputView
from .recompile_view import RecompileView
from .source_view import SourceView
from .stack_view import StackView
from .status_line import StatusLine
from .stderr_view import StderrView
from .synced_views import SyncedViews
from .trace_view import TraceView, traced_break
from .views import View
from .watches_view import WatchesView


def _is_choice(action: str | None) -> bool:
    """Whether a footer key's action (``"dbg('eager')"``) is a recompile stop's choice."""
    found = re.fullmatch(r"dbg\('([^']+)'\)", action or "")
    if found is None:
        return False
    try:
        return actions.get(found.group(1)).when == "recompile"
    except KeyError:
        return False


class KeysFooter(Footer):
    """The footer: under `NARROW_FOOTER` columns it packs the keys tighter, drops the palette hint (Ctrl+P still
    opens it; the help lists it) and shows ``? Help`` and ``q Quit`` first, so they never fall off the end, then the
    keys in `ORDER`.

    While the focused widget takes typed letters (the console's input), a letter key types into it and Textual
    leaves its binding out: the footer then shows the keys that still work there (``F11 Step``, ``F10 Next``,
    ``F5 Cont``, ``F9 Break``) and ``Esc/Tab``, which leave the input for the panes, where every key works."""

    FIRST = ("dbg('help')", "dbg('quit')")
    """The actions shown first on a narrow footer."""

    ORDER = tuple(f"dbg({a!r})" for a in ("step", "next", "until", "continue", "return", "breakpoint", "up",
                                           "down", "maximize", "edit"))
    """A narrow footer's keys after ``? Help`` and ``q Quit`` (and a recompile stop's choices), most useful to a
    newcomer first: the keys that do not fit are dropped from the end. At 80 columns the debugger shows them up to
    ``d Down`` (``z Zoom`` and ``e Edit`` are left to ``?``), `dynadbg learn` beside its ``F8 Skip step`` up to
    ``u Up``: ``t Until`` (lesson 1 asks for ``t``) fits in both. Other footer keys follow, in registry order."""

    KEEP = ("skip_step",)
    """Actions a narrow footer never drops, shown last (`dynadbg learn`'s ``F8 Skip step``); other keys that do not
    fit are dropped from the end, and ``…`` says so (``? Help`` lists every key)."""

    LEAVE = ("leave typing: letters become keys (s n c t …)", "for letter keys (s n c …)", "for letter keys")
    """What the footer says after ``Esc/Tab`` while the focused widget takes typed letters: the first that fits
    beside the keys shown (`dynadbg learn` adds ``F8 Skip step``)."""

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_FOOTER
        if narrow != self.compact:
            self.compact = narrow
            self.show_command_palette = not narrow
        elif self.query(".footer-hint"):
            self.call_after_refresh(self.recompose)  # the hint that fits the new width

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        focused = self.screen.focused
        if focused is not None and focused.check_consume_key("s", "s"):
            used = 0
            for key in keys:
                if hasattr(key, "key_display") and hasattr(key, "description"):  # a FooterKey (Textual's, private)
                    if not key.has_class("-command-palette"):  # a debugger key
                        key.key_display = display_keys(key.key)  # F11, as the help screen writes it
                    # the cells it takes: key, description, their padding (compact: none) and the gap after it
                    used += cell_len(key.key_display) + cell_len(key.description) + (2 if self.compact else 3)
            yield from keys
            yield Label("Esc/Tab", classes="footer-hint-key")
            room = self.size.width - used - cell_len(" Esc/Tab") - 2
            yield Label(next((t for t in self.LEAVE if cell_len(t) <= room), self.LEAVE[-1]), classes="footer-hint")
            return
        if self.compact:
            for key in keys:
                if hasattr(key, "key_display") and not key.has_class("-command-palette"):
                    key.key_display = display_keys(key.key)  # F8, as the help screen and the narration write it
            first = [k for k in keys if getattr(k, "action", None) in self.FIRST]
            kept = [k for k in keys if getattr(k, "action", None) in self.KEEP and k not in first]
            rest = [k for k in keys if k not in first and k not in kept]
            # a recompile stop's choices before the stepping keys: those are what the stop asks for; then `ORDER`
            rank = {action: n for n, action in enumerate(self.ORDER)}
            rest.sort(key=lambda k: (not _is_choice(getattr(k, "action", None)),
                                     rank.get(getattr(k, "action", None), len(rank))))
            width = self.size.width

            def cells(shown: list[Widget]) -> int:
                # a compact key: its key, its description and the gap after it (as in the console's branch)
                return sum(cell_len(getattr(k, "key_display", "")) + cell_len(getattr(k, "description", "")) + 2
                           for k in shown)

            cut = False
            while rest and width > 0 and cells(first + rest + kept) + (2 if cut else 0) > width:
                rest.pop()  # the last keys go first; `? Help` lists them all
                cut = True
            yield from first + rest + kept
            if cut:
                yield Label("…", classes="footer-hint -more")  # two cells, as counted above
            return
        yield from keys


#: Terminal width under which the footer is compact (`KeysFooter`).
NARROW_FOOTER = 120


class MainScreen(Screen[None]):
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
        """A view was opened whose content comes from an engine query (every `View` but the bytecode and
        Stderr views; the Stop view only in a resume function)."""

        def __init__(self, view: View) -> None:
            self.view = view
            """Which view, hence which query."""
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
        self.status = StatusLine(id="status")
        """The status line."""
        self._replaced_keys: set[int] = set()
        """Keys of generated code objects whose cache entry got other code while a call of theirs was paused
        (`note_code_replaced`)."""
        self._restored_keys: set[int] = set()
        """Those whose edit was undone since (Dynamo's code put back): the subtitle says so."""
        self._edited_rows: dict[int, frozenset[int]] = {}
        """For such a code object, the rows of its listing the installed edit changes (marked ``✎``)."""
        self.views = TabbedContent(id="views", initial=View.BYTECODE.pane_id)
        """The switchable views (`View`)."""
        self.bytecode = BytecodeView(id="bytecode")
        """The transformed-bytecode pane."""
        self.explain = ExplainView("explanations of the cursor's instruction: shown when stopped", id="explain",
                                   classes="pane")
        """The Explain pane (below the bytecode pane, shown with ``X``)."""
        self.original = BytecodeView(id="orig-bytecode")
        """The Original view's listing."""
        self.original_note = OutputView("original bytecode: shown when stopped", id="orig-text")
        """The Original view's note when there is no listing."""
        self.graph = GraphPane("FX graph: shown when stopped", id="graph")
        """The Graph view."""
        self.entries = OutputView("cache entries: shown when stopped", id="entries")
        """The Entries view."""
        self.stop_detail = OutputView("not stopped yet", id="stop-detail")
        """The Stop view."""
        self.diff_view = DiffView(id="diff")
        """The Diff view (instruction edits)."""
        self.recompile_view = RecompileView(id="recompile")
        """The Recompile view."""
        self.stderr = StderrView(id="stderr")
        """The Stderr view."""
        self.trace_view = TraceView("not at a trace stop", id="trace-view")
        """The Trace view (a trace stop: Dynamo's symbolic state)."""
        self.source = SourceView(id="source")
        """The source pane."""
        self.stack = StackView(id="stack", classes="pane")
        """The value-stack pane."""
        self.locals = LocalsView(id="locals", classes="pane")
        """The locals pane."""
        self.watches = WatchesView(id="watches", classes="pane -empty")
        """The watches pane."""
        self.guard_tree = GuardTreeView(id="guards")
        """The guard-tree pane."""
        self.console = Console(id="console")
        """The console (log and command input)."""
        self.synced = SyncedViews(self.views, self.bytecode, self.original, self.source, self.graph)
        """The views in step with a cursor."""
        self._stop_detail_stale = False
        self._trace_tab = False
        self._focus_of: dict[View, Widget] = {
            View.BYTECODE: self.bytecode, View.STOP: self.stop_detail, View.DIFF: self.diff_view,
            View.RECOMPILE: self.recompile_view, View.GRAPH: self.graph, View.ENTRIES: self.entries,
            View.STDERR: self.stderr, View.TRACE: self.trace_view,
        }
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
        self.status.aliases = {code: glob for glob, code in self.resume_aliases.items()}
        self.status.refresh()

    def compose(self) -> ComposeResult:
        yield self.status
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with self.views:
                    with TabPane("Bytecode", id=View.BYTECODE.pane_id):
                        yield self.bytecode
                        yield self.explain
                    with TabPane("Original", id=View.ORIGINAL.pane_id):
                        yield self.original
                        yield self.original_note
                    with TabPane("Graph", id=View.GRAPH.pane_id):
                        yield self.graph
                    with TabPane("Entries", id=View.ENTRIES.pane_id):
                        yield self.entries
                    with TabPane("Stop", id=View.STOP.pane_id):
                        yield self.stop_detail
                    with TabPane("Diff", id=View.DIFF.pane_id):
                        yield self.diff_view
                    with TabPane("Recompile", id=View.RECOMPILE.pane_id):
                        yield self.recompile_view
                    with TabPane("Stderr", id=View.STDERR.pane_id):
                        yield self.stderr
                    with TabPane("Trace", id=View.TRACE.pane_id):
                        yield self.trace_view
                yield self.source
            with Vertical(id="right"):
                yield self.stack
                yield self.locals
                yield self.watches
                yield self.guard_tree
        yield self.console
        yield KeysFooter()

    def on_mount(self) -> None:
        for widget, title in ((self.bytecode, "bytecode"), (self.source, "source"), (self.stack, "value stack"),
                              (self.locals, "locals"), (self.watches, "watches"), (self.guard_tree, "guards"),
                              (self.original, "original bytecode"), (self.diff_view, "instruction edits"),
                              (self.recompile_view, "why it recompiles"),
                              (self.stderr, "the program's stderr (torch warnings, library messages)"),
                              (self.explain, "explain"), (self.stop_detail, "why it stopped"),
                              (self.graph, "FX graph"), (self.entries, "cache entries"),
                              (self.trace_view, "Dynamo's trace (compile time)")):
            widget.border_title = title
        self.original.display = False
        self._trace_tab = True
        self.show_trace_tab(False)
        self.bytecode.focus()
        # After the first refresh: the tabs have activated their initial pane, so a stop may switch views.
        self.call_after_refresh(self.post_message, self.Ready())

    @property
    def active_view(self) -> View:
        """The view shown in the left pane."""
        return View.of_pane(self.views.active) or View.BYTECODE

    # Reactive data flow ----------------------------------------------------------------------------------------

    def watch_stop(self, stop: Stop | None) -> None:
        self.set_reactive(MainScreen.breakpoints, None)
        self.status.stop = stop
        self._show_frame()
        self.watches.stop = stop
        self.set_class(stop is not None and stop.kind is StopKind.RECOMPILE, "-recompile")
        self.set_class(stop is not None and stop.history is not None, "-history")
        trace = stop.trace if stop is not None else None
        self.set_class(trace is not None, "-trace")
        traced = traced_break(stop)
        self.trace_view.show(trace, traced)
        self.show_trace_tab(trace is not None or traced is not None)
        self.recompile_view.show_stop(stop)
        if stop is not None:
            self._stop_detail_stale = True
            if self.active_view is View.STOP:
                self._fill_stop_detail()
            mark = stop.history
            # a recorded stop (`back`): the stack and locals panes say so under their values
            recorded = f"recorded: history {mark.position}/{mark.total}" if mark is not None else ""
            _subtitle(self.locals, recorded)
            frame = stop.selected_frame
            _subtitle(self.stack, recorded or (
                "trace stop: the symbolic stack is in the Trace view" if stop.trace is not None
                else "" if frame is None else "below the pending call" if frame.below_call
                else "depth from the code's flow" if frame.depth_from_flow
                else "" if frame.stack_exact else "tracked depth"))
        else:  # the program ended: nothing the last stop's panes said holds any more
            _subtitle(self.locals, "")
            _subtitle(self.stack, "")

    def show_trace_tab(self, shown: bool) -> None:
        """The Trace view's tab is there only at a trace stop, or at a run-time stop after a graph break that
        Dynamo's recorded trace holds (elsewhere it has nothing to show, and the tab row keeps its width for the
        others)."""
        if shown == self._trace_tab:
            return
        self._trace_tab = shown
        if shown:
            self.views.show_tab(View.TRACE.pane_id)
            return
        if self.active_view is View.TRACE:
            self.views.active = View.BYTECODE.pane_id
        self.views.hide_tab(View.TRACE.pane_id)

    def watch_activity(self, activity: str | None) -> None:
        self.status.activity = activity

    def _fill_stop_detail(self) -> None:
        """Render the Stop view (only while it is visible: a relayout per step would cost more than a step)."""
        if self._stop_detail_stale and self.stop is not None:
            self._stop_detail_stale = False
            self.stop_detail.content = self._stop_details(self.stop)

    def watch_breakpoints(self) -> None:
        frame = self.frame
        if frame is not None:
            self.bytecode.breakpoints = self._breakpoints_of(frame)

    def watch_exit_result(self, result: ExitResult | None) -> None:
        self.status.exit_result = result
        if result is not None:
            self._stop_detail_stale = False
            self.stop_detail.content = self._exit_details(result)

    def watch_guards(self, tree: GuardTree | None) -> None:
        self.guard_tree.guards = tree

    def watch_guards_loading(self, loading: bool) -> None:
        self.guard_tree.loading = loading

    def _show_frame(self) -> None:
        """Each pane of the selected frame, painted once: the listing with its roles, the source line, the value
        stack with its provenance, the locals (the teaching data travels with the stop: `Stop.teaching`)."""
        stop = self.stop
        frame = stop.selected_frame if stop is not None else None
        self.frame = frame
        teaching = stop.teaching if stop is not None else None
        trace = stop.trace if stop is not None else None
        if frame is None and trace is not None and trace.code is not None:
            # a trace stop: the user's bytecode with the instruction Dynamo traces next, and its source (the
            # inlined callee's at depth > 0)
            current = trace.user_index if trace.user_index is not None else -1
            self.bytecode.show(trace.code, current, frozenset(), roles=None)
            self.bytecode.edited = frozenset()
            _subtitle(self.bytecode, f"{trace.code.name} · your bytecode as Dynamo traces it · depth "
                                     f"{trace.step.depth}")
            self.source.show(trace.step.filename, trace.step.line)
        elif frame is None:
            self.bytecode.show(None)
            self.bytecode.edited = frozenset()
            _subtitle(self.bytecode, "")
            self.source.show(None, None)
        else:
            roles = teaching.roles if teaching is not None else self.bytecode.roles_for(frame.code)
            self.bytecode.show(frame.code, frame.index, self._breakpoints_of(frame), roles=roles)
            self.bytecode.edited = self._edited_rows.get(frame.code.key, frozenset())
            _subtitle(self.bytecode, self._listing_subtitle(frame))
            self.source.show(frame.code.filename, frame.lineno)
        self.stack.show(frame, teaching.provenance if teaching is not None else None,
                        stop.return_value if stop is not None else None)
        self.locals.frame = frame

    def _breakpoints_of(self, frame: FrameView) -> frozenset[int]:
        """Instruction indexes with a breakpoint in `frame`'s code: the engine's latest list, else the stop's."""
        if self.breakpoints is None:
            return frozenset(frame.breakpoints)
        return frozenset(b.index for b in self.breakpoints if b.code_key == frame.code.key)

    # Teaching data fetched apart from the stop (a recorded stop carries none) --------------------------------------

    def show_roles(self, roles: object) -> None:
        """Roles of the bytecode pane's code from `Engine.roles()` (an error or None: no role gutter)."""
        from dynadbg.core.model import CodeRoles

        self.bytecode.roles = roles if isinstance(roles, CodeRoles) else None

    def show_provenance(self, provenance: object) -> None:
        """Who pushed each value-stack slot, from `Engine.stack_provenance()` (an error or None: values only)."""
        self.stack.provenance = provenance if isinstance(provenance, Provenance) else None

    @property
    def explain_shown(self) -> bool:
        """The Explain pane is open."""
        return self.has_class("-explain")

    def toggle_explain(self) -> bool:
        """Open or close the Explain pane; whether it is open now."""
        self.toggle_class("-explain")
        return self.explain_shown

    def note_code_replaced(self, diff: PatchDiff | None = None) -> None:
        """An instruction edit (or a patch file, or its undo) was installed while the program is paused in the code
        the bytecode pane lists: this call goes on running what it started with, so the pane still lists the old
        instructions; its subtitle says the next call runs other code, until a stop lists another code object.
        With the edit's `diff` (Dynamo's code against the installed code) the rows it changes are marked ``✎`` at
        once, when the pane lists Dynamo's code (as many rows as the diff's old side)."""
        frame = self.frame
        if frame is not None and frame.code.generated:
            self._replaced_keys.add(frame.code.key)
            if diff is not None and not diff.changed:  # an undo: Dynamo's code against itself
                self._restored_keys.add(frame.code.key)
            else:
                self._restored_keys.discard(frame.code.key)
            rows = edited_rows(diff) if diff is not None else frozenset()
            old_rows = sum(1 for line in diff.lines if line.old_index is not None) if diff is not None else -1
            if old_rows != len(frame.code.instructions):
                rows = frozenset()   # the pane lists other code than the diff's old side (an earlier edit's copy)
            self._edited_rows[frame.code.key] = rows
            self.bytecode.edited = rows

    def new_stop(self, stop: Stop) -> None:
        """A new stop arrived: a call's entry is another call (its code is what the entry now holds), and a stop in
        another code object ends the call the note was made in (`note_code_replaced`)."""
        frame = stop.selected_frame
        if stop.kind is StopKind.ENTRY or frame is None:
            self._replaced_keys.clear()
        else:
            self._replaced_keys &= {frame.code.key}
        self._restored_keys &= self._replaced_keys
        self._edited_rows = {key: rows for key, rows in self._edited_rows.items() if key in self._replaced_keys}

    def refresh_subtitles(self) -> None:
        """The bytecode pane's subtitle again for the frame shown (`note_code_replaced` changed it)."""
        frame = self.frame
        if frame is not None and self.stop is not None and self.stop.trace is None:
            _subtitle(self.bytecode, self._listing_subtitle(frame))

    def _listing_subtitle(self, frame: FrameView) -> str:
        text = f"{frame.code.name} · {len(frame.code.instructions)} instructions"
        if self._edited_rows.get(frame.code.key):
            text += " · ✎ edited: runs from the next call (Diff: 6)"
        elif frame.code.key in self._restored_keys:
            text += " · edit undone: Dynamo's code runs again (Diff: 6)"
        elif frame.code.key in self._replaced_keys:
            text += " · the next call runs the new code (Diff: 6)"
        return text

    # Views -----------------------------------------------------------------------------------------------------

    def show_view(self, view: View) -> None:
        """Switch the left pane to `view`.

        The keyboard focus follows (so the view scrolls with the arrow keys) unless the console input has it.
        """
        self.views.active = view.pane_id
        if isinstance(self.focused, Input):
            return
        target = self._view_widget(view)
        if target is not None:
            target.focus()

    def _view_widget(self, view: View) -> Widget | None:
        """The widget of `view` that takes the focus (the Original view: its listing, or its note)."""
        if view is View.ORIGINAL:
            return self.original if self.original.display else self.original_note
        return self._focus_of.get(view)

    def toggle_maximize(self) -> None:
        """Maximise the focused pane (the active view when the tab row has the focus), or restore the maximised
        one. Nothing focused: the bytecode pane."""
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        if focused is None or isinstance(focused, Tabs):
            focused = self._view_widget(self.active_view) or self.bytecode
            focused.focus()
        # the pane itself, not its container (the tabbed views would keep their tab row and lose the title)
        if not self.maximize(focused, container=False):
            self.app.bell()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        view = View.of_pane(event.pane.id)
        if view is View.STOP:
            self._fill_stop_detail()
        if view in _QUERIED:
            self.post_message(self.ViewRequested(view))
        if view is View.GRAPH:
            self.synced.render_graph()

    def on_bytecode_view_breakpoint_toggled(self, event: BytecodeView.BreakpointToggled) -> None:
        if event.view is self.bytecode:
            self.post_message(self.BreakpointRequested(event.index))

    def on_bytecode_view_cursor_moved(self, event: BytecodeView.CursorMoved) -> None:
        self.synced.bytecode_cursor_moved(event)

    def on_source_view_cursor_moved(self, event: SourceView.CursorMoved) -> None:
        self.synced.source_cursor_moved(event)

    def on_graph_pane_cursor_moved(self, event: GraphPane.CursorMoved) -> None:
        self.synced.graph_cursor_moved(event)

    def on_graph_pane_focus_changed(self, event: GraphPane.FocusChanged) -> None:
        self.synced.graph_focus_changed(event)

    def on_console_stderr_written(self, event: Console.StderrWritten) -> None:
        """The program's stderr goes to the Stderr view; the status line counts its lines."""
        self.stderr.write_text(event.text)
        self.status.stderr_lines += event.text.count("\n") + 1
        self.status.refresh()

    def on_console_left(self) -> None:
        """Escape in the console: back to the open view (the view stays as it was)."""
        target = self._view_widget(self.active_view)
        (target if target is not None and target.display else self.bytecode).focus()

    def show_query(self, view: View, result: object) -> None:
        """Fill `view` with its query's answer; an error value shows as its line."""
        if isinstance(result, (EngineError, EditError)):
            result = result.message
        show = {View.ORIGINAL: self.show_original, View.GRAPH: self.synced.show_graph,
                View.ENTRIES: self.show_entries, View.RECOMPILE: self.recompile_view.show_records,
                View.DIFF: self.diff_view.show, View.TRACE: self.trace_view.show_recorded}.get(view)
        if show is not None:
            show(result)  # type: ignore[operator]

    def show_original(self, code: CodeView | str) -> None:
        """Fill the Original view with the original bytecode listing (or why there is none)."""
        listing, text = self.original, self.original_note
        if isinstance(code, CodeView):
            listing.show(code)
            self.synced.sync_original()
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
        """Fill the Graph view with the entry's FX graphs (or why there are none)."""
        self.synced.show_graph(graphs)

    def show_diff(self, diff: PatchDiff | str) -> None:
        """Fill the Diff view with Dynamo's code against the edited code (or why there is none)."""
        self.diff_view.show(diff)

    def show_recompile(self, records: tuple[RecompileRecord, ...] | str) -> None:
        """Fill the Recompile view with the recompile record(s) of this stop or code object."""
        self.recompile_view.show_records(records)

    def show_entries(self, frame: CompiledFrameView | str) -> None:
        """Fill the Entries view with the code object's cache entries (or why there are none)."""
        view = self.entries
        if isinstance(frame, str) or not frame.entries:
            view.content = Text(frame if isinstance(frame, str) else "(no cache entries)")
            return
        stop = self.stop
        # Entries are named by compile id, not numbered: the status line's "checked i of n" is torch's lookup order
        # (most recently used first), which a position in this list would contradict. Newest first, as the
        # `entries` command lists them.
        # every entry's one-line head first, so a short pane shows them all; each one's details below
        parts: list[RenderableType] = [Text("newest first; ▶ serves this frame", style="dim")]
        details: list[RenderableType] = []
        for entry in reversed(frame.entries):
            serving = stop is not None and stop.compile_id == entry.compile_id
            head = Text(f"{'▶' if serving else ' '} entry {entry.compile_id}", style="bold")
            head.append(f"  backend {entry.backend or '?'}  hits {'?' if entry.hits < 0 else entry.hits}",
                        style="default")
            if entry.invalidated or entry.code is None:
                head.append("  invalidated", style="red")
            else:
                head.append(f"  {entry.code.name} ({len(entry.code.instructions)} instructions)", style="default")
            parts.append(head)
            details.append(Text(f"\nentry {entry.compile_id}", style="bold"))
            cost = next((c for c in getattr(frame, "guard_costs", ()) if c.compile_id == entry.compile_id), None)
            if cost is not None:
                # each line wraps under its own indent (a long one, the cut's code, stays readable at 80 columns)
                details += [Padding(Text(line.lstrip(), style="dim"), (0, 0, 0, 2 + len(line) - len(line.lstrip())))
                            for line in guard_cost_lines(cost, max_groups=3)]
            details.append(Text(f"     graphs: {', '.join(entry.graphs) or '-'}", style="dim"))
            resumes = [f"{name} (= {self.resume_aliases[name]})" if name in self.resume_aliases else name
                       for name in entry.resume_functions]
            details.append(Text(f"     resume functions: {', '.join(resumes) or '-'}", style="dim"))
        parts += details
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


#: The views filled by an engine query when opened (the Stop view only in a resume function).
_QUERIED = frozenset({View.ORIGINAL, View.GRAPH, View.ENTRIES, View.DIFF, View.RECOMPILE, View.TRACE})


def _subtitle(widget: Widget, text: str) -> None:
    """Set a pane's border subtitle only when it changes: setting one repaints the whole pane, scrollbars too
    (Textual's `border_subtitle` setter refreshes unconditionally), which a step must not pay for."""
    if (widget.border_subtitle or "") != text:
        widget.border_subtitle = text


def edited_rows(diff: PatchDiff) -> frozenset[int]:
    """The rows of the diff's old listing (Dynamo's code) an edit changes: each row it removes or replaces, and for
    rows only inserted, the row they go before (the last row when they go at the end)."""
    rows: set[int] = set()
    inserted = False   # rows added since the last unchanged row, none removed among them
    last = None
    for line in diff.lines:
        if line.tag == "-" and line.old_index is not None:
            rows.add(line.old_index)
            inserted = False
        elif line.tag == "+":
            inserted = inserted or last is None or last not in rows
        elif line.old_index is not None:
            if inserted:
                rows.add(line.old_index)
            inserted = False
        if line.old_index is not None:
            last = line.old_index
    if inserted and last is not None:
        rows.add(last)
    return frozenset(rows)
