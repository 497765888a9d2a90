"""A one-line prompt over the main screen (the ``dynamic NAME DIM`` choice of a recompile stop asks with it)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, Static


class PromptScreen(ModalScreen[str | None]):
    """Asks for one line; dismisses with the stripped text on Enter (None on Escape or an empty line).

    Args:
        title: the box's title (``"mark a dimension dynamic"``).
        explanation: one or more lines above the input.
        value: the input's initial text.
        placeholder: shown while the input is empty.
        suggestions: completions offered while typing (Textual `SuggestFromList`, first match wins).

    | Key | Action |
    | :- | :- |
    | enter | Answer with the text typed. |
    | escape | Cancel. |
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, title: str, explanation: str, *, value: str = "", placeholder: str = "",
                 suggestions: Sequence[str] = ()) -> None:
        super().__init__()
        self._title = title
        self._explanation = explanation
        self._value = value
        self._placeholder = placeholder
        self._suggestions = list(suggestions)

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Static(Text(self._explanation), id="prompt-text")
            yield Input(value=self._value, placeholder=self._placeholder, id="prompt-input",
                        suggester=SuggestFromList(self._suggestions) if self._suggestions else None)

    def on_mount(self) -> None:
        box = self.query_one("#prompt-box")
        box.border_title = self._title
        box.border_subtitle = "Enter sends · Esc cancels"
        field = self.query_one("#prompt-input", Input)
        field.cursor_blink = False
        field.focus()
        self.call_after_refresh(field.select_all)  # typing replaces the suggestion

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)
