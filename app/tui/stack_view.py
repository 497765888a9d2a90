"""The value-stack pane: the frame's value stack, bottom first and TOS last (as the `stack` command lists it)."""

from __future__ import annotations

import textwrap

from rich.text import Text
from textual.reactive import reactive

from dynadbg.core import format as fmt
from dynadbg.core.model import FrameView, Provenance, SlotOrigin, ValueSummary

from . import highlight
from .lines_view import LinesView


class StackView(LinesView):
    """The value-stack slots of a frame, bottom first, each with its depth; the last is marked ``TOS`` and kept in
    sight (the pane scrolls to it), as the ``stack`` command lists them.

    NULL slots read ``NULL``; slots the engine cannot vouch for (a tracked depth rather than the real stack top)
    read ``?``; tensors show shape, dtype and device. At a return stop the value being returned is shown above.

    With `provenance` (`Engine.stack_provenance()` at this stop) each slot gets a line naming the instruction
    that pushed it (``← 41 BINARY_SUBSCR``) and, where it stands for something in Dynamo's code, a line saying
    what (``= output 0 of __compiled_fn_2 (FX node max_1)``).
    """

    COMPONENT_CLASSES = {"stack--tos", "stack--depth", "stack--empty", "stack--origin"}
    """
    | Class | Description |
    | :- | :- |
    | `stack--tos` | The ``TOS`` label. |
    | `stack--depth` | Slot depth numbers. |
    | `stack--empty` | The note shown for an empty stack or no frame. |
    | `stack--origin` | A slot's provenance line. |
    """

    frame: reactive[FrameView | None] = reactive(None, repaint=False)
    """The frame whose stack is shown; None when the program is not stopped in a frame."""
    return_value: reactive[ValueSummary | None] = reactive(None, repaint=False)
    """The value being returned, at a return stop."""
    provenance: reactive[Provenance | None] = reactive(None, repaint=False)
    """Who pushed each slot (shown when it covers exactly the frame's slots at its instruction)."""

    def show(self, frame: FrameView | None, provenance: Provenance | None,
             return_value: ValueSummary | None) -> None:
        """A new stop's frame, the provenance of its slots and its return value: one build, one repaint."""
        old = self.frame
        self.set_reactive(StackView.frame, frame)
        self.set_reactive(StackView.provenance, provenance)
        self.set_reactive(StackView.return_value, return_value)
        if old is None or frame is None or old.code.key != frame.code.key:
            self.reset_virtual_height()
        self._show(self._build())

    def watch_frame(self, old: FrameView | None, new: FrameView | None) -> None:
        if old is None or new is None or old.code.key != new.code.key:
            self.reset_virtual_height()
        self._show(self._build())

    def watch_return_value(self) -> None:
        self._show(self._build())

    def watch_provenance(self) -> None:
        self._show(self._build())

    def _show(self, lines: list[Text]) -> None:
        self.set_lines(lines)
        height = self.scrollable_content_region.height
        if height > 0:  # keep TOS (the last line) in sight
            top = max(0, len(lines) - height)
            if top != self.scroll_offset.y:
                self.scroll_to(y=top, animate=False, immediate=True, force=True)

    def on_resize(self) -> None:
        """A pane shown or resized (a lesson at 80×24 brings it to the front) keeps TOS in sight too."""
        self.call_after_refresh(lambda: self._show(self._build()))

    def _build(self) -> list[Text]:
        frame = self.frame
        empty = self.get_component_rich_style("stack--empty", partial=True)
        lines: list[Text] = []
        if self.return_value is not None:
            lines.append(Text("return ", empty) + highlight.value_text(self.return_value))
        if frame is None:
            return [*lines, Text("(not in a frame)", empty)]
        if not frame.stack:
            where = " below the pending call" if frame.below_call else " (depth from the code's flow)" \
                if frame.depth_from_flow else ""
            return [*lines, Text(f"(empty{where})", empty)]
        if len(frame.stack) == 1 and frame.stack[0].unknown:
            return [*lines, Text("(not known: this frame was not traced from its start, or it has unwound)", empty)]
        note = fmt.stack_note(frame)
        if note:
            lines.append(Text(f"({note})", empty))
        tos = self.get_component_rich_style("stack--tos", partial=True)
        depth_style = self.get_component_rich_style("stack--depth", partial=True)
        width = len(str(len(frame.stack) - 1))
        prov = self.provenance
        if prov is not None and (prov.index != frame.index or len(prov.slots) != len(frame.stack)):
            prov = None  # another stop's, or the modelled depth disagrees with the frame's: values only
        origin_style = self.get_component_rich_style("stack--origin", partial=True)
        for depth in range(len(frame.stack)):
            line = Text()
            line.append("TOS " if depth == len(frame.stack) - 1 else "    ", tos)
            line.append(f"[{depth:>{width}}] ", depth_style)
            line.append_text(highlight.value_text(frame.stack[depth]))
            lines.append(line)
            if prov is not None:
                slot = prov.slots[depth]
                lines.append(Text(" " * (width + 7) + origin_text(slot), origin_style))
                if slot.note:  # on lines of its own, wrapped: in a narrow pane it is the part worth the width
                    room = self.scrollable_content_region.width - 6
                    parts = textwrap.wrap(slot.note, room) if room >= 20 else [slot.note]
                    lines += [Text(("    = " if k == 0 else "      ") + part, origin_style)
                              for k, part in enumerate(parts)]
        return lines


def origin_text(slot: SlotOrigin) -> str:
    """A slot's provenance line: ``"← 41 BINARY_SUBSCR"``, the instruction that pushed it (the note, what it
    stands for in Dynamo's code, goes on the next line)."""
    if slot.index < 0:
        return f"← exception handler: {slot.argrepr}"
    return f"← {slot.index} {slot.opname}" + (f" {slot.argrepr}" if slot.argrepr else "")
