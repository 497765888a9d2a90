"""The frozen records `dynadbg.core.toolkit` hands to a script: cache entries, guard checks, the operations of a
draft, what validation found, installed copies, re-binds. Data only (no torch objects beyond code objects kept
for identity, no prose): `dynadbg.core.format.toolkit` makes the text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .model import EditOp, GuardTree, LeafGuardView


class EntryKind(str, enum.Enum):
    """Where torch keeps an entry: in the code object's cache (tried most recently used first; counted against
    the recompile limit) or among its precompile entries (tried before every cache entry; on a miss torch goes
    on to the cache entries)."""

    CACHE = "cache"
    PRECOMPILE = "precompile"


class InstallMode(str, enum.Enum):
    """How `Draft.install` puts a copy in.

    * ``FRONT``: a precompile entry, tried before every cache entry. A call it rejects goes on to the code's
      cache entries (the original among them), then to a recompile.
    * ``NEXT``: a real cache entry beside the original, made by torch at the first call that misses every
      entry it already has and that the copy accepts (that call runs the copy). A call both accept runs
      whichever of them served last (torch tries entries most recently used first).
    * ``REPLACE``: the original entry is invalidated now, then as ``NEXT``: a call the copy rejects makes
      Dynamo compile the function's source again.
    """

    FRONT = "front"
    NEXT = "next"
    REPLACE = "replace"


@dataclass(frozen=True)
class CallSite:
    """The user line whose call made Dynamo compile an entry (the innermost frame outside torch and dynadbg
    on the stack at ``wrap_guarded_code``).

    Attributes:
        filename, lineno, function: where.
        line: the source text of that line, when it can be read.
    """

    filename: str
    lineno: int
    function: str
    line: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """What an entry's guards say about one call (`Entry.check`).

    Attributes:
        compile_id: the entry's.
        passed: True when torch would run this entry for the call (every guard passes).
        failing: every failing leaf guard (not only torch's first).
        tree: the guard tree with every leaf evaluated.
    """

    compile_id: str
    passed: bool
    failing: tuple[LeafGuardView, ...]
    tree: GuardTree


class GuardOpKind(str, enum.Enum):
    """The guard operations of a draft (kept as data: patch files save them, `persist` replays them)."""

    DROP = "drop"
    ADD = "add"
    LAMBDA = "lambda"
    TRANSPORT = "transport"
    REBIND_GLOBAL = "rebind_global"
    REBIND_ATTR = "rebind_attr"
    EXPR = "expr"            # a guard expression over L and G (the debugger's ``guard add EXPR``)


@dataclass(frozen=True)
class GuardOp:
    """One operation of a draft besides instruction edits.

    Attributes:
        kind: what it does.
        source: the source it works on (``"L['n']"``; the old source of a transport; the global's name for
            ``REBIND_GLOBAL``, the owner's source for ``REBIND_ATTR``).
        guard_type: the leaf type to drop (None: the whole manager at `source` and below it) or to add.
        target: the new source of a transport, the new global of ``REBIND_GLOBAL``, the new attribute of
            ``REBIND_ATTR`` (the attribute replaced is `attr`).
        attr: ``REBIND_ATTR``'s old attribute name.
        description: a lambda guard's text (its function is not saved in patch files).
        fn: a lambda guard's function (not part of equality).
    """

    kind: GuardOpKind
    source: str
    guard_type: str | None = None
    target: str | None = None
    attr: str | None = None
    description: str | None = None
    fn: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.kind.value, "source": self.source}
        for key in ("guard_type", "target", "attr", "description"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class ProblemKind(str, enum.Enum):
    """Why validation refuses a draft."""

    EDIT = "edit"                        # the instruction edits do not validate (stack, layout, ...)
    UNGUARDED_INPUT = "unguarded input"  # the code feeds the graph a source no guard covers
    GUARD_FAILS = "guard fails"          # the new object fails a guard built for the old one
    NO_VALUE = "no value"                # a source to guard cannot be read on live objects
    BAKED_VALUE = "baked value"          # a dropped guard pins a value Dynamo specialised on
    NOT_FOUND = "not found"              # a guard op names a guard or source the tree does not have
    UNSUPPORTED = "unsupported"          # this torch lacks an API, or a guard kind cannot be rebuilt


@dataclass(frozen=True)
class Problem:
    """One reason a draft is refused.

    Attributes:
        kind: what is wrong.
        source: the source concerned (``"G['lin_b']._parameters['weight']"``), when there is one.
        guard_type: the guard concerned (the failing one, the dropped one), when there is one.
        guard_code: that guard's code as torch wrote it, when there is one.
        graph_input: the position of the graph input concerned, when there is one.
        old_source: the source that graph input had in Dynamo's code, when it changed.
        detail: the underlying error text (an `EditError`'s message, an exception), when there is one.
    """

    kind: ProblemKind
    source: str | None = None
    guard_type: str | None = None
    guard_code: str | None = None
    graph_input: int | None = None
    old_source: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class AddedGuard:
    """A real leaf guard a draft's copy carries that the original did not: added by the user, carried over by
    a transport, or added by the validator for a source an edit made the graph read.

    Attributes:
        source: where it hangs (``"G['lin_b']._parameters['weight']"``).
        guard_type: ``TENSOR_MATCH``, ``TYPE_MATCH``, ...
        code: its code part (as torch writes it).
        why: ``"added"``, ``"transported"`` (from `from_source`) or ``"validator"`` (a new graph-input source).
        from_source: the source it was carried from, for a transport or the validator.
    """

    source: str
    guard_type: str
    code: str
    why: str
    from_source: str | None = None


@dataclass(frozen=True)
class Validation:
    """What validating a draft found (`Draft.validate`).

    Attributes:
        problems: every reason to refuse (empty: the copy may be installed).
        added: guards the copy carries beyond the original's.
        dropped: (source, guard type or None for the whole manager) of each dropped guard.
        new_sources: graph-input sources that differ from Dynamo's code (position, old source, new source).
        compile_id: the entry the draft was copied from.
    """

    problems: tuple[Problem, ...]
    added: tuple[AddedGuard, ...] = ()
    dropped: tuple[tuple[str, str | None], ...] = ()
    new_sources: tuple[tuple[int, str | None, str | None], ...] = ()
    compile_id: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class InstalledView:
    """An installed copy, as a handle shows it (`Handle.view`).

    Attributes:
        compile_id: the copy's own compile id.
        copied_from: the compile id it was copied from.
        mode: how it was installed.
        pending: True while a ``NEXT``/``REPLACE`` copy waits for the first call that needs it.
        hits: calls it served.
        persist: whether it is re-applied when Dynamo recompiles the code.
        removed: True after `Handle.remove`.
        forced: the problems a ``force=True`` install overrode.
        edit_ops, guard_ops: the draft's instruction edits and guard operations.
        not_reapplied: (compile id, problems) of each later compile `persist` could not apply the draft to (that
            compile runs Dynamo's own code).
    """

    compile_id: str
    copied_from: str
    mode: InstallMode
    pending: bool
    hits: int
    persist: bool
    removed: bool
    forced: tuple[Problem, ...] = ()
    edit_ops: tuple[EditOp, ...] = ()
    guard_ops: tuple[GuardOp, ...] = ()
    not_reapplied: tuple[tuple[str, tuple[Problem, ...]], ...] = ()


@dataclass(frozen=True)
class RebindResult:
    """What `dynadbg.core.toolkit.rebind` did for one name.

    Attributes:
        key: the name or path re-bound (``"lin_a"``, ``"layers.3"``).
        old_source: the source the compiled code read (``"G['lin_a']"``).
        new_source: the source it reads now (``"G['lin_b']"``; the same as `old_source` for a swap).
        swapped: True when the new object was put in the slot itself (``model.layers[3] = new_layer``).
        accepted_by: compile ids of entries whose own guards already accept the new object there: nothing
            was installed for them.
        installed: compile ids of the copies installed.
        copied_from: for each installed copy, the entry it was copied from.
    """

    key: str
    old_source: str
    new_source: str
    swapped: bool
    accepted_by: tuple[str, ...] = ()
    installed: tuple[str, ...] = ()
    copied_from: tuple[str, ...] = ()
