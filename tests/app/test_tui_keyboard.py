"""Keyboard reach: every pane focused, scrolled, expanded and maximised without the mouse (the fake engine)."""

from __future__ import annotations

from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from textual.widgets import RichLog

from dynadbg.core.model import GuardNodeView, LeafGuardView
from dynadbg.tui.bytecode_view import BytecodeView
from dynadbg.tui.guard_tree_view import GuardTreeView
from dynadbg.tui.locals_view import LocalsView
from dynadbg.tui.source_view import SourceView

SMALL = (80, 24)


async def _tab_to(pilot, widget_type, *, back: bool = False, limit: int = 12):  # noqa: ANN001, ANN202
    for _ in range(limit):
        if isinstance(pilot.app.focused, widget_type):
            return pilot.app.focused
        await pilot.press("shift+tab" if back else "tab")
        await pilot.pause()
    raise AssertionError(f"{widget_type.__name__} never took the focus (now {pilot.app.focused!r})")


async def _down_to(pilot, tree, data_type, where=lambda data: True):  # noqa: ANN001, ANN202
    """Down to the next row holding a `data_type` for which `where` holds."""
    for _ in range(20):
        await pilot.press("down")
        await pilot.pause()
        if isinstance(tree.cursor_node.data, data_type) and where(tree.cursor_node.data):
            return tree.cursor_node
    raise AssertionError(f"no {data_type.__name__} below the cursor")


async def test_tab_and_shift_tab_reach_every_visible_pane_in_screen_order() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        order = []
        for _ in range(8):
            focused = app.focused
            order.append(focused.id or type(focused).__name__)
            await pilot.press("tab")
            await pilot.pause()
        assert order == ["bytecode", "source", "stack", "locals", "guards", "log", "command", "ContentTabs"]
        assert app.focused.id == "bytecode"  # around again
        await pilot.press("shift+tab")
        await pilot.pause()
        assert type(app.focused).__name__ == "ContentTabs"


async def test_pagedown_in_the_bytecode_pane_turns_a_whole_page_at_once() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        view = app.main_screen.bytecode
        height = view.scrollable_content_region.height
        assert view.scroll_offset.y == 0 and view.cursor == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert view.scroll_offset.y == height - 1  # the first press already scrolls, by a page less one row
        assert view.cursor == height - 1
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_offset.y == 0 and view.cursor == 0


async def test_enter_and_space_expand_guard_nodes_down_to_a_leaf_guards_detail() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        tree = await _tab_to(pilot, GuardTreeView)
        await pilot.press("home")
        # a guard manager with leaf guards of its own (L['n'] in the recorded tree; G holds managers only), collapsed
        await _down_to(pilot, tree, GuardNodeView, lambda manager: manager.leaves)
        node = tree.cursor_node
        assert node is not None and not node.is_expanded and node.allow_expand
        await pilot.press("enter")
        await pilot.pause()
        assert node.is_expanded
        await pilot.press("space")
        await pilot.pause()
        assert not node.is_expanded
        await pilot.press("space")
        await pilot.pause()
        assert node.is_expanded
        # down to the first leaf guard under it, then its detail
        await _down_to(pilot, tree, LeafGuardView)
        leaf = tree.cursor_node
        assert leaf.parent is node
        assert isinstance(leaf.data, LeafGuardView)
        await pilot.press("enter")
        await pilot.pause()
        details = [str(child.label) for child in leaf.children]
        assert any(f"id {leaf.data.id}" in line for line in details), details


async def test_demo_from_the_keyboard_alone_at_80x24() -> None:
    """Open a guard's detail, scroll Original, read the full log, maximise and restore a pane: keys only."""
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = app.main_screen
        # a guard's detail
        tree = await _tab_to(pilot, GuardTreeView)
        await pilot.press("home")
        await _down_to(pilot, tree, GuardNodeView, lambda manager: manager.leaves)
        await pilot.press("enter")
        await _down_to(pilot, tree, LeafGuardView)
        await pilot.press("enter")
        await pilot.pause()
        assert tree.cursor_node.is_expanded and tree.cursor_node.children
        # the Original view: opened with 2, focused, scrolled a page
        await pilot.press("2")
        await settle(pilot)
        original = screen.query_one("#orig-bytecode", BytecodeView)
        assert screen.views.active == "tab-orig" and app.focused is original
        assert original.code is not None and len(original.code.instructions) > original.size.height
        await pilot.press("pagedown")
        await pilot.pause()
        assert original.scroll_offset.y > 0
        # Tab leaves the view and Shift+Tab comes back to it
        await pilot.press("tab")
        await pilot.pause()
        assert isinstance(app.focused, SourceView)
        await pilot.press("shift+tab")
        await pilot.pause()
        assert app.focused is original
        # the full log: focus it, maximise it, it takes the screen's height
        log = await _tab_to(pilot, RichLog)
        small = log.size.height
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is log and log.size.height > small + 10
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None and log.size.height == small
        # a pane maximised and restored with Escape
        await _tab_to(pilot, LocalsView)
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one(LocalsView)
        await pilot.press("escape")
        await pilot.pause()
        assert screen.maximized is None


async def test_the_maximise_key_is_in_the_footer_and_the_help() -> None:
    import io

    from rich.console import Console

    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        shown = {b.binding.id for b in app.screen.active_bindings.values() if b.binding.show}
        assert "maximize" in shown
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-body").query_one("Static").content)
        text = console.export_text()
        assert "Maximise the focused pane" in text and "Tab / Shift+Tab" in text and "Enter / Space" in text
