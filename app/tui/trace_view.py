"""The Trace view (key ``9``): a trace stop, inside Dynamo's own tracing (`dynadbg.core.trace_model.TraceStopView`).

At a trace stop the program is paused inside ``torch.compile``: Dynamo is about to trace one instruction of the
user's code, symbolically. The view shows, from the stop's `TraceStopView` (it travels with the stop: no engine
call): where (compile, attempt, inline depth, line, step, graph and guard counts), the graph break or tracing
error when there is one (reason, ``gb_type``, torch's hints, what Dynamo emits for it), the symbolic stack and
locals (changed locals marked), the FX graph and the guards so far (what the last instruction added marked), the
inlining chain and the attempts of this compile (restarts and their reasons). The bytecode pane shows the user's
code with the instruction traced next, the source pane its file (the inlined callee's at depth > 0).

At a run-time stop in a resume function whose graph break Dynamo's recorder holds (`BreakContext.traced`), the
view shows the recorded steps of the attempt that traced it instead (`show_recorded`, from `Engine.trace_steps`),
the breaking step marked.

The text is made by `dynadbg.core.format.trace` from the view's data; this module only lays it out and styles it.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from dynadbg.core.format import trace as tfmt
from dynadbg.core.model import Stop, TracedBreak
from dynadbg.core.trace_model import TraceStep, TraceStopReason, TraceStopView

from .output_view import OutputView

#: How the keys work at a trace stop, under the view's head (the registry's keys: the app fills them in).
KEYS_LINE = "{step} step · {next} next (over an inlined call) · {ret} out of the inlined function · {cont} continue" \
            " · {back} / {forward} recorded steps · {until} until the cursor's line"


def traced_break(stop: Stop | None) -> TracedBreak | None:
    """Where Dynamo's recorded trace holds the graph break behind `stop`'s resume function (`BreakContext.traced`),
    None at any other stop (a trace stop shows its own live trace)."""
    if stop is None or stop.trace is not None or stop.graph_break is None:
        return None
    return stop.graph_break.traced


class TraceView(OutputView):
    """The trace stop, section by section (`show`); scrolls like every view (``z`` maximises it)."""

    def __init__(self, placeholder: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(placeholder, name=name, id=id, classes=classes)
        self.keys_line = ""
        """The keys that step the trace, as the keymap has them (set by the app)."""
        self.view: TraceStopView | None = None
        """The trace stop shown (a recorded step while `back` shows one), or None."""
        self.traced: TracedBreak | None = None
        """At a run-time stop after a graph break: where Dynamo's recorded trace holds it, else None."""
        self.from_row = False
        """`traced` is the break of a graph-break row of the bytecode pane (``T``), not the one behind the stop."""
        self._idle = False
        self._recorded: tuple[TraceStep, ...] | str | None = None
        self._recorded_narrow = False

    def on_resize(self) -> None:
        """Recorded steps are laid out for the pane's width (`show_recorded`: narrow rows under 95 columns). A pane
        filled while hidden (0 columns wide) is laid out again once shown, and again when resized across 95."""
        if self._recorded is not None and self.view is None and self.traced is not None \
                and self._narrow() != self._recorded_narrow:
            self.show_recorded(self._recorded)

    def _narrow(self) -> bool:
        width = self.size.width or self.app.size.width  # hidden: as wide as it can be at most
        return width < 95

    def show(self, view: TraceStopView | None, traced: TracedBreak | None = None, *, row: bool = False) -> None:
        """Show `view` (None: the placeholder of a stop outside Dynamo's tracing, or, with `traced`, of the
        recorded trace of the graph break behind a resume function, or with `row` of the break row under the
        bytecode cursor, filled by `show_recorded`)."""
        if view is None and traced is None and self.view is None and self.traced is None and self._idle:
            return  # the placeholder is up already: a repeat would re-lay out the screen at every step
        self._idle = view is None and traced is None
        self._recorded = None
        self.view = view
        self.traced = traced
        self.from_row = row
        if view is None:
            self.border_subtitle = ""
            self.content = Text(
                "not at a trace stop: stop inside Dynamo's tracing with --break-on trace (or trace-break, "
                "trace-error, tb FILE:LINE)" if traced is None else
                f"loading the recorded trace of compile {traced.compile_id} attempt {traced.attempt}…",
                style="dim")
            return
        self.content = render(view, self.keys_line)
        self.border_subtitle = "paused inside torch.compile: its compile lock is held" if view.live else \
            f"recorded step {view.mark.position}/{view.mark.total}" if view.mark is not None else ""


    def show_recorded(self, steps: tuple[TraceStep, ...] | str) -> None:
        """The steps of the attempt that traced the graph break behind this resume function (`Engine.trace_steps`
        at a run-time stop), the breaking one marked; a string: why they cannot be shown."""
        traced = self.traced
        if traced is None or self.view is not None:
            return
        self._recorded = steps
        narrow = self._recorded_narrow = self._narrow()  # the left pane at 80 columns: rows that do not wrap
        whose = ("the graph break of the bytecode cursor's row" if self.from_row
                 else "the graph break behind this resume function")
        at = f" at line {traced.line}" if traced.line is not None else ""
        if narrow:
            short = whose.removeprefix("the graph ")
            head = Text.assemble((f"Recorded trace, compile {traced.compile_id} attempt {traced.attempt}", "bold"),
                                 f" ({short}): > marks the breaking one, step {traced.ordinal} ({traced.opname}{at})")
        else:
            head = Text.assemble(
                (f"Dynamo's recorded trace of compile {traced.compile_id} attempt {traced.attempt}", "bold"),
                f": the instructions it traced before {whose}; > marks the breaking one, step {traced.ordinal} "
                f"({traced.opname}{at})")
        body = (Text(steps, style="dim") if isinstance(steps, str)
                else Text(tfmt.steps_text(steps, traced.ordinal, narrow=narrow)))
        self.content = Group(head, Text(""), body)
        if not isinstance(steps, str):
            # the breaking step in view: the head's wrapped rows, the blank row, then the body's rows
            width = max(1, self.scrollable_content_region.width)
            head_rows = len(head.wrap(self.app.console, width))
            marked = next((i for i, row in enumerate(body.plain.splitlines()) if row.startswith(">")), None)
            if marked is not None:
                y = head_rows + 1 + marked
                self.call_after_refresh(lambda: self.scroll_to(y=max(0, y - self.size.height // 2), animate=False))
        # a narrow pane scrolls the column header out of sight to show the breaking step: the border names them
        self.border_subtitle = ("columns: step line instruction nodes guards · read-only" if narrow
                                else "recorded at compile time · read-only")


def _section(title: str) -> Text:
    return Text.assemble("\n", (title, "bold underline"))


def render(view: TraceStopView, keys_line: str = "") -> RenderableType:
    """The whole view of `view` as one renderable (also what a test reads back as plain text)."""
    parts: list[RenderableType] = []
    if view.mark is not None:
        parts.append(Text(f"a recorded step ({view.mark.position}/{view.mark.total}, read-only): `forward` goes "
                          "toward the live stop, any step goes on from it", style="bold yellow"))
    s = view.step
    parts.append(Text(tfmt.step_where(s), style="bold"))
    strip = tfmt.attempt_strip(view.attempts, s.attempt, s.ordinal)
    if strip:  # the restarts so far, one line (the attempts section below has their reasons)
        parts.append(Text(strip, style="yellow"))
    if view.source_line:
        parts.append(Text.assemble((f"{s.line:>5} | ", "dim"), view.source_line))
    # the user's bytecode around the instruction Dynamo traces next (the whole listing: the Bytecode view)
    parts.extend(Text(row) for row in tfmt.listing_rows(view, around=2))
    brk = view.brk if view.reason is TraceStopReason.GRAPH_BREAK else None
    breaks = brk is not None or view.error is not None
    state = [_section("symbolic stack (TOS last)" if not breaks else
                      f"symbolic stack before {s.opname} (its operands)"), _stack(view),
             _section(f"symbolic locals of {s.code_name} (* changed since the last stop here)"), _locals(view)]
    if breaks:
        # the Break pane first: what Dynamo does with the graph break (or the error) it found here
        parts.append(_section("graph break" if brk is not None else "tracing error"))
        lines = tfmt.break_lines(brk) if brk is not None else tfmt.error_lines(view.error)  # type: ignore[arg-type]
        parts.append(Text(lines[0], style="bold red"))
        parts.extend(Text(line) for line in lines[1:])
    parts.extend(state)
    parts.append(_section(f"FX graph so far ({tfmt.plural(view.nodes_total, 'node')}; + added by the last "
                          "instruction)"))
    parts.append(_nodes(view))
    parts.append(_section(f"guards so far ({view.guards_total}; + installed by the last instruction)"))
    parts.append(_guards(view))
    if len(view.chain) > 1:
        parts.append(_section("inlining chain (outermost first)"))
        parts.extend(Text(("> " if f is view.chain[-1] else "  ") + tfmt.frame_line(f)) for f in view.chain)
    parts.append(_section(f"attempts of compile {s.compile_id}"))
    strip = tfmt.attempts_lines(view.attempts)
    parts.extend(Text(line.strip(), style="bold" if i == len(strip) - 1 else "") for i, line in enumerate(strip))
    if view.holds_compile_lock and view.live:
        parts.append(Text("\n" + tfmt.LOCK_NOTE, style="dim"))
    if keys_line:
        parts.append(Text(keys_line, style="dim"))
    return Group(*parts)


def _stack(view: TraceStopView) -> Text:
    if view.stack is None:
        return Text("not recorded at this step (light recording; `trace record full` keeps it)", style="dim")
    if not view.stack:
        return Text("empty", style="dim")
    text = Text()
    n = len(view.stack)
    for i, v in enumerate(view.stack):
        if i:
            text.append("\n")
        text.append(f"[{i}] ", style="dim")
        text.append(tfmt.value_line(v), style="bold" if i == n - 1 else "")
    return text


def _locals(view: TraceStopView) -> Text:
    if view.locals is None:
        return Text("not recorded at this step (light recording)", style="dim")
    if not view.locals:
        return Text("none", style="dim")
    width = max(len(name) for name, _v in view.locals)
    text = Text()
    for k, (name, v) in enumerate(view.locals):
        changed = name in view.changed
        if k:
            text.append("\n")
        text.append(("*" if changed else " ") + f"{name:<{width}}  ", style="bold yellow" if changed else "")
        text.append(tfmt.value_line(v))
    return text


def _nodes(view: TraceStopView) -> Text:
    if not view.nodes:
        return Text("empty" if not view.nodes_total else "(listed only for the attempt being traced)", style="dim")
    text = Text()
    for k, n in enumerate(view.nodes):
        if k:
            text.append("\n")
        target = "" if n.op in ("placeholder", "output") else f" {n.target}"
        text.append(f"{'+' if n.new else ' '} {n.name:<16} {n.op}{target}" + (f"   {n.value}" if n.value else ""),
                    style="bold green" if n.new else "")
    return text


def _guards(view: TraceStopView) -> Text:
    if not view.guards and not view.shape_guards:
        return Text("none so far", style="dim")
    text = Text()
    for k, g in enumerate(view.guards):
        if k:
            text.append("\n")
        text.append(f"{'+' if g.new or view.mark is not None else ' '} {g.guard_type:<22} "
                    f"{g.source or '(global state)'}", style="bold green" if g.new else "")
    for g in view.shape_guards:
        text.append(f"\n  {g}", style="dim")
    return text
