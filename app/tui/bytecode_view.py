"""The bytecode pane: a virtualised listing of one code object (Textual's Line API).

Only visible rows are rendered (`render_line`), and each row's styled segments are computed once per code object
and cached, so a step in a 2,000-instruction code object repaints a screenful of cached rows and nothing else.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from dynadbg.core.model import CodeView, Instr

from . import highlight

#: Widest opname column before names are allowed to push the argument right.
_OPNAME_WIDTH = 20


class BytecodeView(ScrollView, can_focus=True):
    """A code object's instructions: gutter, index, offset, line, opname, argument, jump target.

    The gutter shows ``●`` on breakpoints and ``▶`` on the current instruction. The current instruction is kept in
    the middle half of the pane (re-centered when it leaves it). A separate cursor (moved with the arrow keys or a
    click) picks the instruction that ``b``/``F9`` and ``until`` act on; it jumps to the current instruction at
    every stop. Clicking the gutter toggles that row's breakpoint.

    | Key | Action |
    | :- | :- |
    | up / down | Move the cursor. |
    | pageup / pagedown | Move the cursor a page. |
    | home / end | First / last instruction. |
    | . | Back to the current instruction. |
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Cursor up", show=False),
        Binding("down", "cursor(1)", "Cursor down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("full_stop", "to_current", "Current", show=False),
    ]

    COMPONENT_CLASSES = {
        "bytecode--current",
        "bytecode--cursor",
        "bytecode--breakpoint",
        "bytecode--marker",
    }
    """
    | Class | Description |
    | :- | :- |
    | `bytecode--current` | The row about to run. |
    | `bytecode--cursor` | The cursor row, while the pane has focus. |
    | `bytecode--breakpoint` | The ``●`` gutter mark. |
    | `bytecode--marker` | The ``▶`` gutter mark. |
    """

    code: reactive[CodeView | None] = reactive(None, repaint=False)
    """The listing shown; None shows an empty pane. Setting a different code object resets the row cache."""
    current: reactive[int] = reactive(-1, repaint=False)
    """Index of the instruction about to run; -1 for none (an original-bytecode listing)."""
    breakpoints: reactive[frozenset[int]] = reactive(frozenset(), repaint=False)
    """Instruction indexes that carry a breakpoint."""
    cursor: reactive[int] = reactive(0, repaint=False)
    """Index of the cursor row."""

    class BreakpointToggled(Message):
        """The user clicked the gutter of a row: toggle its breakpoint."""

        def __init__(self, view: BytecodeView, index: int) -> None:
            self.view = view
            """The pane clicked."""
            self.index = index
            """Instruction index of the row."""
            super().__init__()

        @property
        def control(self) -> BytecodeView:
            """The pane clicked."""
            return self.view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: dict[int, list[Segment]] = {}
        self._widths = (1, 1, 1, 1)
        self._center_pending = False
        self._styles: tuple[Style, Style, Style, Style, Style] | None = None

    # Data ------------------------------------------------------------------------------------------------------

    def show(self, code: CodeView | None, current: int = -1, breakpoints: frozenset[int] = frozenset()) -> None:
        """Set listing, current instruction and breakpoints together (one repaint of what changed)."""
        self.code = code
        self.breakpoints = breakpoints
        self.current = current

    def watch_code(self, old: CodeView | None, new: CodeView | None) -> None:
        if old is new or (old is not None and new is not None and old.key == new.key and old == new):
            return
        self._rows.clear()
        instructions = new.instructions if new is not None else ()
        if instructions:
            index_w = len(str(len(instructions) - 1))
            offset_w = len(str(max(i.offset for i in instructions)))
            line_w = max((len(str(i.lineno)) for i in instructions if i.lineno is not None), default=1)
            opname_w = min(_OPNAME_WIDTH, max(len(i.opname) for i in instructions))
            arg_w = max(len(arg_text(i)) for i in instructions)
        else:
            index_w = offset_w = line_w = opname_w = arg_w = 1
        self._widths = (index_w, offset_w, line_w, opname_w)
        jump_w = max((len(f"  → {i.jump_target}") for i in instructions if i.jump_target is not None), default=0)
        width = 2 + (index_w + 2) + (offset_w + 1) + (line_w + 1) + 3 + (opname_w + 1) + arg_w + jump_w
        self.virtual_size = Size(width, len(instructions))
        self.cursor = 0
        self.scroll_to(0, 0, animate=False, immediate=True, force=True)
        self.refresh()

    def watch_current(self, old: int, new: int) -> None:
        self.refresh_line(old)
        self.refresh_line(new)
        if new >= 0:
            self.cursor = new
            self.center_current()

    def watch_breakpoints(self, old: frozenset[int], new: frozenset[int]) -> None:
        for index in old ^ new:
            self.refresh_line(index)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_line(old)
        self.refresh_line(new)

    def validate_cursor(self, cursor: int) -> int:
        count = len(self.code.instructions) if self.code is not None else 0
        return max(0, min(cursor, count - 1)) if count else 0

    @property
    def cursor_instruction(self) -> Instr | None:
        """The instruction under the cursor, or None when the pane is empty."""
        if self.code is None or not self.code.instructions:
            return None
        return self.code.instructions[self.cursor]

    # Scrolling -------------------------------------------------------------------------------------------------

    def center_current(self, *, force: bool = False) -> None:
        """Keep the current instruction in the middle half of the pane, re-centering it when it leaves.

        Steps inside the middle half repaint two rows instead of scrolling the whole pane.

        Args:
            force: center even if the current instruction is already in the middle half.
        """
        if self.current < 0:
            return
        height = self.scrollable_content_region.height
        if height <= 0:  # hidden or not laid out yet: `on_resize` centers once it has a size
            self._center_pending = True
            return
        self._center_pending = False
        top = self.scroll_offset.y
        margin = height // 4
        if force or not top + margin <= self.current < top + height - margin:
            self.scroll_to(y=max(0, self.current - height // 2), animate=False, immediate=True, force=True)

    def _keep_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True, force=True)
        elif height > 0 and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True, force=True)

    def on_resize(self, event: events.Resize) -> None:
        if self._center_pending or self.current >= 0:
            self.center_current(force=True)

    def action_cursor(self, delta: int) -> None:
        self.cursor += delta
        self._keep_cursor_visible()

    def action_page(self, direction: int) -> None:
        # The view turns a whole page at once and the cursor keeps its row on screen, as in an editor; at either
        # end the cursor goes to the first / last instruction.
        height = self.scrollable_content_region.height
        page = max(1, height - 1)
        top = self.scroll_offset.y
        row = min(max(self.cursor - top, 0), max(height - 1, 0))
        new_top = min(max(top + direction * page, 0), int(self.max_scroll_y))
        if new_top == top:
            self.cursor += direction * page
        else:
            self.scroll_to(y=new_top, animate=False, immediate=True, force=True)
            self.cursor = new_top + row
        self._keep_cursor_visible()

    def action_cursor_to(self, index: int) -> None:
        count = len(self.code.instructions) if self.code is not None else 0
        self.cursor = index if index >= 0 else count - 1
        self._keep_cursor_visible()

    def action_to_current(self) -> None:
        if self.current >= 0:
            self.cursor = self.current
            self.center_current(force=True)

    def on_click(self, event: events.Click) -> None:
        if self.code is None:
            return
        row = event.y + self.scroll_offset.y
        if not 0 <= row < len(self.code.instructions):
            return
        if event.x + self.scroll_offset.x < 2:
            self.post_message(self.BreakpointToggled(self, row))
        else:
            self.cursor = row

    def on_focus(self) -> None:
        self.refresh_line(self.cursor)

    def on_blur(self) -> None:
        self.refresh_line(self.cursor)

    # Rendering -------------------------------------------------------------------------------------------------

    def _row(self, instr: Instr, previous: Instr | None) -> list[Segment]:
        index_w, offset_w, line_w, opname_w = self._widths
        new_line = instr.lineno is not None and (previous is None or previous.lineno != instr.lineno)
        lineno = str(instr.lineno) if new_line else ""
        segments = [
            Segment(f" {instr.index:>{index_w}} ", highlight.plain(highlight.INDEX)),
            Segment(f"{instr.offset:>{offset_w}} ", highlight.plain(highlight.OFFSET)),
            Segment(f"{lineno:>{line_w}} ", highlight.plain(highlight.LINENO)),
            Segment(">> " if instr.is_jump_target else "   ", highlight.plain(highlight.MARK)),
            Segment(f"{instr.opname:<{opname_w}} ", highlight.token_style(highlight.opname_token(instr.opname))),
        ]
        if instr.jump_target is not None:
            segments.append(Segment(instr.argrepr, highlight.plain(highlight.OFFSET)))
            segments.append(Segment(f"  → {instr.jump_target}", highlight.plain(highlight.JUMP)))
        else:
            segments.extend(highlight.python_segments(arg_text(instr)))
        return segments

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _line_styles(self) -> tuple[Style, Style, Style, Style, Style]:
        """(base, current row, cursor row, breakpoint mark, current mark), cached until the CSS changes."""
        if self._styles is None:
            base = self.rich_style
            style = self.get_component_rich_style
            self._styles = (
                base,
                base + style("bytecode--current", partial=True),
                base + style("bytecode--cursor", partial=True),
                style("bytecode--breakpoint", partial=True),
                style("bytecode--marker", partial=True),
            )
        return self._styles

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = y + scroll_y
        width = self.scrollable_content_region.width
        base, current_style, cursor_style, breakpoint_style, marker_style = self._line_styles()
        code = self.code
        if code is None or not 0 <= row < len(code.instructions):
            return Strip.blank(width, base)
        segments = self._rows.get(row)
        if segments is None:
            instr = code.instructions[row]
            previous = code.instructions[row - 1] if row else None
            segments = self._rows[row] = self._row(instr, previous)
        is_current = row == self.current
        gutter = [
            Segment("●" if row in self.breakpoints else " ", breakpoint_style),
            Segment("▶" if is_current else " ", marker_style),
        ]
        line_style = base
        if is_current:
            line_style = current_style
        elif row == self.cursor and self.has_focus:
            line_style = cursor_style
        return Strip([*gutter, *segments]).crop_extend(scroll_x, scroll_x + width, line_style).apply_style(line_style)


def arg_text(instr: Instr) -> str:
    """The argument column: `dis`'s readable argument, else the raw oparg (``COPY 1``, ``CALL 2``)."""
    if instr.argrepr:
        return instr.argrepr
    return "" if instr.arg is None else str(instr.arg)
