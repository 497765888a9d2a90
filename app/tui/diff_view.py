"""The Diff view: Dynamo's generated code against the edited code, one instruction a row, ``-``/``+`` coloured.

Filled from `Engine.patch_diff` (a `dynadbg.core.model.PatchDiff`, or the line saying why there is none). Only
the changed rows and `CONTEXT` rows around them are listed; longer unchanged runs fold into one ``⋯`` row.
"""

from __future__ import annotations

from rich.text import Text

from dynadbg.core.model import PatchDiff

from .lines_view import LinesView

#: Unchanged rows kept on each side of a change.
CONTEXT = 3


class DiffView(LinesView):
    """``tag  old-row  new-row  OPNAME argrepr`` lines; removed rows in the error colour, added ones in success.

    The border subtitle says how many rows were removed and added.
    """

    COMPONENT_CLASSES = {"diff--added", "diff--removed", "diff--same", "diff--fold", "diff--header"}
    """
    | Class | Description |
    | :- | :- |
    | `diff--added` | A row only the edited code has (``+``). |
    | `diff--removed` | A row only Dynamo's code has (``-``). |
    | `diff--same` | An unchanged row (context). |
    | `diff--fold` | The ``⋯ N unchanged rows`` line. |
    | `diff--header` | The heading line (which code, how many rows changed). |
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._source: PatchDiff | str = "instruction edits: shown when stopped (e edits an instruction)"

    def on_mount(self) -> None:
        self._render_source()

    def show(self, diff: PatchDiff | str) -> None:
        """Show a `PatchDiff`, or the line saying why there is none."""
        self._source = diff
        self._render_source()

    def _render_source(self) -> None:
        if not self.is_mounted:
            return
        data = self._source
        if isinstance(data, PatchDiff):
            self.set_lines(self._diff_lines(data))
            self.border_subtitle = (f"{data.name} · {data.removed} removed, {data.added} added" if data.changed
                                    else f"{data.name} · no edits")
        else:
            self.set_lines(self._text_lines(data))
            self.border_subtitle = ""

    def _style(self, component: str) -> object:
        return self.get_component_rich_style(component, partial=True)

    def _diff_lines(self, diff: PatchDiff) -> list[Text]:
        header = self._style("diff--header")
        if not diff.changed:
            return [Text(f"{diff.name}: no change from Dynamo's code (e edits the cursor's instruction)", header)]
        lines = [Text(f"--- {diff.name} (Dynamo)   +++ {diff.name} (edited)   "
                      f"{diff.removed} removed, {diff.added} added", header)]
        keep = [False] * len(diff.lines)
        for k, line in enumerate(diff.lines):
            if line.tag != " ":
                for m in range(max(0, k - CONTEXT), min(len(diff.lines), k + CONTEXT + 1)):
                    keep[m] = True
        old_w = max((len(str(d.old_index)) for d in diff.lines if d.old_index is not None), default=1)
        new_w = max((len(str(d.new_index)) for d in diff.lines if d.new_index is not None), default=1)
        folded = 0
        for k, line in enumerate(diff.lines):
            if not keep[k]:
                folded += 1
                continue
            if folded:
                lines.append(Text(f"  ⋯ {folded} unchanged row{'s' if folded != 1 else ''}", self._style("diff--fold")))
                folded = 0
            lines.append(self._row(line.tag, line.old_index, line.new_index, line.text, old_w, new_w))
        if folded:
            lines.append(Text(f"  ⋯ {folded} unchanged row{'s' if folded != 1 else ''}", self._style("diff--fold")))
        return lines

    def _row(self, tag: str, old: int | None, new: int | None, text: str, old_w: int, new_w: int) -> Text:
        component = {"+": "diff--added", "-": "diff--removed"}.get(tag, "diff--same")
        style = self._style(component)
        old_col = "" if old is None else str(old)
        new_col = "" if new is None else str(new)
        row = Text(f"{tag} {old_col:>{old_w}} {new_col:>{new_w}}  ", style)
        row.append(text, style)
        return row

    def _text_lines(self, text: str) -> list[Text]:
        return [Text(line, self._style("diff--same")) for line in (text or "(no output)").splitlines()]
