"""The session's one guard filter: leave chosen guards out of the compiles of chosen code objects.

Both ways of dropping a guard go through it: ``drop`` at a recompile stop (`decisions.GuardDropper`: scope
`Scope.NEXT_COMPILE`, the compile that follows the stop) and ``guard drop ID`` (`guard_edits.GuardEditor`: scope
`Scope.EVERY_COMPILE`, until undone). One patch on ``CheckFunctionManager`` (`compat.install_guard_filter`, made
on first use) runs the rules of the code object being compiled over its ``GuardFilterEntry`` objects; one set of
guard taxonomy (`facts`) and one constant-folding warning (`drop_warning`) say what dropping costs; one export
(`export_guard_filter`) writes the rules in effect as a ``guard_filter_fn`` a user can pass to ``torch.compile``.
Worker thread (the filter runs inside Dynamo's compile, on the thread that compiles).
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Callable, Sequence

from . import compat, facts
from .model import DropRisk, DropWarning, GuardRef

def drop_warning(guard: GuardRef, expected: str | None = None, actual: str | None = None) -> DropWarning:
    """What dropping `guard` costs, as data (`format.drop_warning_text` says it): for a value guard, that Dynamo
    traced the value as a constant (constant folding) and other values will run that code unchecked; for a
    shape/type guard, that the graph was traced for them; for any other, that the code assumes it holds."""
    if guard.guard_type in facts.PINNING_GUARDS:
        risk = DropRisk.CONSTANT_FOLDED
    elif guard.guard_type in facts.SHAPE_GUARDS:
        risk = DropRisk.TRACED_FOR
    else:
        risk = DropRisk.ASSUMED
    return DropWarning(risk, guard, expected, actual)


class Scope(str, enum.Enum):
    """How long a rule drops its guard."""

    NEXT_COMPILE = "next compile"
    EVERY_COMPILE = "every compile"


@dataclass(eq=False)
class FilterRule:
    """Leave the guards named `source` of one of `types` out of the compiles of `original`.

    Attributes:
        original: the code object whose compiles are filtered.
        source: ``GuardFilterEntry.orig_guard.name`` to match (``"L['s'].counter"``; ``""`` for ambient guards).
        types: guard types that stand for the dropped leaf (``GuardFilterEntry.guard_type`` or one of its
            ``derived_guard_types``).
        scope: the next compile only, or every compile until removed.
        name: the spelling a user's ``guard_filter_fn`` sees (``"s.counter"``), for the export.
        label: what the user dropped, one line (``"EQUALS_MATCH L['n'] == 3"``).
        warning: `drop_warning` of the leaf, or None.
        guard: the leaf the user dropped, when the rule stands for one.
        dropped: (source, guard type) of each entry this rule removed in the last compile it ran in.
        fired: True once the filter ran in a compile of `original`.
    """

    original: CodeType
    source: str
    types: frozenset[str]
    scope: Scope
    name: str = ""
    label: str = ""
    warning: DropWarning | None = None
    guard: GuardRef | None = None
    dropped: list[tuple[str, str]] = field(default_factory=list)
    fired: bool = False

    def matches(self, source: str, guard_type: str, derived: Sequence[str]) -> bool:
        return source == self.source and (guard_type in self.types or any(d in self.types for d in derived))


class GuardFilter:
    """The rules of one session and the one ``CheckFunctionManager`` patch that applies them.

    Args:
        message: where to say what happened (the session's ``message``).
    """

    def __init__(self, message: Callable[[str], None]) -> None:
        self.message = message
        self._rules: dict[int, list[FilterRule]] = {}
        self._undo: Callable[[], None] | None = None
        self._lock = threading.Lock()
        #: NEXT_COMPILE rules that did their work (the export keeps them: the user chose those drops)
        self._spent: list[FilterRule] = []

    @property
    def installed(self) -> bool:
        return self._undo is not None

    def add(self, rule: FilterRule) -> FilterRule:
        if self._undo is None:
            self._undo = compat.install_guard_filter(self._filter_for)
        with self._lock:
            self._rules.setdefault(id(rule.original), []).append(rule)
        return rule

    def remove(self, rule: FilterRule) -> None:
        with self._lock:
            rules = self._rules.get(id(rule.original), [])
            if rule in rules:
                rules.remove(rule)

    def rules(self, code: CodeType | None = None, scope: Scope | None = None) -> list[FilterRule]:
        with self._lock:
            found = [r for rs in self._rules.values() for r in rs] if code is None else \
                list(self._rules.get(id(code), ()))
        return [r for r in found if scope is None or r.scope is scope]

    def take_spent(self, code: CodeType) -> list[FilterRule]:
        """Remove and return the NEXT_COMPILE rules of `code` (after its compile: they have done their work)."""
        with self._lock:
            rules = self._rules.get(id(code), [])
            spent = [r for r in rules if r.scope is Scope.NEXT_COMPILE]
            self._rules[id(code)] = [r for r in rules if r.scope is not Scope.NEXT_COMPILE]
            self._spent += [r for r in spent if r.dropped]
        return spent

    def discard(self, code: CodeType, scope: Scope) -> None:
        """Forget the rules of `code` with `scope` (a decision replaced before its compile ran)."""
        with self._lock:
            self._rules[id(code)] = [r for r in self._rules.get(id(code), []) if r.scope is not scope]

    def exportable(self) -> list[FilterRule]:
        """Every drop the user made that is in effect or took effect: what `export_guard_filter` writes."""
        with self._lock:
            active = [r for rs in self._rules.values() for r in rs]
            return list(self._spent) + active

    def _filter_for(self, code: CodeType) -> Callable[[list[Any]], list[bool]] | None:
        with self._lock:
            rules = [r for r in self._rules.get(id(code), ()) if r.original is code
                     and not (r.scope is Scope.NEXT_COMPILE and r.fired)]
        if not rules:
            return None

        def keep(entries: list[Any]) -> list[bool]:
            for r in rules:
                r.dropped.clear()
            out = []
            for entry in entries:
                try:
                    source, gtype, derived, *_ = compat.guard_filter_entry_fields(entry)
                except Exception:  # noqa: BLE001 - an entry torch shapes differently is kept
                    out.append(True)
                    continue
                hit = [r for r in rules if r.matches(source, gtype, derived)]
                for r in hit:
                    r.dropped.append((source or "(ambient)", gtype))
                out.append(not hit)
            for r in rules:
                r.fired = True
                if r.scope is Scope.EVERY_COMPILE and not r.dropped:
                    self.message(f"guard drop: no {'/'.join(sorted(r.types))} guard on {r.source or 'L'} was built "
                                 f"in this compile of {code.co_name}; nothing dropped for it")
            return out

        return keep

    def undo(self) -> None:
        """Restore ``CheckFunctionManager`` and forget every rule (session teardown)."""
        with self._lock:
            self._rules.clear()
            self._spent.clear()
        if self._undo is not None:
            undo, self._undo = self._undo, None
            undo()


def export_guard_filter(rules: Sequence[FilterRule]) -> str:
    """Python source of a ``guard_filter_fn`` that drops the guards `rules` drop, to paste into a program and
    pass as ``torch.compile(..., options={"guard_filter_fn": dynadbg_guard_filter})``.

    The filter matches a ``GuardFilterEntry`` by ``orig_guard.name`` (the guard's source, ``""`` for ambient
    root guards) and by ``guard_type``/``derived_guard_types``, exactly as the debugger's own filter does. Unlike
    the debugger, which dropped each guard only from one code object, it applies to every frame that
    ``torch.compile`` call compiles.
    """
    if not rules:
        return "# no guards are dropped in this session: nothing to export"
    lines = [
        "# guard_filter_fn exported by dynadbg: leaves out the guards dropped in the debugger.",
        "# Use: torch.compile(fn, ..., options={\"guard_filter_fn\": dynadbg_guard_filter})",
        "# It applies to every frame that torch.compile call compiles (the debugger dropped each guard only",
        "# from the code object named beside it).",
    ]
    if any(r.warning is not None and r.warning.risk in (DropRisk.CONSTANT_FOLDED, DropRisk.TRACED_FOR)
           for r in rules):
        lines.append("# WARNING: these guards pin values or shapes Dynamo specialised on; without them calls with")
        lines.append("# other values reuse code that baked the old ones in and can give silently wrong results.")
    lines.append("DYNADBG_DROPPED_GUARDS = [")
    seen: set[tuple[str, str]] = set()
    for r in rules:
        origin = r.original
        where = f"{origin.co_name} ({origin.co_filename.rsplit('/', 1)[-1]}:{origin.co_firstlineno})"
        for t in sorted(r.types):
            if (r.source, t) in seen:
                continue
            seen.add((r.source, t))
            lines.append(f"    ({r.source!r}, {t!r}),  # {where}: {r.label}")
    lines += [
        "]",
        "",
        "",
        "def dynadbg_guard_filter(guard_entries):",
        "    keep = []",
        "    for entry in guard_entries:",
        "        orig = getattr(entry, \"orig_guard\", None)",
        "        source = orig.name if orig is not None and orig.name is not None else entry.name",
        "        types = {entry.guard_type, *(entry.derived_guard_types or ())}",
        "        keep.append(not any(source == s and t in types for s, t in DYNADBG_DROPPED_GUARDS))",
        "    return keep",
    ]
    return "\n".join(lines)
