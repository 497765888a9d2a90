"""Caches keyed by object identity, for objects that cannot be hashed.

A code object hashes its constants, and Dynamo's generated code can carry unhashable constants (a resume function
that rebuilds a nested function keeps the globals dict in ``co_consts``), so ``hash(code)`` may raise
``TypeError: unhashable type: 'dict'``. Every cache the engine keys by code object goes through `IdentityCache`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """A mapping from live objects (compared with ``is``) to values; an entry goes when its key is collected.

    Keys must support weak references (code objects, functions, frames' code do); they are never hashed.
    Safe to use from several threads (one lock around the table).
    """

    __slots__ = ("_data", "_lock")

    def __init__(self) -> None:
        self._data: dict[int, tuple[weakref.ref[K], V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value stored for this very object, else `default`."""
        found = self._data.get(id(key))
        if found is None or found[0]() is not key:
            return default
        return found[1]

    def __setitem__(self, key: K, value: V) -> None:
        ident = id(key)

        def forget(_ref: weakref.ref[K], ident: int = ident,
                   data: dict[int, tuple[weakref.ref[K], V]] = self._data) -> None:
            found = data.get(ident)
            if found is not None and found[0] is _ref:
                data.pop(ident, None)

        with self._lock:
            self._data[ident] = (weakref.ref(key, forget), value)

    def setdefault_with(self, key: K, make: Callable[[], V]) -> V:
        """The value for `key`, made by `make()` and stored if there is none yet."""
        found = self.get(key)
        if found is None:
            found = make()
            self[key] = found
        return found

    def __contains__(self, key: object) -> bool:
        found = self._data.get(id(key))
        return found is not None and found[0]() is key

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
