"""The Explain pane: what the instruction under the bytecode cursor does, from `Engine.explain(index)`.

It sits below the bytecode pane (shown and hidden with the ``explain`` action) and follows the cursor: the opcode's
meaning in plain words on this Python, how other Pythons differ, its stack effect (with the live values when the
cursor is on the instruction about to run), and its role in Dynamo's code in a sentence (shown first).
"""

from __future__ import annotations

from rich.text import Text
from textual import events

from dynadbg.core.model import Explanation

from .lines_view import LinesView
from .role_sections import gutter_mark, gutter_style


def explanation_lines(ex: Explanation, *, live: bool, recorded: bool = False) -> list[Text]:
    """`ex` as styled text, one `Text` per part: a head line (index, opname, argument, role), then one labelled
    line per part (role sentence, stack effect, meaning, other Pythons); unwrapped.

    Args:
        ex: the engine's explanation.
        live: the stack effect shows the values at this stop (the cursor is on the current instruction).
        recorded: the stop is a recorded one (`back`): its values are the ones recorded then, not live.
    """
    head = Text()
    head.append(f"{ex.index} ", "bold")
    head.append(ex.opname, "bold")
    if ex.argrepr:
        head.append(f" {ex.argrepr}")
    if ex.role is not None:
        head.append(f"  {gutter_mark(ex.role.role)} ", gutter_style(ex.role.role))
        head.append(f"{ex.role.role.value}", "italic")
    parts = [head]

    def labelled(label: str, body: str) -> None:
        line = Text()
        line.append(f"{label}: ", "bold dim")
        line.append(body)
        parts.append(line)

    # the role first: in a small pane it is what Dynamo's code is doing here, the part a reader came for
    if ex.role_sentence:
        labelled("role", ex.role_sentence)
    if ex.stack is not None:
        labelled(("stack then (recorded)" if recorded else "stack now") if live else "stack", ex.stack.text)
    labelled("what it does", ex.meaning)
    if ex.version_note:
        labelled("other Pythons", ex.version_note)
    return parts


class ExplainView(LinesView):
    """The explanation of the bytecode cursor's instruction (or why there is none), wrapped to the pane's width.

    A Line-API pane (`LinesView`): a new explanation repaints the pane without a layout pass, so following the
    cursor or a step costs a repaint, not a relayout of the screen. An explanation longer than the pane (at 80×24
    it has a few rows) scrolls: its bottom border says so while part of it is below, and how to read it.
    """

    def __init__(self, placeholder: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._parts: list[Text] = [Text(placeholder, style="dim")]
        self._label = ""

    def on_mount(self) -> None:
        self._wrap()

    @property
    def parts(self) -> list[Text]:
        """What is shown, one unwrapped `Text` per part (the head line, then each labelled part)."""
        return self._parts

    def show_explanation(self, ex: Explanation | str | None, *, live: bool = False, recorded: bool = False) -> None:
        """Show `ex`; a string shows as a note (an engine error, "not stopped"); None clears the pane."""
        if ex is None:
            self._parts = [Text("move the bytecode cursor to an instruction", style="dim")]
        elif isinstance(ex, str):
            self._parts = [Text(ex, style="dim")]
        else:
            self._parts = explanation_lines(ex, live=live, recorded=recorded)
        self._label = "" if not isinstance(ex, Explanation) else f"instruction {ex.index}"
        self.scroll_to(y=0, animate=False, immediate=True, force=True)
        self._wrap()

    def _wrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 1:
            self.set_lines(self._parts)
            return
        lines: list[Text] = []
        for part in self._parts:
            lines.extend(part.wrap(self.app.console, width))
        self.set_lines(lines)
        self._say_if_more()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        self._wrap()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._say_if_more()

    def watch_has_focus(self, has_focus: bool) -> None:
        super().watch_has_focus(has_focus)
        self._say_if_more()

    def _say_if_more(self) -> None:
        """The bottom border: the instruction explained and, while part of the text is out of view, how to see it
        (the pane scrolls once it has the focus; Tab moves the focus from pane to pane)."""
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        if height > 0 and top + height < len(self.lines):
            more = "more below: ↓" if self.has_focus else "more below: Tab to this pane, then ↓"
        elif top > 0:
            more = "↑ back to the top"
        else:
            more = ""
        self.border_subtitle = " · ".join(part for part in (more, self._label) if part)
