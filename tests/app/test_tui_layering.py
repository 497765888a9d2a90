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
