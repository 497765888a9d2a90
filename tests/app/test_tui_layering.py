"""Layering rules the architecture relies on, checked on the source (no imports executed)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UI_PACKAGES = ("textual", "rich")


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_no_textual_or_rich() -> None:
    """`dynadbg.core` could ship without a UI: no module of core/ imports textual or rich, even lazily."""
    files = sorted((ROOT / "core").rglob("*.py"))
    assert files, "core/ not found"
    offenders = {str(p.relative_to(ROOT)): sorted(_imported_roots(p) & set(UI_PACKAGES)) for p in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_tui_never_imports_torch() -> None:
    """The UI thread never calls torch: no TUI module imports it (the engine's `Session` is the only way in)."""
    files = sorted((ROOT / "app" / "tui").rglob("*.py"))
    assert files
    offenders = [str(p.relative_to(ROOT)) for p in files if "torch" in _imported_roots(p)]
    assert offenders == []


def test_every_tui_module_uses_future_annotations() -> None:
    for path in sorted((ROOT / "app" / "tui").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
        assert futures, path.name
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"


def _app_graph() -> dict[str, set[str]]:
    """Module → the `dynadbg` modules of app/ it imports anywhere in its body (function-level imports and
    TYPE_CHECKING blocks too); `dynadbg.core` is left out (core/ has its own test)."""
    app = ROOT / "app"

    def name(path: Path) -> str:
        rel = path.relative_to(app).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        return ".".join(["dynadbg", *parts])

    modules = {name(p): p for p in app.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                found = [f"{base}.{a.name}" for a in node.names] + [base]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            for target in found:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != mod and target != "dynadbg" and not target.startswith("dynadbg.core"):
                    targets.add(target)
        graph[mod] = targets
    return graph


def test_app_has_no_import_cycle() -> None:
    """No module of app/ imports itself back through others (the TUI's app ↔ screen ↔ teaching views, or the
    palette ↔ the course, were such circles)."""
    from test_layering import _cycle  # tests/core/test_layering.py: the same cycle finder

    cycle = _cycle(_app_graph())
    assert cycle is None, "import cycle in app/: " + " -> ".join(cycle or [])


def test_app_layers() -> None:
    """The TUI's widgets never reach the app; the debugger (dynadbg.tui) reaches the course only through its data
    modules, never its front ends (they are built on the debugger); only the CLI and the course's own CLI open the
    course's TUI."""
    graph = _app_graph()
    for mod, targets in graph.items():
        if mod.startswith("dynadbg.tui.") and mod not in ("dynadbg.tui.app",):
            assert "dynadbg.tui.app" not in targets, f"{mod} imports the app"
        if mod.startswith("dynadbg.tui"):
            learn = {t for t in targets if t.startswith("dynadbg.learn")}
            assert learn <= {"dynadbg.learn.lessons", "dynadbg.learn.progress"}, f"{mod} imports {sorted(learn)}"
        if "dynadbg.learn.tui" in targets:
            assert mod in ("dynadbg.cli", "dynadbg.learn.cli"), f"{mod} imports the course's TUI"
