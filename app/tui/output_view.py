"""A scrolling pane for one command's rendered output (original bytecode, FX graph, cache entries, stop details)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static


class OutputView(VerticalScroll, can_focus=True):
    """Shows one renderable (text, a table, highlighted code), scrolled back to the top whenever it changes."""

    ALLOW_MAXIMIZE = True
    """A view is a pane like any other: ``z`` maximises it (Textual's scroll containers opt out by default)."""

    content: reactive[RenderableType] = reactive(Text(""), always_update=True)
    """What is shown."""

    def __init__(self, placeholder: str = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(OutputView.content, Text(placeholder))

    def compose(self) -> ComposeResult:
        yield Static(self.content, classes="output-body")

    def watch_content(self, content: RenderableType) -> None:
        for body in self.query(".output-body").results(Static):
            body.update(content)
            self.scroll_home(animate=False)
