"""Bundled example programs for `dynadbg demo` (each is a plain script, run as ``__main__``)."""

from __future__ import annotations

import os

#: name -> one-line description. The first one is the default.
DEMOS: dict[str, str] = {
    "mlp": "a small MLP with a graph break (.item()) and a recompile (a changed int argument); CUDA when available",
}


def demo_path(name: str | None) -> str:
    """Absolute path of the demo script `name` (the default demo when None).

    Raises:
        KeyError: no demo has that name.
    """
    name = name or next(iter(DEMOS))
    if name not in DEMOS:
        raise KeyError(name)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
