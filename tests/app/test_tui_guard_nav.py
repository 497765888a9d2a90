"""The guard pane on a model-sized tree: failing counts on the managers, `f` / `F` through the failing guards,
Ctrl+F for the failing paths only."""

from __future__ import annotations

from fake_app import make_app, no_cursor_blink, settle  # noqa: F401 - no_cursor_blink is an autouse fixture
from fake_scenarios import forward_scenario, guard_tree_of

from dynadbg.core.model import GuardNodeView, GuardTree, LeafGuardView
from dynadbg.tui import actions
from dynadbg.tui.guard_tree_view import GuardTreeView

SIZE = (120, 40)

#: Modules whose last guard fails: 22 of 124, two of them beyond the first chunk of the module list's children.
FAILING_MODULES = tuple(5 * i + 3 for i in range(22))


def model_tree() -> GuardTree:
    """995 guards, 22 failing, as torch nests a module's: root → L['self'] → its ModuleList → 124 modules."""
    tree = guard_tree_of(992, modules=124, nest=True, fail_at=FAILING_MODULES)
    assert tree.leaf_count == 995 and len(tree.failing) == 22
    return tree


def app_with(tree: GuardTree | None):  # noqa: ANN201
    scenario = forward_scenario()
    scenario.guard_tree = tree
    return make_app(scenario)


def log_text(app) -> str:  # noqa: ANN001
    return "\n".join(strip.text for strip in app.main_screen.console.log_widget.lines)


def node_of(view: GuardTreeView, source: str):  # noqa: ANN001, ANN201
    """The shown manager node of `source` (searched among the built nodes)."""
    stack = [view.root]
    while stack:
        node = stack.pop()
        if isinstance(node.data, GuardNodeView) and node.data.source == source:
            return node
        stack.extend(node.children)
    raise AssertionError(f"no node for {source}")


def cursor_in_view(view: GuardTreeView) -> bool:
    top = view.scroll_offset.y
    return top <= view.cursor_line < top + view.scrollable_content_region.height


async def test_managers_say_how_many_guards_fail_under_them() -> None:
    app = app_with(model_tree())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        assert "995 guards" in str(view.root.label) and "22 failing" in str(view.root.label)
        assert "22 of 994 guards failing" in str(node_of(view, "L['self']").label)
        assert "22 of 993 guards failing" in str(node_of(view, "L['self']._modules['layers']").label)
        layers = node_of(view, "L['self']._modules['layers']")
        by_module = {str(c.data.source).rsplit("'", 2)[-2]: str(c.label) for c in layers.children
                     if isinstance(c.data, GuardNodeView)}
        for m in FAILING_MODULES:
            assert "✗ 1 of 8 guards failing" in by_module[str(m)]
        # a passing module keeps its plain count
        assert "8 guards" in by_module["0"] and "failing" not in by_module["0"]
        # the two failing modules past the first 100 children are shown, the passing rest waits behind "more"
        assert {"103", "108"} <= set(by_module) and "124" not in by_module
        assert any("more" in str(c.label) for c in layers.children)


async def test_f_goes_through_every_failing_guard_in_order_and_wraps_round() -> None:
    tree = model_tree()
    app = app_with(tree)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        # the tree opens on the first failing guard
        assert view.cursor_node is not None and view.cursor_node.data is tree.failing[0]
        for expected in tree.failing[1:]:
            await pilot.press("f")
            await pilot.pause()
            assert isinstance(view.cursor_node.data, LeafGuardView) and view.cursor_node.data is expected
            assert view.has_focus and cursor_in_view(view)
        assert "at 22 of 22" in str(view.root.label)
        assert "wrapped" not in log_text(app)
        await pilot.press("f")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[0] and cursor_in_view(view)
        assert "guards: wrapped round to the first failing guard (1 of 22)" in log_text(app)
        await pilot.press("F")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[-1] and cursor_in_view(view)
        assert "guards: wrapped round to the last failing guard (22 of 22)" in log_text(app)
        await pilot.press("F")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[-2]
        # from a failing guard the user moved to: its next one
        view.move_cursor(next(n for n in node_of(view, "L['self']._modules['layers']._modules['8']"
                                                 "._parameters['w0']").children
                              if n.data is tree.failing[1]))
        await pilot.press("f")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[2]
        # from a manager's line: f goes to the first failing guard under it, F to the one before that
        view.move_cursor(node_of(view, "L['self']._modules['layers']._modules['13']"))
        await pilot.press("f")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[2]
        view.move_cursor(node_of(view, "L['self']._modules['layers']._modules['13']"))
        await pilot.press("F")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[1]
        view.move_cursor(node_of(view, "L['self']"))
        await pilot.press("F")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[-1]      # before the first one: round to the last


async def test_ctrl_f_shows_the_failing_paths_only_and_says_so() -> None:
    tree = model_tree()
    app = app_with(tree)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        await pilot.press("f", "f")                       # on the third failing guard
        await pilot.pause()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert view.failing_only and view.border_subtitle == "failing paths only"
        assert "failing paths only" in str(view.root.label)
        # the root's GLOBAL_STATE leaf (passing) is gone; the one manager left leads to the failures
        assert [str(c.data.source) for c in view.root.children] == ["L['self']"]
        layers = node_of(view, "L['self']._modules['layers']")
        shown = [c.data for c in layers.children]
        assert len(shown) == 22 and all(isinstance(d, GuardNodeView) for d in shown)
        assert not any("more" in str(c.label) for c in layers.children)
        module = node_of(view, "L['self']._modules['layers']._modules['3']")
        module.expand()
        await pilot.pause()
        assert [c.data.source for c in module.children] == [
            "L['self']._modules['layers']._modules['3']._parameters['w0']"]   # its TYPE_MATCH leaf is hidden
        # the cursor stayed on the guard it was on
        assert view.cursor_node.data is tree.failing[2]
        await pilot.press("f")
        await pilot.pause()
        assert view.cursor_node.data is tree.failing[3]
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert not view.failing_only and view.border_subtitle == ""
        assert "failing paths only" not in str(view.root.label)
        assert len(view.root.children) == 2               # GLOBAL_STATE is back
        assert view.cursor_node.data is tree.failing[3]


async def test_f_on_a_passing_tree_says_nothing_fails() -> None:
    app = app_with(guard_tree_of(200, modules=20))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        line = view.cursor_line
        await pilot.press("f")
        await pilot.pause()
        assert view.cursor_line == line
        assert "guards: all 201 guards of entry 0/0 pass" in log_text(app)


def test_the_keys_are_new_and_listed_in_the_help_and_the_readme() -> None:
    keys: dict[str, str] = {}
    for action in actions.ACTIONS:
        for key in action.keys.split(","):
            assert key not in keys, f"{key} bound to {keys.get(key)} and {action.id}"
            keys[key] = action.id
    assert keys["f"] == "next_failing" and keys["F"] == "previous_failing" and keys["ctrl+f"] == "failing_only"
    # no key of the guard pane (Textual's Tree) is taken
    assert not {b.key for b in GuardTreeView.BINDINGS} & {"f", "F", "ctrl+f"}


async def test_a_row_cut_under_the_vertical_scrollbar_still_ends_in_an_ellipsis() -> None:
    """A newcomer's guard pane got a scrollbar (lesson 7, after `patch undo`) and its long rows then stopped
    mid-word under it: the "…" was placed for the pane's width, not the rows' room beside the scrollbar."""
    app = app_with(model_tree())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.main_screen.query_one(GuardTreeView)
        view.root.expand_all()
        await settle(pilot)
        room = view.scrollable_content_region.width
        assert room < view.size.width  # the scrollbar takes a column
        cut = 0
        for y in range(view.scrollable_content_region.height):
            node = view.get_node_at_line(y + view.scroll_offset.y)
            text = view.render_line(y).text[:room]
            if node is not None and len(str(node.label)) > room:
                cut += 1
                assert text.rstrip().endswith("…"), text
        assert cut
