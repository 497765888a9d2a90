"""The console: a scrolling log of command output and engine messages, and an input for the command language."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, RichLog

from dynadbg.core.commands import resolve_empty

#: Lines kept in the log.
MAX_LOG_LINES = 5000
#: Commands kept in the history.
MAX_HISTORY = 500
#: The input's placeholder while it has the focus (letters type a command) and while it has not (letters are keys).
PLACEHOLDER_TYPING = "command (h: commands, ?: keys, Esc: leave)"
PLACEHOLDER_KEYS = "letters act as keys on the panes now; press : to type a command here (?: keys)"


class ConsoleLog(RichLog):
    """The console's log. Read at its last line when its size changes (a pane zoomed with ``z`` and given back, the
    log brought to the front), it is at its last line after: a `RichLog` keeps its scroll offset, so a log grown and
    shrunk again showed older lines than the last answer."""

    _at_end = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._at_end = new_value >= self.max_scroll_y

    def on_resize(self, event: events.Resize) -> None:
        if self._at_end:
            self.call_after_refresh(self.scroll_end, animate=False)


class CommandInput(Input):
    """The console's command line. A digit typed on an empty line is the view key it names (``7``: the Recompile
    view), as after Esc: no command starts with a digit, and lessons say "key 7" while the learner is typing (a
    newcomer's ``8`` landed in the command line, and it took Esc, 8, then ``:`` to get back)."""

    async def _on_key(self, event: events.Key) -> None:
        if event.character is not None and event.character.isdigit() and not self.value:
            from . import actions

            keys = actions.effective_keys(getattr(self.app, "keymap", None))
            view = next((a for a in actions.ACTIONS if a.group == "Views"
                         and event.key in keys[a.id].split(",")), None)
            if view is not None:
                event.stop()
                event.prevent_default()
                await self.app.run_action(f"dbg({view.id!r})")
                return
        await super()._on_key(event)


class Console(Vertical):
    """A `RichLog` of output above an `Input` taking the command language (``s``, ``p x``, ``guards fail``, …).

    While the input has focus, letters type into it (the single-letter debugger keys are not priority bindings);
    Escape leaves it, Up/Down walk the history. Its cursor does not blink.

    | Key | Action |
    | :- | :- |
    | escape | Leave the input (the bytecode pane takes focus). |
    | up / down | Previous / next command in the history. |
    """

    BINDINGS = [
        Binding("escape", "leave", "Leave console", show=False),
        Binding("up", "history(-1)", "Previous command", show=False),
        Binding("down", "history(1)", "Next command", show=False),
    ]

    COMPONENT_CLASSES = {"console--echo", "console--error", "console--info", "console--output",
                         "console--program"}
    """
    | Class | Description |
    | :- | :- |
    | `console--echo` | The echoed command line. |
    | `console--error` | Error lines (a command failed; nothing changed). |
    | `console--info` | Engine info and warning lines. |
    | `console--output` | Command output. |
    | `console--program` | What the debugged program printed to stdout (its stderr has its own view). |
    """

    class Submitted(Message):
        """The user entered a command line."""

        def __init__(self, console: Console, line: str) -> None:
            self.console = console
            """The console it came from."""
            self.line = line
            """The command, stripped."""
            super().__init__()

        @property
        def control(self) -> Console:
            """The console it came from."""
            return self.console

    class StderrWritten(Message):
        """The program (or torch inside it) wrote to stderr: it goes to the Stderr view, not the console log."""

        def __init__(self, text: str) -> None:
            self.text = text
            """The text written, lines joined."""
            super().__init__()

    class Left(Message):
        """The user pressed Escape in the input: focus should go back to the panes."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._history: list[str] = []
        self._history_pos = 0
        self._later: list[str] = []
        self.step_on_first_empty = True
        """An empty line before any command is a step (pdb's first-prompt rule, as line mode has it); the course
        turns it off: a newcomer's Enter "to go on" stepped the program past what the step was about."""

    def compose(self) -> ComposeResult:
        yield ConsoleLog(id="log", max_lines=MAX_LOG_LINES, wrap=True, markup=False, highlight=False)
        command = CommandInput(id="command", placeholder=PLACEHOLDER_TYPING)
        command.cursor_blink = False  # a steady cursor: a blinking one draws the eye from the panes
        yield command

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self.input:
            self.input.placeholder = PLACEHOLDER_TYPING

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if event.widget is self.input:
            self.input.placeholder = PLACEHOLDER_KEYS  # letters act as keys now: say how to type again

    @property
    def log_widget(self) -> RichLog:
        """The output log."""
        return self.query_one("#log", RichLog)

    @property
    def input(self) -> Input:
        """The command input."""
        return self.query_one("#command", Input)

    # Writing ---------------------------------------------------------------------------------------------------

    def _write(self, text: str | Text, component: str) -> None:
        if self._later:
            self.flush_echo()  # a held echo goes first: the log stays in the order things happened
        style = self.get_component_rich_style(component, partial=True)
        log = self.log_widget
        region = log.scrollable_content_region.width
        if isinstance(text, str):
            # prose wraps at the pane's edge (RichLog would measure it against the app console's width)
            text = Text(text.rstrip("\n"), style)
            width = region
        else:
            # listings keep their rows whole: as wide as the widest row, scrolled sideways
            base = Text(style=style, no_wrap=True)
            base.append_text(text)
            text = base
            width = max([region, *(cell_len(row) for row in text.plain.splitlines())])
        log.write(text, width=width if region > 0 else None)

    def echo(self, line: str, *, later: bool = False) -> None:
        """Log a command as the user (or a key) issued it. `later`: held until `flush_echo` or the next line
        logged, whichever comes first (a step's echo waits for the frame after its status line: written at the
        keypress, it made the frame that carries the status line repaint the whole screen, 3.7 -> 33 ms)."""
        if later:
            self._later.append(line)
            return
        self._write(f"> {line}", "console--echo")

    def flush_echo(self) -> None:
        """Log the echoes `echo(later=True)` holds (none: nothing happens)."""
        held, self._later = self._later, []
        for line in held:
            self._write(f"> {line}", "console--echo")

    @property
    def echo_held(self) -> bool:
        """Whether an echo waits for `flush_echo`."""
        return bool(self._later)

    def output(self, text: str | Text) -> None:
        """Log a command's output."""
        if isinstance(text, str) and not text.strip():
            return
        self._write(text, "console--output")

    def info(self, text: str) -> None:
        """Log an engine info/warning line."""
        self._write(text, "console--info")

    def error(self, text: str) -> None:
        """Log an error line (shown in red)."""
        self._write(text, "console--error")

    def program(self, text: str) -> None:
        """Log what the debugged program printed to stdout (the app gathers it, in order with the stops)."""
        self._write(text, "console--program")

    # Input -----------------------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.value = ""
        # `:` is the key that starts typing: pressed again while typing (the narration's "press : first"), it
        # lands in the line; no command starts with it, so it is dropped rather than make `:lesson` unknown
        typed = event.value.strip()
        if typed.startswith(":"):
            typed = typed.lstrip(":").strip()
            if not typed:
                return  # only the key that starts typing: no command (an empty line would repeat the last one)
        if not typed and not self._history and not self.step_on_first_empty:
            self.info("an empty line repeats the last command, and none was typed yet: nothing ran")
            return
        # pdb's empty-line rule, as line mode has it: the last command again (before any, a step)
        line, _last = resolve_empty(typed, self._history[-1] if self._history else None)
        if not self._history or self._history[-1] != line:
            self._history.append(line)
            del self._history[:-MAX_HISTORY]
        self._history_pos = len(self._history)
        self.post_message(self.Submitted(self, line))

    def action_history(self, delta: int) -> None:
        if not self._history:
            return
        self._history_pos = max(0, min(len(self._history), self._history_pos + delta))
        value = self._history[self._history_pos] if self._history_pos < len(self._history) else ""
        self.input.value = value
        self.input.cursor_position = len(value)

    def action_leave(self) -> None:
        self.post_message(self.Left())
