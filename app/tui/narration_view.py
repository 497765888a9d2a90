"""The lesson's narration pane (`dynadbg learn`): the current step, its hint after a wrong move, the progress."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class NarrationView(Static):
    """Shows one step of a lesson: what to look at and do, a hint, "step k of n", and the skip key.

    The app sets the text with `show`; the pane never talks to the engine.
    """

    DEFAULT_CSS = """
    NarrationView {
        height: auto;
        max-height: 12;
        border: round $accent;
        border-title-color: $accent;
        padding: 0 1;
        overflow-y: auto;
    }
    NarrationView.-done {
        border: round $success;
    }
    """

    def show(self, heading: str, body: str, hint: str | None, skip_key: str, done: bool = False) -> None:
        """Show a step: `heading` ("Lesson 3: ... · step 2 of 6") as the border title, then `body`, then the hint."""
        self.border_title = heading
        self.border_subtitle = ("q: leave the debugger" if done
                                else f"{skip_key}: skip step · type commands below (Esc: keys, \":\": back to typing)")
        text = Text(body)
        if hint:
            text.append("\nHint: ", style="bold yellow")
            text.append(hint)
        self.set_class(done, "-done")
        self.update(text)
