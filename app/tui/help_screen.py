"""The help screen: every action of the registry with its current keys, and the console's command language."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from . import actions

#: The console's command language, one (syntax, meaning) pair per command (DESIGN.md).
COMMANDS: tuple[tuple[str, str], ...] = (
    ("s [N] / n [N]", "step into / step over N instructions"),
    ("r / c", "run to this frame's return / continue"),
    ("until IDX", "run until instruction IDX"),
    ("b [IDX] [if EXPR] / cl IDX", "list or set a breakpoint / clear one"),
    ("bt / u / d", "frames: backtrace, up, down"),
    ("l / ll / src / orig", "listing, long listing, source, original bytecode"),
    ("stack / locals / p EXPR / !STMT", "inspect and evaluate in the selected frame"),
    ("guards [fail] / whatif", "guard tree (failing only) / every entry's guards for this call"),
    ("entries / compiles / graph [NAME]", "cache entries, compiled frames, FX graph"),
    ("why [ID] / diff [OLD NEW]", "why this code recompiled / guard diffs between its entries"),
    ("recompile / eager / skip", "at a recompile stop: compile again / run this call eagerly / stop compiling"),
    ("drop [ID...] / dynamic NAME DIM", "at a recompile stop: drop failing guards / mark a dim dynamic, recompile"),
    ("edit IDX OP [ARG] / insert / delete IDX", "change the generated code (validated before it is installed)"),
    ("patch show|list|save F|load F|undo", "the instruction edits: diff, patch files, undo"),
    ("guard add EXPR|drop ID|export|undo", "edit this entry's guards; export a guard_filter_fn"),
    ("break-on KIND on|off", "KIND: compile, entry, recompile, graph-break, exception"),
    ("h / q", "engine help / end the program"),
)


class HelpScreen(ModalScreen[None]):
    """Keys (from the action registry, after the keymap) and the command language. Escape, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help", show=False),
    ]

    def __init__(self, keymap: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._keys = actions.effective_keys(keymap)

    def compose(self) -> ComposeResult:
        sections = []
        for group in dict.fromkeys(action.group for action in actions.ACTIONS):
            table = Table(box=None, show_header=False, pad_edge=False, title=group, title_justify="left",
                          title_style="bold underline", expand=False)
            table.add_column(width=12, no_wrap=True, style="bold")
            table.add_column(width=15, no_wrap=True)
            table.add_column(width=max(len(a.description) for a in actions.ACTIONS))
            table.add_column(width=18, no_wrap=True, style="dim")
            for action in actions.ACTIONS:
                if action.group == group:
                    table.add_row(Text(actions.display_keys(self._keys[action.id])), Text(action.id),
                                  Text(action.description), Text(action.command or ""))
            sections.append(table)
        language = Table(box=None, show_header=False, pad_edge=False)
        language.add_column(no_wrap=True, style="bold")
        language.add_column()
        for syntax, meaning in COMMANDS:
            language.add_row(Text(syntax), Text(meaning))
        body = Group(
            Text("Keys  (key · action id · what it does · command it sends)", style="bold reverse"),
            *sections,
            Text(""),
            Text("Console commands (press : to type one)", style="bold reverse"),
            language,
            Text(""),
            Text("Escape closes this help. Ctrl+P opens the command palette. Keys are remappable: see "
                 "dynadbg.tui.actions (DYNADBG_KEYMAP).", style="dim"),
        )
        with VerticalScroll(id="help-body"):
            yield Static(body)

    def on_mount(self) -> None:
        self.query_one("#help-body").border_title = "dynadbg help"
