"""The drop dialog: what ``drop`` would leave out of the new entry, asked before anything runs (key ``D``).

Opened at a recompile stop with the engine's `DropPreview` of the default (`Engine.preview_drop`): one row per
failing guard a filter could drop, or per group of them (`DropPreview.groups`: ``8 × TRUE_MATCH .training`` of
eight BatchNorm modules is one row), the default's rows ticked ``[x]``, the rows the default leaves out (global
state, ``.training`` flags, dispatch modes, whole-tensor ``TENSOR_MATCH``) ``[ ]`` with their reason. Space
toggles a row (a group row: all its guards); ``e`` lists a group's guards under it, each its own row, and folds
them back. Each change asks the engine for the preview of the new selection (`PreviewWanted`; the app hands the
answer to `DropDialog.show_preview`), so the warnings and the permanent code below the rows are always those of
what Enter would send. The selection is always a tuple of guard ids, in the entry's order.

Enter dismisses with the selected ids (empty: nothing is dropped, the app recompiles as torch would);
Escape dismisses with None and the program stays paused.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList, Static
from textual.widgets.option_list import OptionDoesNotExist
from textual.widgets.selection_list import Selection

from dynadbg.core import format as fmt
from dynadbg.core.format.advice import plan_check_text
from dynadbg.core.format.drop_default import reason_text
from dynadbg.core.format.recompile import warning_lines
from dynadbg.core.grouping import accessors
from dynadbg.core.model import DropCandidate, DropPreview, EngineError, GuardGroup, HeldBackReason

#: Characters of a guard's code shown on its row (the dialog fits 80 columns).
ROW_CODE = 44


#: The key of a group's row in the list (guard ids never start with it).
GROUP_KEY = "group:"


def row_text(c: DropCandidate, *, member: bool = False) -> Text:
    """One row: id, type and code, and for a guard the default leaves out, why (``left out: module mode flags``);
    `member`: a guard listed under its group's row (indented)."""
    code = c.guard.code[0] if c.guard.code else c.guard.source
    text = Text(f"{'  └ ' if member else ''}{c.guard.leaf_id} {c.guard.guard_type} ")
    if c.held_back is not None and not member:  # a member's reason is on its group's row
        # the reason before the code: a long guard is cut at the row's end, its reason never
        reason = f"[left out: {reason_text(c.held_back)[0]}] "
        text.append(reason, style="italic")
        room = max(12, ROW_CODE - len(reason) + 8)
    else:
        room = ROW_CODE + 8
    if len(code) <= room:
        text.append(code)
    elif c.guard.source == "L":  # an ambient guard: its head names it (``___check_global_state() against …``)
        text.append(code[: room - 1] + "…")
    else:  # cut on the left: the end of a source (``…['bn1'].training == True``) tells sibling guards apart
        text.append("…" + code[len(code) - room + 1:])
    return text


def group_row_text(group: GuardGroup, held: HeldBackReason | None, chosen: int, *, open_: bool = False) -> Text:
    """A group's row: ``▸ 8 × TRUE_MATCH [left out: module mode flags] .training of BatchNorm2d: True → False ·
    under L['self']._modules['blocks']._modules`` (`chosen`: how many of its guards are selected, said when some
    but not all are; `open_`: its guards are listed under it)."""
    n = len(group.leaf_ids)
    text = Text(f"{'▾' if open_ else '▸'} {n} × {group.guard_type} ", style="bold")
    if 0 < chosen < n:
        text.append(f"({chosen} of {n} selected) ", style="bold")
    if held is not None:  # before what the guards are, as on a guard's row: a long row is cut, its reason never
        text.append(f"[left out: {reason_text(held)[0]}] ", style="italic")
    parts = accessors(group.tail)
    text.append(parts[-1] if parts and parts[-1] else group.pattern)  # what every source ends in: ``.training``
    if group.owner_types:
        text.append(" of " + ", ".join(group.owner_types))
    if group.expected is not None or group.actual is not None:
        text.append(f": {group.expected if group.expected is not None else '?'} → "
                    f"{group.actual if group.actual is not None else '?'}")
    if group.head:
        text.append(f" · under {group.head}", style="dim")
    return text


class CheckList(SelectionList[str]):
    """A `SelectionList` whose rows start with ``[x]`` (selected) or ``[ ]`` (not): told apart by their text in
    any theme and in a text capture. The stock button draws an ``X`` on every row, ticked or not, and only its
    colour differs, which a newcomer reads as every row ticked."""

    DEFAULT_CSS = """
    CheckList > .selection-list--button { color: $text-muted; background: transparent; }
    CheckList > .selection-list--button-highlighted { color: $text; background: transparent; }
    CheckList > .selection-list--button-selected { color: $text-success; background: transparent; text-style: bold; }
    CheckList > .selection-list--button-selected-highlighted {
        color: $text-success; background: transparent; text-style: bold;
    }
    """

    def _get_left_gutter_width(self) -> int:
        return len("[x] ")

    def render_line(self, y: int) -> Strip:
        line = OptionList.render_line(self, y)
        index = self.scroll_offset.y + y
        try:
            selection = self.get_option_at_index(index)
        except OptionDoesNotExist:
            return line
        ticked = selection.value in self.selected
        component = "selection-list--button" + ("-selected" if ticked else "")
        component += "-highlighted" if self.highlighted == index else ""
        under = next(iter(line)).style or self.rich_style
        mark = self.get_component_rich_style(component) + Style(meta={"option": index})
        return Strip([Segment("[x]" if ticked else "[ ]", mark), Segment(" ", under), *line])


def details_text(preview: DropPreview | EngineError) -> Text:
    """What the selection would do: the reasons of the left-out rows, each warning, the checked filter and the
    permanent code, or why it would be refused."""
    if isinstance(preview, EngineError):
        return Text(preview.message, style="bold red")
    out = Text()
    reasons = dict.fromkeys(c.held_back for c in preview.candidates
                            if c.held_back is not None and c.guard.leaf_id not in preview.selected)
    for reason in reasons:
        name, why = reason_text(reason)
        out.append(f"left out ({name}): {why}\n", style="dim")
    if not preview.selected:
        out.append("nothing selected: Enter recompiles with every guard kept (what torch does)\n", style="bold")
        return out
    if preview.error is not None:
        out.append(f"cannot drop this selection: {preview.error}\n", style="bold red")
        return out
    # a group's guards that share a risk: one warning for the group, as the stop says it
    for line in warning_lines(preview.warnings, preview.groups, limit=len(preview.warnings)):
        out.append(line + "\n", style="yellow")
    if preview.plan is not None:
        out.append(plan_check_text(preview.plan) + "\n")
    if preview.permanent is not None:
        out.append("permanently: " + fmt.permanent_text(preview.permanent) + "\n")
    return out


class DropDialog(ModalScreen[tuple[str, ...] | None]):
    """Asks which failing guards ``drop`` leaves out, showing what that would mean first.

    Args:
        preview: the engine's preview of the default selection.

    | Key | Action |
    | :- | :- |
    | space | Select or unselect the highlighted row (a group's row: every guard of the group). |
    | e | List the highlighted group's guards under it, one row each (again: fold them back). |
    | enter | Drop the selected guards and recompile (none selected: recompile). |
    | escape | Cancel: nothing runs, the program stays paused. |
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False),
                Binding("enter", "accept", "Accept", show=False, priority=True),
                Binding("e", "expand", "Members", show=False)]

    @dataclass
    class PreviewWanted(Message):
        """The selection changed: the app asks `Engine.preview_drop(ids)` and calls `show_preview`."""

        dialog: "DropDialog"
        ids: tuple[str, ...]

    def __init__(self, preview: DropPreview) -> None:
        super().__init__()
        self.preview: DropPreview | EngineError = preview
        self._candidates = preview.candidates
        self._held = {c.guard.leaf_id: c.held_back for c in preview.candidates}
        self._by_id = {c.guard.leaf_id: c for c in preview.candidates}
        # a group is one row only when its guards share one reason to be left out (or none)
        self._groups = {f"{GROUP_KEY}{k}": g for k, g in enumerate(preview.groups)
                        if len({self._held.get(lid) for lid in g.leaf_ids}) == 1
                        and all(lid in self._by_id for lid in g.leaf_ids)}
        self._group_of = {lid: key for key, g in self._groups.items() for lid in g.leaf_ids}
        self._chosen: set[str] = set(preview.selected)
        self._open: set[str] = set()

    def compose(self) -> ComposeResult:
        with Vertical(id="drop-box"):
            yield Static(Text("Leave these guards out of the new entry? (Space toggles, Tab: details)"), id="drop-head")
            yield CheckList(*self._rows(), id="drop-rows")
            with VerticalScroll(id="drop-details-box"):
                yield Static(details_text(self.preview), id="drop-details")

    def _rows(self) -> list[Selection[str]]:
        """The rows for the current selection: a group's row where its first guard is, its guards under it when
        open, every other candidate alone."""
        rows: list[Selection[str]] = []
        for c in self._candidates:
            lid = c.guard.leaf_id
            key = self._group_of.get(lid)
            if key is None:
                rows.append(Selection(row_text(c), lid, lid in self._chosen))
                continue
            group = self._groups[key]
            if lid != group.leaf_ids[0]:
                continue
            chosen = sum(m in self._chosen for m in group.leaf_ids)
            rows.append(Selection(group_row_text(group, self._held[lid], chosen, open_=key in self._open), key,
                                  chosen == len(group.leaf_ids)))
            if key in self._open:
                rows += [Selection(row_text(self._by_id[m], member=True), m, m in self._chosen)
                         for m in group.leaf_ids]
        return rows

    def _ids_of(self, key: str) -> tuple[str, ...]:
        return self._groups[key].leaf_ids if key in self._groups else (key,)

    def _refill(self, highlight: str | None = None) -> None:
        """Rebuild the rows from the selection (a group's tick follows its guards'), keeping the highlight on the
        row keyed `highlight` (else on the same index)."""
        rows = self.query_one("#drop-rows", CheckList)
        at = rows.highlighted
        with self.prevent(SelectionList.SelectedChanged, SelectionList.SelectionToggled):
            rows.clear_options()
            rows.add_options(self._rows())
        keys = [rows.get_option_at_index(i).value for i in range(rows.option_count)]
        if highlight in keys:
            rows.highlighted = keys.index(highlight)
        elif at is not None and keys:
            rows.highlighted = min(at, len(keys) - 1)

    @property
    def selected_ids(self) -> tuple[str, ...]:
        """The ids of the preview shown (the selection Enter sends once its preview is in)."""
        return self.preview.selected if isinstance(self.preview, DropPreview) else ()

    def on_mount(self) -> None:
        box = self.query_one("#drop-box")
        box.border_title = "drop guards and recompile?"
        box.border_subtitle = "Space toggles · e group's guards · Enter drops & recompiles · Esc cancels"
        self.query_one("#drop-rows", CheckList).focus()

    def _selection(self) -> tuple[str, ...]:
        return tuple(c.guard.leaf_id for c in self._candidates if c.guard.leaf_id in self._chosen)

    def on_selection_list_selection_toggled(self, event: SelectionList.SelectionToggled) -> None:
        event.stop()
        key = event.selection.value
        ids = self._ids_of(key)
        if all(i in self._chosen for i in ids):
            self._chosen.difference_update(ids)
        else:  # a group with some of its guards selected: all of them
            self._chosen.update(ids)
        self._refill(key)
        self.post_message(self.PreviewWanted(self, self._selection()))

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()  # the selection is `_chosen`, changed by the toggles above

    def action_expand(self) -> None:
        """Open or fold the highlighted group (on one of its guards: fold their group)."""
        rows = self.query_one("#drop-rows", CheckList)
        if rows.highlighted is None:
            return
        key = rows.get_option_at_index(rows.highlighted).value
        key = self._group_of.get(key, key)
        if key not in self._groups:
            return
        self._open.symmetric_difference_update({key})
        self._refill(key)

    def show_preview(self, ids: tuple[str, ...], preview: DropPreview | EngineError) -> None:
        """The engine's answer for `ids` (dropped when the selection changed again meanwhile)."""
        if ids != self._selection():
            return
        self.preview = preview
        self.query_one("#drop-details", Static).update(details_text(preview))

    def action_accept(self) -> None:
        """Send the selected ids (only a selection whose preview is shown and can be dropped)."""
        ids = self._selection()
        if isinstance(self.preview, EngineError) or self.preview.selected != ids:
            return  # its preview is on its way: Enter again once it is shown
        if self.preview.error is not None:
            self.notify("this selection cannot be dropped (see the dialog)", severity="error")
            return
        self.dismiss(ids)

    def action_cancel(self) -> None:
        """Close: nothing runs."""
        self.dismiss(None)
