"""The locals pane: a frame's bound locals, with those changed since the last stop highlighted."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive

from dynadbg.core.model import FrameView

from . import highlight
from .lines_view import LinesView

#: Longest name column before names are cut.
_NAME_WIDTH = 24


class LocalsView(LinesView):
    """``name  value`` rows in ``co_varnames + co_cellvars + co_freevars`` order.

    A local whose object identity changed since the previous stop in this frame (`FrameView.changed`) is marked
    with ``*`` and the `locals--changed` style.
    """

    COMPONENT_CLASSES = {"locals--name", "locals--changed", "locals--empty"}
    """
    | Class | Description |
    | :- | :- |
    | `locals--name` | Local names. |
    | `locals--changed` | Names (and marks) of locals that changed since the last stop. |
    | `locals--empty` | The note shown when there are no locals. |
    """

    frame: reactive[FrameView | None] = reactive(None, repaint=False)
    """The frame whose locals are shown; None when the program is not stopped in a frame."""

    def watch_frame(self, old: FrameView | None, new: FrameView | None) -> None:
        if old is None or new is None or old.code.key != new.code.key:
            self.reset_virtual_height()
        self.set_lines(self._build())

    def _build(self) -> list[Text]:
        frame = self.frame
        empty = self.get_component_rich_style("locals--empty", partial=True)
        if frame is None:
            return [Text("(not in a frame)", empty)]
        if not frame.locals:
            return [Text("(no locals bound)", empty)]
        name_style = self.get_component_rich_style("locals--name", partial=True)
        changed_style = self.get_component_rich_style("locals--changed", partial=True)
        changed = set(frame.changed)
        width = min(_NAME_WIDTH, max(len(name) for name, _ in frame.locals))
        lines = []
        for name, value in frame.locals:
            is_changed = name in changed
            line = Text()
            line.append("*" if is_changed else " ", changed_style)
            shown = name if len(name) <= width else name[: width - 1] + "…"
            line.append(f"{shown:<{width}} ", changed_style if is_changed else name_style)
            line.append_text(highlight.value_text(value))
            lines.append(line)
        return lines
