"""The source pane: the user's source file, synced to the current instruction's line (Line API, virtualised).

The pane never reads files itself: when the stop's file is not the one it holds, it posts `SourceView.Wanted` and
the app answers with the engine's `Engine.source(whole_file=True)` (read on the program's thread), `set_source`.
"""

from __future__ import annotations

import os
from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from . import highlight


@lru_cache(maxsize=32)
def _lexed(lines: tuple[str, ...]) -> tuple[tuple[Segment, ...], ...]:
    """`lines` of Python source, highlighted (cached: the same file is lexed once)."""
    return tuple(highlight.python_lines("".join(line + "\n" for line in lines)))


class SourceView(ScrollView, can_focus=True):
    """Source text with line numbers; the line being executed is highlighted and kept in the middle half.

    A cursor line (shown while the pane has focus) follows the current line until the user moves it; moving it
    posts `CursorMoved`, and the other views mark what Dynamo made from that line.

    | Key | Action |
    | :- | :- |
    | up / down | Move the cursor a line. |
    | pageup / pagedown | Move the cursor a page. |
    | home / end | First / last line. |
    | . | Back to the current line. |
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Cursor up", show=False),
        Binding("down", "cursor(1)", "Cursor down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(1)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("full_stop", "to_current", "Current", show=False),
    ]

    COMPONENT_CLASSES = {"source--current", "source--lineno", "source--related", "source--cursor"}
    """
    | Class | Description |
    | :- | :- |
    | `source--current` | The line of the current instruction. |
    | `source--lineno` | The line-number column. |
    | `source--related` | The line of another view's cursor (bytecode instruction or FX node). |
    | `source--cursor` | The cursor line, while the pane has focus. |
    """

    class Wanted(Message):
        """The pane shows a file it holds no text of: the app asks the engine for it (`set_source`)."""

        def __init__(self, view: SourceView, filename: str) -> None:
            self.view = view
            """The pane."""
            self.filename = filename
            """The file wanted (``co_filename``)."""
            super().__init__()

        @property
        def control(self) -> SourceView:
            """The pane."""
            return self.view

    class CursorMoved(Message):
        """The user moved the cursor to another line (the bytecode and graph views mark what came from it)."""

        def __init__(self, view: SourceView, line: int) -> None:
            self.view = view
            """The pane."""
            self.line = line
            """1-based line under the cursor."""
            super().__init__()

        @property
        def control(self) -> SourceView:
            """The pane."""
            return self.view

    filename: reactive[str | None] = reactive(None, repaint=False)
    """The file shown (``co_filename``); None or a file that cannot be read shows a note instead."""
    lineno: reactive[int | None] = reactive(None, repaint=False)
    """1-based line of the current instruction, or None."""
    related: reactive[int | None] = reactive(None, repaint=False)
    """1-based line of the instruction under the bytecode cursor, or of the FX node under the Graph view's cursor
    (marked ``▷`` and kept in sight), or None."""
    cursor: reactive[int | None] = reactive(None, repaint=False)
    """1-based line of the cursor (None: no file shown yet); it follows `lineno` while the pane has no focus."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: tuple[tuple[Segment, ...], ...] = ()
        #: file name → its highlighted lines, as the engine gave them (a file is asked for once per session)
        self._sources: dict[str, tuple[tuple[Segment, ...], ...]] = {}
        self._asked: set[str] = set()
        self._styles: tuple[Style, Style, Style, Style, Style] | None = None

    def show(self, filename: str | None, lineno: int | None) -> None:
        """Show `filename` with `lineno` highlighted (asking for its text, `Wanted`, when the pane has none)."""
        self.filename = filename
        self.lineno = lineno
        if filename and filename not in self._sources and filename not in self._asked:
            self._asked.add(filename)
            # made in this pane's own loop: a message made while the app handles one (a stop) would not bubble
            # back up to the app, its sender
            self.call_later(lambda: self.post_message(self.Wanted(self, filename)))

    def watch_filename(self, filename: str | None) -> None:
        self.cursor = None
        self.scroll_to(0, 0, animate=False, immediate=True, force=True)
        self._set_lines(self._sources.get(filename, ()) if filename else ())
        self.border_subtitle = os.path.basename(filename) if filename else ""

    def source_failed(self, filename: str, *, again: bool) -> None:
        """The engine could not give `filename`'s text: ask again the next time it is shown (`again`: it was not
        paused), or never (the file cannot be read)."""
        self._asked.discard(filename)
        if not again:
            self._sources[filename] = ()

    def set_source(self, filename: str, lines: tuple[str, ...]) -> None:
        """The text of `filename` (`Engine.source(whole_file=True)`); shown when it is the file the pane shows."""
        self._asked.discard(filename)
        self._sources[filename] = _lexed(tuple(lines))
        if filename == self.filename:
            self._set_lines(self._sources[filename])
            if self.lineno is not None:
                self._center()
                if not self.has_focus or self.cursor is None:
                    self.cursor = self.lineno

    def _set_lines(self, lines: tuple[tuple[Segment, ...], ...]) -> None:
        self._lines = lines
        width = max((sum(len(s.text) for s in line) for line in self._lines), default=0) + 7
        self.virtual_size = Size(width, max(1, len(self._lines)))
        self.refresh()

    def watch_lineno(self, old: int | None, new: int | None) -> None:
        if old is not None:
            self.refresh_line(old - 1)
        if new is not None:
            self.refresh_line(new - 1)
            self._center()
            if not self.has_focus or self.cursor is None:
                self.cursor = new

    def watch_cursor(self, old: int | None, new: int | None) -> None:
        if old is not None:
            self.refresh_line(old - 1)
        if new is not None:
            self.refresh_line(new - 1)

    def validate_cursor(self, cursor: int | None) -> int | None:
        if cursor is None or not self._lines:
            return cursor
        return max(1, min(cursor, len(self._lines)))

    def on_focus(self) -> None:
        if self.cursor is None and self._lines:
            self.cursor = self.scroll_offset.y + 1
        if self.cursor is not None:
            self.refresh_line(self.cursor - 1)

    def on_blur(self) -> None:
        if self.cursor is not None:
            self.refresh_line(self.cursor - 1)

    def _move_to(self, line: int) -> None:
        """Put the cursor on `line` (clamped), keep it in sight, and tell the other views."""
        if not self._lines:
            return
        self.cursor = line
        row, top = self.cursor - 1, self.scroll_offset.y
        height = self.scrollable_content_region.height
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        elif height > 0 and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True, force=True)
        self.post_message(self.CursorMoved(self, self.cursor))

    def action_cursor(self, delta: int) -> None:
        self._move_to((self.cursor or self.scroll_offset.y + 1) + delta)

    def action_page(self, direction: int) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self._move_to((self.cursor or self.scroll_offset.y + 1) + direction * page)

    def action_cursor_to(self, line: int) -> None:
        self._move_to(line if line > 0 else len(self._lines))

    def action_to_current(self) -> None:
        if self.lineno is not None:
            self._move_to(self.lineno)

    def watch_related(self, old: int | None, new: int | None) -> None:
        if old is not None:
            self.refresh_line(old - 1)
        if new is not None:
            self.refresh_line(new - 1)
            height = self.scrollable_content_region.height
            top = self.scroll_offset.y
            if height > 0 and not top <= new - 1 < top + height:
                self.scroll_to(y=max(0, new - 1 - height // 2), animate=False, immediate=True, force=True)

    def _center(self, *, force: bool = False) -> None:
        """Keep the current line in the middle half of the pane (re-center when it leaves it, or `force`)."""
        height = self.scrollable_content_region.height
        if self.lineno is None:
            return
        if height <= 0:  # hidden or not laid out yet: `on_resize` centers once it has a size
            return
        row, top, margin = self.lineno - 1, self.scroll_offset.y, height // 4
        if force or not top + margin <= row < top + height - margin:
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True, force=True)

    def on_resize(self, event: events.Resize) -> None:
        self._center(force=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = y + scroll_y
        width = self.scrollable_content_region.width
        if self._styles is None:
            base = self.rich_style
            self._styles = (base, base + self.get_component_rich_style("source--current", partial=True),
                            self.get_component_rich_style("source--lineno", partial=True),
                            base + self.get_component_rich_style("source--related", partial=True),
                            base + self.get_component_rich_style("source--cursor", partial=True))
        base, current_style, lineno_style, related_style, cursor_style = self._styles
        if not self._lines:
            if y == 0 and self.filename:
                note = f" source not available: {self.filename}"
                return Strip([Segment(note, base)]).crop_extend(scroll_x, scroll_x + width, base)
            return Strip.blank(width, base)
        if row >= len(self._lines):
            return Strip.blank(width, base)
        is_current = self.lineno is not None and row == self.lineno - 1
        is_related = not is_current and self.related is not None and row == self.related - 1
        is_cursor = self.has_focus and self.cursor is not None and row == self.cursor - 1
        line_style = cursor_style if is_cursor else current_style if is_current else related_style if is_related \
            else base
        mark = "▶" if is_current else "▷" if is_related else "›" if is_cursor else " "
        number = Segment(f"{mark}{row + 1:>4} ", lineno_style)
        strip = Strip([number, *self._lines[row]])
        return strip.crop_extend(scroll_x, scroll_x + width, line_style).apply_style(line_style)
