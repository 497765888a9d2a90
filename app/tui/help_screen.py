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
        keys = Table(box=None, show_header=True, header_style="bold", expand=False, pad_edge=False)
        keys.add_column("keys", no_wrap=True)
        keys.add_column("action", no_wrap=True)
        keys.add_column("what it does")
        keys.add_column("sends", no_wrap=True, style="dim")
        group = None
        for action in actions.ACTIONS:
            if action.group != group:
                group = action.group
                keys.add_row(Text(group, style="bold underline"), "", "", "")
            keys.add_row(
                Text(actions.display_keys(self._keys[action.id]), style="bold"),
                action.id,
                action.description,
                action.command or "",
            )
        language = Table(box=None, show_header=False, pad_edge=False)
        language.add_column(no_wrap=True, style="bold")
        language.add_column()
        for syntax, meaning in COMMANDS:
            language.add_row(syntax, meaning)
        body = Group(
            Text("Keys", style="bold reverse"),
            keys,
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
