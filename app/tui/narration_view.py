"""The lesson's narration pane (`dynadbg learn`): the current step, its hint after a wrong move, the progress."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widgets import Static

#: The keys that scroll the narration while the console keeps the focus (`dynadbg learn` binds them).
SCROLL_KEYS = ("shift+down", "shift+up")


class NarrationView(VerticalScroll, can_focus=False):
    """Shows one step of a lesson: what to look at and do, a hint, "step k of n", and the hint and skip keys.

    The app sets the text with `show`; the pane never talks to the engine. A step longer than the pane (at 80×24 it
    has at most 5 rows of text: the rest goes to the pane the step talks about) scrolls: Shift+Down / Shift+Up
    (`scroll_lines`) while the learner types in the console, and the border says so while some of the text is out
    of view.
    """

    DEFAULT_CSS = """
    NarrationView {
        height: auto;
        max-height: 12;
        border: round $accent;
        border-title-color: $accent;
        padding: 0 1;
        scrollbar-size-vertical: 0;  /* no thumb among the words: the border says when more is below or above */
    }
    NarrationView > Static {
        height: auto;
    }
    NarrationView.-done {
        border: round $success;
    }
    """

    typing: var[bool] = var(True)
    """Whether typed letters go to the console now (the app sets it as the focus moves): the border says how to
    type a command when they do not."""

    heading = ""
    """The full heading of the step shown; the border title is it, cut to the pane's width (`fitted_title`)."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._body = Static("")
        self._subtitle = ""
        self._done = self._ended = False
        self._skip_key = self._hint_key = ""
        self.text = Text("")
        """The step's text as shown (body, then the hint or what to do now that the program has ended)."""

    def compose(self) -> ComposeResult:
        yield self._body

    @property
    def plain(self) -> str:
        """The step's text as plain text (what a test reads)."""
        return self.text.plain

    def show(self, heading: str, body: str, hint: str | None, skip_key: str, done: bool = False,
             ended: str | None = None, hint_key: str = "") -> None:
        """Show a step: `heading` ("Lesson 3: ... · step 2 of 6") as the border title, then the hint (first: a hint
        below the fold went unseen), then `body`; `ended`: the step can no longer be done (`Coach.stranded_text`),
        what to do now (shown first, instead of the hint). `hint_key`: the key that asks for a hint (the border
        says it)."""
        self.heading = heading
        self.border_title = fitted_title(heading, self.size.width)
        self._done, self._ended, self._skip_key, self._hint_key = done, ended is not None, skip_key, hint_key
        self._subtitle = self._subtitle_text()
        self.border_subtitle = self._subtitle
        text = Text()
        if ended:
            # first, where the "▶ Type ..." row was: at 80×24 a note under the step's text went unseen while the
            # first row still asked for a command that could no longer count
            text.append(ended, style="bold yellow")
            text.append("\n")
        elif hint:
            text.append("Hint: ", style="bold yellow")
            text.append(hint, style="yellow")
            text.append("\n")
        text.append(body)
        self.text = text
        self.set_class(done, "-done")
        self._body.update(text)
        self.scroll_home(animate=False)
        self.call_after_refresh(self._say_if_more)

    def _subtitle_text(self) -> str:
        skip_key = self._skip_key
        leave = "type q to leave the debugger" if self.typing else "q: leave the debugger"
        if self._done:
            return leave
        if self._ended:
            return f"{skip_key}: skip step · {leave}"
        keys = f"{self._hint_key}: hint · {skip_key}: skip step" if self._hint_key else f"{skip_key}: skip step"
        if self.typing:
            return f"{keys} · typing below (Esc: letters act as keys)"
        # a step that says "Type `entries`" while the keys act: its letters would be keys (e edits)
        return f"{keys} · letters are keys now: \":\" types"

    def watch_typing(self) -> None:
        if self._skip_key:
            self._subtitle = self._subtitle_text()
            self._say_if_more()

    def scroll_lines(self, rows: int) -> None:
        """Scroll the text by `rows` (negative: up), without moving the focus."""
        self.scroll_relative(y=rows, animate=False)
        self.call_after_refresh(self._say_if_more)

    def _say_if_more(self) -> None:
        """The border's subtitle: while part of the text is out of view, which keys show it."""
        if self.max_scroll_y <= 0:
            self.border_subtitle = self._subtitle
            return
        # the keys (hint, skip) and how to leave, not the longer words on where typing goes
        parts = [part for part in self._subtitle.split(" · ") if part.startswith(("F", "q:", "type q"))]
        if self.scroll_y < self.max_scroll_y:
            head = ["more below: Shift+↓", "Shift+↑ back"]
        else:
            head = ["Shift+↑: back to the top"]
        room = self.size.width - 6  # the corners, the subtitle's padding and a cell of border on each side
        shorter = [part.replace(" the debugger", "") for part in parts]
        # whole if it fits; else without "Shift+↑ back", then "leave" without "the debugger" (at 80 columns the
        # border cut "type q to leave the …")
        for candidate in (head + parts, head[:1] + parts, head[:1] + shorter):
            text = " · ".join(candidate)
            if room <= 0 or len(text) <= room:
                break
        self.border_subtitle = text

    def on_resize(self) -> None:
        self.border_title = fitted_title(self.heading, self.size.width)
        self.call_after_refresh(self._say_if_more)


def fitted_title(heading: str, width: int) -> str:
    """`heading` for a border `width` cells wide: a lesson title too long for it is cut (with "…") before its
    last part (`` · step 2 of 6``, `` · done``), which always shows. Width 0 (not laid out yet): unchanged."""
    room = width - 6  # the corners, the title's padding and a cell of border on each side
    if width <= 0 or len(heading) <= room or " · " not in heading:
        return heading
    head, tail = heading.rsplit(" · ", 1)
    keep = room - len(tail) - 4
    return f"{head[:keep].rstrip()}… · {tail}" if keep > 8 else heading
