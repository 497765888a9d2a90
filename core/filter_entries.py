"""The guard filter entries torch showed each compile, and exactly which of them a ``guard_filter_fn`` drops.

Torch hands a ``guard_filter_fn`` one ``GuardFilterEntry`` per guard it built for a compile, and keeps the guards
whose flag is True (torch-internals §15). The entry's ``guard_type`` is the guard's create-fn name, which is not
always the leaf type the guard tree shows: a builtin function argument is ``BUILTIN_MATCH`` (its leaf is an
``ID_MATCH``), a tensor subclass's metadata check is ``TENSOR_SUBCLASS_METADATA_MATCH`` (a ``LAMBDA_GUARD`` leaf),
and a ``mark_dynamic`` check has no entry of its own (its ``DIMENSION_DYNAMIC_MARKING_GUARD`` leaves belong to
the tensor's ``TENSOR_MATCH`` entry). So a filter is only right when it is built from, and checked on, the
entries of the very compile whose guards it should drop:

* `FilterEntryLog` records every compile's entries as `FilterEntry` records (a patched
  ``CheckFunctionManager.build_guards``, `compat.filter_entry_build_target`; a few attribute reads per guard, no
  second guard build), keyed by (original code, compile id);
* `entries_for_leaf` says which entries stand for one leaf of that compile's guard tree, and which other leaves
  dropping them would take along;
* `plan_filter` builds the ``guard_filter_fn`` for a set of leaves, evaluates that very source text on the
  recorded entries, and returns a `FilterPlan`: what it drops, by entry, or why no filter can drop those leaves
  alone (`NoFilter`).

The interactive ``drop`` matches the next compile's entries with the same terms (`FilterTerm.matches`).
Everything but `FilterEntryLog` is pure. Sentences about plans are made in `dynadbg.core.format.advice`.
"""

from __future__ import annotations

import enum
import threading
import weakref
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Callable, Iterable, Sequence

from . import compat, facts

__all__ = ["CompileFilterEntries", "FilterEntry", "FilterEntryLog", "FilterPlan", "FilterRule", "FilterTerm",
           "NoFilter", "NoFilterKind", "checked_source", "entries_for_leaf", "evaluate_filter", "filter_source",
           "plan_filter", "rules_of"]


@dataclass(frozen=True)
class FilterEntry:
    """One ``torch._dynamo.types.GuardFilterEntry`` of a compile, as recorded.

    Attributes:
        index: position in the compile's list (what a filter's returned flags line up with).
        name: ``GuardFilterEntry.name``: the source without ``L[...]`` (``"x"``, ``"self.counter"``); ``""`` for
            the ambient guards (grad mode, global state, shape env).
        source: ``orig_guard.name`` (``"L['x']"``, ``"G['SCALE']"``, ``""``): the guard tree's spelling.
        guard_type: ``GuardFilterEntry.guard_type``: the guard's create-fn name (``"CONSTANT_MATCH"``,
            ``"BUILTIN_MATCH"``, ``"TENSOR_MATCH"``).
        derived_guard_types: ``GuardFilterEntry.derived_guard_types``: the leaf types its build made
            (``("EQUALS_MATCH",)``, ``("ID_MATCH",)``; empty for some, e.g. ``TENSOR_SUBCLASS_METADATA_MATCH``).
        is_global: ``GuardFilterEntry.is_global``.
        kept: the compile kept the guard (False: a ``guard_filter_fn``, the user's or the debugger's, dropped it).
    """

    index: int
    name: str
    source: str
    guard_type: str
    derived_guard_types: tuple[str, ...]
    is_global: bool
    kept: bool = True

    @property
    def label(self) -> str:
        """``"x TENSOR_MATCH"``, ``"(ambient) GLOBAL_STATE"``."""
        return f"{self.name or '(ambient)'} {self.guard_type}"


@dataclass(frozen=True)
class CompileFilterEntries:
    """The filter entries of one compile.

    Attributes:
        code_key: ``id`` of the original code object compiled.
        code_name: its ``co_name``.
        compile_id: ``"0/1"``.
        entries: every entry, in torch's order (``sorted(guards, key=Guard.sort_key)``).
        filtered: a ``guard_filter_fn`` ran on them (then `FilterEntry.kept` says what it kept).
    """

    code_key: int
    code_name: str
    compile_id: str
    entries: tuple[FilterEntry, ...]
    filtered: bool = False


class _RawCompile:
    """One compile's guards as the hook read them: (guard name, create-fn name, guard types, originating source)."""

    __slots__ = ("code_name", "guards", "kept", "derived_after")

    def __init__(self, code_name: str, guards: list[tuple[str, str, tuple[str, ...], Any]]) -> None:
        self.code_name = code_name
        self.guards = guards
        #: (source, guard type) of the guards a guard_filter_fn kept, None when no filter ran
        self.kept: set[tuple[str, str]] | None = None
        #: the leaf types of the kept guards after their second build (duplicates removed)
        self.derived_after: dict[tuple[str, str], tuple[str, ...]] = {}


class FilterEntryLog:
    """Records the ``GuardFilterEntry`` fields of every compile while installed.

    Args:
        on_build: called with the original code object on every first guard build of a compile (the compile's
            thread, inside Dynamo's compile); e.g. `callsites.CallSiteLog.note_compile`.

    Thread safety: the hook runs on the compiling thread; records are guarded by a lock.
    """

    def __init__(self, on_build: Callable[[CodeType], Any] | None = None, *, limit: int = 4096) -> None:
        self.on_build = on_build
        self.limit = limit
        self.installed = False
        self.errors: list[str] = []
        self._patch: compat.AttrPatch | None = None
        self._lock = threading.Lock()
        self._records: dict[tuple[int, str], CompileFilterEntries] = {}
        #: what the hook kept of compiles not asked for yet (made into `_records` by `for_compile`)
        self._raw: dict[tuple[int, str], _RawCompile] = {}
        self._codes: dict[int, CodeType] = {}
        #: CheckFunctionManagers that built once already (a second build follows a guard_filter_fn)
        self._built: "weakref.WeakSet[Any]" = weakref.WeakSet()

    def install(self) -> "FilterEntryLog":
        if self.installed:
            return self
        _INSTALLED.add(self)
        target = compat.filter_entry_build_target()
        if target is not None:
            owner, name = target
            self._patch = compat.AttrPatch(owner, name, None)
            self._patch.replacement = self._make_build_guards(self._patch.original)
            self._patch.apply()
        self.installed = True
        return self

    def uninstall(self) -> None:
        if not self.installed:
            return
        self.installed = False
        _INSTALLED.discard(self)
        if self._patch is not None:
            self._patch.restore()
            self._patch = None

    @property
    def available(self) -> bool:
        """The hook is in place (this torch has ``CheckFunctionManager.build_guards``)."""
        return self._patch is not None

    def for_compile(self, code: CodeType | int, compile_id: str) -> CompileFilterEntries | None:
        """The entries of the compile `compile_id` of `code` (an original code object or its id), else None (not
        recorded: compiled before the log was installed, or the hook is missing)."""
        key = (code if isinstance(code, int) else id(code), str(compile_id))
        with self._lock:
            done = self._records.get(key)
            if done is not None:
                return done
            raw = self._raw.pop(key, None)
        if raw is None:
            return None
        made = self._materialize(key, raw)
        with self._lock:
            self._records[key] = made
        return made

    def all(self) -> tuple[CompileFilterEntries, ...]:
        with self._lock:
            keys = list(self._raw) + list(self._records)
        return tuple(found for k in dict.fromkeys(keys) if (found := self.for_compile(*k)) is not None)

    @staticmethod
    def _materialize(key: tuple[int, str], raw: "_RawCompile") -> CompileFilterEntries:
        """The `FilterEntry` records of one compile from what the hook kept (the names and the global flag are
        computed here, when the entries are first asked for, not inside every compile)."""
        entries = []
        for i, (guard_name, gtype, derived, origin) in enumerate(raw.guards):
            name, source, _, derived_, is_global = compat.guard_filter_entry_fields_of(guard_name, gtype, derived,
                                                                                      origin)
            kept = raw.kept is None or (source, gtype) in raw.kept
            entries.append(FilterEntry(i, name, source, gtype, raw.derived_after.get((source, gtype), derived_),
                                       is_global, kept))
        return CompileFilterEntries(key[0], raw.code_name, key[1], tuple(entries), raw.kept is not None)

    def _record(self, code: CodeType, compile_id: str, guards: Sequence[Any], *, second: bool) -> None:
        # a few attribute reads per guard inside the compile; the rest is made when asked for (`for_compile`)
        rows = [(g.name or "", g.create_fn_name(), tuple(g.guard_types or ()), g.originating_source)
                for g in guards]
        key = (id(code), compile_id)
        with self._lock:
            old = self._raw.get(key)
            if second and old is not None:
                # the build after a guard_filter_fn ran: only the kept guards are built again
                old.kept = {(name, gtype) for name, gtype, _, _ in rows}
                old.derived_after = {(name, gtype): tuple(dict.fromkeys(derived))
                                     for name, gtype, derived, _ in rows}
                return
            if len(self._raw) + len(self._records) >= self.limit:
                (self._raw or self._records).pop(next(iter(self._raw or self._records)))
            self._codes[id(code)] = code
            self._raw[key] = _RawCompile(code.co_name, rows)
            self._records.pop(key, None)

    def _make_build_guards(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        log = self

        def build_guards(manager: Any, sorted_guards: Any, *args: Any, **kwargs: Any) -> Any:
            result = orig(manager, sorted_guards, *args, **kwargs)
            if not log.installed:
                return result
            try:
                f_code = kwargs.get("f_code", args[1] if len(args) > 1 else None)
                compile_id = compat.current_compile_id()
                if isinstance(f_code, CodeType) and compile_id is not None:
                    # torch's first build sees every guard; a second one (after a guard_filter_fn) the kept ones
                    second = manager in log._built
                    log._built.add(manager)
                    log._record(f_code, compile_id, list(sorted_guards), second=second)
                    if not second and log.on_build is not None:
                        log.on_build(f_code)
            except Exception as exc:  # noqa: BLE001 - recording must never break the user's compile
                if len(log.errors) < 100:
                    log.errors.append(f"build_guards: {type(exc).__name__}: {exc}")
            return result

        return build_guards


#: The logs installed now (a drop's outcome reads the next compile's entries without a handle on the capture).
_INSTALLED: "weakref.WeakSet[FilterEntryLog]" = weakref.WeakSet()


def recorded_for(code: CodeType | int, compile_id: str) -> CompileFilterEntries | None:
    """The entries of one compile from whichever installed `FilterEntryLog` recorded it, else None."""
    for log in list(_INSTALLED):
        found = log.for_compile(code, compile_id)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------------------------------------------
# Which entries stand for a leaf
# --------------------------------------------------------------------------------------------------------------

#: Root ("ambient") leaf types and the filter entry types that make them (their entries have the name ""): the
#: guard taxonomy's own table (`facts.ROOT_FILTER_TYPES`).
AMBIENT_ENTRY_TYPES: dict[str, tuple[str, ...]] = facts.ROOT_FILTER_TYPES

#: The leaf classes a guard builder method can make (``derived_guard_types`` names the builder method; the leaf is
#: one of these; read off ``torch._dynamo.guards.GuardBuilder``, torch 2.13.0: ``BOOL_MATCH`` adds a TRUE_MATCH or
#: FALSE_MATCH leaf, ``EQUALS_MATCH`` an EQUALS_MATCH or, for a NaN float, FLOAT_IS_NAN, ``SEQUENCE_LENGTH`` a
#: LENGTH_CHECK or DICT_LENGTH, ...). A name not listed makes a leaf of its own name.
DERIVED_LEAVES: dict[str, frozenset[str]] = {
    "BOOL_MATCH": frozenset({"TRUE_MATCH", "FALSE_MATCH"}),
    "NOT_NONE_MATCH": frozenset({"NOT_NONE"}),
    "WEAKREF_ALIVE": frozenset({"NOT_NONE"}),
    "EQUALS_MATCH": frozenset({"EQUALS_MATCH", "FLOAT_IS_NAN", "COMPLEX_IS_NAN"}),
    "SEQUENCE_LENGTH": frozenset({"LENGTH_CHECK", "DICT_LENGTH"}),
    "DICT_NOT_CONTAINS": frozenset({"DICT_CONTAINS"}),
    "SET_NOT_CONTAINS": frozenset({"SET_CONTAINS"}),
    "HASATTR": frozenset({"NO_HASATTR"}),
    "DUAL_LEVEL": frozenset({"DUAL_LEVEL_MATCH"}),
    "MAPPING_KEYS_CHECK": frozenset({"MAPPING_KEYS_MATCH"}),
    "DISPATCH_KEY_SET_MATCH": frozenset({"DISPATCH_KEY_SET"}),
    "FUNCTORCH_STACK_MATCH": frozenset({"LAMBDA_GUARD"}),
    "AUTOGRAD_SAVED_TENSORS_HOOKS": frozenset({"LAMBDA_GUARD"}),
    "COUNT_ITERATOR_MATCH": frozenset({"LAMBDA_GUARD"}),
    # builder methods that list nothing in derived_guard_types (their entry's own type stands for them)
    "TENSOR_SUBCLASS_METADATA_MATCH": frozenset({"LAMBDA_GUARD"}),
    "DTENSOR_SPEC_MATCH": frozenset({"LAMBDA_GUARD"}),
    "CONSTANT_SUBCLASS_MATCH": frozenset({"LAMBDA_GUARD"}),
}
#: Leaves a builder method makes besides its own, unlisted (verified torch 2.13: dropping ``x``'s TENSOR_MATCH
#: entry removed its TENSOR_MATCH leaf and all five DIMENSION_DYNAMIC_MARKING_GUARD leaves of ``x``): the
#: taxonomy's leaves that are part of another guard's entry (`facts.PART_OF_ENTRY`), by that entry's type.
COMPANION_LEAVES: dict[str, frozenset[str]] = {
    entry: frozenset(leaf for leaf, owner in facts.PART_OF_ENTRY.items() if owner == entry)
    for entry in set(facts.PART_OF_ENTRY.values())
}
#: A lambda guard's code prefix -> the entry type that builds it (several builders make LAMBDA_GUARD leaves).
LAMBDA_PREFIXES: dict[str, str] = {
    "___check_metadata_": "TENSOR_SUBCLASS_METADATA_MATCH",
}


def _makes(entry: FilterEntry) -> list[tuple[str, frozenset[str]]]:
    """(builder name, the leaf classes it can make) for each builder an entry's build ran: its
    ``derived_guard_types``, or its own type when torch lists none."""
    names = entry.derived_guard_types or (entry.guard_type,)
    return [(n, DERIVED_LEAVES.get(n, frozenset({n}))) for n in names]


class NoFilterKind(str, enum.Enum):
    """Why no ``guard_filter_fn`` can drop a leaf alone."""

    NOT_RECORDED = "not recorded"        # the compile's entries were not recorded (compiled before the session)
    NO_ENTRY = "no entry"                 # no filter entry of that compile stands for the leaf
    SHARED_ENTRY = "shared entry"         # the only entry that stands for it also makes other guards
    RELATIONAL = "relational"             # built from all tensors together (NO_TENSOR_ALIASING)
    SHAPE_ENV = "shape env"               # one SHAPE_ENV entry holds every symbolic-shape guard
    NOT_A_GUARD = "not a guard"           # a pseudo-leaf of the debugger (BACKEND_MATCH, invalidated entry, ...)


@dataclass(frozen=True)
class NoFilter:
    """Why no filter can drop one leaf alone.

    Attributes:
        kind: the reason.
        leaf_id, leaf_type, source: the leaf (``"g7"``, ``"DIMENSION_DYNAMIC_MARKING_GUARD"``, ``"L['x']"``).
        entry: the filter entry that would have to go (for SHARED_ENTRY), else None.
        collateral: the other leaf types that entry makes (for SHARED_ENTRY; ``("TENSOR_MATCH",)``).
        compile_id: the compile whose entries were looked at.
    """

    kind: NoFilterKind
    leaf_id: str
    leaf_type: str
    source: str
    entry: FilterEntry | None = None
    collateral: tuple[str, ...] = ()
    compile_id: str = ""


@dataclass(frozen=True)
class FilterTerm:
    """One ``(e.name == NAME and e.guard_type in TYPES)`` term of a printed filter.

    Attributes:
        name: ``GuardFilterEntry.name`` to match.
        guard_types: ``GuardFilterEntry.guard_type`` values to match (sorted).
        leaf_ids: the leaves of the planned compile this term removes.
    """

    name: str
    guard_types: tuple[str, ...]
    leaf_ids: tuple[str, ...] = ()

    def matches(self, name: str, guard_type: str) -> bool:
        """What the printed term tests, on one entry's fields."""
        return name == self.name and guard_type in self.guard_types

    def source(self) -> str:
        types = (f'e.guard_type == "{self.guard_types[0]}"' if len(self.guard_types) == 1 else
                 "e.guard_type in (" + ", ".join(f'"{t}"' for t in self.guard_types) + ")")
        return f'(e.name == "{self.name}" and {types})'


def _leaf_fields(leaf: Any) -> tuple[str, str, str, str, bool, bool]:
    code = "; ".join(getattr(leaf, "code", ()) or ())
    return (leaf.id, leaf.guard_type, leaf.source, code, bool(getattr(leaf, "relational", False)),
            bool(getattr(leaf, "epilogue", False)))


#: Pseudo-leaves the debugger adds to a tree that are no guard of any compile.
PSEUDO_LEAVES = frozenset({"CACHE_ENTRY_INVALIDATED", "CHECK_VERBOSE", "BACKEND_MATCH"})


def entries_for_leaf(leaf: Any, entries: Sequence[FilterEntry],
                     compile_id: str = "") -> tuple[tuple[FilterEntry, ...], NoFilter | None]:
    """The filter entries of a compile that stand for `leaf` (a `model.LeafGuardView` of that compile's guard
    tree): dropping all of them removes the leaf. The second value says why no filter can drop the leaf alone
    (then the first may still name the entries that would have to go)."""
    lid, ltype, source, code, relational, epilogue = _leaf_fields(leaf)
    if ltype in PSEUDO_LEAVES:
        return (), NoFilter(NoFilterKind.NOT_A_GUARD, lid, ltype, source, compile_id=compile_id)
    if relational:
        return (), NoFilter(NoFilterKind.RELATIONAL, lid, ltype, source, compile_id=compile_id)
    if epilogue:
        found = tuple(e for e in entries if e.guard_type == "SHAPE_ENV")
        return found, NoFilter(NoFilterKind.SHAPE_ENV, lid, ltype, source, found[0] if found else None,
                               compile_id=compile_id)
    if source in ("L", ""):
        types = AMBIENT_ENTRY_TYPES.get(ltype)
        if types is None and ltype == "LAMBDA_GUARD" and "saved_tensors_hooks" in code:
            types = ("AUTOGRAD_SAVED_TENSORS_HOOKS",)
        found = tuple(e for e in entries if e.source == "" and e.guard_type in (types or ()))
        if not found:
            return (), NoFilter(NoFilterKind.NO_ENTRY, lid, ltype, source, compile_id=compile_id)
        return found, None
    here = [e for e in entries if e.source == source]
    if ltype == "LAMBDA_GUARD":
        wanted_type = next((t for prefix, t in LAMBDA_PREFIXES.items() if code.startswith(prefix)), None)
        if wanted_type is not None:
            here = [e for e in here if e.guard_type == wanted_type]
    direct = tuple(e for e in here if any(ltype in leaves for _, leaves in _makes(e)))
    if direct:
        # dropping an entry drops every leaf its builders made: fine when they all made this kind of leaf
        collateral = sorted({n for e in direct for n, leaves in _makes(e) if ltype not in leaves})
        if collateral:
            return direct, NoFilter(NoFilterKind.SHARED_ENTRY, lid, ltype, source, direct[0], tuple(collateral),
                                    compile_id)
        return direct, None
    hosts = tuple(e for e in here if any(ltype in COMPANION_LEAVES.get(n, ()) for n, _ in _makes(e)))
    if hosts:
        collateral = sorted({n for e in hosts for n, _ in _makes(e)})
        return hosts, NoFilter(NoFilterKind.SHARED_ENTRY, lid, ltype, source, hosts[0], tuple(collateral),
                               compile_id)
    return (), NoFilter(NoFilterKind.NO_ENTRY, lid, ltype, source, compile_id=compile_id)


# --------------------------------------------------------------------------------------------------------------
# The filter: its source text, and what that text does to the recorded entries
# --------------------------------------------------------------------------------------------------------------


def filter_source(terms: Sequence[FilterTerm]) -> str:
    """The ``guard_filter_fn`` lambda for `terms`: keeps every entry no term matches.

    >>> filter_source([FilterTerm("n", ("CONSTANT_MATCH", "EQUALS_MATCH"))])
    'lambda entries: [not (e.name == "n" and e.guard_type in ("CONSTANT_MATCH", "EQUALS_MATCH")) for e in entries]'
    """
    parts = list(dict.fromkeys(t.source() for t in terms))
    cond = parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"
    return f"lambda entries: [not {cond} for e in entries]"


@dataclass(frozen=True)
class FilterRule:
    """One clause of a printed filter that stands for several `FilterTerm`s on sibling names: ``(e.name.startswith
    (HEAD) and e.name.endswith(TAIL) and e.guard_type == TYPE)`` (`grouping.spans` of the names).

    Attributes:
        head, tail: what every name starts and ends with (``"self._modules['blocks']._modules"``,
            ``"._modules['bn'].training"``).
        guard_types: the ``guard_type`` values to match (sorted).
        names: the names it stands for (the terms' names, in order).
        leaf_ids: the leaves of the planned compile those terms remove.
    """

    head: str
    tail: str
    guard_types: tuple[str, ...]
    names: tuple[str, ...]
    leaf_ids: tuple[str, ...] = ()
    one_slot: bool = False

    @property
    def pattern(self) -> str:
        """The names in one spelling (``"self._modules['blocks']._modules[*]._modules['bn'].training"``)."""
        return f"{self.head}[*]{self.tail}" if self.one_slot else f"{self.head} … {self.tail}"

    def source(self) -> str:
        types = (f'e.guard_type == "{self.guard_types[0]}"' if len(self.guard_types) == 1 else
                 "e.guard_type in (" + ", ".join(f'"{t}"' for t in self.guard_types) + ")")
        return f'(e.name.startswith("{self.head}") and e.name.endswith("{self.tail}") and {types})'


def rules_of(terms: Sequence[FilterTerm]) -> tuple[tuple[FilterRule, ...], tuple[FilterTerm, ...]]:
    """(rules, the terms no rule stands for): terms with the same guard types whose names end in the same
    accessor, three or more, become one `FilterRule` over their common head and tail. Unchecked: `checked_source`
    keeps the rules only when their text drops exactly what the terms drop."""
    from .grouping import accessors, spans

    buckets: dict[tuple[tuple[str, ...], str], list[FilterTerm]] = {}
    for t in terms:
        parts = accessors(t.name) if t.name else ()
        key = (t.guard_types, parts[-1] if len(parts) > 1 else "")
        buckets.setdefault(key, []).append(t)
    rules: list[FilterRule] = []
    rest: list[FilterTerm] = []
    for (types, last), members in buckets.items():
        if not last or len(members) < 3:
            rest += members
            continue
        head, tail, one_slot = spans([m.name for m in members])
        if not head or not tail:
            rest += members
            continue
        rules.append(FilterRule(head, tail, types, tuple(m.name for m in members),
                                tuple(i for m in members for i in m.leaf_ids), one_slot))
    return tuple(rules), tuple(t for t in terms if t in rest)


def ruled_source(rules: Sequence[FilterRule], terms: Sequence[FilterTerm]) -> str:
    """The ``guard_filter_fn`` lambda of `rules` and the `terms` no rule stands for."""
    parts = list(dict.fromkeys([r.source() for r in rules] + [t.source() for t in terms]))
    cond = parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"
    return f"lambda entries: [not {cond} for e in entries]"


def checked_source(terms: Sequence[FilterTerm], entry_sets: Sequence[Sequence[FilterEntry]]
                   ) -> tuple[str, tuple[FilterRule, ...]]:
    """(the filter text to print, the rules it uses): the rule form of `terms` when, evaluated on every one of
    `entry_sets` (the compiles it is meant for), it keeps and drops exactly what the one-term-per-name text does;
    else that text (no rules)."""
    plain = filter_source(terms)
    rules, rest = rules_of(terms)
    if not rules:
        return plain, ()
    ruled = ruled_source(rules, rest)
    try:
        same = all(evaluate_filter(ruled, es) == evaluate_filter(plain, es) for es in entry_sets)
    except ValueError:
        same = False
    return (ruled, rules) if same else (plain, ())


@dataclass(frozen=True)
class _EntryShape:
    """What a ``GuardFilterEntry`` looks like to a filter (the recorded fields; no value)."""

    name: str
    guard_type: str
    derived_guard_types: tuple[str, ...]
    is_global: bool
    has_value: bool = False
    value: Any = None
    orig_guard: Any = None


def evaluate_filter(source: str, entries: Sequence[FilterEntry]) -> tuple[bool, ...]:
    """Run the filter `source` (a lambda's text, as printed) on recorded entries; one keep-flag per entry.

    Raises:
        ValueError: the text is not a filter (does not compile, raises, or returns the wrong number of flags).
    """
    try:
        fn = eval(compile(source, "<guard_filter_fn>", "eval"), {"__builtins__": {}})  # noqa: S307 - our own text
        flags = list(fn([_EntryShape(e.name, e.guard_type, e.derived_guard_types, e.is_global) for e in entries]))
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"the filter does not run: {type(exc).__name__}: {exc}") from exc
    if len(flags) != len(entries) or not all(type(f) is bool for f in flags):
        raise ValueError("the filter does not return one bool per entry")
    return tuple(flags)


@dataclass(frozen=True)
class FilterPlan:
    """A ``guard_filter_fn`` for chosen leaves of one compile, checked on that compile's entries.

    Attributes:
        compile_id: the compile whose entries it was built from and checked on.
        leaf_ids: the leaves it is meant to drop.
        terms: its terms (empty when no filter can).
        source: the lambda's text (``""`` when no filter can).
        dropped: the entries the text drops, evaluated on the recorded entries.
        kept: how many entries it keeps.
        total: how many entries the compile has.
        ok: the text drops exactly the entries that stand for the leaves (and nothing else).
        why_not: for each leaf no filter can drop alone, why.
        unexpected: entries the text drops that stand for none of the leaves (``ok`` is then False).
        missed: entries that stand for a leaf but the text keeps (``ok`` is then False).
        rules: the clauses of `source` that each stand for several terms on sibling names (`FilterRule`; empty
            when the text has one clause per name).
    """

    compile_id: str
    leaf_ids: tuple[str, ...]
    terms: tuple[FilterTerm, ...] = ()
    source: str = ""
    dropped: tuple[FilterEntry, ...] = ()
    kept: int = 0
    total: int = 0
    ok: bool = False
    why_not: tuple[NoFilter, ...] = ()
    unexpected: tuple[FilterEntry, ...] = field(default=())
    missed: tuple[FilterEntry, ...] = field(default=())
    rules: tuple[FilterRule, ...] = ()


def plan_filter(leaves: Iterable[Any], recorded: CompileFilterEntries | None, compile_id: str = "") -> FilterPlan:
    """Build the ``guard_filter_fn`` that drops `leaves` (leaves of one compile's guard tree) and check it on
    that compile's recorded entries `recorded`.

    The plan is ``ok`` only when every leaf has entries that stand for it alone and the printed text, evaluated
    on the recorded entries, drops exactly those entries. Otherwise `why_not` (a leaf no filter can drop alone) or
    `unexpected` / `missed` (the text and the intent disagree) say what is wrong.
    """
    leaves = list(leaves)
    ids = tuple(leaf.id for leaf in leaves)
    cid = recorded.compile_id if recorded is not None else compile_id
    if recorded is None:
        return FilterPlan(cid, ids, why_not=tuple(
            NoFilter(NoFilterKind.NOT_RECORDED, leaf.id, leaf.guard_type, leaf.source, compile_id=cid)
            for leaf in leaves))
    entries = recorded.entries
    why: list[NoFilter] = []
    wanted: dict[int, FilterEntry] = {}
    terms: dict[str, tuple[set[str], list[str]]] = {}
    for leaf in leaves:
        found, problem = entries_for_leaf(leaf, entries, cid)
        if problem is not None:
            why.append(problem)
            continue
        for e in found:
            wanted[e.index] = e
            types, lids = terms.setdefault(e.name, (set(), []))
            types.add(e.guard_type)
            if leaf.id not in lids:
                lids.append(leaf.id)
    if why or not wanted:
        return FilterPlan(cid, ids, total=len(entries), why_not=tuple(why))
    term_list = tuple(FilterTerm(name, tuple(sorted(types)), tuple(lids)) for name, (types, lids) in terms.items())
    source, rules = checked_source(term_list, [entries])
    flags = evaluate_filter(source, entries)
    dropped = tuple(e for e, keep in zip(entries, flags) if not keep)
    unexpected = tuple(e for e in dropped if e.index not in wanted)
    missed = tuple(e for i, e in wanted.items() if flags[i])
    return FilterPlan(cid, ids, term_list, source, dropped, sum(flags), len(entries),
                      ok=not unexpected and not missed, unexpected=unexpected, missed=missed, rules=rules)


def match_terms(terms: Sequence[FilterTerm], name: str, guard_type: str) -> bool:
    """Whether a printed filter with `terms` drops an entry with these fields (what ``drop`` applies live)."""
    return any(t.matches(name, guard_type) for t in terms)
