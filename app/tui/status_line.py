"""The status line: what the program is doing — stopped where and why, running, compiling, or ended."""

from __future__ import annotations

import os
from collections.abc import Callable

from rich.style import Style
from rich.text import Span, Text
from textual.reactive import reactive
from textual.widgets import Static

from dynadbg.core.format import entry_position_text
from dynadbg.core.format.trace import status_line as trace_status
from dynadbg.core.model import Stop
from dynadbg.core.runner import ExitResult


class StatusLine(Static):
    """One line: stop kind, code name, compile id, entry i of n, instruction and source line.

    While the program runs it reads ``running…`` (or ``compiling f…``); after the program ended, its exit status.
    """

    COMPONENT_CLASSES = {"status--kind", "status--dim", "status--error", "status--history"}
    """
    | Class | Description |
    | :- | :- |
    | `status--kind` | The stop kind / state label. |
    | `status--history` | The ``HISTORY k/N`` label of a recorded stop (`back`). |
    | `status--dim` | Separators and secondary fields. |
    | `status--error` | An exception or a failing exit status. |
    """

    stop: reactive[Stop | None] = reactive(None)
    """The stop the program is paused on, or None."""
    activity: reactive[str | None] = reactive("starting")
    """What the running program is doing (``"running"``, ``"compiling f"``); None while stopped."""
    exit_result: reactive[ExitResult | None] = reactive(None)
    """How the program ended; set once it did."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.interrupt_key = "Ctrl+C"
        """How the interrupt key is shown (the app sets it from the keymap)."""
        self.quit_key = "q"
        """How the quit key is shown (the app sets it from the keymap)."""
        self.forward_key = "]"
        """How the key of `forward` (history) is shown (the app sets it from the keymap)."""
        self.stderr_key = "8"
        """How the key of the Stderr view is shown (the app sets it from the keymap)."""
        self.stderr_lines = 0
        """Lines the program wrote to stderr so far (they are in the Stderr view, key 8)."""
        self.aliases: dict[str, str] = {}
        """A resume function's code name → its global name (``__resume_at_196_3``), shown beside it."""
        self._styles: tuple[Style, ...] | None = None
        self._after_render: Callable[[], None] | None = None

    def after_render(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the UI thread, as a message of this widget's) once the line has been rendered with
        what it holds now, i.e. once the frame that carries it is being written to the terminal.

        A step's stop goes out in two frames: this line first, the panes after (`DebuggerApp.on_bridge_stopped`).
        Textual's `call_after_refresh` cannot order them: it runs at the screen's next idle moment, which can
        come before this line's refresh has reached the screen, so the panes' update would be painted in the
        same, slower frame. A callback set again before the render replaces the one waiting.
        """
        self._after_render = callback

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _stderr_part(self, dim: Style, short: bool = False) -> Text | None:
        if not self.stderr_lines:
            return None
        lines = "line" if self.stderr_lines == 1 else "lines"
        text = (f"stderr {self.stderr_lines} (view {self.stderr_key})" if short
                else f"stderr: {self.stderr_lines} {lines} (view {self.stderr_key})")
        return Text.assemble((" · ", dim), (text, "bold"))

    def render(self) -> Text:
        """The status line, fitted to the width: when it does not fit, the least needed fields go first (the
        stop's message, the entry's lookup position, the frame count, the file and line); the state, the code
        name, the compile id, the instruction and the stderr count are never dropped (a long code name is cut
        short instead)."""
        if self._styles is None:
            self._styles = tuple(self.get_component_rich_style(f"status--{name}", partial=True)
                                 for name in ("kind", "dim", "error", "history"))
        kind_style, dim, error, history = self._styles
        #: (text, priority): lower numbers are kept longer; 0 is never dropped
        parts: list[tuple[Text, int]] = []
        result = self.exit_result
        if result is not None:
            head = " ■ program ended (quit) " if result.quit else f" ■ program exited with status {result.status} "
            parts.append((Text(head, kind_style), 0))
            if result.exception:
                parts.append((Text.assemble(" ", (result.exception, error)), 1))
            parts.append((Text(f"  · {self.quit_key} to leave", dim), 0))
        elif self.activity is not None or self.stop is None:
            parts.append((Text(f" ▶ {self.activity or 'starting'}… ", kind_style), 0))
            parts.append((Text(f"  · {self.interrupt_key} to interrupt", dim), 1))
        else:
            parts.extend(self._stop_parts(self.stop, kind_style, dim, error, history))
        if self._after_render is not None:
            callback, self._after_render = self._after_render, None
            self.call_later(callback)  # after the frame being composed now was written
        stderr = self._stderr_part(dim)
        if stderr is not None:
            width = self.size.width
            if width > 0 and sum(p.cell_len for p, priority in parts if priority == 0) + stderr.cell_len > width:
                stderr = self._stderr_part(dim, short=True)  # the short form before the code name is cut
            # after the stop's fields, before its message (the message is the first thing dropped)
            at = next((k for k, (_, priority) in enumerate(parts) if priority >= 9), len(parts))
            parts.insert(at, (stderr, 0))
        return _fit(parts, self.size.width)

    def _stop_parts(self, stop: Stop, kind_style: Style, dim: Style, error: Style,
                    history: Style) -> list[tuple[Text, int]]:
        parts: list[tuple[Text, int]] = []
        if stop.trace is not None:
            # inside Dynamo's tracing: where Dynamo is (compile, attempt, depth, line, step, graph and guards so far)
            parts.append((Text(f" ⏸ {stop.kind.value} ", kind_style), 0))
            head = Text(" " + trace_status(stop.trace), history if stop.trace.mark is not None else "")
            head.spans.append(Span(0, 0, _HEAD))
            parts.append((head, 0))
            if stop.message:
                parts.append((Text.assemble(("  — ", dim), (stop.message, dim)), 10))
            return parts
        if stop.history is not None:
            # a recorded stop: said first, so its values are never read as the live ones; how to leave it, said
            # before the fields a narrow terminal drops
            parts.append((Text(f" ⏮ HISTORY {stop.history.position}/{stop.history.total} ", history), 0))
            parts.append((Text(f" {self.forward_key} later · any step: back to the present ", dim), 0))
        parts.append((Text(f" ⏸ {stop.kind.value} ", kind_style), 0))
        frame = stop.selected_frame
        fields: list[tuple[str, int]] = []
        if frame is not None:
            alias = self.aliases.get(frame.code.name)
            fields.append((frame.code.name + (f" (= {alias})" if alias else ""), 0))
        # after u: the selected caller's own compile (its code says which); the lookup position is the newest's
        newest = frame is None or frame is stop.frame
        compile_id = stop.compile_id if newest else (frame.code.compile_id or stop.compile_id)
        if compile_id:
            # never dropped: at a stop in a resume function (a long code name) it says which compile made this code
            fields.append((f"compile {compile_id}", 0))
        if newest and stop.entry_index is not None and stop.entry_count is not None:
            # torch's lookup order (most recently used first): the Entries view names entries by compile id
            fields.append((entry_position_text(stop.entry_index, stop.entry_count), 8))
        if frame is not None:
            if frame.index >= 0:
                fields.append((f"instr {frame.index}/{len(frame.code.instructions)}", 0))
            if frame.lineno is not None:
                fields.append((f"{os.path.basename(frame.code.filename)}:{frame.lineno}", 6))
        if len(stop.frames) > 1:
            position = stop.selected + 1 if 0 <= stop.selected < len(stop.frames) else len(stop.frames)
            fields.append((f"frame {position} of {len(stop.frames)}", 7))
        for i, (field, priority) in enumerate(fields):
            part = Text.assemble((" · " if i else "", dim), field)
            if i == 0 and frame is not None:
                part.spans.append(Span(0, 0, _NAME))  # the part `_fit` may cut short
            parts.append((part, priority))
        if stop.history is None and stop.exception:
            parts.append((Text.assemble("  ", (stop.exception, error)), 9))
        elif stop.history is None and stop.message and stop.message != stop.kind.value:
            parts.append((Text.assemble(("  — ", dim), (stop.message, dim)), 10))
        return parts


#: An empty style that marks the code-name field (the part `_fit` cuts short when nothing else can go: in the
#: middle, so both ends of ``torch_dynamo_resume_in_normalise_at_8`` stay).
_NAME = Style(meta={"status": "name"})
#: The same for the trace stop's head (cut at its end: it reads left to right, compile id first).
_HEAD = Style(meta={"status": "head"})


def _fit(parts: list[tuple[Text, int]], width: int) -> Text:
    """Join `parts` within `width` cells: drop the parts of the highest priority number first (never those of
    priority 0), then cut the line short with an ellipsis."""
    kept = list(parts)
    if width > 0:
        while sum(p.cell_len for p, _ in kept) > width:
            droppable = [k for k, (_, priority) in enumerate(kept) if priority > 0]
            if not droppable:
                break
            # the highest number goes first; among equals, the last one shown
            drop = max(droppable, key=lambda k: (kept[k][1], k))
            del kept[drop]
    over = sum(p.cell_len for p, _ in kept) - width if width > 0 else 0
    if over > 0:
        # still too wide: cut the code name (the first field after the state) short, not the fields after it
        k = next((k for k, (p, _) in enumerate(kept) if any(span.style in (_NAME, _HEAD) for span in p.spans)), None)
        if k is not None:
            part, priority = kept[k]
            is_name = any(span.style == _NAME for span in part.spans)
            alias = part.plain.find(" (= ")
            if alias > 0 and is_name:
                # the resume function's global goes first (the Stop view's frames list keeps it)
                over -= part.cell_len - alias
                part = part[:alias]
                kept[k] = (part, priority)
            keep = max(8, part.cell_len - over)
            if over <= 0:
                pass
            elif is_name and len(part.plain) == part.cell_len:
                head = (keep - 1) // 2
                kept[k] = (part[:head] + Text("…") + part[len(part) - (keep - 1 - head):], priority)
            else:
                part.truncate(keep, overflow="ellipsis")
    text = Text(no_wrap=True, overflow="ellipsis")
    for part, _ in kept:
        text.append_text(part)
    if width > 0 and text.cell_len > width:
        text.truncate(width, overflow="ellipsis")
    return text
