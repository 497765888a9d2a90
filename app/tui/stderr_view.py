"""The Stderr view: what the program (and torch inside it) wrote to stderr, wrapped at the pane's width."""

from __future__ import annotations

import re

from rich.text import Text
from textual import events
from textual.widgets import RichLog

#: Lines kept.
MAX_LINES = 10_000
#: The prefix torch's logging puts on every line (``W1203 13:46:16.395000 7702 torch/_dynamo/x.py:1759] [0/0] ``):
#: level and date, time, thread id, file:line, and the compile id when there is one.
LOG_PREFIX = re.compile(r"^(?P<prefix>[IWEF]\d{4} [\d:.]+ +\d+ [^\]\s]+\] (?:\[[^\]]*\] ?)?)(?P<message>.*)$")


class StderrView(RichLog):
    """A log of the program's stderr. Lines wrap at the pane's width, and wrap again when that width changes
    (``z`` maximises the view): a `RichLog` keeps each line as wrapped when it was written. torch's log prefix
    (`LOG_PREFIX`) shows dimmed on a row of its own where it changes, not on every line of one message: at 80
    columns it took most of each row, and the message's lines alternated with it."""

    ALLOW_MAXIMIZE = True

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes, max_lines=MAX_LINES, wrap=True, min_width=20,
                         markup=False, highlight=False)
        self._texts: list[str] = []
        self._wrapped_at = 0
        self._prefix = ""

    @property
    def text(self) -> str:
        """Everything written, as written (unwrapped)."""
        return "\n".join(self._texts)

    def write_text(self, text: str) -> None:
        """Add what the program wrote (lines joined)."""
        self._texts.append(text)
        del self._texts[:-MAX_LINES]
        width = self.scrollable_content_region.width
        if self._size_known and width > 0 and width == self._wrapped_at:
            # the width given: a RichLog left alone wraps at the app console's width (80 columns), not its own
            self.write(self._shown(text), width=width)
        else:
            self.call_later(self._rewrap)

    def _shown(self, text: str) -> Text:
        """`text` as shown: each torch log prefix once, dimmed, above the lines it begins."""
        out = Text()
        for n, line in enumerate(text.split("\n")):
            if n:
                out.append("\n")
            match = LOG_PREFIX.match(line)
            if match is None:
                self._prefix = ""
                out.append(line)
                continue
            if match["prefix"] != self._prefix:
                self._prefix = match["prefix"]
                out.append(self._prefix.rstrip() + "\n", "dim")
            out.append("  " + match["message"])
        return out

    def on_resize(self, event: events.Resize) -> None:
        self.call_later(self._rewrap)  # after RichLog's own handler: it learns its size there

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or width == self._wrapped_at or not self._size_known:
            return
        self._wrapped_at = width
        self.clear()
        self._prefix = ""
        for text in self._texts:
            self.write(self._shown(text), width=width)
