"""The precompile entries dynadbg puts in front of a code object's cache: the ``front`` copies of
`dynadbg.core.toolkit`, a script's and a debugging session's instruction edits alike (`dynadbg.core.patches`
installs its edits through the toolkit).

Torch keeps precompile entries per code object and offers only "load one more" and "drop them all"
(``_load_precompile_entry``, ``_reset_precompile_entries``); it tries them in the order they were loaded (VERIFIED
torch 2.13: of two entries accepting a call, the first loaded served it). So each owner sets its own list here,
and every change reloads the whole set: toolkit copies first, then the others, each in its owner's order.
"""

from __future__ import annotations

import threading
from types import CodeType
from typing import Any, Sequence

from . import compat

_lock = threading.RLock()
#: id(original code) -> (original, {owner: [(guard manager wrapper, code), ...]})
_sets: dict[int, tuple[CodeType, dict[str, list[tuple[Any, CodeType]]]]] = {}


def set_entries(original: CodeType, owner: str, items: Sequence[tuple[Any, CodeType]]) -> None:
    """Make `items` (guard manager wrapper, code to run) the precompile entries `owner` has on `original`, and
    reload the code object's whole set. An empty `items` removes the owner's."""
    with _lock:
        _orig, owners = _sets.setdefault(id(original), (original, {}))
        if items:
            owners[owner] = list(items)
        else:
            owners.pop(owner, None)
        ordered = sorted(owners.items(), key=lambda kv: (not kv[0].startswith("toolkit"), kv[0]))
        compat.reset_precompile_entries(original)
        for _owner, entries in ordered:
            for wrapper, code in entries:
                compat.load_precompile_entry(original, wrapper, code)
        if not owners:
            _sets.pop(id(original), None)


def entries_of(original: CodeType, owner: str) -> list[tuple[Any, CodeType]]:
    """What `owner` has loaded on `original`."""
    with _lock:
        hit = _sets.get(id(original))
        return list(hit[1].get(owner, ())) if hit is not None and hit[0] is original else []


def forget(original: CodeType, owner: str | None = None) -> None:
    """Torch dropped `original`'s precompile entries (``reset_code``): forget `owner`'s (None: everyone's)
    without reloading."""
    with _lock:
        hit = _sets.get(id(original))
        if hit is None:
            return
        if owner is None:
            _sets.pop(id(original), None)
        else:
            hit[1].pop(owner, None)
