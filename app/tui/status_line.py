"""The status line: what the program is doing — stopped where and why, running, compiling, or ended."""

from __future__ import annotations

import os

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from dynadbg.core.format import entry_position_text
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
        self.stderr_lines = 0
        """Lines the program wrote to stderr so far (they are in the Stderr view, key 8)."""
        self.aliases: dict[str, str] = {}
        """A resume function's code name → its global name (``__resume_at_196_3``), shown beside it."""
        self._styles: tuple[Style, ...] | None = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def render(self) -> Text:
        if self._styles is None:
            self._styles = tuple(self.get_component_rich_style(f"status--{name}", partial=True)
                                 for name in ("kind", "dim", "error", "history"))
        kind_style, dim, error, history = self._styles
        text = Text(no_wrap=True, overflow="ellipsis")
        result = self.exit_result
        if result is not None:
            if result.quit:
                text.append(" ■ program ended (quit) ", kind_style)
            else:
                text.append(f" ■ program exited with status {result.status} ", kind_style)
            if result.exception:
                text.append(" ")
                text.append(result.exception, error)
            text.append(f"  · {self.quit_key} to leave", dim)
            if self.stderr_lines:
                text.append(f" · stderr {self.stderr_lines} (8)", dim)
            return text
        if self.activity is not None or self.stop is None:
            activity = self.activity or "starting"
            text.append(f" ▶ {activity}… ", kind_style)
            text.append(f"  · {self.interrupt_key} to interrupt", dim)
            if self.stderr_lines:
                text.append(f" · stderr {self.stderr_lines} (8)", dim)
            return text
        stop = self.stop
        if stop.history is not None:
            # a recorded stop: said first, so its values are never read as the live ones
            text.append(f" ⏮ HISTORY {stop.history.position}/{stop.history.total} ", history)
            # how to leave it, said before the fields a narrow terminal cuts off
            text.append(f" {self.forward_key} later · any step: back to the present ", dim)
        text.append(f" ⏸ {stop.kind.value} ", kind_style)
        frame = stop.selected_frame
        fields: list[str] = []
        if frame is not None:
            alias = self.aliases.get(frame.code.name)
            fields.append(frame.code.name + (f" (= {alias})" if alias else ""))
        # after u: the selected caller's own compile (its code says which); the lookup position is the newest's
        newest = frame is None or frame is stop.frame
        compile_id = stop.compile_id if newest else (frame.code.compile_id or stop.compile_id)
        if compile_id:
            fields.append(f"compile {compile_id}")
        if newest and stop.entry_index is not None and stop.entry_count is not None:
            # torch's lookup order (most recently used first): the Entries view names entries by compile id
            fields.append(entry_position_text(stop.entry_index, stop.entry_count))
        if frame is not None:
            if frame.index >= 0:
                fields.append(f"instr {frame.index}/{len(frame.code.instructions)}")
            if frame.lineno is not None:
                fields.append(f"{os.path.basename(frame.code.filename)}:{frame.lineno}")
        if len(stop.frames) > 1:
            position = stop.selected + 1 if 0 <= stop.selected < len(stop.frames) else len(stop.frames)
            fields.append(f"frame {position} of {len(stop.frames)}")
        for i, field in enumerate(fields):
            text.append(" · " if i else "", dim)
            text.append(field)
        if self.stderr_lines:
            text.append(" · ", dim)
            text.append(f"stderr {self.stderr_lines}", "bold")
        if stop.history is not None:
            pass  # how to leave it is said after the HISTORY label
        elif stop.exception:
            text.append("  ")
            text.append(stop.exception, error)
        elif stop.message and stop.message != stop.kind.value:
            text.append("  — ", dim)
            text.append(stop.message, dim)
        return text

