"""Which logged graph breaks torch calls duplicates, judged as torch judges them.

Torch logs a graph break in full ("Graph break in user code at FILE:LINE", the reason, the user's traceback) the
first time it sees its key, and every later one with that key as "Graph break (user stack suppressed due to
duplicate graph break)". The key is ``(graph-break type, chain of (file, line) of the frames that inlined the
break)`` (`compat.graph_break_dup_key`), kept in ``torch._dynamo.utils.graph_break_dup_warning_checker``, which
``torch._dynamo.reset()`` empties. While torch logs graph breaks, `DuplicateJudge` reads torch's own record (before
torch adds the break to it); while it does not, the judge keeps the same record itself, emptied whenever torch's
is, so a label "duplicate" means exactly what torch's log would print.
"""

from __future__ import annotations

import threading
from typing import Any

from . import compat

__all__ = ["DuplicateJudge"]


class DuplicateJudge:
    """Says whether a graph break torch is about to log is one torch logs as a duplicate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: set[Any] = set()
        self._torch_set: Any = None

    def judge(self, tx: Any, exc: Any) -> bool | None:
        """True / False for a break ``log_graph_break(tx, ..., exc)`` is about to log (call it before torch's
        own ``log_graph_break`` runs); None when the key cannot be computed on this torch."""
        key = compat.graph_break_dup_key(tx, exc)
        if key is None:
            return None
        record = compat.graph_break_dup_record()
        try:
            if record is not None and compat.graph_break_log_on():
                return key in record.set        # torch adds the key right after this call
        except TypeError:                        # an unhashable key: torch could not record it either
            return None
        with self._lock:
            current = getattr(record, "set", None)
            if current is not self._torch_set:  # torch's record was reset (torch._dynamo.reset())
                self._torch_set = current
                self._seen.clear()
            try:
                dup = key in self._seen
                self._seen.add(key)
            except TypeError:
                return None
        return dup
