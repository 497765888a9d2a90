"""Recompile insight (issue 4): what a cache miss looks like, recorded as it happens, and what the user can do.

When a code object that already has cache entries misses all of them, Dynamo compiles it again. Torch's own
log names the *first* failing guard of each entry. This module records, at that moment and without pausing:

* every failing guard of every entry, evaluated on the inputs of that call (`dynadbg.core.guards`), with the
  one torch reports marked and spelled as torch spells it (``0/0: self.counter == 0``);
* failures that are not about the inputs: global state (grad mode, ...), the torch-function mode stack, the
  default device, dispatch keys, entries torch invalidated (``... got deallocated``);
* the guard diffs of consecutive entries (what each recompile changed);
* where the code stands against ``torch._dynamo.config.recompile_limit`` (the compile that follows may hit it);
* the compile id the recompile will get, the decision taken (recompile, eager, skip, drop, dynamic) and what
  came of it.

`RecompileLog` keeps those `RecompileRecord`s for a run (the session and ``dynadbg report`` each own one).
`GuardDropper` filters chosen guards out of the compile that follows a recompile stop (``drop``). The
``*_text`` functions render plain text for the stop, ``compiles``/``entries`` and ``report``; ``*_json`` the
report's JSON. Every private torch API used here is in `dynadbg.core.compat` (section "recompile").
"""

from __future__ import annotations

import dis
import re
import threading
from dataclasses import dataclass, field, fields, replace
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from . import compat
from .model import CompiledFrameView, GuardStatus, GuardTree, LeafGuardView
from .values import cut, summarize

if TYPE_CHECKING:
    from .guards import GuardDiff
    from .session import PauseContext, Session

__all__ = [
    "CompilesData",
    "EntryDiff",
    "EntryVerdict",
    "FrameRecompiles",
    "GuardDropper",
    "LimitStatus",
    "NonGuardFailure",
    "RecompileLog",
    "RecompileRecord",
    "analyze_miss",
    "drop_spec",
    "entry_diffs",
    "graph_break_detail",
    "record_json",
    "record_text",
    "stop_detail",
    "what_if",
]

#: Leaf types that compare the guarded value with a constant Dynamo traced (it specialised on the value).
VALUE_GUARDS = frozenset({"EQUALS_MATCH", "TRUE_MATCH", "FALSE_MATCH", "NONE_MATCH", "NOT_NONE"})
#: ``GuardFilterEntry.guard_type`` / ``derived_guard_types`` names behind a value leaf. A ``CONSTANT_MATCH`` on
#: ``s.counter`` comes with an ``EQUALS_MATCH`` entry of the same name: dropping only one keeps the leaf
#: (VERIFIED torch 2.13: 4 entries for 4 counter values; both dropped: 1 entry).
_VALUE_FILTER_TYPES = frozenset({"CONSTANT_MATCH", "EQUALS_MATCH", "BOOL_MATCH", "NONE_MATCH", "NOT_NONE_MATCH",
                                 "TRUE_MATCH", "FALSE_MATCH", "NOT_NONE"})
#: Root ("ambient") leaves and the guard_filter_fn types that create them (names are "" in the filter).
_ROOT_FILTER_TYPES: dict[str, tuple[str, ...]] = {
    "GLOBAL_STATE": ("GLOBAL_STATE",),
    "TORCH_FUNCTION_MODE_STACK": ("TORCH_FUNCTION_STATE",),
    "DEFAULT_DEVICE": ("DEFAULT_DEVICE",),
}
_OTHER_FILTER_TYPES: dict[str, tuple[str, ...]] = {
    "DICT_CONTAINS": ("DICT_CONTAINS", "DICT_NOT_CONTAINS"),
}
#: Pseudo-leaves of `guards` that are no guard of any compile.
_PSEUDO = frozenset({"CACHE_ENTRY_INVALIDATED", "CHECK_VERBOSE", "BACKEND_MATCH", "DICT_LENGTH"})
#: Failure kinds that are not about the call's inputs.
NON_INPUT_KINDS = ("invalidated", "global state", "torch function mode", "default device", "saved-tensors hooks",
                   "dispatch keys", "torch check", "backend")


# --------------------------------------------------------------------------------------------------------------
# Records (frozen)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitStatus:
    """Where a code object stands against Dynamo's recompile limits when it misses its cache.

    Attributes:
        entries: cache entries of the code object before this compile.
        counted: those that count toward ``recompile_limit`` (entries guarding the same ID_MATCH'd objects, e.g.
            the same module instance; usually all of them).
        total: entries across all ``isolate_recompiles`` regions (what ``accumulated_recompile_limit`` counts).
        limit: ``torch._dynamo.config.recompile_limit`` (alias ``cache_size_limit``) at that moment.
        accumulated_limit: ``torch._dynamo.config.accumulated_recompile_limit``.
        exceeds: the limit this compile hits (``"recompile_limit"`` / ``"accumulated_recompile_limit"``), else
            None. When set, Dynamo does not compile: the code runs its existing entries only, else eagerly, for
            the rest of the run (``RUN_ONLY``) — unless `raises`.
        is_recompile: torch counts and logs this compile as a recompile (False when only entries for other
            ID_MATCH'd objects exist).
        limit_source: where `limit` comes from: ``"torch.compile(recompile_limit=2)"`` (the per-compile option,
            which torch puts in place of the config value for that region) or
            ``"torch._dynamo.config.recompile_limit"``.
        raises: why a limit hit raises ``FailOnRecompileLimitHit`` in the program instead of running the call
            eagerly (``"fail_on_recompile_limit_hit=True"``, ``"fullgraph=True"``), else None.

    What a LIMIT HIT stop may offer follows from these facts: torch will not compile (so "recompile" is not
    what torch does: with `raises` torch raises in the program, else the call runs eagerly and so do all later
    misses of this code); only "eager" (run this call uncompiled) and "skip" remain meaningful.
    """

    entries: int
    counted: int
    total: int
    limit: int
    accumulated_limit: int
    exceeds: str | None = None
    is_recompile: bool = True
    limit_source: str = "torch._dynamo.config.recompile_limit"
    raises: str | None = None

    @property
    def hit_now(self) -> bool:
        """This compile hits a limit (Dynamo will not compile)."""
        return self.exceeds is not None

    @property
    def hit_next(self) -> bool:
        """This compile fills the limit: the next recompile of the code hits it."""
        return self.exceeds is None and (self.counted + 1 >= self.limit or self.total + 1 >= self.accumulated_limit)

    def text(self) -> str:
        """One line, e.g. ``"2 of recompile_limit 8 used; after this compile 3 of 8"``."""
        head = f"{self.counted} of recompile_limit {self.limit} used"
        if self.counted != self.entries:
            head += f" ({self.entries} entries; only those for the same ID_MATCH'd objects count)"
        if self.limit_source != "torch._dynamo.config.recompile_limit":
            head += f" (set by {self.limit_source})"
        if self.exceeds is not None:
            if self.exceeds == "recompile_limit":
                where = (self.limit_source if self.limit_source != "torch._dynamo.config.recompile_limit"
                         else f"torch._dynamo.config.recompile_limit ({self.limit})")
            else:
                where = f"torch._dynamo.config.accumulated_recompile_limit ({self.accumulated_limit})"
            if self.raises is not None:
                return (f"{head}: LIMIT HIT — this compile exceeds {where}; Dynamo will not compile and RAISES "
                        f"FailOnRecompileLimitHit in the program ({self.raises})")
            return (f"{head}: LIMIT HIT — this compile exceeds {where}; "
                    f"Dynamo will not compile: the code runs its existing entries only, else eagerly, from now on")
        if self.hit_next:
            return (f"{head}; after this compile {self.counted + 1} of {self.limit}: "
                    f"the NEXT recompile of this code hits the limit")
        return f"{head}; after this compile {self.counted + 1} of {self.limit}"


@dataclass(frozen=True)
class EntryVerdict:
    """One old cache entry checked on the inputs that missed.

    Attributes:
        compile_id: the entry's compile id (``"0/0"``).
        passed: every guard passes (then torch did not use it for another reason: backend, region).
        failing: every failing leaf (FAIL, ERROR, and the NO_VALUE leaf where a value is missing), tree order.
        first_failure: what torch's ``check_verbose`` reports first (the guard torch's recompile log names).
        torch_reason: that reason as torch prints it: sources shortened, ``"0/0: self.counter == 0"``.
        torch_leaf: id of the failing leaf torch reports, when it is one of `failing`.
        invalidated: torch's reason when the entry was invalidated (``"... got deallocated"``), else None.
        leaf_count: leaves of the entry's tree.
        error: why the entry could not be analysed, else None.
    """

    compile_id: str
    passed: bool
    failing: tuple[LeafGuardView, ...] = ()
    first_failure: str | None = None
    torch_reason: str | None = None
    torch_leaf: str | None = None
    invalidated: str | None = None
    leaf_count: int = 0
    error: str | None = None


@dataclass(frozen=True)
class NonGuardFailure:
    """A failure that is not about the call's inputs (global state, an invalidated entry, dispatch keys ...).

    Attributes:
        kind: one of `NON_INPUT_KINDS`.
        compile_id: the entry it was seen on.
        text: what happened, one line.
    """

    kind: str
    compile_id: str
    text: str


@dataclass(frozen=True)
class EntryDiff:
    """`guards.diff_guard_trees` of two consecutive entries (older → newer, in compile order)."""

    old: str
    new: str
    diffs: tuple["GuardDiff", ...]


@dataclass(frozen=True)
class RecompileRecord:
    """One cache miss of a code object that already had entries: what failed, and what came of it.

    Attributes:
        seq: 1-based order of the miss in the run (the recompile timeline).
        code_key: ``id`` of the original code object (`CompiledFrameView.key`).
        frame_name, filename, firstlineno: the code object.
        compile_id: the id the compile that follows gets (``"0/2"``; predicted from Dynamo's counter), or None.
        entries: every entry checked on the call's inputs, in torch's order (most recently used first — the
            order torch's recompile reasons use).
        non_input: failures that are not about the inputs.
        inputs: (name, summary) of the call's locals (arguments and free variables).
        diffs: guard diffs of consecutive entries, oldest pair first.
        limit: the recompile-limit situation, None when it could not be computed.
        decision: ``"recompile"`` (also when no stop was active), ``"eager"`` or ``"skip"``.
        action: what the user did on top of the decision (``"drop g4"``, ``"mark_dynamic(x, 0)"``), else None.
        outcome: what the compile produced, when known (``"compiled 0/2"``; see `outcome_text`).
        error: why the analysis failed, else None.
        pending: True while the program is paused at this miss's recompile stop (nothing decided yet).
    """

    seq: int
    code_key: int
    frame_name: str
    filename: str
    firstlineno: int
    compile_id: str | None
    entries: tuple[EntryVerdict, ...] = ()
    non_input: tuple[NonGuardFailure, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    diffs: tuple[EntryDiff, ...] = ()
    limit: LimitStatus | None = None
    decision: str = "recompile"
    action: str | None = None
    outcome: str | None = None
    error: str | None = None
    pending: bool = False

    @property
    def torch_reasons(self) -> tuple[str, ...]:
        """One torch-style reason per failing entry (``"0/0: self.counter == 0"``), in torch's order."""
        return tuple(v.torch_reason for v in self.entries if v.torch_reason)

    @property
    def limit_hit(self) -> bool:
        return self.limit is not None and self.limit.hit_now and self.decision == "recompile"

    def outcome_text(self) -> str:
        """``"compiled 0/2"``, ``"recompile limit hit: not compiled"``, ``"ran eagerly"``, ``"compiling stopped"``,
        ``"no entry"`` (the compile gave none: a failure or a skip) or ``"pending"``."""
        if self.outcome:
            return self.outcome
        if self.pending:
            return "pending (the program is paused at this recompile stop)"
        if self.decision == "eager":
            return "ran eagerly (not compiled)"
        if self.decision == "skip":
            return "compiling stopped for this code; existing entries still serve"
        if self.limit_hit:
            if self.limit is not None and self.limit.raises is not None:
                return f"recompile limit hit: not compiled; torch raised FailOnRecompileLimitHit ({self.limit.raises})"
            return "recompile limit hit: not compiled"
        return "no entry (the compile gave none)"


# --------------------------------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------------------------------


def what_if(cache_entries: Sequence[Any], f_locals: dict[str, Any], *,
            closure: dict[str, Any] | None = None, backend: Any = None) -> list[GuardTree]:
    """Every entry's guard tree evaluated on `f_locals` (synthetic inputs welcome). Values that cannot be
    produced (a missing closure variable, a missing dict key) make their guards NO_VALUE; nothing raises for
    them. Relational guards (``NO_TENSOR_ALIASING``) are judged through the root's ``check_verbose``. With
    `backend` (the call's backend object), an entry compiled with another backend fails with a
    ``BACKEND_MATCH`` pseudo-leaf (`guards.entry_guard_tree`)."""
    from . import guards

    return [_safe_tree(guards, entry, f_locals, closure, backend) for entry in cache_entries]


def _safe_tree(guards: Any, entry: Any, f_locals: dict[str, Any], closure: dict[str, Any] | None,
               backend: Any = None) -> GuardTree | str:
    try:
        return guards.entry_guard_tree(entry, f_locals, closure=closure, backend=backend)
    except Exception as exc:  # noqa: BLE001 - one odd entry must not hide the others
        return f"{type(exc).__name__}: {exc}"


def _torch_reason(compile_id: str, text: str) -> str:
    return compat.strip_local_scope(f"{compile_id}: {text}")


def failure_kind(leaf: LeafGuardView) -> str:
    """What a failing leaf is about: ``"input"`` (``L[...]``), ``"global"`` (``G[...]``), ``"shape"`` (epilogue
    symbolic-shape guard) or one of `NON_INPUT_KINDS`."""
    gtype = leaf.guard_type
    if gtype == "CACHE_ENTRY_INVALIDATED":
        return "invalidated"
    if gtype == "CHECK_VERBOSE":
        return "torch check"
    if gtype == "BACKEND_MATCH":
        return "backend"
    if gtype == "GLOBAL_STATE":
        return "global state"
    if gtype == "TORCH_FUNCTION_MODE_STACK":
        return "torch function mode"
    if gtype == "DEFAULT_DEVICE":
        return "default device"
    if leaf.epilogue:
        return "shape"
    if leaf.source == "L" and "saved_tensors_hooks" in " ".join(leaf.code):
        return "saved-tensors hooks"
    if gtype == "TENSOR_MATCH" and leaf.reason and "dispatch key set mismatch" in leaf.reason \
            and " device mismatch. " not in leaf.reason:
        return "dispatch keys"
    if leaf.source.startswith("G"):
        return "global"
    return "input"


_GLOBAL_STATE_NOW: dict[str, Callable[[Any], str]] = {
    "grad_mode": lambda t: "grad mode is " + ("on" if t.is_grad_enabled() else "off (no_grad / inference)"),
    "deterministic_algorithms": lambda t: f"deterministic algorithms {t.are_deterministic_algorithms_enabled()}",
    "default_dtype": lambda t: f"default dtype {t.get_default_dtype()}",
    "num_threads": lambda t: f"num_threads {t.get_num_threads()}",
    "autocast_state": lambda t: "autocast state changed (an autocast context is entered or left)",
    "torch_function": lambda t: f"torch function {'enabled' if t._C._is_torch_function_enabled() else 'disabled'}",
}


def _global_state_text(reason: str | None) -> str:
    """``"GLOBAL_STATE changed: grad_mode "`` → ``"GLOBAL_STATE changed: grad_mode (now: grad mode is off ...)"``."""
    text = (reason or "GLOBAL_STATE changed").strip()
    names = text.partition("changed:")[2].replace(",", " ").split()
    now = []
    try:
        import torch

        for name in names:
            describe = _GLOBAL_STATE_NOW.get(name)
            if describe is not None:
                now.append(describe(torch))
    except Exception:  # noqa: BLE001 - the description is a courtesy
        pass
    return f"{text} (now: {'; '.join(now)})" if now else text


def _non_input(verdict: EntryVerdict) -> list[NonGuardFailure]:
    out: list[NonGuardFailure] = []
    cid = verdict.compile_id
    if verdict.invalidated:
        out.append(NonGuardFailure("invalidated", cid, f"cache entry {cid} was invalidated: {verdict.invalidated}"))
        return out
    if verdict.passed:
        out.append(NonGuardFailure(
            "backend", cid, f"every guard of {cid} passes: torch did not use it for another reason (a different "
            f"backend callable: BACKEND_MATCH; or another isolate_recompiles region)"))
        return out
    for leaf in verdict.failing:
        kind = failure_kind(leaf)
        if kind not in NON_INPUT_KINDS:
            continue
        if kind == "global state":
            text = _global_state_text(leaf.reason)
        elif kind == "dispatch keys":
            text = leaf.reason or "dispatch keys differ"
        elif kind == "torch check":
            text = leaf.reason or "torch's check fails where no single guard does"
        elif kind == "backend":
            text = f"{cid} was {leaf.reason}" if leaf.reason else "compiled with another backend callable"
        else:
            text = f"{kind} changed: {'; '.join(leaf.code)}" + (f" (now {leaf.actual})" if leaf.actual else "")
        out.append(NonGuardFailure(kind, cid, text))
    return out


def _verdict(tree: GuardTree | str, entry: Any) -> EntryVerdict:
    if isinstance(tree, str):
        cid = str(getattr(entry, "compile_id", "?"))
        try:
            passed, parts, _ = compat.guard_check_verbose(entry.guard_manager, {})
            first = "; ".join(parts) or None
        except Exception:  # noqa: BLE001
            first = None
        return EntryVerdict(cid, False, first_failure=first, error=tree)
    torch_leaf = None
    if tree.first_failure:
        torch_leaf = _torch_leaf(tree)
    reason = None
    if tree.invalidated:
        reason = f"{tree.compile_id}: {tree.invalidated}"
    elif tree.first_failure:
        reason = _torch_reason(tree.compile_id, tree.first_failure)
    return EntryVerdict(
        compile_id=tree.compile_id,
        passed=bool(tree.passed),
        failing=tuple(tree.failing),
        first_failure=tree.first_failure,
        torch_reason=reason,
        torch_leaf=torch_leaf,
        invalidated=tree.invalidated,
        leaf_count=tree.leaf_count,
    )


def _torch_leaf(tree: GuardTree) -> str | None:
    """The failing leaf torch's first failure is about (its code or its reason starts torch's text)."""
    first = tree.first_failure or ""
    head = re.split(r"\s{2,}#", first, maxsplit=1)[0].strip()
    for leaf in tree.failing:
        if (leaf.code and head == "; ".join(leaf.code)) or (leaf.reason and head == leaf.reason.strip()):
            return leaf.id
    for leaf in tree.failing:
        if leaf.code and head.startswith(leaf.code[0]) or (leaf.reason and leaf.reason.strip() in head):
            return leaf.id
    for leaf in tree.failing:
        # torch's tensor-check text names the source (``tensor 'L['x']' ...``) even where ours is reworded
        if leaf.guard_type == "TENSOR_MATCH" and (head.startswith(f"tensor '{leaf.source}' ")
                                                  or head.startswith(f"expected type of '{leaf.source}'")):
            return leaf.id
    real = [leaf for leaf in tree.failing if leaf.guard_type != "BACKEND_MATCH"]
    if len(real) == 1:
        # torch's text is its own wording (e.g. "_has_dynamo_dim_marking is present on runtime tensor ..."),
        # but only one guard fails: that is the one torch reports
        return real[0].id
    return None


def entry_diffs(trees: Sequence[GuardTree], *, cache: dict[Any, tuple["GuardDiff", ...]] | None = None,
                keys: Sequence[Any] | None = None) -> tuple[EntryDiff, ...]:
    """Guard diffs of consecutive trees in compile order (`trees` oldest first): 0/0 → 0/1, 0/1 → 0/2, ...

    Args:
        cache: optional memo keyed by ``(keys[i], keys[i + 1])`` (e.g. the guard managers' ids with the compile
            ids): entries do not change, so a diff is computed once per pair.
    """
    from . import guards

    out = []
    for i in range(len(trees) - 1):
        old, new = trees[i], trees[i + 1]
        key = (keys[i], keys[i + 1]) if keys is not None else None
        diffs = cache.get(key) if cache is not None and key is not None else None
        if diffs is None:
            diffs = tuple(guards.diff_guard_trees(old, new))
            if cache is not None and key is not None:
                cache[key] = diffs
        out.append(EntryDiff(old.compile_id, new.compile_id, diffs))
    return tuple(out)


def _compile_order_key(compile_id: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", compile_id)) or (0,)


def analyze_miss(code: CodeType, f_locals: dict[str, Any], cache_entries: Sequence[Any], *, seq: int = 0,
                 diff_cache: dict[Any, tuple["GuardDiff", ...]] | None = None,
                 backend: Any = None, callback: Any = None) -> RecompileRecord:
    """Everything `RecompileRecord` holds for one cache miss, computed now (worker thread, before the compile).

    `backend` is the backend object of the call that missed (``CacheMissEvent.backend``): entries compiled with
    another backend callable are reported as rejected for it (BACKEND_MATCH), with both backends named.
    `callback` is torch's callback that missed (``CacheMissEvent.callback``): the recompile limit is read from
    it when ``torch.compile(..., recompile_limit=N)`` set one for this region.

    Never raises: a failure is kept in ``record.error`` with whatever could be computed.
    """
    entries = list(cache_entries)
    name = getattr(code, "co_qualname", code.co_name)
    base = RecompileRecord(seq, id(code), name, code.co_filename, code.co_firstlineno,
                           compat.next_compile_id(entries))
    try:
        trees = what_if(entries, f_locals, backend=backend)
        verdicts = tuple(_verdict(t, e) for t, e in zip(trees, entries))
        non_input = tuple(f for v in verdicts for f in _non_input(v))
        inputs = tuple((str(k), summarize(v).text) for k, v in list(f_locals.items())[:40])
        good = [(t, e) for t, e in zip(trees, entries) if isinstance(t, GuardTree) and not t.invalidated]
        good.sort(key=lambda te: _compile_order_key(te[0].compile_id))
        keys = [(id(e.guard_manager), t.compile_id) for t, e in good]
        diffs = entry_diffs([t for t, _ in good], cache=diff_cache, keys=keys)
    except Exception as exc:  # noqa: BLE001 - analysis must never break the program
        return replace(base, error=f"{type(exc).__name__}: {exc}")
    limit = None
    try:
        state = compat.recompile_limit_state(code, f_locals, entries, callback)
        limit = LimitStatus(state["entries"], state["counted"], state["total"], state["limit"],
                            state["accumulated_limit"], state["exceeds"], state["is_recompile"],
                            state["limit_source"], state["raises"])
    except Exception:  # noqa: BLE001 - no limit information on this torch
        limit = None
    return replace(base, entries=verdicts, non_input=non_input, inputs=inputs, diffs=diffs, limit=limit)


class RecompileLog:
    """The `RecompileRecord`s of one run, in the order the misses happened.

    Wire `on_cache_miss` as `Capture`'s ``on_cache_miss`` (or call `record_miss` from a hook that decides) and
    `on_compiled` as a compile hook. Thread-safe; the analysis runs on the thread that missed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RecompileRecord] = []
        self._diff_cache: dict[Any, tuple["GuardDiff", ...]] = {}

    # hooks ---------------------------------------------------------------------------------------------------
    def record_miss(self, event: Any, *, pending: bool = False) -> RecompileRecord:
        """Analyse a `capture.CacheMissEvent` now and keep the record (decision ``recompile`` until told;
        `pending` while a stop decides: `update` it with ``decision=..., pending=False``)."""
        with self._lock:
            seq = len(self._records) + 1
        if getattr(event, "after_limit", False):
            return self._record_after_limit(event)
        record = analyze_miss(event.code, event.f_locals, event.cache_entries, seq=seq, diff_cache=self._diff_cache,
                              backend=getattr(event, "backend", None), callback=getattr(event, "callback", None))
        with self._lock:
            record = replace(record, seq=len(self._records) + 1, pending=pending)
            self._records.append(record)
        return record

    def _record_after_limit(self, event: Any) -> RecompileRecord:
        """A miss torch answers without compiling because the code hit its recompile limit: kept in the
        timeline (decision ``eager``, no compile id), without re-checking every entry (it may happen on every
        call from then on); the limit is the one the hit was recorded with."""
        code = event.code
        name = getattr(code, "co_qualname", code.co_name)
        with self._lock:
            limit = next((r.limit for r in reversed(self._records)
                          if r.code_key == id(code) and r.limit is not None and r.limit.hit_now), None)
            record = RecompileRecord(len(self._records) + 1, id(code), name, code.co_filename, code.co_firstlineno,
                                     None, inputs=tuple((str(k), summarize(v).text)
                                                        for k, v in list(event.f_locals.items())[:40]),
                                     limit=limit, decision="eager",
                                     outcome="ran eagerly: the recompile limit was hit earlier, torch compiles "
                                             "this code no more (its entries still serve calls they accept)")
            self._records.append(record)
        return record

    def on_cache_miss(self, event: Any) -> None:
        """`Capture`'s ``on_cache_miss``: record, never pause, let Dynamo recompile (returns None)."""
        try:
            self.record_miss(event)
        except Exception:  # noqa: BLE001 - recording must never break the program
            pass
        return None

    def on_compiled(self, event: Any) -> None:
        """A compile hook (`capture.CompileEvent`): the record that predicted this compile id gets its outcome."""
        key, cid = id(event.original_code), str(event.compile_id)
        with self._lock:
            for i in range(len(self._records) - 1, -1, -1):
                rec = self._records[i]
                if rec.code_key == key and rec.compile_id == cid and rec.outcome is None:
                    self._records[i] = replace(rec, outcome=f"compiled {cid}")
                    return

    # updates -------------------------------------------------------------------------------------------------
    def update(self, record: RecompileRecord, **changes: Any) -> RecompileRecord:
        """Replace fields of the kept record with `record`'s seq (``decision=``, ``action=``, ``outcome=``)."""
        with self._lock:
            index = record.seq - 1
            if 0 <= index < len(self._records) and self._records[index].code_key == record.code_key:
                self._records[index] = new = replace(self._records[index], **changes)
                return new
        return replace(record, **changes)

    # queries -------------------------------------------------------------------------------------------------
    def records(self) -> tuple[RecompileRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def latest(self, seq: int) -> RecompileRecord | None:
        with self._lock:
            return self._records[seq - 1] if 0 < seq <= len(self._records) else None

    def for_code(self, code_key: int) -> tuple[RecompileRecord, ...]:
        return tuple(r for r in self.records() if r.code_key == code_key)

    def find(self, code_key: int, compile_id: str) -> RecompileRecord | None:
        """The record whose compile got `compile_id` (the last one, if the id was predicted twice)."""
        found = None
        for r in self.records():
            if r.code_key == code_key and r.compile_id == compile_id:
                found = r
        return found


# --------------------------------------------------------------------------------------------------------------
# Dropping guards from the compile that follows (``drop``)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DropSpec:
    """Which ``GuardFilterEntry``s of the next compile stand for one leaf of an old entry.

    Attributes:
        leaf: the old entry's leaf (its code says what is dropped).
        source: ``orig_guard.name`` to match (``"L['s'].counter"``; ``""`` for ambient guards).
        filter_types: guard types to drop (``GuardFilterEntry.guard_type``, or one of ``derived_guard_types``).
        name: the name a user's ``guard_filter_fn`` sees (``"s.counter"``).
        warning: why results may be wrong without this guard, else None.
    """

    leaf: LeafGuardView
    source: str
    filter_types: tuple[str, ...]
    name: str
    warning: str | None = None

    def matches(self, source: str, guard_type: str, derived: tuple[str, ...]) -> bool:
        return source == self.source and (guard_type in self.filter_types or any(d in self.filter_types for d in derived))


def drop_spec(leaf: LeafGuardView) -> DropSpec:
    """How to filter `leaf`'s guard out of a compile.

    Raises:
        ValueError: the leaf cannot be dropped by a guard filter (relational guards such as
            ``NO_TENSOR_ALIASING`` are added by Dynamo for every tensor pair; pseudo-leaves for invalidated entries).
    """
    gtype = leaf.guard_type
    if gtype == "DICT_LENGTH":
        raise ValueError(f"{leaf.id} (DICT_LENGTH) is the length check of the dict's own guard manager; no guard "
                         f"filter removes it alone")
    if gtype in _PSEUDO:
        raise ValueError(f"{leaf.id} ({gtype}) is not a guard: nothing to drop")
    if leaf.relational:
        raise ValueError(f"{leaf.id} ({gtype}) is a relational guard Dynamo adds for every tensor pair; "
                         f"no guard filter removes it")
    if leaf.epilogue:
        return DropSpec(leaf, "", ("SHAPE_ENV",), "",
                        "symbolic-shape guard: dropping SHAPE_ENV drops every shape relation of the new entry; "
                        "a call with other sizes may run a graph traced for these — results may be wrong")
    if leaf.source == "L":
        types = _ROOT_FILTER_TYPES.get(gtype)
        if types is None and gtype == "LAMBDA_GUARD" and "saved_tensors_hooks" in " ".join(leaf.code):
            types = ("AUTOGRAD_SAVED_TENSORS_HOOKS",)
        if types is None:
            raise ValueError(f"{leaf.id} ({gtype}) is an ambient guard no guard filter removes")
        return DropSpec(leaf, "", types, "", "global-state guard: the new entry will also serve calls under other "
                        "global state (grad mode, autocast, ...) with a graph traced under this one — results "
                        "may be wrong")
    name = compat.strip_local_scope(leaf.source)
    if gtype in VALUE_GUARDS:
        expected = leaf.expected if leaf.expected is not None else "?"
        actual = leaf.actual if leaf.actual is not None else "the new value"
        warning = (f"{leaf.source} is a constant to Dynamo: it traced {leaf.source} == {expected} by value and "
                   f"baked it into the FX graph / the generated code. Without this guard the entry compiled for "
                   f"{actual} serves every later value unchecked — RESULTS MAY BE WRONG")
        return DropSpec(leaf, leaf.source, tuple(sorted(_VALUE_FILTER_TYPES)), name, warning)
    warning = None
    if gtype == "TENSOR_MATCH":
        warning = (f"tensor guard: the graph was traced for this dtype/device/shape/requires_grad of "
                   f"{leaf.source}; other tensors will run it unchecked — results may be wrong or crash")
    elif gtype in ("ID_MATCH", "TYPE_MATCH"):
        warning = (f"{gtype}: Dynamo assumed this {'object' if gtype == 'ID_MATCH' else 'type'} while tracing; "
                   f"other objects will run code traced for it — results may be wrong")
    types = _OTHER_FILTER_TYPES.get(gtype, (gtype,))
    return DropSpec(leaf, leaf.source, types, name, warning)


def filter_snippet(specs: Sequence[DropSpec], fn_name: str = "fn") -> str:
    """The ``guard_filter_fn`` a user would pass to drop the same guards permanently.

    >>> filter_snippet([spec_for_counter], "model")
    'torch.compile(model, options={"guard_filter_fn": lambda entries: [not (e.name == "s.counter" and e.guard_type in ("CONSTANT_MATCH", "EQUALS_MATCH")) for e in entries]})'
    """
    terms = []
    for spec in specs:
        shown = _snippet_types(spec)
        types = f'e.guard_type == "{shown[0]}"' if len(shown) == 1 else \
            "e.guard_type in (" + ", ".join(f'"{t}"' for t in shown) + ")"
        terms.append(f'(e.name == "{spec.name}" and {types})')
    unique = list(dict.fromkeys(terms))
    cond = unique[0] if len(unique) == 1 else "(" + " or ".join(unique) + ")"
    return (f'torch.compile({fn_name}, options={{"guard_filter_fn": lambda entries: '
            f'[not {cond} for e in entries]}})')


def _snippet_types(spec: DropSpec) -> tuple[str, ...]:
    if spec.leaf.guard_type in VALUE_GUARDS:
        return ("CONSTANT_MATCH", "EQUALS_MATCH")
    return spec.filter_types


class _Pending:
    __slots__ = ("code", "specs", "record", "dropped", "fired")

    def __init__(self, code: CodeType, specs: list[DropSpec], record: RecompileRecord | None) -> None:
        self.code = code
        self.specs = specs
        self.record = record
        self.dropped: list[tuple[int, str, str]] = []   # (spec index, source, guard_type) of entries dropped
        self.fired = False


class GuardDropper:
    """Filters chosen guards out of the next compile of one code object (the ``drop`` choice).

    `schedule` arms a one-shot filter for `code`; the first guard build of that code (``CheckFunctionManager``,
    patched through `compat.install_guard_filter` on first use) drops every ``GuardFilterEntry`` a `DropSpec`
    matches; `on_compiled` (a compile hook) then reports what was dropped. `undo` restores torch.

    Args:
        message: where to say what happened (the session's ``on_message``).
        log: the run's `RecompileLog` (the record gets the outcome), optional.
    """

    def __init__(self, message: Callable[[str], None], log: RecompileLog | None = None) -> None:
        self.message = message
        self.log = log
        self._pending: dict[int, _Pending] = {}
        self._undo: Callable[[], None] | None = None
        self._lock = threading.Lock()

    @property
    def installed(self) -> bool:
        return self._undo is not None

    def pending_for(self, code: CodeType) -> list[DropSpec]:
        p = self._pending.get(id(code))
        return list(p.specs) if p is not None else []

    def schedule(self, code: CodeType, specs: list[DropSpec], record: RecompileRecord | None = None) -> None:
        """Drop `specs` from the next compile of `code` (replaces a filter armed earlier for it)."""
        if self._undo is None:
            self._undo = compat.install_guard_filter(self._filter_for)
        with self._lock:
            self._pending[id(code)] = _Pending(code, list(specs), record)

    def _filter_for(self, code: CodeType) -> Callable[[list[Any]], list[bool]] | None:
        with self._lock:
            pending = self._pending.get(id(code))
        if pending is None or pending.fired:
            return None

        def keep(entries: list[Any]) -> list[bool]:
            out = []
            for entry in entries:
                try:
                    source, gtype, derived, *_ = compat.guard_filter_entry_fields(entry)
                except Exception:  # noqa: BLE001
                    out.append(True)
                    continue
                hit = next((i for i, spec in enumerate(pending.specs) if spec.matches(source, gtype, derived)), None)
                if hit is not None:
                    pending.dropped.append((hit, source or "(ambient)", gtype))
                out.append(hit is None)
            pending.fired = True
            return out

        return keep

    def on_compiled(self, event: Any) -> None:
        """Compile hook: report the guards dropped from this compile (and forget the filter)."""
        with self._lock:
            pending = self._pending.pop(id(event.original_code), None)
        if pending is None:
            return
        cid = str(event.compile_id)
        if not pending.fired:
            text = f"drop: the guard filter did not run for {cid}; nothing was dropped"
        elif not pending.dropped:
            text = (f"drop: no guard of {cid} matched " +
                    ", ".join(f"{s.leaf.guard_type} {s.leaf.source}" for s in pending.specs) +
                    " (the new compile guards other values); nothing was dropped")
        else:
            what = ", ".join(f"{gtype} {source}" for _, source, gtype in pending.dropped)
            text = f"drop: compiled {cid} without {len(pending.dropped)} guard(s): {what}"
            hit = sorted({i for i, _, _ in pending.dropped})
            missed = [s for i, s in enumerate(pending.specs) if i not in hit]
            if missed:
                text += ("\n  not guarded in the new compile, nothing to drop (e.g. automatic dynamic made them "
                         "symbolic): " + ", ".join(f"{s.leaf.guard_type} {s.leaf.source}" for s in missed))
            evidence = _constant_evidence(event, [pending.specs[i] for i in hit])
            if evidence:
                text += "\n" + evidence
        self.message(text)
        if self.log is not None and pending.record is not None:
            self.log.update(pending.record, outcome=f"compiled {cid}; " + text.split(": ", 1)[-1].split("\n")[0])

    def discard(self, code: CodeType) -> None:
        with self._lock:
            self._pending.pop(id(code), None)

    def undo(self) -> None:
        """Restore ``CheckFunctionManager`` and forget every armed filter (session teardown)."""
        with self._lock:
            self._pending.clear()
        if self._undo is not None:
            undo, self._undo = self._undo, None
            undo()


def _constant_evidence(event: Any, specs: Sequence[DropSpec]) -> str:
    """Where a dropped value guard's new value shows up in the code that will run (LOAD_CONST), as a hint."""
    lines = []
    consts = [ins for ins in dis.get_instructions(event.code) if ins.opname == "LOAD_CONST"]
    for spec in specs:
        if spec.leaf.guard_type not in VALUE_GUARDS or spec.warning is None:
            continue
        lines.append(f"  WARNING: {spec.warning}")
        shown = [f"LOAD_CONST {ins.argrepr} at offset {ins.offset}" for ins in consts
                 if type(ins.argval) in (int, float) and ins.argval not in (0, 1)][:3]
        if shown:
            lines.append(f"  numbers the new code carries as constants (e.g. a replayed attribute update): "
                         f"{'; '.join(shown)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# What the user could write instead (each choice's permanent equivalent)
# --------------------------------------------------------------------------------------------------------------

_CONFIG_HINT_RE = re.compile(r"torch\._dynamo\.config\.(\w+)\s*=\s*(\w+)")


def config_hints(record: RecompileRecord) -> list[str]:
    """``torch._dynamo.config.X = Y`` lines torch itself suggests in the failing guards' notes and reasons
    (``allow_unspec_int_on_nn_module = True`` on an nn.Module int attribute, case 002), once each."""
    found: dict[str, None] = {}
    texts = []
    for v in record.entries:
        for leaf in v.failing:
            texts += [leaf.note or "", leaf.reason or ""]
        texts.append(v.first_failure or "")
    for text in texts:
        for name, value in _CONFIG_HINT_RE.findall(text):
            found.setdefault(f"torch._dynamo.config.{name} = {value}", None)
    return list(found)


def fn_name_for(record_or_name: RecompileRecord | str) -> str:
    """A name for the compiled callable in snippets: ``model`` for a ``forward``, else the function's name."""
    name = record_or_name.frame_name if isinstance(record_or_name, RecompileRecord) else record_or_name
    short = name.rsplit(".", 1)[-1]
    if short == "forward" or short.startswith("torch_dynamo_resume_in_"):
        return "model" if short == "forward" else "fn"
    return short if short.isidentifier() else "fn"


def choice_code(decision: str, record: RecompileRecord | None) -> str:
    """What a user writes to get `decision` permanently, as comment-annotated lines of Python."""
    lines: list[str]
    if decision == "recompile":
        lines = ["# nothing to write: recompiling on a guard failure is torch's default"]
    elif decision == "eager":
        lines = ['torch.compiler.set_stance("eager_on_recompile")   # run eagerly whenever a recompile is needed',
                 '# or, around one call: with torch.compiler.set_stance("force_eager"): ...']
    elif decision == "skip":
        n = record.limit.counted if record is not None and record.limit is not None else None
        lines = ['torch.compiler.set_stance("eager_on_recompile")   # keep the entries, never compile again']
        if n:
            lines.append(f"# or: torch._dynamo.config.recompile_limit = {n}   # every code object: at most {n} "
                         f"entries, then existing entries only (global)")
    else:
        lines = []
    if record is not None:
        lines += [f"{hint}   # torch's own hint" for hint in config_hints(record)]
    return "\n".join(lines)


def default_drop_leaves(record: RecompileRecord) -> list[LeafGuardView]:
    """The failing guards of the most recently used entry that a guard filter can drop."""
    out = []
    if not record.entries:
        return out
    for leaf in record.entries[0].failing:
        try:
            drop_spec(leaf)
        except ValueError:
            continue
        out.append(leaf)
    return out


def dynamic_suggestions(record: RecompileRecord) -> list[tuple[str, int]]:
    """(name, dim) pairs a ``mark_dynamic`` would cover: tensor inputs whose size changed at one index."""
    out: dict[tuple[str, int], None] = {}
    for v in record.entries:
        for leaf in v.failing:
            if leaf.guard_type != "TENSOR_MATCH" or not leaf.reason:
                continue
            m = re.search(r"size mismatch at index (\d+)", leaf.reason)
            if m and leaf.source.startswith("L["):
                out.setdefault((compat.strip_local_scope(leaf.source), int(m.group(1))), None)
    return list(out)


# --------------------------------------------------------------------------------------------------------------
# Plain text
# --------------------------------------------------------------------------------------------------------------

_IND = "  "


def _leaf_lines(leaf: LeafGuardView, torch_leaf: str | None) -> list[str]:
    status = "" if leaf.status is GuardStatus.FAIL else f" [{'no value' if leaf.status is GuardStatus.NO_VALUE else leaf.status.value}]"
    mark = "  <- torch reports this one" if leaf.id == torch_leaf else ""
    kind = failure_kind(leaf)
    kind_text = "" if kind == "input" else f" ({kind})"
    lines = [f"{_IND}{leaf.id} {leaf.guard_type}{status}{kind_text}  {cut('; '.join(leaf.code), 300)}{mark}"]
    where = leaf.user_line or ""
    if leaf.location:
        where = f"{where}  ({leaf.location})" if where else f"({leaf.location})"
    if where:
        lines.append(f"{_IND}   line: {where}")
    if leaf.expected is not None or leaf.actual is not None:
        from .guards import expected_actual_text

        lines.append(f"{_IND}   {expected_actual_text(leaf)}")
    if leaf.reason and leaf.reason not in leaf.code:
        lines.append(f"{_IND}   reason: {cut(leaf.reason, 300)}")
    if leaf.note:
        lines.append(f"{_IND}   note: {cut(leaf.note, 400)}")
    return lines


def failing_text(record: RecompileRecord) -> str:
    """Every failing guard of every entry (torch's order), torch's own reason first for each entry."""
    if record.error and not record.entries:
        return f"analysis failed: {record.error}"
    blocks = []
    for v in record.entries:
        if v.error:
            blocks.append(f"{v.compile_id}: could not analyse ({v.error})" +
                          (f"\n{_IND}torch reports: {v.first_failure}" if v.first_failure else ""))
            continue
        if v.invalidated:
            blocks.append(f"{v.compile_id}: invalidated: {v.invalidated}\n{_IND}torch reports: {v.torch_reason}")
            continue
        if v.passed:
            blocks.append(f"{v.compile_id}: every guard passes")
            continue
        n = len(v.failing)
        lines = [f"{v.compile_id}: {n} failing guard{'s' if n != 1 else ''} of {v.leaf_count}",
                 f"{_IND}torch reports: {cut(v.torch_reason or '?', 800)}"]
        for leaf in v.failing:
            lines += _leaf_lines(leaf, v.torch_leaf)
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "no entries"


def diffs_text(diffs: Iterable[EntryDiff], *, max_per_pair: int = 20) -> str:
    """``0/0 → 0/1: 1 changed`` then one line per difference."""
    blocks = []
    for d in diffs:
        counts: dict[str, int] = {}
        for x in d.diffs:
            counts[x.kind] = counts.get(x.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "same guards"
        lines = [f"{d.old} → {d.new}: {summary}"]
        for x in d.diffs[:max_per_pair]:
            if x.kind == "changed":
                lines.append(f"{_IND}changed {x.guard_type} {x.source}: {cut(x.old_code or '', 160)} → {cut(x.new_code or '', 160)}")
            elif x.kind == "added":
                lines.append(f"{_IND}added   {x.guard_type} {x.source}: {cut(x.new_code or '', 160)}")
            else:
                lines.append(f"{_IND}removed {x.guard_type} {x.source}: {cut(x.old_code or '', 160)}")
        if len(d.diffs) > max_per_pair:
            lines.append(f"{_IND}... {len(d.diffs) - max_per_pair} more")
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "only one entry: nothing to compare"


def inputs_text(record: RecompileRecord) -> str:
    """The call's inputs, one per line (``n = int 2``); the values failing guards saw, first."""
    lines = [f"{name} = {text}" for name, text in record.inputs]
    newest = record.entries[0] if record.entries else None
    changed = []
    if newest is not None:
        seen: set[str] = set()
        for leaf in newest.failing:
            # one line per input: its first failing guard with both values (a tensor input can fail several)
            if leaf.actual is None or failure_kind(leaf) not in ("input", "global", "shape"):
                continue
            name = compat.strip_local_scope(leaf.source if not leaf.epilogue else "; ".join(leaf.code))
            if name in seen:
                continue
            seen.add(name)
            before = leaf.expected if leaf.expected is not None else "(not readable off the guard)"
            changed.append(f"{name}: {before} → {leaf.actual}")
    head = (["changed since " + newest.compile_id + ":"] + [_IND + c for c in changed]) if changed else []
    return "\n".join(head + lines) or "(no inputs)"


def choices_text(record: RecompileRecord) -> str:
    """The commands available at the recompile stop, each with the code that gets its effect permanently."""
    fn = fn_name_for(record)
    lines = ["recompile      compile a new entry (what torch does)", "eager          run this call uncompiled",
             "skip           stop compiling this code; existing entries still serve"]
    drops = default_drop_leaves(record)
    if record.limit is not None and record.limit.hit_now:
        lines.append("drop, dynamic  not available: this compile hits the recompile limit (Dynamo will not compile)")
    else:
        if drops:
            ids = " ".join(leaf.id for leaf in drops)
            lines.append(f"drop [ID...]   drop guards from the new entry and recompile (default: {ids} of "
                         f"{record.entries[0].compile_id})")
            specs = [drop_spec(leaf) for leaf in drops]
            lines.append(f"{_IND}permanently: {filter_snippet(specs, fn)}")
            warned = [s for s in specs if s.warning]
            for s in warned[:3]:
                lines.append(f"{_IND}WARNING: {s.warning}")
        for name, dim in dynamic_suggestions(record):
            lines.append(f"dynamic {name} {dim}   mark that dimension dynamic and recompile")
            lines.append(f"{_IND}permanently: torch._dynamo.mark_dynamic({name}, {dim})   # before calling {fn}")
    lines.append(f"eager/skip permanently: {choice_code('eager', None).splitlines()[0]}")
    for hint in config_hints(record):
        lines.append(f"torch suggests: {hint}")
    return "\n".join(lines)


def record_text(record: RecompileRecord) -> str:
    """The whole record as one block (``report`` text, the ``why`` command)."""
    head = f"#{record.seq} {record.frame_name} → {record.compile_id or '?'}: {record.decision}"
    if record.action:
        head += f" ({record.action})"
    head += f"; {record.outcome_text()}"
    parts = [head, "failing guards:"] + [_IND + ln for ln in failing_text(record).splitlines()]
    if record.non_input:
        parts.append("not about the inputs:")
        parts += [f"{_IND}{f.compile_id}: {f.text}" for f in record.non_input]
    if record.limit is not None:
        parts.append(f"recompile limit: {record.limit.text()}")
    if record.diffs:
        parts.append("guard diffs of the entries (compile order):")
        parts += [_IND + ln for ln in diffs_text(record.diffs).splitlines()]
    return "\n".join(parts)


def stop_detail(session: "Session", ctx: "PauseContext") -> list[tuple[str, str]]:
    """The (title, text) blocks of a recompile stop: failing guards, non-input failures, inputs, guard diffs,
    recompile limit, choices. Falls back to a fresh analysis when the session kept no record."""
    record = ctx.extra.get("recompile")
    ev = ctx.miss_event
    if record is None and ev is not None:
        record = analyze_miss(ev.code, ev.f_locals, ev.entries)
        ctx.extra["recompile"] = record
    if record is None:
        return []
    title = f"next compile: {record.compile_id or '?'}; entries in torch's order (most recently used first)"
    blocks = [("failing guards", title + "\n" + failing_text(record))]
    if record.non_input:
        blocks.append(("not about the inputs", "\n".join(f"{f.compile_id}: [{f.kind}] {f.text}" for f in record.non_input)))
    blocks.append(("inputs", inputs_text(record)))
    if record.limit is not None:
        blocks.append(("recompile limit", record.limit.text()))
    blocks.append(("guard diffs", diffs_text(record.diffs)))
    blocks.append(("choices", choices_text(record)))
    return blocks


# --------------------------------------------------------------------------------------------------------------
# JSON (``dynadbg report --json``)
# --------------------------------------------------------------------------------------------------------------


def leaf_json(leaf: LeafGuardView, torch_leaf: str | None = None) -> dict[str, Any]:
    return {
        "id": leaf.id, "guard_type": leaf.guard_type, "source": leaf.source, "code": list(leaf.code),
        "status": leaf.status.value, "expected": leaf.expected, "actual": leaf.actual, "reason": leaf.reason,
        "user_line": leaf.user_line, "location": leaf.location, "note": leaf.note, "kind": failure_kind(leaf),
        "torch_reports": leaf.id == torch_leaf,
    }


def diff_json(d: EntryDiff) -> dict[str, Any]:
    return {"old": d.old, "new": d.new,
            "diffs": [{"kind": x.kind, "source": x.source, "guard_type": x.guard_type, "old_code": x.old_code,
                       "new_code": x.new_code} for x in d.diffs]}


def limit_json(limit: LimitStatus | None) -> dict[str, Any] | None:
    if limit is None:
        return None
    return {"entries": limit.entries, "counted": limit.counted, "total": limit.total, "limit": limit.limit,
            "accumulated_limit": limit.accumulated_limit, "exceeds": limit.exceeds, "hit_now": limit.hit_now,
            "hit_next": limit.hit_next, "is_recompile": limit.is_recompile, "limit_source": limit.limit_source,
            "raises": limit.raises}


def record_json(record: RecompileRecord) -> dict[str, Any]:
    """One record as JSON-able data (shape in `dynadbg.core.report`'s docstring)."""
    return {
        "seq": record.seq,
        "compile_id": record.compile_id,
        "decision": record.decision,
        "action": record.action,
        "outcome": record.outcome_text(),
        "limit": limit_json(record.limit),
        "limit_hit": record.limit_hit,
        "entries_checked": [
            {"compile_id": v.compile_id, "passed": v.passed, "invalidated": v.invalidated,
             "first_failure": v.first_failure, "torch_reason": v.torch_reason, "leaf_count": v.leaf_count,
             "error": v.error, "failing": [leaf_json(leaf, v.torch_leaf) for leaf in v.failing]}
            for v in record.entries
        ],
        "not_about_inputs": [{"kind": f.kind, "compile_id": f.compile_id, "text": f.text} for f in record.non_input],
        "inputs": [{"name": n, "value": t} for n, t in record.inputs],
        "guard_diffs": [diff_json(d) for d in record.diffs],
        "error": record.error,
    }


# --------------------------------------------------------------------------------------------------------------
# compiles / entries views
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameRecompiles(CompiledFrameView):
    """A `CompiledFrameView` with the recompile insight of the run (the ``entries`` command's data; front ends
    that only know `CompiledFrameView` keep working).

    Attributes:
        serving: compile id of the entry serving the current frame, else None.
        hits_counted: True when ``entries[i].hits`` are real counts.
        timeline: this code object's `RecompileRecord`s, in the order the misses happened.
        limit: the latest `LimitStatus`, else None.
        limit_hits: the records whose compile hit the recompile limit.
    """

    serving: str | None = None
    hits_counted: bool = False
    timeline: tuple[RecompileRecord, ...] = ()
    limit: LimitStatus | None = None
    limit_hits: tuple[RecompileRecord, ...] = ()


@dataclass(frozen=True)
class CompilesData:
    """The ``compiles`` command's data.

    Attributes:
        frames: every compiled code object with its recompile insight.
        timeline: every recompile of the run, in the order they happened.
        limit_hits: the recompiles that hit the recompile limit.
        without_entries: frames Dynamo tried and gave no entry (name, skip reason or None).
    """

    frames: tuple[FrameRecompiles, ...]
    timeline: tuple[RecompileRecord, ...] = ()
    limit_hits: tuple[RecompileRecord, ...] = ()
    without_entries: tuple[tuple[str, str | None], ...] = field(default=())


def frame_recompiles(frame: CompiledFrameView, records: Sequence[RecompileRecord], *, serving: str | None = None,
                     hits_counted: bool = True) -> FrameRecompiles:
    mine = tuple(r for r in records if r.code_key == frame.key)
    base = {f.name: getattr(frame, f.name) for f in fields(CompiledFrameView)}
    limit = next((r.limit for r in reversed(mine) if r.limit is not None), None)
    return FrameRecompiles(**base, serving=serving, hits_counted=hits_counted, timeline=mine, limit=limit,
                           limit_hits=tuple(r for r in mine if r.limit_hit))


def _hits(n: int) -> str:
    return "?" if n < 0 else str(n)


def entries_text(fr: FrameRecompiles) -> str:
    n = len(fr.entries)
    live = sum(1 for e in fr.entries if not e.dropped and not e.invalidated)
    lines = [f"{fr.name} ({fr.filename}:{fr.firstlineno}): {n} cache entr{'y' if n == 1 else 'ies'}"
             + (f"; {live} live, recompile_limit {fr.limit.limit}" if fr.limit is not None else "")]
    if fr.skipped:
        lines.append(f"  skipped by Dynamo: {fr.skipped}")
    total = sum(e.hits for e in fr.entries if e.hits > 0)
    for e in reversed(fr.entries):
        here = "▶ " if fr.serving is not None and e.compile_id == fr.serving and not e.dropped else "  "
        share = f" ({100 * e.hits // total}% of calls)" if total and e.hits >= 0 else ""
        flags = "".join(["  (invalidated)" if e.invalidated else "", "  (dropped from torch's cache)" if e.dropped else ""])
        lines.append(f"{here}{e.compile_id:<6} backend={e.backend}  hits={_hits(e.hits)}{share}  graphs={len(e.graphs)}  "
                     f"resume={', '.join(e.resume_functions) or '-'}{flags}")
    if not fr.hits_counted:
        lines.append("  (hits are not counted in this run)")
    lines += timeline_lines(fr.timeline, fr.recompiles, with_frame=False)
    return "\n".join(lines)


def timeline_lines(records: Sequence[RecompileRecord], recompiles: Sequence[Any] = (), *,
                   with_frame: bool = True, names: dict[int, str] | None = None) -> list[str]:
    """The recompile timeline: one line per recompile in the order they happened, torch's reasons and the
    outcome; records not seen (no log) fall back to the capture's recompile list."""
    lines: list[str] = []
    if records:
        lines.append("recompiles (in the order they happened):")
        for r in records:
            who = f"{r.frame_name} " if with_frame else ""
            flag = "  [RECOMPILE LIMIT HIT]" if r.limit_hit else ("  [next recompile hits the limit]" if r.limit is not None and r.limit.hit_next and r.decision == "recompile" else "")
            lines.append(f"  #{r.seq} {who}→ {r.compile_id or '?'}: {r.decision}"
                         f"{f' ({r.action})' if r.action else ''}; {r.outcome_text()}{flag}")
            for reason in r.torch_reasons:
                lines.append(f"      {cut(reason_head(reason), 200)}")
            n_fail = sum(len(v.failing) for v in r.entries)
            if n_fail > len(r.torch_reasons):
                lines.append(f"      ({n_fail} failing guards in all)")
    elif recompiles:
        lines.append("recompiles (torch's reasons):")
        for rc in recompiles:
            lines.append(f"  → {rc.compile_id}: " + "; ".join(cut(x.splitlines()[0], 200) for x in rc.reasons))
    return lines


def compiles_text(data: CompilesData) -> str:
    if not data.frames and not data.without_entries:
        return "no frame was compiled yet"
    lines = []
    for f in data.frames:
        kind = f"resume function of {f.resume_origin}" if f.is_resume else "frame"
        n = len(f.entries)
        lines.append(f"{f.name}  ({f.filename}:{f.firstlineno})  {kind}: {n} entr{'y' if n == 1 else 'ies'}, "
                     f"{len(f.graph_breaks)} graph break(s), {len(f.recompiles)} recompile(s)"
                     + (f"  [RECOMPILE LIMIT HIT {len(f.limit_hits)}x]" if f.limit_hits else ""))
        if f.skipped:
            lines.append(f"    skipped by Dynamo: {f.skipped}")
        for e in f.entries:
            lines.append(f"    {e.compile_id:<6} hits={_hits(e.hits)}" + ("  (invalidated)" if e.invalidated else ""))
        for gb in f.graph_breaks:
            lines.append(f"    graph break [{gb.compile_id}] line {gb.lineno}: {_short(gb.reason)}")
    if data.without_entries:
        lines.append("tried, no cache entry: " + ", ".join(
            n + (f" ({cut(r, 60)})" if r else "") for n, r in data.without_entries[:12])
            + (f" ... {len(data.without_entries) - 12} more" if len(data.without_entries) > 12 else ""))
    if data.timeline:
        lines += timeline_lines(data.timeline)
    else:
        recs = [(f.name, r) for f in data.frames for r in f.recompiles]
        if recs:
            lines.append("recompiles (torch's reasons):")
            for name, r in recs:
                lines.append(f"  {name} → {r.compile_id}: " + "; ".join(cut(x.splitlines()[0], 200) for x in r.reasons))
    if data.limit_hits:
        lines.append(f"recompile limit hit {len(data.limit_hits)} time(s): " +
                     ", ".join(f"{r.frame_name} at {r.compile_id}" for r in data.limit_hits))
    return "\n".join(lines)


def _short(reason: str | None) -> str:
    if not reason:
        return ""
    head = re.split(r"\n\s*Explanation:", reason, maxsplit=1)[0]
    return cut(" ".join(head.split()), 200)


# --------------------------------------------------------------------------------------------------------------
# Graph-break stop
# --------------------------------------------------------------------------------------------------------------


def graph_break_detail(session: "Session", frames: Sequence[Any]) -> str:
    """The graph-break stop's text: the break (reason, user line, compile), the resume function and where it
    resumes the original code, and what was handed to it: its arguments at entry (``___stack0`` ... are the
    values that were on the original frame's stack at the break; the rest are locals carried over).

    Args:
        frames: the stop's `stack.FrameState`s, outermost first; the last is the resume function's frame.
    """
    if not frames:
        return "no frame"
    frame = frames[-1].frame
    code = frame.f_code
    info = session.generated_info(code)
    capture = session.capture
    if info is None or capture is None:
        return f"{code.co_name}: graph-break details are not available"
    resume_code = info[0]
    lines: list[str] = []
    origin = capture.resume_origin_of(resume_code)
    where = ""
    if origin is not None:
        orig, offset = origin
        where = f"{orig.co_name} ({orig.co_filename}:{orig.co_firstlineno})"
        at = ""
        if offset is not None:
            ins = next((i for i in dis.get_instructions(orig) if i.offset == offset), None)
            at = f" at offset {offset}" + (f" ({ins.opname} {ins.argrepr}".rstrip() + f", line {ins.positions.lineno if ins.positions else '?'})" if ins is not None else "")
        lines.append(f"resume function {resume_code.co_name} (compile {info[1]}) continues {where}{at}")
    else:
        lines.append(f"resume function {resume_code.co_name} (compile {info[1]})")
    brk, breaking_cid, breaking_name = _break_for(session, frames, resume_code)
    if brk is not None:
        loc = f"{brk.filename}:{brk.lineno}" if brk.filename else "(location unknown)"
        lines.append(f"graph break in {breaking_name} during compile {breaking_cid}, at {loc}")
        if brk.user_line:
            lines.append(f"  {brk.lineno} | {brk.user_line.strip()}")
        lines.append(f"reason: {_short(brk.reason)}")
        for extra in _reason_tail(brk.reason):
            lines.append(f"  {extra}")
        if brk.duplicate:
            lines.append("  (torch logged it as a duplicate and suppressed its user stack)")
    else:
        lines.append("graph break: no record (the break happened before the debugger attached?)")
    # what was handed over: the resume function's arguments, i.e. its locals at entry
    nargs = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:nargs]
    try:
        loc_values = dict(frame.f_locals)
    except Exception:  # noqa: BLE001
        loc_values = {}
    stack = [(n, loc_values[n]) for n in names if n.startswith("___stack") and n in loc_values]
    carried = [(n, loc_values[n]) for n in names if not n.startswith("___stack") and not n.startswith("__nested")
               and n in loc_values]
    internal = [n for n in names if n.startswith("__nested")]
    if stack:
        lines.append("stack passed to it (what was on the original frame's stack at the break, bottom first):")
        lines += [f"  {n} = {summarize(v).text}" for n, v in stack]
    else:
        lines.append("stack passed to it: nothing")
    if carried:
        lines.append("locals carried over:")
        lines += [f"  {n} = {summarize(v).text}" for n, v in carried]
    if internal:
        lines.append(f"(Dynamo bookkeeping arguments: {', '.join(internal)})")
    return "\n".join(lines)


def _reason_tail(reason: str | None, limit: int = 4) -> list[str]:
    """The ``Explanation:`` and ``Hint:`` lines of a graph-break reason (at most `limit`)."""
    out = []
    for line in (reason or "").splitlines():
        s = line.strip()
        if s.startswith(("Explanation:", "Hint:")):
            out.append(cut(s, 240))
        if len(out) >= limit:
            break
    return out


def _break_for(session: "Session", frames: Sequence[Any], resume_code: CodeType) -> tuple[Any, str | None, str]:
    """(GraphBreakView, compile id, frame name) of the break that led to `resume_code`: the compile whose
    entry is the caller on the stack, else any entry that references the resume function."""
    caller_cid = caller_orig = None
    if len(frames) >= 2:
        cinfo = session.generated_info(frames[-2].frame.f_code)
        if cinfo is not None:
            caller_orig, caller_cid = cinfo[0], cinfo[1]
    try:
        views = session.capture.frames()
    except Exception:  # noqa: BLE001
        return None, None, "?"
    for f in views:
        if caller_orig is not None and f.key != id(caller_orig):
            continue
        for e in f.entries:
            if caller_cid is not None and e.compile_id != caller_cid:
                continue
            if caller_cid is None and id(resume_code) not in e.resume_keys:
                continue
            brks = [b for b in f.graph_breaks if b.compile_id == e.compile_id]
            if brks:
                return brks[-1], e.compile_id, f.name
    return None, None, "?"


# --------------------------------------------------------------------------------------------------------------
# report helpers
# --------------------------------------------------------------------------------------------------------------


def frame_guard_diffs(frame: CompiledFrameView) -> tuple[EntryDiff, ...]:
    """Guard diffs of a compiled frame's consecutive entries in compile order, from the guard trees its
    snapshot carries (``Capture.frames(guards=True)``); entries without a tree are left out."""
    trees = [e.guard_tree for e in frame.entries if e.guard_tree is not None and not e.guard_tree.invalidated]
    trees.sort(key=lambda t: _compile_order_key(t.compile_id))
    return entry_diffs(trees)


def reason_head(reason: str) -> str:
    """``"0/0: self.counter == 0  # self.counter += 1  # f.py:45 in forward"`` → ``"0/0: self.counter == 0"``."""
    first = reason.splitlines()[0] if reason else ""
    return re.split(r"\s{2,}#", first, maxsplit=1)[0].strip()


def timeline_json(records: Sequence[RecompileRecord], frame_index: dict[int, int]) -> list[dict[str, Any]]:
    """The report's ``recompile_timeline``: one row per miss (`frame_index`: code key → report frame index)."""
    return [{"seq": r.seq, "frame": frame_index.get(r.code_key), "name": r.frame_name, "compile_id": r.compile_id,
             "decision": r.decision, "outcome": r.outcome_text(), "limit_hit": r.limit_hit,
             "torch_reasons": list(r.torch_reasons), "failing_guards": sum(len(v.failing) for v in r.entries)}
            for r in records]
