"""A read-only, virtualised pane of styled lines (Textual's Line API): the base of the stack and locals panes.

Setting new lines repaints the pane without a layout pass as long as they fit in its virtual height (never below
the pane's height, grown in powers of two, not shrunk within a frame), which keeps a step's repaint cheap. Lines
wider than the pane end in ``…``.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LinesView(ScrollView, can_focus=True):
    """Shows a list of `rich.text.Text` lines; subclasses call `set_lines` from their reactive watchers."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Text] = []
        self._strips: dict[int, Strip] = {}
        self._base: Style | None = None
        self._width: int | None = None
        self._floor = 0

    @property
    def lines(self) -> list[Text]:
        """The lines shown."""
        return self._lines

    @property
    def text(self) -> str:
        """The lines shown, as plain text."""
        return "\n".join(line.plain for line in self._lines)

    def set_lines(self, lines: Iterable[Text]) -> None:
        """Replace the lines and repaint the rows that changed (all of them when most did)."""
        old, new = self._lines, list(lines)
        self._lines = new
        changed = [row for row in range(max(len(old), len(new)))
                   if row >= len(old) or row >= len(new) or old[row] != new[row]]
        self._update_virtual_size()
        if len(changed) > 4:
            self._strips.clear()
            self.refresh()
            return
        for row in changed:
            self._strips.pop(row, None)
            self.refresh_line(row)

    def _update_virtual_size(self) -> None:
        # A new virtual size relayouts the screen (tens of ms), and a value stack grows and shrinks by a slot at
        # almost every step: grow in powers of two and never shrink until `reset_virtual_height`.
        count, pane = len(self._lines), self.scrollable_content_region.height
        needed = pane if count <= pane else 1 << (count - 1).bit_length()
        height = max(pane, needed, self._floor)
        self._floor = height if count > pane else self._floor
        if self.virtual_size.height != height or self.virtual_size.width != 0:
            self.virtual_size = Size(0, height)

    def reset_virtual_height(self) -> None:
        """Let the virtual height shrink to the lines again (a new frame: its stack may never get as deep)."""
        self._floor = 0

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self._floor = 0  # sized for the old pane height
        self._update_virtual_size()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._strips.clear()

    def render_lines(self, crop: Region) -> list[Strip]:
        # The pane's style walks the DOM for its background: once per render, not once per line.
        self._base = self.rich_style
        self._width = self.scrollable_content_region.width
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        row = y + self.scroll_offset.y
        width = self._width if self._width is not None else self.scrollable_content_region.width
        base = self._base if self._base is not None else self.rich_style
        if not 0 <= row < len(self._lines):
            return Strip.blank(width, base)
        strip = self._strips.get(row)
        if strip is None:
            line = self._lines[row]
            if line.cell_len > width > 1:
                line = line[: width - 1] + Text("…")
            segments = [Segment(s.text, s.style) for s in line.render(self.app.console) if s.text != "\n"]
            strip = self._strips[row] = Strip(segments).crop_extend(0, width, base).apply_style(base)
        return strip


def marked_cut(strip: Strip, width: int) -> Strip:
    """`strip` (a row already cropped to `width` cells) with its last cell replaced by ``…``, in that cell's
    style: the row goes on past the pane's right edge. The panes that scroll sideways (bytecode, guards) mark
    their cut rows with it, as `LinesView` does its own."""
    if width < 2:
        return strip
    head = strip.crop(0, width - 1)
    segments = list(strip.crop(width - 1, width))
    style = segments[-1].style if segments else None
    return Strip.join([head, Strip([Segment("…", style)], 1)])

