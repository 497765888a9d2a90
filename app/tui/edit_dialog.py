"""The edit dialog: change one instruction of the generated code, seeing the stack effect before it is installed.

Opened on the instruction under the bytecode cursor (``e`` edit, ``i`` insert before it, ``x`` delete it). The
input takes ``OPNAME [ARG]`` (``insert`` also ``OP [ARG]; OP [ARG]...``) and completes opcode names of the running
Python (`OpcodeSuggester`: names from the standard library's `dis.opmap`, no torch). Each change of the input is
parsed at once into an `EditOp` (`dynadbg.core.edits.parse_edit`, pure: a syntax error shows inline) and, after
`EditDialog.DEBOUNCE` seconds without typing, previewed by the engine on the program's thread (`PreviewWanted`:
the app calls `Engine.preview_edit` through its engine client and hands the answer to `EditDialog.show_preview`):
the value-stack depth before and after each row around the edit, the deepest the stack gets against
``co_stacksize``, every problem, and the diff against Dynamo's code.

Enter posts the same `EditOp` (`EditDialog.Apply`); the app installs it with `Engine.apply_edit`, which validates
it again. If it is rejected the reason shows in the dialog, nothing is installed and the dialog stays open; once it
is accepted the dialog closes (the log shows what was installed, the Diff view, key 6, the patch).
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import Input, Static

from dynadbg.core.model import EditError, EditOp, EditOutcome, EditPreview, EngineError, Instr, StackAnalysis
from dynadbg.core.edits import parse_edit

from . import highlight

#: Rows shown above and below the edited rows in the stack preview.
AROUND = 2
#: Opnames offered first (most edits use them); the rest follow alphabetically.
_COMMON = ("LOAD_FAST", "LOAD_CONST", "LOAD_GLOBAL", "LOAD_ATTR", "STORE_FAST", "POP_TOP", "NOP", "CALL",
           "RETURN_VALUE", "BINARY_OP", "COMPARE_OP", "COPY", "SWAP", "PUSH_NULL")
#: Never offered: not instructions one can write (`dynadbg.core.compat.EDIT_FORBIDDEN_OPNAMES` refuses them too).
_HIDDEN = frozenset({"CACHE", "EXTENDED_ARG", "INTERPRETER_EXIT"})


def opcode_names() -> list[str]:
    """The opnames of this Python an edit may use, common ones first (`dis.opmap`, real opcodes below 256)."""
    names = sorted(name for name, code in dis.opmap.items()
                   if code < 256 and not name.startswith("INSTRUMENTED_") and name not in _HIDDEN)
    common = [name for name in _COMMON if name in names]
    return common + [name for name in names if name not in common]


class OpcodeSuggester(SuggestFromList):
    """Completes the opname being typed: the whole value, or the part after the last ``;`` (``insert``).

    Matching ignores case and keeps the case typed (``load_f`` → ``load_fast``, ``LOAD_F`` → ``LOAD_FAST``);
    nothing is suggested once an argument is being typed.
    """

    def __init__(self, names: list[str] | None = None) -> None:
        super().__init__(names if names is not None else opcode_names(), case_sensitive=True)
        self.cache = None  # suggestions depend on the prefix before the last ";"

    async def get_suggestion(self, value: str) -> str | None:
        """`value` with the opname under the cursor completed, or None."""
        head, sep, segment = value.rpartition(";")
        lead = len(segment) - len(segment.lstrip())
        word = segment.lstrip()
        if not word or " " in word:
            return None
        found = await super().get_suggestion(word.upper())
        if found is None or found == word.upper():
            return None
        if word.islower():
            found = found.lower()  # keep the case being typed (the engine reads opnames in any case)
        return f"{head}{sep}{segment[:lead]}{found}"


def argument_text(instr: Instr) -> str:
    """An instruction as the edit command takes it: ``OPNAME [ARG]`` (a jump's argument is its target row)."""
    if instr.arg is None:
        return instr.opname
    if instr.jump_target is not None:
        return f"{instr.opname} {instr.jump_target}"
    if instr.argrepr:
        return f"{instr.opname} {instr.argrepr}"
    return f"{instr.opname} {instr.arg}"


@dataclass(frozen=True)
class _Edited:
    """The rows of the resulting listing that the edit put in (marked in the preview)."""

    first: int
    count: int


class EditDialog(ModalScreen[None]):
    """``edit``/``insert``/``delete`` one instruction, with a live stack-effect preview (see the module docstring).

    Args:
        kind: ``"edit"``, ``"insert"`` or ``"delete"``.
        instr: the instruction under the bytecode cursor.
        code_name: the code object's name, for the title.
        rows: how many instructions the listing has.

    | Key | Action |
    | :- | :- |
    | enter | Apply: install the edit (the engine validates it again). |
    | escape | Close without changing anything. |
    | right | Accept the opcode completion (at the end of the input). |
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("enter", "apply", "Apply", show=False),
    ]

    COMPONENT_CLASSES = {"edit--ok", "edit--error", "edit--dim", "edit--edited", "edit--added", "edit--removed"}
    """
    | Class | Description |
    | :- | :- |
    | `edit--ok` | The verdict line of a valid edit. |
    | `edit--error` | Why the edit is rejected; problem lines. |
    | `edit--dim` | Column headings, hints. |
    | `edit--edited` | The rows the edit puts in. |
    | `edit--added` / `edit--removed` | Diff lines. |
    """

    class Apply(Message):
        """The user pressed Enter: install `op` (`Engine.apply_edit`) and report back with `EditDialog.applied`."""

        def __init__(self, dialog: EditDialog, op: EditOp) -> None:
            self.dialog = dialog
            """The dialog waiting for the outcome."""
            self.op = op
            """The edit (``edit 9 LOAD_CONST 1``)."""
            super().__init__()

    class PreviewWanted(Message):
        """The input holds a valid edit: preview it (`Engine.preview_edit`) and answer with `show_preview`."""

        def __init__(self, dialog: EditDialog, text: str, op: EditOp) -> None:
            self.dialog = dialog
            """The dialog waiting for the preview."""
            self.text = text
            """The command argument it is made for."""
            self.op = op
            """The edit to preview."""
            super().__init__()

    DEBOUNCE: ClassVar[float] = 0.25
    """Seconds without typing before the engine is asked for a preview (0 in the tests)."""

    def __init__(self, kind: str, instr: Instr, code_name: str, rows: int) -> None:
        super().__init__()
        self.kind = kind
        """``"edit"``, ``"insert"`` or ``"delete"``."""
        self.instr = instr
        """The instruction the dialog was opened on."""
        self.code_name = code_name
        self.rows = rows
        self.pending: EditOp | None = None
        """The edit sent and not answered yet (the dialog waits for it to close)."""
        self.previewed: str | None = None
        """The argument text of the preview shown (None before the first one)."""
        self._timer: Timer | None = None
        self._outcome: Text | None = None
        self._last: tuple[str | None, EditPreview | EngineError | None] = (None, None)

    # Layout ----------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-box"):
            yield Static(self._current_text(), id="edit-current")
            if self.kind != "delete":
                value = argument_text(self.instr) if self.kind == "edit" else ""
                placeholder = ("OPNAME [ARG]   e.g. LOAD_CONST 1" if self.kind == "edit"
                               else "OPNAME [ARG][; OPNAME [ARG]...]   e.g. NOP")
                yield Input(value=value, placeholder=placeholder, suggester=OpcodeSuggester(), id="edit-input")
            yield Static("", id="edit-preview")
            yield Static(self._hint_text(), id="edit-hint")

    def on_mount(self) -> None:
        box = self.query_one("#edit-box")
        title = {"edit": f"edit row {self.instr.index}", "insert": f"insert before row {self.instr.index}",
                 "delete": f"delete row {self.instr.index}"}[self.kind]
        box.border_title = f"{title} of {self.code_name}"
        box.border_subtitle = "Enter applies · Esc cancels"
        if self.kind != "delete":
            field = self.query_one("#edit-input", Input)
            field.cursor_blink = False
            field.focus()
            # Selected, so typing replaces the pre-filled instruction (arrow keys keep it to change one part).
            self.call_after_refresh(field.select_all)
        self._request_preview()

    def _current_text(self) -> Text:
        text = Text("now  ", Style(dim=True))
        text.append(f"{self.instr.index:>4}  ")
        text.append(self.instr.opname, highlight.token_style(highlight.opname_token(self.instr.opname)))
        if self.instr.argrepr:
            text.append(" ")
            text.append_text(Text.assemble(*((s.text, s.style) for s in highlight.python_segments(self.instr.argrepr))))
        if self.instr.lineno is not None:
            text.append(f"   line {self.instr.lineno}", Style(dim=True))
        return text

    def _hint_text(self) -> Text:
        if self.kind == "delete":
            return Text("Enter deletes this instruction (the engine validates it first) · Esc cancels",
                        Style(dim=True))
        return Text("Typing replaces the selected instruction; ← or End keeps it to change a part (→ at the end "
                    "completes an opcode) · Enter applies (validated again, nothing is installed if it is rejected) "
                    "· Esc cancels", Style(dim=True))

    # The command -----------------------------------------------------------------------------------------------

    @property
    def argument(self) -> str:
        """The command's argument as typed: ``"9 LOAD_CONST 1"`` (``"9"`` for delete)."""
        if self.kind == "delete":
            return str(self.instr.index)
        text = self.query_one("#edit-input", Input).value.strip()
        return f"{self.instr.index} {text}".strip()

    @property
    def line(self) -> str:
        """The edit as a command line (what the log echoes when Enter applies it)."""
        return f"{self.kind} {self.argument}"

    def parsed(self) -> EditOp | EditError:
        """The edit as the engine will parse it (a syntax error is shown without asking the engine)."""
        return parse_edit(self.kind, self.argument)

    # Preview ---------------------------------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._outcome = None
        if self._timer is not None:
            self._timer.stop()
        op = self.parsed()
        if isinstance(op, EditError):
            self._show(op.message, None)
            return
        if self.DEBOUNCE <= 0:
            self.call_later(self._request_preview)
        else:
            self._timer = self.set_timer(self.DEBOUNCE, self._request_preview)

    def _request_preview(self) -> None:
        self._timer = None
        op = self.parsed()
        if isinstance(op, EditError):
            self._show(str(op), None)
            return
        self._preview(self.argument, op)

    def _preview(self, text: str, op: EditOp) -> None:
        """Ask for the engine's preview of `op` (the app makes the call, off the UI thread)."""
        self.post_message(self.PreviewWanted(self, text, op))

    def show_preview(self, text: str, preview: EditPreview | EngineError) -> None:
        """The engine's preview of the edit typed as `text` (ignored when the input changed since)."""
        if text != self.argument:
            return  # typed on since: a newer preview is on its way
        self.previewed = text
        self._show(None, preview)

    def _show(self, error: str | None, preview: EditPreview | EngineError | None) -> None:
        self._last = (error, preview)
        parts: list[RenderableType] = []
        if self._outcome is not None:
            parts.append(self._outcome)
        if error is not None:
            parts.append(Text(f"✗ {error}", self._style("edit--error")))
        elif isinstance(preview, EngineError):
            parts.append(Text(preview.message, self._style("edit--dim")))
        elif preview is not None:
            parts.extend(self._preview_parts(preview))
        self.query_one("#edit-preview", Static).update(Group(*parts))

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def _preview_parts(self, preview: EditPreview) -> list[RenderableType]:
        parts: list[RenderableType] = []
        if preview.error is None:
            parts.append(Text(f"✓ valid: {preview.op.text}", self._style("edit--ok")))
        else:
            parts.append(Text(f"✗ {preview.error}", self._style("edit--error")))
        if preview.analysis is not None:
            parts.extend(self._stack_parts(preview.analysis, self._edited(preview.op), preview.error))
        if preview.diff is not None and preview.diff.changed:
            parts.append(Text("diff against Dynamo's code", Style(bold=True)))
            changed = [k for k, line in enumerate(preview.diff.lines) if line.tag != " "]
            lo, hi = max(0, changed[0] - 1), min(len(preview.diff.lines), changed[-1] + 2)
            for line in preview.diff.lines[lo:hi][:10]:
                old = "" if line.old_index is None else str(line.old_index)
                new = "" if line.new_index is None else str(line.new_index)
                component = {"+": "edit--added", "-": "edit--removed"}.get(line.tag, "edit--dim")
                parts.append(Text(f"{line.tag} {old:>4} {new:>4}  {line.text}", self._style(component)))
        return parts

    def _edited(self, op: EditOp) -> _Edited:
        if op.kind == "insert":
            return _Edited(op.index, len(op.instrs))
        if op.kind == "edit":
            return _Edited(op.index, 1)
        return _Edited(op.index, 0)

    def _stack_parts(self, analysis: StackAnalysis, edited: _Edited,
                     shown: EditError | None) -> list[RenderableType]:
        """The value-stack depth before and after each row around the edit, the deepest point, the problems
        (`shown`, the verdict already printed, is not repeated)."""
        dim = self._style("edit--dim")
        first = max(0, edited.first - AROUND)
        last = min(len(analysis.rows), edited.first + max(edited.count, 1) + AROUND)
        parts: list[RenderableType] = [Text(f"  {'row':>4}  {'depth before':>12} → {'after':<6} instruction", dim)]
        problem_rows = {p.index for p in analysis.problems if p.index is not None}
        for row in analysis.rows[first:last]:
            mine = edited.first <= row.index < edited.first + edited.count
            mark = "▶" if mine else "✗" if row.index in problem_rows else " "
            if row.depth is None:
                depth = f"{'unreachable':>12}   {'':<6}"
            elif row.index in problem_rows and row.depth < row.needs:
                depth = f"{row.depth:>12} → {'✗':<6}"
            else:
                depth = f"{row.depth:>12} → {row.depth + row.effect:<6}"
            line = Text(f"{mark} {row.index:>4}  {depth} ",
                        self._style("edit--edited") if mine else
                        self._style("edit--error") if row.index in problem_rows else None)
            line.append(row.opname, highlight.token_style(highlight.opname_token(row.opname)))
            if row.argrepr:
                line.append(" " + row.argrepr)
            parts.append(line)
        if edited.count == 0:
            parts.append(Text(f"  (row {edited.first} was removed: the rows after it moved up)", dim))
        parts.append(Text(f"deepest {analysis.max_depth} of co_stacksize {analysis.stacksize}", dim))
        # the verdict names the same problem with its place in the edited code: the same kind at the same row
        others = [p for p in analysis.problems
                  if shown is None or (p.kind, p.index) != (shown.kind, shown.index)]
        for problem in others[:3]:
            parts.append(Text(f"✗ {problem}", self._style("edit--error")))
        if len(others) > 3:
            parts.append(Text(f"  … {len(others) - 3} more problems", dim))
        return parts

    # Apply -----------------------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_apply()

    def action_apply(self) -> None:
        """Apply the edit (once; Enter again while it is answered does nothing)."""
        if self.pending is not None:
            return
        op = self.parsed()
        if isinstance(op, EditError):
            self._show(str(op), None)
            return
        self.pending = op
        self.post_message(self.Apply(self, op))

    def applied(self, result: EditOutcome | EngineError) -> None:
        """The engine answered the edit sent: close on success; show the reason inline on rejection."""
        self.pending = None
        error = result.error if isinstance(result, EditOutcome) else result
        if error is not None:
            self._outcome = Text(f"not applied (nothing was installed): {error}", self._style("edit--error"))
            self._show(*self._last)
            return
        self.dismiss(None)

    def action_cancel(self) -> None:
        """Close without changing anything."""
        self.dismiss(None)
