"""The Stderr view: what the program (and torch inside it) wrote to stderr, wrapped at the pane's width."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import RichLog

#: Lines kept.
MAX_LINES = 10_000


class StderrView(RichLog):
    """A log of the program's stderr. Lines wrap at the pane's width, and wrap again when that width changes
    (``z`` maximises the view): a `RichLog` keeps each line as wrapped when it was written."""

    ALLOW_MAXIMIZE = True

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes, max_lines=MAX_LINES, wrap=True, min_width=20,
                         markup=False, highlight=False)
        self._texts: list[str] = []
        self._wrapped_at = 0

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
            self.write(Text(text), width=width)
        else:
            self.call_later(self._rewrap)

    def on_resize(self, event: events.Resize) -> None:
        self.call_later(self._rewrap)  # after RichLog's own handler: it learns its size there

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0 or width == self._wrapped_at or not self._size_known:
            return
        self._wrapped_at = width
        self.clear()
        for text in self._texts:
            self.write(Text(text), width=width)
