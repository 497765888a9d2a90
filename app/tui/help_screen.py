"""The help screen: every action of the registry with its current keys, the key to the role gutter, and the
console's command language."""

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

from dynadbg.core import commands
from dynadbg.core.explain import ROLE_HELP
from dynadbg.core.model import Role

from . import actions
from .role_sections import gutter_mark, gutter_style

#: Keys every pane understands (Textual's own focus, scroll and tree keys, and the panes' bindings).
PANE_KEYS: tuple[tuple[str, str], ...] = (
    ("Tab / Shift+Tab", "Focus the next / previous pane (bytecode or the open view, source, value stack, "
                        "locals, watches, guards, console log, console input, view tabs)"),
    ("Up / Down, PageUp / PageDown", "Move the cursor / scroll a line or a page (Home / End: first / last)"),
    ("Left / Right (view tabs)", "Switch view when the tab row has the focus"),
    ("Enter / Space (guards)", "Expand or collapse a guard manager; on a leaf guard: its detail"),
    (". (bytecode, source)", "Back to the current instruction / line"),
    ("Up / Down (source, Graph view)", "Move the source cursor / go to the previous or next FX node line: the "
                                       "bytecode, Original, source and Graph views mark that user line"),
    ("Escape", "Restore a maximised pane; leave the console input"),
)

#: What the help says about lessons when none is open (`dynadbg learn` adds its own keys, `DebuggerApp.lesson_keys`).
LESSON_KEYS: tuple[tuple[str, str], ...] = (
    ("F8", "Skip the lesson's step (`lesson skip` in the console)"),
    ("lesson (console)", "Show the step again; a wrong move shows the step's next hint"),
    ("dynadbg learn", "Start the course from a shell (Ctrl+P lists the lessons)"),
)


def _role_legend() -> Table:
    """The key to the bytecode pane's role gutter: each role's coloured letter, its name, what it means."""
    legend = Table(box=None, show_header=False, pad_edge=False, title="Role gutter (bytecode pane)",
                   title_justify="left", title_style="bold underline", expand=False)
    legend.add_column(width=2, no_wrap=True)
    legend.add_column(width=16, no_wrap=True, style="bold")
    legend.add_column()
    for role in Role:
        if role is not Role.UNKNOWN:
            legend.add_row(Text(gutter_mark(role), gutter_style(role)), Text(role.value), Text(ROLE_HELP[role]))
    return legend


class HelpScreen(ModalScreen[None]):
    """Keys (from the action registry, after the keymap) and the command language. Escape, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help", show=False),
    ]

    def __init__(self, keymap: Mapping[str, str] | None = None,
                 lessons: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self._keys = actions.effective_keys(keymap)
        self._lessons = lessons or LESSON_KEYS

    def compose(self) -> ComposeResult:
        sections = []
        for group in dict.fromkeys(action.group for action in actions.ACTIONS):
            table = Table(box=None, show_header=False, pad_edge=False, title=group, title_justify="left",
                          title_style="bold underline", expand=True)  # every group's columns line up
            # keys and commands never wrap or shorten; the description wraps (an 80-column terminal keeps every
            # key readable), the action id (for keymaps) follows it, dimmed
            table.add_column(width=max(8, max(len(actions.display_keys(k)) for k in self._keys.values())),
                             no_wrap=True, style="bold")
            table.add_column(ratio=1)
            table.add_column(width=max(len(a.command or "") for a in actions.ACTIONS), no_wrap=True, style="dim")
            for action in actions.ACTIONS:
                if action.group == group:
                    what = Text(action.description)
                    what.append(f"  [{action.id}]", style="dim")
                    table.add_row(Text(actions.display_keys(self._keys[action.id])), what,
                                  Text(action.command or ""))
            sections.append(table)
        panes = Table(box=None, show_header=False, pad_edge=False, title="In a pane", title_justify="left",
                      title_style="bold underline", expand=False)
        panes.add_column(max_width=28, style="bold")
        panes.add_column(ratio=1)
        for keys, what in PANE_KEYS:
            panes.add_row(Text(keys), Text(what))
        sections.append(panes)
        course = Table(box=None, show_header=False, pad_edge=False, title="In a lesson (dynadbg learn)",
                       title_justify="left", title_style="bold underline", expand=False)
        course.add_column(max_width=28, style="bold")
        course.add_column(ratio=1)
        for keys, what in self._lessons:
            course.add_row(Text(keys), Text(what))
        sections.append(course)
        sections.append(_role_legend())
        language = Table(box=None, show_header=False, pad_edge=False)
        language.add_column()
        language.add_column(no_wrap=True, style="dim")
        for spec in commands.COMMANDS:  # the engine's one table of verbs: help lines and aliases
            language.add_row(Text(spec.help), Text(" ".join(spec.aliases)))
        body = Group(
            Text("Escape (or ? or q) closes this help; arrows and PgUp/PgDn scroll it.", style="bold"),
            Text("Keys  (key · what it does [action id] · the same as a console command)", style="bold reverse"),
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
