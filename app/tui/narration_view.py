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

    heading = ""
    """The full heading of the step shown; the border title is it, cut to the pane's width (`fitted_title`)."""

    def show(self, heading: str, body: str, hint: str | None, skip_key: str, done: bool = False,
             ended: str | None = None) -> None:
        """Show a step: `heading` ("Lesson 3: ... · step 2 of 6") as the border title, then `body`, then the hint;
        `ended`: the program has ended with the step not done, what to do now (shown instead of the hint)."""
        self.heading = heading
        self.border_title = fitted_title(heading, self.size.width)
        self.border_subtitle = ("q: leave the debugger" if done
                                else f"{skip_key}: skip step · q: leave the debugger" if ended
                                else f"{skip_key}: skip step · type commands below (Esc: keys, \":\": back to typing)")
        text = Text(body)
        if ended:
            text.append("\n")
            text.append(ended, style="bold yellow")
        elif hint:
            text.append("\nHint: ", style="bold yellow")
            text.append(hint)
        self.set_class(done, "-done")
        self.update(text)

    def on_resize(self) -> None:
        self.border_title = fitted_title(self.heading, self.size.width)


def fitted_title(heading: str, width: int) -> str:
    """`heading` for a border `width` cells wide: a lesson title too long for it is cut (with "…") before its
    last part (`` · step 2 of 6``, `` · done``), which always shows. Width 0 (not laid out yet): unchanged."""
    room = width - 6  # the corners, the title's padding and a cell of border on each side
    if width <= 0 or len(heading) <= room or " · " not in heading:
        return heading
    head, tail = heading.rsplit(" · ", 1)
    keep = room - len(tail) - 4
    return f"{head[:keep].rstrip()}… · {tail}" if keep > 8 else heading
