"""The engine's module layering: no import cycle inside core/ (imports made inside functions and under
TYPE_CHECKING count too), core/ never imports a terminal library, and the services reach the session only through
its narrow protocol."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
PREFIX = "dynadbg.core"


def _modules() -> dict[str, list[Path]]:
    """core/'s modules: each top-level module, and each package as one module (its files together)."""
    mods = {p.stem: [p] for p in CORE.glob("*.py") if p.stem != "__init__"}
    for pkg in CORE.iterdir():
        if (pkg / "__init__.py").is_file():
            mods[pkg.name] = sorted(pkg.rglob("*.py"))
    return mods


def _imports(me: str, path: Path) -> set[str]:
    """The core/ modules the file `path` (part of module `me`) imports anywhere in its body."""
    mods = set(_modules())
    depth = len(path.relative_to(CORE).parts) - 1
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level == depth + 1:
                names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module and node.module.startswith(PREFIX):
                rest = node.module[len(PREFIX) + 1:]
                names = [rest.split(".")[0]] if rest else [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name[len(PREFIX) + 1:].split(".")[0] for a in node.names if a.name.startswith(PREFIX + ".")]
        out |= {n for n in names if n in mods and n != me}
    return out


def _graph() -> dict[str, set[str]]:
    return {me: set().union(*(_imports(me, p) for p in paths)) for me, paths in _modules().items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (as a path that ends where it starts), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        path.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_core_has_no_import_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle in core/: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_low_modules_import_nothing_above_them():
    graph = _graph()
    low = {"model": set(), "identity": set(), "facts": set(), "values": {"model", "facts"},
           "disasm": {"model", "compat", "identity"},
           "protocol": {"model"},
           "events": {"model"},
           "state": {"model", "stack", "disasm", "events"}}
    for mod, allowed in low.items():
        assert graph[mod] <= allowed | {"compat"}, f"{mod} imports {sorted(graph[mod] - allowed)}"


def test_services_reach_the_session_only_through_its_protocol():
    graph = _graph()
    for service in ("patches", "guard_edits", "recompile", "decisions", "edits", "patchfile", "guards", "snapshot",
                    "commands", "format", "capture"):
        assert not graph[service] & {"session", "engine"}, f"{service} imports {sorted(graph[service])}"
        text = "".join(p.read_text(encoding="utf-8") for p in _modules()[service])
        for private in ("._quitting", "._quiet", "._message", ".of(self.s"):
            assert f"session{private}" not in text and f"s{private}" not in text, f"{service} uses {private}"


def test_the_engine_never_imports_its_command_language():
    """pdb sits on bdb, not the reverse: the session and its method groups run no command text; front ends hold a
    `commands.CommandLine` over the engine."""
    graph = _graph()
    language = {"commands", "trace_commands", "verbs"}
    engine = [m for m in graph if m in ("session", "engine", "trace_engine", "trace_stops") or m.startswith("engine_")]
    assert len(engine) > 5
    for mod in engine:
        assert not graph[mod] & language, f"{mod} imports {sorted(graph[mod] & language)}"
    protocol = ast.parse((CORE / "protocol.py").read_text(encoding="utf-8"))
    engine_api = next(n for n in protocol.body if isinstance(n, ast.ClassDef) and n.name == "Engine")
    assert "execute" not in {n.name for n in engine_api.body if isinstance(n, ast.FunctionDef)}


def test_core_never_imports_a_terminal_library():
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    assert name.split(".")[0] not in ("textual", "rich", "curses"), f"{path.name} imports {name}"


def test_python_version_checks_live_in_compat_alone():
    """`sys.version_info` (a Python-version check, or a version shown to the user) is read in core/compat.py only;
    the engine and the front ends use its flags (`PY312`, ...) and `PYTHON_VERSION`."""
    app = CORE.parent / "app"
    offenders = []
    for path in [*CORE.rglob("*.py"), *app.rglob("*.py")]:
        if path == CORE / "compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("version_info", "hexversion"):
                offenders.append(f"{path.relative_to(CORE.parent)}:{node.lineno}")
    assert not offenders, offenders


def test_no_engine_class_grows_past_600_lines():
    """A class that does one job stays readable: none in core/ is over 600 lines (split it by job, as `Session`
    was into its services and `GuardEditor` into the edits and `guard_copies.EntryCopies`)."""
    big = []
    for path in sorted(CORE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > 600:
                    big.append(f"{path.relative_to(CORE)}:{node.lineno} {node.name} ({length} lines)")
    assert not big, "classes over 600 lines in core/: " + ", ".join(big)
