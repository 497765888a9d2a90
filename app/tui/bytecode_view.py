"""The bytecode pane: a virtualised listing of one code object (Textual's Line API).

Only visible rows are rendered (`render_line`), and each row's styled segments are computed once per code object
and cached, so a step in a 2,000-instruction code object repaints a screenful of cached rows and nothing else.
"""

from __future__ import annotations


from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from dynadbg.core import format as fmt
from dynadbg.core.model import CodeRoles, CodeView, Instr

from . import highlight
from .lines_view import marked_cut
from .role_sections import Section, gutter_mark, gutter_style, sections

#: Widest opname column before names are allowed to push the argument right.
_OPNAME_WIDTH = 20
#: The gutter mark of the cursor's row, where it is not the current instruction's (``▶`` marks that one): the
#: cursor reads without colour too.
CURSOR_MARK = "›"
#: The gutter mark of a row an installed edit changes from the next call on (`BytecodeView.edited`).
EDITED_MARK = "✎"


class BytecodeView(ScrollView, can_focus=True):
    """A code object's instructions: gutter, index, offset, line, opname, argument, jump target.

    With `roles` (`Engine.roles()` of this code object) a third gutter column shows each instruction's role in
    Dynamo's code as a coloured letter (``G`` graph call, ``B`` graph break: `role_sections.ROLE_MARKS`), and a
    header row (``── call graph __compiled_fn_2 (3 inputs)``) opens each section (`role_sections.sections`);
    display rows then differ from instruction indexes (`row_of`).

    The gutter shows ``●`` on breakpoints, ``✎`` on rows an installed edit changes from the next call on and
    ``▶`` on the current instruction. The current instruction is kept in
    the middle half of the pane (re-centered when it leaves it). A separate cursor (moved with the arrow keys or a
    click; ``›`` in the gutter of its row, which is also highlighted) picks the instruction that ``b``/``F9`` and
    ``until`` act on; it jumps to the current instruction at every stop, and stays marked (dimmer) while another
    widget has the focus, so its index can be read while a command is typed. Clicking the gutter toggles that row's
    breakpoint.

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
        "bytecode--header",
        "bytecode--related",
    }
    """
    | Class | Description |
    | :- | :- |
    | `bytecode--current` | The row about to run. |
    | `bytecode--cursor` | The cursor row (dimmer while another widget, such as the console, has focus). |
    | `bytecode--breakpoint` | The ``●`` gutter mark. |
    | `bytecode--marker` | The ``▶`` gutter mark. |
    | `bytecode--header` | A role section's header row. |
    | `bytecode--related` | Rows related to another view's cursor (same user line). |
    """

    code: reactive[CodeView | None] = reactive(None, repaint=False)
    """The listing shown; None shows an empty pane. Setting a different code object resets the row cache."""
    current: reactive[int] = reactive(-1, repaint=False)
    """Index of the instruction about to run; -1 for none (an original-bytecode listing)."""
    breakpoints: reactive[frozenset[int]] = reactive(frozenset(), repaint=False)
    """Instruction indexes that carry a breakpoint."""
    cursor: reactive[int] = reactive(0, repaint=False)
    """Index of the cursor row."""
    related: reactive[frozenset[int]] = reactive(frozenset(), repaint=False)
    """Instruction indexes related to the cursor of another view (the original rows of the generated code's
    cursor line), marked ``▷``."""
    edited: reactive[frozenset[int]] = reactive(frozenset(), repaint=False)
    """Instruction indexes an installed edit changes from the next call on (this call still runs them as
    listed), marked ``✎`` where no breakpoint is."""
    roles: reactive[CodeRoles | None] = reactive(None, repaint=False)
    """The roles of the listing's instructions (role gutter and section headers); ignored unless they cover
    exactly the listing's instructions."""

    class CursorMoved(Message):
        """The cursor moved to another instruction (the Explain pane and the synced views follow it)."""

        def __init__(self, view: BytecodeView, index: int) -> None:
            self.view = view
            """The pane."""
            self.index = index
            """Instruction index under the cursor."""
            super().__init__()

        @property
        def control(self) -> BytecodeView:
            """The pane."""
            return self.view

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
        self._styles: tuple[Style, Style, Style, Style, Style, Style, Style] | None = None
        self._sections: tuple[Section, ...] = ()
        self._display: list[int] | None = None
        """Display row → instruction index, or ``-1 - k`` for the header of section k; None: one row each."""
        self._row_of: list[int] = []
        self._width = 0

    # Data ------------------------------------------------------------------------------------------------------

    def show(self, code: CodeView | None, current: int = -1, breakpoints: frozenset[int] = frozenset(), *,
             roles: CodeRoles | None | object = ...) -> None:
        """Set listing, current instruction, breakpoints and (unless left out) roles together: one layout and one
        repaint of what changed."""
        if roles is not ... and roles is not self.roles:
            if self._same_code(self.code, code):
                self.roles = roles  # type: ignore[assignment]
            else:
                self.set_reactive(BytecodeView.roles, roles)  # the new listing's layout takes them
        self.code = code
        self.breakpoints = breakpoints
        self.current = current

    def roles_for(self, code: CodeView) -> CodeRoles | None:
        """The roles shown now if they are `code`'s (a stop that brought none keeps them), else None."""
        roles = self.roles
        return roles if roles is not None and roles.key == code.key else None

    @staticmethod
    def _same_code(old: CodeView | None, new: CodeView | None) -> bool:
        return old is new or (old is not None and new is not None and old.key == new.key and old == new)

    def watch_code(self, old: CodeView | None, new: CodeView | None) -> None:
        if self._same_code(old, new):
            return
        self._rows.clear()
        instructions = new.instructions if new is not None else ()
        if instructions:
            index_w = len(str(len(instructions) - 1))
            offset_w = len(str(max(i.offset for i in instructions)))
            line_w = max((len(str(i.lineno)) for i in instructions if i.lineno is not None), default=1)
            opname_w = min(_OPNAME_WIDTH, max(len(i.opname) for i in instructions))
            arg_w = max(len(fmt.arg_text(i)) for i in instructions)
        else:
            index_w = offset_w = line_w = opname_w = arg_w = 1
        self._widths = (index_w, offset_w, line_w, opname_w)
        jump_w = max((len(f"  → {i.jump_target}") for i in instructions if i.jump_target is not None), default=0)
        self._width = 2 + (index_w + 2) + (offset_w + 1) + (line_w + 1) + 3 + (opname_w + 1) + arg_w + jump_w
        self._lay_out()
        self.cursor = 0
        self.scroll_to(0, 0, animate=False, immediate=True, force=True)
        self.refresh()

    def _usable_roles(self) -> CodeRoles | None:
        roles, code = self.roles, self.code
        if roles is None or code is None or len(roles.roles) != len(code.instructions) or roles.key != code.key:
            return None
        return roles

    def _lay_out(self) -> None:
        """Display rows (instructions and section headers) and the virtual size, from the code and its roles."""
        count = len(self.code.instructions) if self.code is not None else 0
        roles = self._usable_roles()
        self._sections = sections(roles) if roles is not None else ()
        if self._sections:
            display: list[int] = []
            row_of = [0] * count
            for k, section in enumerate(self._sections):
                display.append(-1 - k)
                for index in range(section.start, section.end + 1):
                    row_of[index] = len(display)
                    display.append(index)
            self._display, self._row_of = display, row_of
            width = self._width + 2 + max(len(s.title) + 6 for s in self._sections)
        else:
            self._display, self._row_of = None, []
            width = self._width
        self.virtual_size = Size(width, len(self._display) if self._display is not None else count)

    def watch_roles(self, old: CodeRoles | None, new: CodeRoles | None) -> None:
        if old is new:
            return
        self._rows.clear()
        self._lay_out()
        self.refresh()
        if self.current >= 0:
            self.center_current(force=True)

    def row_of(self, index: int) -> int:
        """The display row of instruction `index` (rows and indexes differ once section headers show)."""
        if self._display is None or not 0 <= index < len(self._row_of):
            return index
        return self._row_of[index]

    def index_at(self, row: int) -> int | None:
        """The instruction shown on display row `row`; None for a header row or a row past the listing."""
        if self._display is None:
            count = len(self.code.instructions) if self.code is not None else 0
            return row if 0 <= row < count else None
        if not 0 <= row < len(self._display):
            return None
        index = self._display[row]
        return index if index >= 0 else None

    def _index_near(self, row: int) -> int:
        """The instruction on `row`, or on the first instruction row after it (a header row)."""
        index = self.index_at(row)
        if index is None and self._display is not None and 0 <= row < len(self._display):
            index = self.index_at(row + 1)
        return index if index is not None else row

    def section_of(self, index: int) -> Section | None:
        """The role section instruction `index` belongs to, when roles are shown."""
        for section in self._sections:
            if section.start <= index <= section.end:
                return section
        return None

    def refresh_index(self, index: int) -> None:
        """Repaint the row of instruction `index`."""
        if index >= 0:
            self.refresh_line(self.row_of(index))

    def watch_current(self, old: int, new: int) -> None:
        self.refresh_index(old)
        self.refresh_index(new)
        if new >= 0:
            self.cursor = new
            self.center_current()

    def watch_breakpoints(self, old: frozenset[int], new: frozenset[int]) -> None:
        for index in old ^ new:
            self.refresh_index(index)

    def watch_edited(self, old: frozenset[int], new: frozenset[int]) -> None:
        for index in old ^ new:
            self.refresh_index(index)

    def watch_related(self, old: frozenset[int], new: frozenset[int]) -> None:
        for index in old ^ new:
            self.refresh_index(index)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_index(old)
        self.refresh_index(new)
        if old != new:
            self.post_message(self.CursorMoved(self, new))

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
        row = self.row_of(self.current)
        if force or not top + margin <= row < top + height - margin:
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True, force=True)

    def _keep_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height
        top = self.scroll_offset.y
        row = self.row_of(self.cursor)
        # the header of the cursor's section stays in sight when the cursor is its first instruction
        first = row - 1 if self.index_at(row - 1) is None and row > 0 else row
        if first < top:
            self.scroll_to(y=first, animate=False, immediate=True, force=True)
        elif height > 0 and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True, force=True)

    def on_resize(self, event: events.Resize) -> None:
        if 0 <= self.cursor != self.current and self.code is not None and not self._center_pending:
            self._keep_cursor_visible()  # the cursor was moved away from the current instruction: it stays in sight
            return
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
        row = min(max(self.row_of(self.cursor) - top, 0), max(height - 1, 0))
        new_top = min(max(top + direction * page, 0), int(self.max_scroll_y))
        if new_top == top:
            rows = len(self._display) if self._display is not None else self.cursor + direction * page + 1
            target = min(max(self.row_of(self.cursor) + direction * page, 0), max(rows - 1, 0))
            self.cursor = self._index_near(target)
        else:
            self.scroll_to(y=new_top, animate=False, immediate=True, force=True)
            self.cursor = self._index_near(new_top + row)
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
        index = self.index_at(event.y + self.scroll_offset.y)
        if index is None:
            return
        if event.x + self.scroll_offset.x < 2:
            self.post_message(self.BreakpointToggled(self, index))
        else:
            self.cursor = index

    def on_focus(self) -> None:
        self.refresh_index(self.cursor)

    def on_blur(self) -> None:
        self.refresh_index(self.cursor)

    # Rendering -------------------------------------------------------------------------------------------------

    def _row(self, instr: Instr, previous: Instr | None) -> list[Segment]:
        index_w, offset_w, line_w, opname_w = self._widths
        new_line = instr.lineno is not None and (previous is None or previous.lineno != instr.lineno)
        lineno = str(instr.lineno) if new_line else ""
        segments = []
        roles = self._usable_roles()
        if roles is not None:
            role = roles.roles[instr.index].role
            segments.append(Segment(gutter_mark(role), gutter_style(role)))
        segments += [
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
            segments.extend(highlight.python_segments(fmt.arg_text(instr)))
        return segments

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _line_styles(self) -> tuple[Style, Style, Style, Style, Style, Style, Style]:
        """(base, current row, cursor row, breakpoint mark, current mark, header, related row), cached until the
        CSS changes."""
        if self._styles is None:
            base = self.rich_style
            style = self.get_component_rich_style
            self._styles = (
                base,
                base + style("bytecode--current", partial=True),
                base + style("bytecode--cursor", partial=True),
                style("bytecode--breakpoint", partial=True),
                style("bytecode--marker", partial=True),
                base + style("bytecode--header", partial=True),
                base + style("bytecode--related", partial=True),
            )
        return self._styles

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base, current_style, cursor_style, breakpoint_style, marker_style, header_style, related_style = \
            self._line_styles()
        code = self.code
        row = self.index_at(y + scroll_y)
        if row is None and self._display is not None and 0 <= y + scroll_y < len(self._display):
            section = self._sections[-1 - self._display[y + scroll_y]]
            segments = [Segment("  "), Segment("▌", gutter_style(section.role)),
                        Segment(_fit_header(section, width - 3), header_style)]
            return Strip(segments).crop_extend(scroll_x, scroll_x + width, base)
        if code is None or row is None:
            return Strip.blank(width, base)
        segments = self._rows.get(row)
        if segments is None:
            instr = code.instructions[row]
            previous = code.instructions[row - 1] if row else None
            segments = self._rows[row] = self._row(instr, previous)
        is_current = row == self.current
        is_related = not is_current and row in self.related
        is_cursor = row == self.cursor and not is_current
        gutter = [
            Segment("●" if row in self.breakpoints else EDITED_MARK if row in self.edited else " ", breakpoint_style),
            Segment("▶" if is_current else CURSOR_MARK if is_cursor else "▷" if is_related else " ", marker_style),
        ]
        line_style = base
        if is_current:
            line_style = current_style
        elif is_cursor:
            line_style = cursor_style
        elif is_related:
            line_style = related_style
        strip = Strip([*gutter, *segments])
        cut = strip.cell_length > scroll_x + width
        strip = strip.crop_extend(scroll_x, scroll_x + width, line_style)
        return (marked_cut(strip, width) if cut else strip).apply_style(line_style)


def _fit_header(section: Section, room: int) -> str:
    """A section's header row within `room` cells: ``── title ──``; too long, its short title (without the resume
    function's global, `Section.short_title`) is tried, then the title is cut with ``…`` (the row never runs off the
    pane)."""
    text = f" ── {section.title} ──"
    if room <= 0 or cell_len(text) <= room:
        return text
    title = section.short_title or section.title
    text = f" ── {title} ──"
    if cell_len(text) <= room:
        return text
    return f" ── {title[:max(4, room - 8)]}… ──"