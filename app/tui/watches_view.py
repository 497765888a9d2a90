"""The watches pane: every watch expression with its value at this stop, marked when it changed since the last one.

Data: `Stop.watches` (`dynadbg.core.model.WatchValue`), evaluated by the engine in the selected frame at every
stop (``watch EXPR`` / ``unwatch N`` in the console add and remove them). A watch that raised shows its error in the
pane; the program is never stopped for it. The pane is hidden while there are no watches.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive

from dynadbg.core.model import Stop, WatchValue

from . import highlight
from .lines_view import LinesView

#: Most rows the pane grows to.
MAX_ROWS = 6
#: Longest expression column before expressions are cut.
_EXPR_WIDTH = 28


class WatchesView(LinesView):
    """``N. expr  value`` rows, in the order the watches were added.

    A watch whose value changed since the previous stop (`WatchValue.changed`) is marked with ``*`` and the
    `watches--changed` style; one that raised shows its error in the `watches--error` style; one that could not be
    evaluated at this stop (no frame) says so.
    """

    COMPONENT_CLASSES = {"watches--expr", "watches--changed", "watches--error", "watches--dim"}
    """
    | Class | Description |
    | :- | :- |
    | `watches--expr` | The expressions. |
    | `watches--changed` | Expressions (and marks) whose value changed since the last stop. |
    | `watches--error` | The error of a watch that raised. |
    | `watches--dim` | Numbers and notes. |
    """

    stop: reactive[Stop | None] = reactive(None, repaint=False)
    """The stop whose `Stop.watches` are shown."""

    def watch_stop(self) -> None:
        watches = self.stop.watches if self.stop is not None else ()
        self.set_class(not watches, "-empty")  # hidden by the stylesheet: no room taken without watches
        if watches:
            # one row per watch inside the border, up to `MAX_ROWS` (the pane scrolls beyond)
            self.styles.height = min(MAX_ROWS, len(watches)) + 2
        self.set_lines(self._build(watches))

    def _build(self, watches: tuple[WatchValue, ...]) -> list[Text]:
        expr_style = self.get_component_rich_style("watches--expr", partial=True)
        changed_style = self.get_component_rich_style("watches--changed", partial=True)
        error_style = self.get_component_rich_style("watches--error", partial=True)
        dim = self.get_component_rich_style("watches--dim", partial=True)
        if not watches:
            return [Text("(no watches: watch EXPR in the console)", dim)]
        width = min(_EXPR_WIDTH, max(len(w.expr) for w in watches))
        lines = []
        for watch in watches:
            line = Text()
            line.append("*" if watch.changed else " ", changed_style)
            line.append(f"{watch.number}. ", dim)
            shown = watch.expr if len(watch.expr) <= width else watch.expr[: width - 1] + "…"
            line.append(f"{shown:<{width}} ", changed_style if watch.changed else expr_style)
            if watch.error is not None:
                line.append(watch.error, error_style)
            elif not watch.evaluated:
                line.append("(not evaluated: no frame at this stop)", dim)
            elif watch.value is not None and watch.value.is_tensor and watch.value.shape:
                line.append_text(highlight.value_text(watch.value))  # shape, dtype, device: not 10,000 numbers
            else:
                line.append(watch.text)  # the repr, bounded: a 0-d tensor's value, an int, a string
            lines.append(line)
        return lines
