"""The console's log keeps its last line in sight when its size changes (a pane zoomed and given back)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from dynadbg.tui.console import Console


class _One(App[None]):
    CSS = "Console { height: 6; } Console.-big { height: 20; }"

    def compose(self) -> ComposeResult:
        yield Console()


async def test_a_log_at_its_end_is_at_its_end_after_growing_and_shrinking_again() -> None:
    app = _One()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(Console)
        for k in range(60):
            console.output(f"line {k}")
        await pilot.pause()
        log = console.log_widget
        assert log.scroll_y == log.max_scroll_y > 0
        console.add_class("-big")      # zoomed: the log grows
        await pilot.pause()
        await pilot.pause()
        console.remove_class("-big")   # given back: the log shrinks
        await pilot.pause()
        await pilot.pause()
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, (log.scroll_y, log.max_scroll_y)


async def test_a_log_scrolled_back_stays_where_the_reader_left_it() -> None:
    app = _One()
    async with app.run_test(size=(80, 24)) as pilot:
        console = app.query_one(Console)
        for k in range(60):
            console.output(f"line {k}")
        await pilot.pause()
        log = console.log_widget
        log.scroll_to(y=10, animate=False)
        await pilot.pause()
        console.add_class("-big")
        await pilot.pause()
        console.remove_class("-big")
        await pilot.pause()
        await pilot.pause()
        assert log.scroll_y == 10
