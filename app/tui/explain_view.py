"""The Explain pane: what the instruction under the bytecode cursor does, from `Engine.explain(index)`.

It sits below the bytecode pane (shown and hidden with the ``explain`` action) and follows the cursor: the opcode's
meaning in plain words on this Python, how other Pythons differ, its stack effect (with the live values when the
cursor is on the instruction about to run), and its role in Dynamo's code in a sentence (shown first).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from dynadbg.core.model import Explanation

from .output_view import OutputView
from .role_sections import gutter_style


def explanation_renderable(ex: Explanation, *, live: bool) -> RenderableType:
    """`ex` as styled text: a head line (index, opname, argument, role), then one labelled line per part (role
    sentence, stack effect, meaning, other Pythons).

    Args:
        ex: the engine's explanation.
        live: the stack effect shows the values at this stop (the cursor is on the current instruction).
    """
    head = Text()
    head.append(f"{ex.index} ", "bold")
    head.append(ex.opname, "bold")
    if ex.argrepr:
        head.append(f" {ex.argrepr}")
    if ex.role is not None:
        head.append("  ▌", gutter_style(ex.role.role))
        head.append(f"{ex.role.role.value}", "italic")
    parts: list[RenderableType] = [head]

    def labelled(label: str, body: str) -> None:
        line = Text()
        line.append(f"{label}: ", "bold dim")
        line.append(body)
        parts.append(line)

    # the role first: in a small pane it is what Dynamo's code is doing here, the part a reader came for
    if ex.role_sentence:
        labelled("role", ex.role_sentence)
    if ex.stack is not None:
        labelled("stack now" if live else "stack", ex.stack.text)
    labelled("what it does", ex.meaning)
    if ex.version_note:
        labelled("other Pythons", ex.version_note)
    return Group(*parts)


class ExplainView(OutputView):
    """The explanation of the bytecode cursor's instruction (or why there is none)."""

    def show_explanation(self, ex: Explanation | str | None, *, live: bool = False) -> None:
        """Show `ex`; a string shows as a note (an engine error, "not stopped"); None clears the pane."""
        if ex is None:
            self.content = Text("move the bytecode cursor to an instruction", style="dim")
        elif isinstance(ex, str):
            self.content = Text(ex, style="dim")
        else:
            self.content = explanation_renderable(ex, live=live)
        self.border_subtitle = "" if not isinstance(ex, Explanation) else f"instruction {ex.index}"
