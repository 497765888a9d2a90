"""The Recompile view: why a code object recompiled, answerable at a glance, and what to do about it.

At a recompile stop it shows, for every cache entry (in torch's order, most recently used first), every failing
guard with its type, guard code, the user source line it came from, expected against actual value and torch's
hint; the inputs that changed; the guard diffs between the entries; the recompile limit; and the choices with
their keys and the code a user would write to get the same effect permanently.

Data: the stop's record (`Stop.recompile`: the `RecompileRecord` analysed on the program's thread when the call
missed) and structured choices (`Stop.choices`: `RecompileChoice`, each with its decision, syntax, availability
and why not, permanent fix and warnings; `Stop.hints`: torch's own suggestions); the `Engine.recompile_records`
query then gives the record as the engine keeps it (with what came of it). Elsewhere the query gives the code
object's past recompiles (or an error line). Every sentence is `dynadbg.core.format`'s or made here from the data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events

from dynadbg.core.format.guards import caveat_lines
from dynadbg.core import format as fmt
from dynadbg.core.format.advice import choice_detail_text, choice_why_not_text
from dynadbg.core.format.drop_default import held_back_lines
from dynadbg.core.format.recompile import (
    CAUSE_TEXT,
    action_text,
    auto_dynamic_lines,
    choice_warning_texts,
    group_lines,
    limit_text,
    outcome_text,
)
from dynadbg.core.guards import location_text
from dynadbg.core.model import (
    DecisionKind,
    DiffKind,
    EntryDiff,
    EntryVerdict,
    GuardStatus,
    LeafGuardView,
    RecompileChoice,
    RecompileRecord,
    Stop,
    StopKind,
)

from . import actions, highlight
from .output_view import OutputView

#: View width (columns) under which code lines go under their labels and a choice's description under its key
#: (`RecompileView._narrow`): the view at 80 columns is 78 wide.
NARROW = 80
#: View width under which what a choice does and its code are indented two columns only (not under its syntax).
CRAMPED = 64

#: Characters of guard code over which a failing guard's code is cut to one line (a GLOBAL_STATE guard's JSON
#: runs to 1,500 characters and would fill the first screen at 80 columns); the guard pane has it whole.
LONG_CODE = 160

#: The recompile-stop choice actions, in the order the view lists them (registry ids = `DecisionKind` values).
CHOICE_IDS = tuple(kind.value for kind in DecisionKind)


def choice_for(stop: Stop | None, kind: DecisionKind) -> RecompileChoice | None:
    """The first available choice of `kind` the recompile stop offers (None: not offered or not available)."""
    if stop is None or stop.kind is not StopKind.RECOMPILE:
        return None
    return next((c for c in stop.choices if c.kind is kind and _usable(c)), None)


def tensor_inputs(stop: Stop | None) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every tensor among a recompile stop's inputs (what ``dynamic NAME DIM`` can mark)."""
    if stop is None or stop.frame is None:
        return []
    return [(name, value.shape) for name, value in stop.frame.locals if value.shape is not None]


def _in_order(choices: Sequence[RecompileChoice]) -> list[RecompileChoice]:
    """`choices` as the view lists them: the ones the stop offers first (End lands near the last of them), each
    group in `CHOICE_IDS` order."""
    return sorted(choices, key=lambda c: (not _usable(c), CHOICE_IDS.index(c.kind.value)))


def _usable(choice: RecompileChoice) -> bool:
    """Available, and for ``dynamic`` with a tensor dimension to mark: the engine names one only when a size
    guard failed (a key that pre-filled a guess would invite marking a dimension that never changed)."""
    return choice.available and (choice.kind is not DecisionKind.DYNAMIC or choice.decision.name is not None)


def available_choices(stop: Stop | None) -> frozenset[str]:
    """The choice actions that apply at `stop`: those its `Stop.choices` offer as available (none elsewhere);
    ``dynamic`` only when the engine named a dimension that changed size."""
    if stop is None or stop.kind is not StopKind.RECOMPILE:
        return frozenset()
    return frozenset(c.kind.value for c in stop.choices if _usable(c))


class RecompileView(OutputView):
    """The recompile report: entries and their failing guards, changed inputs, guard diffs, limit, choices."""

    COMPONENT_CLASSES = {
        "recompile--title", "recompile--fail", "recompile--pass", "recompile--expected", "recompile--actual",
        "recompile--hint", "recompile--dim", "recompile--key", "recompile--section", "recompile--warning",
    }
    """
    | Class | Description |
    | :- | :- |
    | `recompile--title` | The first line: which code recompiles, and the compile id it gets. |
    | `recompile--section` | Section headings (choices, guard diff, ...). |
    | `recompile--fail` | Failing entries and guards, removed guards in a diff. |
    | `recompile--pass` | Passing entries, added guards in a diff. |
    | `recompile--expected` / `recompile--actual` | The value a guard expected / the one this call has. |
    | `recompile--hint` | torch's hints and notes on a guard. |
    | `recompile--warning` | Warnings on a choice (results may be wrong). |
    | `recompile--key` | The key of a choice. |
    | `recompile--dim` | Secondary text (locations, counts). |
    """

    def __init__(self, placeholder: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(placeholder, name=name, id=id, classes=classes)
        self.keys: Mapping[str, str] = actions.effective_keys()
        """Action id → keys in force (the app sets it from the keymap), shown next to each choice."""
        self._stop: Stop | None = None
        self._records: tuple[RecompileRecord, ...] | str | None = None
        self._stale = False
        self._parts: list[RenderableType] = []
        self._first_verdict: RenderableType | None = None
        self._to_failing = False
        self.live_diffs: tuple[EntryDiff, ...] = ()
        """The code object's guard diffs now (`Engine.guard_diffs`), for past records whose miss had none."""

    @property
    def record(self) -> RecompileRecord | None:
        """The record shown for the current recompile stop: the query's answer once it came, else the stop's."""
        stop, records = self._stop, self._records
        if stop is None or stop.kind is not StopKind.RECOMPILE:
            return None
        return records[0] if isinstance(records, tuple) and records else stop.recompile

    def on_mount(self) -> None:
        if self._stop is not None or self._records is not None:
            self._update()

    def show_stop(self, stop: Stop | None) -> None:
        """A new stop: forget the previous records; at a recompile stop show its report right away."""
        if stop is not None and self._stop is not None and stop.seq == self._stop.seq:
            self._stop = stop  # the same stop (another frame selected): the records still hold
            return
        self._stop = stop
        self._records = None
        self._to_failing = False
        self._update()

    def show_records(self, records: tuple[RecompileRecord, ...] | str) -> None:
        """Show `Engine.recompile_records`' answer: this stop's record, the code object's past ones, or why not."""
        self._records = records
        self._update()

    # Rendering -------------------------------------------------------------------------------------------------

    def _update(self) -> None:
        # Rendering relayouts the view: while its tab is hidden (most steps) only remember to do it when shown.
        pane = self.parent
        if not self.is_mounted or (pane is not None and not pane.display):
            self._stale = True
            return
        self._stale = False
        self._built_narrow = self._narrow
        self._first_verdict = None
        self.content = self._build()
        if self._to_failing:
            self.call_after_refresh(self._scroll_to_failing)

    def show_failing_first(self) -> None:
        """Scroll so the first entry's failing guards (each with its expected and actual value) are the top rows,
        for this stop, also once its report is rebuilt (a short screen showed only the title and the choices,
        and a lesson's "the value expected and found" was below the pane's edge)."""
        self._to_failing = True
        self.call_after_refresh(self._scroll_to_failing)

    def _scroll_to_failing(self) -> None:
        width = self.scrollable_content_region.width
        if self._first_verdict is None or width <= 0:
            return
        console = self.app.console
        options = console.options.update_width(width)
        rows = 0
        for part in self._parts:
            if part is self._first_verdict:
                self.scroll_to(y=rows, animate=False, immediate=True, force=True)
                return
            rows += len(console.render_lines(part, options, pad=False))

    def on_show(self) -> None:
        if self._stale:
            self._update()

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def _build(self) -> RenderableType:
        stop = self._stop
        at_recompile = stop is not None and stop.kind is StopKind.RECOMPILE
        records = self._records
        parts: list[RenderableType] = []
        live = self.record
        if live is not None:
            parts.extend(self._record(live, live=True))
        elif isinstance(records, tuple) and records and not at_recompile:
            for record in records:
                parts.extend(self._record(record, live=False))
                parts.append(Text(""))
        elif at_recompile and stop is not None:
            parts.append(Text(stop.message, self._style("recompile--title")))
        elif isinstance(records, tuple):
            name = stop.selected_frame.code.name if stop is not None and stop.selected_frame else "this code"
            parts.append(Text(f"{name} has not recompiled in this run"))
        elif records:
            parts.append(Text(records))
        else:
            parts.append(Text("why a code object recompiled: shown at a recompile stop, or with key 7 at any stop",
                              self._style("recompile--dim")))
        if at_recompile:
            parts[1:1] = [self._choices_at_a_glance(stop)]
            parts.extend(self._choices(stop))
        self._parts = parts
        return Group(*parts)

    def _choices_at_a_glance(self, stop: Stop | None) -> Text:
        """One row under the title: the keys of the choices this stop offers (each is described, with its
        permanent code, in the ``choices`` section at the end, which a small pane shows only after scrolling)."""
        key_style, dim = self._style("recompile--key"), self._style("recompile--dim")
        text = Text("choose: ", Style(bold=True))
        usable = [c for c in _in_order(stop.choices if stop is not None else ()) if _usable(c)]
        for n, choice in enumerate(usable):
            text.append(" · " if n else "", dim)
            text.append(f" {self._key_of(choice)} ", key_style)
            text.append(f" {choice.kind.value}")
        room = self.scrollable_content_region.width - text.cell_len
        tail = next((t for t in ('   (each with its permanent code: "choices", at the end; End jumps there)',
                                 '   ("choices" at the end: End)') if len(t) <= room), "")
        text.append(tail, dim)
        return text

    def _key_of(self, choice: RecompileChoice) -> str:
        """The key that makes `choice` (the first one, as the keymap binds it)."""
        action = actions.get(choice.kind.value)
        return actions.display_keys(self.keys.get(action.id, action.keys)).split(" / ")[0]

    def _record(self, record: RecompileRecord, *, live: bool) -> list[RenderableType]:
        dim = self._style("recompile--dim")
        n = len(record.entries)
        # a resume function's qualified name borrows the class of the method it resumes (MLP.torch_dynamo_...)
        name = record.code_name if record.is_resume and record.code_name else record.frame_name
        title = Text(f"⟳ {name} ", self._style("recompile--title"))
        if live:
            title.append(f"is about to recompile → new entry {record.compile_id or '?'}")
        else:
            action = action_text(record)
            title.append(f"recompiled → {record.compile_id or 'not compiled'}: {record.decision.value}"
                         + (f" ({action})" if action else "") + f"; {outcome_text(record)}")
        lines: list[RenderableType] = [title]
        lines.append(Text(f"{n} cache entr{'y' if n == 1 else 'ies'} rejected this call", dim))
        if record.limit is not None:
            limit = record.limit
            lines.append(Text(f"recompile limit: {limit_text(limit)}",
                              self._style("recompile--warning") if limit.hit_now or limit.hit_next else dim))
        if record.error and not record.entries:
            lines.append(Text(f"analysis failed: {record.error}", self._style("recompile--fail")))
        notes: set[str] = set()
        for verdict in record.entries:
            lines.append(Text(""))
            lines.extend(self._verdict(verdict, notes, record))
        for failure in record.non_input:
            lines.append(Text(f"  not about the inputs ({failure.kind}, {failure.compile_id}): {failure.text}",
                              self._style("recompile--hint")))
        changed = self._changed_inputs(record)
        if changed:
            lines.extend([Text(""), Text(f"inputs changed since {record.entries[0].compile_id}",
                                         self._style("recompile--section"))])
            lines.extend(changed)
        automatic = auto_dynamic_lines(record)
        if automatic:
            lines.extend([Text(""), Text("automatic dynamic", self._style("recompile--section"))])
            lines.extend(Text(f"  {line}", self._style("recompile--hint")) for line in automatic)
        if record.stack_args:
            lines.extend([Text(""), Text("what the ___stack arguments are", self._style("recompile--section"))])
            lines.extend(Text(f"  {arg.name} is {fmt.stack_arg_text(arg)}") for arg in record.stack_args)
            lines.append(Text("  (handed over from the original frame's value stack at the graph break)", dim))
        if record.scalar_break:
            hint = self._style("recompile--hint")
            lines.append(Text("  Turning a tensor into a Python number (.item(), int(t), float(t)) left the graph "
                              "(the graph break); the guards then pin that number, so every new value recompiles.",
                              hint))
            lines.append(Padding(self._code_line("keep .item() in the graph as a symbolic value (no break, no "
                                                 "guard on the number): ",
                                                 "torch._dynamo.config.capture_scalar_outputs = True"), (0, 0, 0, 2)))
        lines.extend([Text(""), Text("guard diff of the entries (compile order)", self._style("recompile--section"))])
        diffs = record.diffs
        if not diffs and not live:
            # At the miss one entry had nothing to compare with; the entry compiled since has (what `diff` shows).
            diffs = tuple(d for d in self.live_diffs if d.new == record.compile_id) or self.live_diffs
            if diffs:
                lines.append(Text("  (with the entries compiled since)", self._style("recompile--dim")))
        lines.extend(self._diffs(diffs))
        return lines

    def _verdict(self, verdict: EntryVerdict, notes: set[str],
                 record: RecompileRecord | None = None) -> list[RenderableType]:
        """One entry's verdict and its failing guards; a note already shown (in `notes`) is not repeated; the
        guards of one of the record's groups (`RecompileRecord.groups`) as one group (`group_lines`)."""
        fail, ok, dim = self._style("recompile--fail"), self._style("recompile--pass"), self._style("recompile--dim")
        head = Text(f"entry {verdict.compile_id}  ", Style(bold=True))
        if self._first_verdict is None:
            self._first_verdict = head  # `show_failing_first` scrolls to it
        if verdict.error:
            head.append(f"could not be analysed: {verdict.error}", fail)
            return [head]
        if verdict.invalidated:
            head.append(f"✗ invalidated: {verdict.invalidated}", fail)
            return [head]
        if verdict.passed:
            head.append("✓ every guard passes (rejected for another reason)", ok)
            return [head]
        count = len(verdict.failing)
        head.append(f"✗ {count} of {verdict.leaf_count} guard{'s' if verdict.leaf_count != 1 else ''} fail", fail)
        lines: list[RenderableType] = [head]
        if verdict.torch_reason and not any(leaf.id == verdict.torch_leaf for leaf in verdict.failing):
            head.append("  · torch reports: ", dim)
            head.append(verdict.first_failure or verdict.torch_reason)
        groups = [g for g in (record.groups if record is not None else ()) if g.compile_id == verdict.compile_id]
        first_of = {g.leaf_ids[0]: g for g in groups}
        grouped = {lid for g in groups for lid in g.leaf_ids}
        for leaf in verdict.failing:
            if leaf.id in first_of:
                head_line, *rest = group_lines(first_of[leaf.id])
                lines.append(Padding(Text("✗ " + head_line.strip(), fail), (0, 0, 0, 2)))
                lines.extend(Padding(Text(line.strip(), self._style("recompile--dim")), (0, 0, 0, 6)) for line in rest)
            elif leaf.id not in grouped:
                lines.extend(self._leaf(leaf, verdict.torch_leaf, notes))
        return lines

    def _leaf(self, leaf: LeafGuardView, torch_leaf: str | None, notes: set[str]) -> list[RenderableType]:
        fail, dim = self._style("recompile--fail"), self._style("recompile--dim")
        mark = "✗" if leaf.status is GuardStatus.FAIL else "?" if leaf.status is GuardStatus.NO_VALUE else "!"
        row = Text(f"{mark} {leaf.id} ", fail)
        row.append(leaf.guard_type, fail)
        code = " ; ".join(leaf.code)
        details: list[Text] = []
        if len(code) > LONG_CODE:
            # one line, cut at the view's edge ("…"), and where the whole text is (torch's mark before the cut)
            if leaf.id == torch_leaf:
                row.append("  ← torch's reason", dim)
            row.no_wrap, row.overflow = True, "ellipsis"
            row.append("  ")
            row.append_text(_python(code[: 2 * LONG_CODE].replace("\n", " ")))
            details.append(Text(f"(cut: {len(code):,} chars; whole in `guards`)", dim))
        else:
            row.append("  ")
            row.append_text(_python(code))
            if leaf.id == torch_leaf:
                row.append("  ← torch's reason", dim)
        lines: list[RenderableType] = [Padding(row, (0, 0, 0, 2))]
        where = location_text(leaf.location, short=True)
        caveat = leaf.caveat
        if leaf.user_line or where:
            line = Text(where + "  " if where else "", dim)
            if caveat is not None:
                # torch says the line is only the value's first use, not what made the guard
                line.append(caveat_lines(caveat)[0] + ": ", dim)
            if leaf.user_line:
                line.append_text(_python(leaf.user_line.strip()))
            details.append(line)
        if caveat is not None:
            details.append(Text("caveat: " + caveat_lines(caveat)[1], self._style("recompile--hint")))
        if leaf.expected is not None or leaf.actual is not None:
            values = Text("expected ", dim)
            values.append(leaf.expected if leaf.expected is not None else "?", self._style("recompile--expected"))
            values.append("   actual ", dim)
            actual = leaf.actual if leaf.actual is not None else (
                "no value" if leaf.status is GuardStatus.NO_VALUE else "?")
            values.append(actual, self._style("recompile--actual"))
            details.append(values)
        if leaf.reason and leaf.reason not in leaf.code and leaf.reason != " ; ".join(leaf.code):
            details.append(Text(f"reason: {leaf.reason}", dim))
        if leaf.note and leaf.note in notes:
            details.append(Text("(torch's hint above applies here too)", dim))
        elif leaf.note:
            notes.add(leaf.note)
            details.append(Text(leaf.note, self._style("recompile--hint")))
        lines.extend(Padding(detail, (0, 0, 0, 6)) for detail in details)
        return lines

    def _changed_inputs(self, record: RecompileRecord) -> list[RenderableType]:
        lines: list[RenderableType] = []
        grouped = {name for g in record.changed_groups for name in g.names}
        for g in record.changed_groups:
            line = Text(f"  {len(g.names)} × ")
            line.append_text(_python(g.pattern))
            line.append(": ")
            line.append(g.expected if g.expected is not None else "?", self._style("recompile--expected"))
            line.append(" → ")
            line.append(g.actual, self._style("recompile--actual"))
            if g.cause is not None:
                line.append(f" ({CAUSE_TEXT[g.cause]})", self._style("recompile--hint"))
            lines.append(line)
        for change in record.changed:
            if change.name in grouped:
                continue
            line = Text("  ")
            line.append_text(_python(change.name))
            if change.variable:
                line.append(f" ({change.variable})")
            line.append(": ")
            line.append(change.expected if change.expected is not None else "?", self._style("recompile--expected"))
            line.append(" → ")
            line.append(change.actual, self._style("recompile--actual"))
            lines.append(line)
        if lines:
            lines.append(Text("  (every input of this call: the locals pane)", self._style("recompile--dim")))
        return lines

    def _diffs(self, diffs: Sequence[EntryDiff]) -> list[RenderableType]:
        dim = self._style("recompile--dim")
        if not diffs:
            return [Text("  only one entry: nothing to compare", dim)]
        lines: list[RenderableType] = []
        for d in diffs:
            counts: dict[str, int] = {}
            for x in d.diffs:
                counts[x.kind] = counts.get(x.kind, 0) + 1
            lines.append(Text(f"  {d.old} → {d.new}: " + (", ".join(f"{n} {k}" for k, n in counts.items())
                                                          or "same guards"), Style(bold=True)))
            for x in d.diffs[:40]:
                if x.kind is DiffKind.CHANGED:
                    line = Text(f"~ {x.guard_type}  ", self._style("recompile--hint"))
                    line.append_text(_python(x.old_code or ""))
                    line.append("  →  ", dim)
                    line.append_text(_python(x.new_code or ""))
                elif x.kind is DiffKind.ADDED:
                    line = Text(f"+ {x.guard_type}  {x.new_code or ''}", self._style("recompile--pass"))
                else:
                    line = Text(f"- {x.guard_type}  {x.old_code or ''}", self._style("recompile--fail"))
                lines.append(Padding(line, (0, 0, 0, 4)))
            if len(d.diffs) > 40:
                lines.append(Text(f"    … {len(d.diffs) - 40} more (`diff` in the console lists them all)", dim))
        return lines

    def _choices(self, stop: Stop | None) -> list[RenderableType]:
        """Each choice the stop offers (`Stop.choices`) with its key, what it does, whether it is available (and
        why not), its warnings and the code that gets its effect permanently; then torch's own hints."""
        dim, key_style = self._style("recompile--dim"), self._style("recompile--key")
        warning = self._style("recompile--warning")
        title = Text("choices", self._style("recompile--section"))
        title.append("   press the key; the log then shows the permanent code", dim)
        lines: list[RenderableType] = [Text(""), title]
        choices = stop.choices if stop is not None else ()
        for choice in _in_order(choices):
            action = actions.get(choice.kind.value)
            key = self._key_of(choice)
            on = _usable(choice)
            row = Table.grid(padding=(0, 1))
            row.add_column(no_wrap=True)
            row.add_column(no_wrap=True, min_width=17)
            row.add_column(ratio=1)
            description = Text(choice.summary or action.description, None if on else dim)
            detail = choice_detail_text(choice)
            if choice.kind is DecisionKind.DROP and on and not choice.decision.guard_ids and choice.held_back:
                detail = f"default: nothing; {key} lists the guards to choose from"
            if detail:
                description.append(f" ({detail})", dim)
            if not on:
                why_not = choice_why_not_text(choice)
                description.append(f"  (not available: {why_not})" if why_not
                                   else "  (not available here)", warning if why_not else dim)
            head = (Text(f" {key} ", key_style if on else dim), Text(choice.syntax, Style(bold=True) if on else dim))
            # narrow: under the syntax (under `CRAMPED` columns barely indented, so names in code keep their line)
            indent = 8 if not self._narrow else 5 if self.size.width >= CRAMPED else 2
            if self._narrow:
                # the key and its syntax on a row of their own, what it does below at nearly the view's width
                row.add_row(*head, Text(""))
                lines.append(Padding(row, (0, 0, 0, 1)))
                lines.append(Padding(description, (0, 0, 0, indent)))
            else:
                row.add_row(*head, description)
                lines.append(Padding(row, (0, 0, 0, 1)))
            if choice.permanent:
                lines.append(Padding(self._code_line("permanently: ", fmt.permanent_text(choice.permanent)),
                                     (0, 0, 0, indent)))
            for text in choice_warning_texts(choice):
                lines.append(Padding(Text(f"⚠ {text}", warning), (0, 0, 0, indent)))
            if choice.kind is DecisionKind.DROP and on:
                # what the default leaves out, and why (the dialog the key opens lists them unselected)
                lines += [Padding(Text(line, dim), (0, 0, 0, indent)) for line in held_back_lines(choice.held_back)]
        for hint in stop.hints if stop is not None else ():
            lines.append(Padding(self._code_line("torch suggests: ", hint), (0, 0, 0, 0 if self._narrow else 1)))
        return lines

    @property
    def _narrow(self) -> bool:
        """Under `NARROW` columns: code goes under its label, barely indented, so a call such as
        ``torch.compiler.set_stance("eager_on_recompile")`` keeps its line instead of breaking mid-name, and a
        choice's description goes under its key and syntax."""
        return 0 < self.size.width < NARROW

    def on_resize(self, event: events.Resize) -> None:
        narrow = 0 < event.size.width < NARROW
        at_recompile = self._stop is not None and self._stop.kind is StopKind.RECOMPILE
        if narrow != getattr(self, "_built_narrow", narrow) or at_recompile:
            self._update()  # (at a recompile stop the "choose:" row's tail is fitted to the width)

    def _code_line(self, label: str, code: str) -> Text:
        """`label` then Python `code` highlighted, one line per line of code (narrow: every line under the
        label)."""
        dim = self._style("recompile--dim")
        line = Text(label.rstrip() if self._narrow else label, dim)
        pad = " " if self._narrow else " " * len(label)
        for k, part in enumerate(code.splitlines()):
            if k or self._narrow:
                line.append("\n" + pad)
            line.append_text(_python(part.strip()))
        return line


def _python(text: str) -> Text:
    """`text` highlighted as Python (guard code, a user line)."""
    return Text.assemble(*((seg.text, seg.style) for seg in highlight.python_segments(text)))
