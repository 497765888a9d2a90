"""The drop dialog: what ``drop`` would leave out of the new entry, asked before anything runs (key ``D``).

Opened at a recompile stop with the engine's `DropPreview` of the default (`Engine.preview_drop`): one row per
failing guard a filter could drop, the default's rows selected, the rows the default leaves out (global state,
``.training`` flags, dispatch modes, whole-tensor ``TENSOR_MATCH``) unselected with their reason. Space toggles a
row; each change asks the engine for the preview of the new selection (`PreviewWanted`; the app hands the answer
to `DropDialog.show_preview`), so the warnings and the permanent code below the rows are always those of what
Enter would send.

Enter dismisses with the selected ids (empty: nothing is dropped, the app recompiles as torch would);
Escape dismisses with None and the program stays paused.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from dynadbg.core import format as fmt
from dynadbg.core.format.advice import plan_check_text
from dynadbg.core.format.drop_default import reason_text
from dynadbg.core.model import DropCandidate, DropPreview, EngineError

#: Characters of a guard's code shown on its row (the dialog fits 80 columns).
ROW_CODE = 44


def row_text(c: DropCandidate) -> Text:
    """One row: id, type and code, and for a guard the default leaves out, why (``left out: module mode flags``)."""
    code = c.guard.code[0] if c.guard.code else c.guard.source
    text = Text(f"{c.guard.leaf_id} {c.guard.guard_type} ")
    if c.held_back is not None:
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
    for warning in preview.warnings:
        out.append(fmt.warning_line(warning) + "\n", style="yellow")
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
    | space | Select or unselect the highlighted guard. |
    | enter | Drop the selected guards and recompile (none selected: recompile). |
    | escape | Cancel: nothing runs, the program stays paused. |
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False),
                Binding("enter", "accept", "Accept", show=False, priority=True)]

    @dataclass
    class PreviewWanted(Message):
        """The selection changed: the app asks `Engine.preview_drop(ids)` and calls `show_preview`."""

        dialog: "DropDialog"
        ids: tuple[str, ...]

    def __init__(self, preview: DropPreview) -> None:
        super().__init__()
        self.preview: DropPreview | EngineError = preview
        self._candidates = preview.candidates

    def compose(self) -> ComposeResult:
        with Vertical(id="drop-box"):
            yield Static(Text("Leave these guards out of the new entry? (Space toggles, Tab: details)"), id="drop-head")
            yield SelectionList[str](*(Selection(row_text(c), c.guard.leaf_id, c.guard.leaf_id in self.selected_ids)
                                       for c in self._candidates), id="drop-rows")
            with VerticalScroll(id="drop-details-box"):
                yield Static(details_text(self.preview), id="drop-details")

    @property
    def selected_ids(self) -> tuple[str, ...]:
        """The ids of the preview shown (the selection Enter sends once its preview is in)."""
        return self.preview.selected if isinstance(self.preview, DropPreview) else ()

    def on_mount(self) -> None:
        box = self.query_one("#drop-box")
        box.border_title = "drop guards and recompile?"
        box.border_subtitle = "Space toggles · Enter drops & recompiles · Esc cancels"
        self.query_one("#drop-rows", SelectionList).focus()

    def _selection(self) -> tuple[str, ...]:
        chosen = set(self.query_one("#drop-rows", SelectionList).selected)
        return tuple(c.guard.leaf_id for c in self._candidates if c.guard.leaf_id in chosen)

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        self.post_message(self.PreviewWanted(self, self._selection()))

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
