"""What the user can decide at a recompile stop, and what each decision means for good.

* `recompile_choices`: the stop's choices as data (`model.RecompileChoice`): recompile, eager, skip, drop (with
  its default guard ids), dynamic (one per suggested input dimension), each with what gets the same effect
  permanently (`model.PermanentFix`: `choice_fix`, `filter_fix`, ``mark_dynamic``; `format.permanent_text`
  writes its code) and its warnings (`model.DropWarning`);
* `GuardDropper`: the guard filter of ``drop``: the compile that follows the stop leaves the chosen guards out
  (a patched ``CheckFunctionManager``, `compat.install_guard_filter`); what it did is a `model.DropResult`
  (with the constants the new code carries where a dropped guard pinned a value Dynamo may have baked in).
"""

from __future__ import annotations

import dis
import threading
from dataclasses import dataclass, replace
from types import CodeType
from typing import Any, Callable, Sequence

from . import compat, facts, stances
from .guard_filter import FilterRule, GuardFilter, Scope, drop_warning
from .model import (
    Decision,
    DecisionKind,
    DropResult,
    DropRisk,
    DropWarning,
    DynamicDim,
    FilterTerm,
    GuardRef,
    HeldBack,
    HeldBackReason,
    LeafGuardView,
    OutcomeKind,
    PermanentFix,
    RecompileChoice,
    RecompileOutcome,
    RecompileRecord,
)
from .filter_entries import NoFilterKind
from .recompile import _PSEUDO, RecompileLog


@dataclass(frozen=True)
class DropSpec:
    """Which ``GuardFilterEntry``s of the next compile stand for one leaf of an old entry.

    Attributes:
        leaf: the old entry's leaf (its code says what is dropped).
        source: ``orig_guard.name`` to match (``"L['s'].counter"``; ``""`` for ambient guards).
        filter_types: guard types to drop (``GuardFilterEntry.guard_type``, or one of ``derived_guard_types``).
        name: the name a user's ``guard_filter_fn`` sees (``"s.counter"``).
        warning: why results may be wrong without this guard, else None.
        compile_id: the old entry the leaf belongs to, when known.
    """

    leaf: LeafGuardView
    source: str
    filter_types: tuple[str, ...]
    name: str
    warning: DropWarning | None = None
    compile_id: str | None = None
    #: match `filter_types` against ``guard_type`` only, as the printed ``guard_filter_fn`` does (set when the
    #: types come from the compile's recorded filter entries, `filter_entries.plan_filter`)
    exact: bool = False

    @property
    def ref(self) -> GuardRef:
        """The dropped leaf as a reference."""
        return GuardRef.of(self.leaf, self.compile_id)


def drop_spec(leaf: LeafGuardView, compile_id: str | None = None) -> DropSpec:
    """How to filter `leaf`'s guard (of the entry `compile_id`) out of a compile.

    Raises:
        ValueError: the leaf cannot be dropped by a guard filter (relational guards such as
            ``NO_TENSOR_ALIASING`` are added by Dynamo for every tensor pair; pseudo-leaves for invalidated entries;
            leaves no filter entry stands for alone, `facts.filter_types`).
    """
    gtype = leaf.guard_type
    if gtype == "DICT_LENGTH" and (leaf.id == "len" or leaf.id.endswith(".len")):
        # a dict guard manager's own length check (a pseudo-leaf made from torch's failure text, `guards`); the
        # length check of a dict global is a real leaf (a ``gN``) its SEQUENCE_LENGTH filter entry removes
        raise ValueError(f"{leaf.id} (DICT_LENGTH) is the length check of the dict's own guard manager; no guard "
                         f"filter removes it alone")
    if gtype in _PSEUDO:
        raise ValueError(f"{leaf.id} ({gtype}) is not a guard: nothing to drop")
    if leaf.relational:
        raise ValueError(f"{leaf.id} ({gtype}) is a relational guard Dynamo adds for every tensor pair; "
                         f"no guard filter removes it")
    ref = GuardRef.of(leaf, compile_id)
    types = facts.filter_types(gtype, leaf.source, leaf.code, epilogue=leaf.epilogue)
    if types is None:
        raise ValueError(no_filter_reason(leaf))
    if leaf.epilogue:
        return DropSpec(leaf, "", types, "", DropWarning(DropRisk.SHAPE_RELATIONS, ref), compile_id)
    if leaf.source == "L":
        return DropSpec(leaf, "", types, "", DropWarning(DropRisk.GLOBAL_STATE, ref), compile_id)
    warning = drop_warning(ref, leaf.expected, leaf.actual)
    return DropSpec(leaf, leaf.source, types, compat.strip_local_scope(leaf.source), warning, compile_id)


def no_filter_reason(leaf: LeafGuardView) -> str:
    """Why no guard filter drops `leaf` alone (`facts.filter_types` gives it no entry types)."""
    owner = facts.PART_OF_ENTRY.get(leaf.guard_type)
    if owner is not None:
        return (f"{leaf.id} ({leaf.guard_type}) is part of the {owner} guard on {leaf.source}; no guard filter removes "
                f"it alone")
    return f"{leaf.id} ({leaf.guard_type}) is an ambient guard no guard filter removes"


def filter_fix(specs: Sequence[DropSpec], fn_name: str = "fn", hints: Sequence[str] = ()) -> PermanentFix:
    """The ``guard_filter_fn`` a user would pass to drop the same guards permanently, as data (one
    `FilterTerm` per guard, the name and types a ``GuardFilterEntry`` of it has; `format.permanent_text`
    writes ``torch.compile(model, options={"guard_filter_fn": lambda entries: [...]})``)."""
    terms = tuple(FilterTerm(spec.name, facts.snippet_types(spec.leaf.guard_type, spec.filter_types))
                  for spec in specs)
    return PermanentFix(DecisionKind.DROP, fn_name, filter_terms=terms, hints=tuple(hints))


class _Pending:
    __slots__ = ("code", "specs", "record", "rules")

    def __init__(self, code: CodeType, specs: list[DropSpec], record: RecompileRecord | None,
                 rules: list[FilterRule]) -> None:
        self.code = code
        self.specs = specs
        self.record = record
        self.rules = rules              # parallel to specs


class GuardDropper:
    """Filters chosen guards out of the next compile of one code object (the ``drop`` choice).

    `schedule` adds one `guard_filter.Scope.NEXT_COMPILE` rule per `DropSpec` to the session's one
    `guard_filter.GuardFilter`; the first guard build of that code drops every ``GuardFilterEntry`` a rule
    matches; `on_compiled` (a compile hook) then reports what was dropped and retires the rules.

    Args:
        guard_filter: the session's guard filter.
        report: called with the `DropResult` of each compile a drop was armed for (the session says it).
        log: the run's `RecompileLog` (the record gets the outcome), optional.
    """

    def __init__(self, guard_filter: GuardFilter, report: Callable[[DropResult], None],
                 log: RecompileLog | None = None) -> None:
        self.filter = guard_filter
        self.report = report
        self.log = log
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()

    @property
    def installed(self) -> bool:
        return self.filter.installed

    def pending_for(self, code: CodeType) -> list[DropSpec]:
        p = self._pending.get(id(code))
        return list(p.specs) if p is not None else []

    def schedule(self, code: CodeType, specs: list[DropSpec], record: RecompileRecord | None = None) -> None:
        """Drop `specs` from the next compile of `code` (replaces a filter armed earlier for it)."""
        self.filter.discard(code, Scope.NEXT_COMPILE)
        rules = [self.filter.add(FilterRule(code, spec.source, frozenset(spec.filter_types), Scope.NEXT_COMPILE,
                                            name=spec.name, label=f"{spec.leaf.guard_type} {'; '.join(spec.leaf.code)}",
                                            warning=spec.warning, guard=spec.ref, exact=spec.exact))
                 for spec in specs]
        with self._lock:
            self._pending[id(code)] = _Pending(code, list(specs), record, rules)

    def on_compiled(self, event: Any) -> None:
        """Compile hook: report what the guard filter dropped from this compile (a `DropResult`, said through
        `report` and kept as the record's outcome), and retire the rules."""
        with self._lock:
            pending = self._pending.pop(id(event.original_code), None)
        if pending is None:
            return
        self.filter.take_spent(event.original_code)
        cid = str(event.compile_id)
        requested = tuple(spec.ref for spec in pending.specs)
        fired = any(rule.fired for rule in pending.rules)
        dropped = [(i, source, gtype) for i, rule in enumerate(pending.rules) for source, gtype in rule.dropped]
        hit = sorted({i for i, _, _ in dropped})
        missed = tuple(s.ref for i, s in enumerate(pending.specs) if i not in hit) if dropped else ()
        # what the new compile guards on each source it did not drop, from its recorded filter entries
        unbuilt = missed if dropped else (requested if fired else ())
        instead = tuple((ref, _guarded_instead(event, cid, ref)) for ref in unbuilt)
        result = DropResult(cid, fired, requested, tuple((source, gtype) for _, source, gtype in dropped), missed,
                            _constants(event, [pending.specs[i] for i in hit]), instead)
        self.report(result)
        if self.log is not None and pending.record is not None:
            self.log.update(pending.record, outcome=RecompileOutcome(OutcomeKind.COMPILED, cid, result))

    def discard(self, code: CodeType) -> None:
        with self._lock:
            self._pending.pop(id(code), None)
        self.filter.discard(code, Scope.NEXT_COMPILE)

    def undo(self) -> None:
        """Forget every armed drop (session teardown; the filter itself is restored by its owner)."""
        with self._lock:
            pending = list(self._pending.values())
            self._pending.clear()
        for p in pending:
            self.filter.discard(p.code, Scope.NEXT_COMPILE)


def _guarded_instead(event: Any, cid: str, ref: GuardRef) -> tuple[str, ...] | None:
    """The guard types compile `cid` has on a dropped guard's source, from its recorded filter entries
    (`filter_entries.FilterEntryLog`); None when they were not recorded."""
    from .filter_entries import recorded_for

    recorded = recorded_for(event.original_code, cid)
    if recorded is None:
        return None
    return tuple(dict.fromkeys(e.guard_type for e in recorded.entries if e.source == ref.source))


def _constants(event: Any, specs: Sequence[DropSpec]) -> tuple[tuple[str, int], ...]:
    """Where a dropped value guard's new value may show up in the code that will run: numbers other than 0 and 1
    loaded as constants (``LOAD_CONST``: argument text, offset), at most 3; () when no dropped value guard risks
    constant folding."""
    if not any(s.leaf.guard_type in facts.CONSTANT_GUARDS and s.warning is not None for s in specs):
        return ()
    return tuple((ins.argrepr, ins.offset) for ins in dis.get_instructions(event.code)
                 if ins.opname == "LOAD_CONST" and type(ins.argval) in (int, float) and ins.argval not in (0, 1))[:3]


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
        for line in facts.config_suggestions(text):
            found.setdefault(line, None)
    if record.scalar_break:
        # torch says it where the graph break is logged (``Graph break from `Tensor.item()`, consider setting``),
        # not in the guard failure: bring it to the recompile it causes
        found.setdefault("torch._dynamo.config.capture_scalar_outputs = True", None)
    return list(found)


def choice_fix(decision: DecisionKind, record: RecompileRecord | None, *, hints: bool = True) -> PermanentFix:
    """What a user writes to get `decision` (recompile, eager or skip) permanently, as data; with `hints`
    torch's own suggestions for `record`'s code (`config_hints`) come after it. Skip's per-call limit goes on the
    user's own call when the record's advice knows it (`advice.RecompileAdvice.call_site`); at a code that hit
    its limit already, skip has nothing to write (torch compiles it no more), and where the limit raises
    (``fullgraph=True``) no limit is offered (not what skip does)."""
    limit = None
    limit_hit = False
    if decision is DecisionKind.SKIP and record is not None and record.limit is not None:
        if record.limit.raises is None:
            limit = record.limit.counted or None
            limit_hit = record.limit.hit_now
    shown = tuple(config_hints(record)) if hints and record is not None else ()
    fn = facts.callable_name(record.frame_name) if record is not None else "fn"
    site = getattr(getattr(record, "advice", None), "call_site", None)
    return PermanentFix(decision, fn, recompile_limit=limit, hints=shown, call_site=site, limit_hit=limit_hit)


#: Ambient leaves of the thread's dispatch state (modes, default device, dispatch keys): the graph was traced
#: under them, so a default drop leaves them out.
_DISPATCH_MODE_TYPES = frozenset({"TORCH_FUNCTION_MODE_STACK", "DEFAULT_DEVICE", "DISPATCH_KEY_SET_MATCH"})


def held_back_reason(leaf: LeafGuardView) -> HeldBackReason | None:
    """Why the default ``drop`` leaves `leaf` out, None when it may be in it: the global state (grad mode,
    autocast, ...), a module's ``.training`` flag (train() and eval() trace different code: BatchNorm and
    Dropout), the dispatch/torch-function mode state, and a whole tensor's ``TENSOR_MATCH`` (shape, dtype,
    device, requires_grad: without it any tensor would be served by a graph traced for one; a size change is
    ``dynamic``'s job). A user can still name each by id."""
    gtype = leaf.guard_type
    if gtype == "GLOBAL_STATE":
        return HeldBackReason.GLOBAL_STATE
    if gtype in _DISPATCH_MODE_TYPES:
        return HeldBackReason.DISPATCH_MODE
    if gtype == "TENSOR_MATCH":
        return HeldBackReason.WHOLE_TENSOR
    if leaf.source.endswith(".training"):
        return HeldBackReason.MODE_FLAG
    return None


def _droppable(leaf: LeafGuardView) -> bool:
    try:
        drop_spec(leaf)
    except ValueError:
        return False
    return True


def held_back(record: RecompileRecord) -> tuple[HeldBack, ...]:
    """The failing guards of the most recently used entry a guard filter could drop that the default ``drop``
    leaves out (`held_back_reason`), each once, in the entry's order."""
    if not record.entries:
        return ()
    first = record.entries[0]
    out: dict[str, HeldBack] = {}
    for leaf in first.failing:
        reason = held_back_reason(leaf)
        if reason is not None and leaf.id not in out and _droppable(leaf):
            out[leaf.id] = HeldBack(reason, GuardRef.of(leaf, first.compile_id))
    return tuple(out.values())


def default_drop_leaves(record: RecompileRecord) -> list[LeafGuardView]:
    """The failing guards of the most recently used entry that a guard filter can drop, less the ones the
    default leaves out (`held_back`), each once (when the record's advice checked a filter on that entry's filter
    entries: the ones that filter drops)."""
    out: list[LeafGuardView] = []
    if not record.entries:
        return out
    plan = getattr(getattr(record, "advice", None), "drop", None)
    seen: set[str] = set()
    for leaf in record.entries[0].failing:
        if leaf.id in seen or held_back_reason(leaf) is not None:
            continue
        if (leaf.id in plan.leaf_ids) if plan is not None and plan.ok else _droppable(leaf):
            seen.add(leaf.id)
            out.append(leaf)
    return out


def dynamic_suggestions(record: RecompileRecord) -> list[tuple[str, int]]:
    """(name, dim) pairs a ``mark_dynamic`` would cover: tensor inputs whose size changed at one index, less the
    dimensions torch's automatic dynamic shapes makes dynamic in the new entry anyway (`record.auto_dynamic`)."""
    automatic = {(d.source, d.dim) for d in getattr(record, "auto_dynamic", ())}
    out: dict[tuple[str, int], None] = {}
    for v in record.entries:
        for leaf in v.failing:
            # the first changed dimension: the one torch's reason names (``size mismatch at index 0``)
            if leaf.size_changed and leaf.source.startswith("L[") \
                    and (leaf.source, leaf.size_changed[0]) not in automatic:
                out.setdefault((compat.strip_local_scope(leaf.source), leaf.size_changed[0]), None)
    return list(out)


#: Why drop and dynamic are not offered when the compile hits the recompile limit.
LIMIT_WHY_NOT = "this compile hits the recompile limit (Dynamo will not compile)"


def recompile_choices(record: RecompileRecord) -> tuple[RecompileChoice, ...]:
    """What a recompile stop offers, as data: recompile, eager, skip, drop (with its default guard ids), then one
    dynamic choice per suggested (input, dimension), each with its permanent fix and warnings."""
    fn = facts.callable_name(record.frame_name)
    limit = record.limit
    if limit is not None and limit.hit_now:
        # past the limit torch compiles nothing: going on means what torch does then, said as it is
        go_on = ("go on: torch will not compile and RAISES FailOnRecompileLimitHit in the program "
                 f"({limit.raises})" if limit.raises is not None else
                 "go on: torch will not compile (recompile limit hit); this call and every later miss of this "
                 "code run eagerly, its entries still serve")
    else:
        go_on = "compile a new entry (what torch does)"
    out = [
        RecompileChoice(DecisionKind.RECOMPILE, Decision(DecisionKind.RECOMPILE), "recompile",
                        go_on, permanent=choice_fix(DecisionKind.RECOMPILE, None)),
        RecompileChoice(DecisionKind.EAGER, Decision(DecisionKind.EAGER), "eager", stances.CHOICE_EFFECTS["eager"][0],
                        permanent=choice_fix(DecisionKind.EAGER, None)),
        RecompileChoice(DecisionKind.SKIP, Decision(DecisionKind.SKIP), "skip", stances.CHOICE_EFFECTS["skip"][0],
                        permanent=choice_fix(DecisionKind.SKIP, record, hints=False)),
    ]
    drop_summary = "drop guards from the new entry and recompile"
    dynamic_summary = "mark that dimension dynamic and recompile"
    if record.limit is not None and record.limit.hit_now:
        out.append(RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary,
                                   available=False, why_not=LIMIT_WHY_NOT))
        out.append(RecompileChoice(DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC), "dynamic NAME DIM",
                                   dynamic_summary, available=False, why_not=LIMIT_WHY_NOT))
        return tuple(out)
    advice = getattr(record, "advice", None)
    site = advice.call_site if advice is not None else None
    first = record.entries[0].compile_id if record.entries else None
    held = held_back(record)
    specs = []
    for leaf in default_drop_leaves(record):
        try:
            specs.append(drop_spec(leaf, first))
        except ValueError:  # a leaf the checked plan drops that no DropSpec describes: left out, never a lost stop
            continue
    if specs:
        ids = tuple(spec.leaf.id for spec in specs)
        plan = advice.drop if advice is not None else None
        fix = replace(filter_fix(specs, fn), call_site=site, plan=plan)
        warnings = tuple(s.warning for s in specs if s.warning)
        default = f"default: {' '.join(ids)} of {first}"
        if advice is None:
            # nothing recorded to build the fix from (an analysis without the capture): no unchecked filter
            choice = RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP, ids), "drop [ID...]",
                                     drop_summary, warnings=warnings, detail=default, held_back=held)
        elif plan is None or plan.ok:
            choice = RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP, ids), "drop [ID...]",
                                     drop_summary, permanent=fix if plan is not None else None, warnings=warnings,
                                     detail=default, plan=plan, left_out=advice.drop_left_out, held_back=held)
        elif plan.why_not and all(w.kind is NoFilterKind.NOT_RECORDED for w in plan.why_not):
            # nothing to check the filter on: the drop still works here, its permanent code is not printed
            choice = RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP, ids), "drop [ID...]",
                                     drop_summary, warnings=warnings, detail=default, plan=plan, held_back=held)
        else:
            # no filter drops exactly these guards: not offered (the plan says why)
            choice = RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP, ids), "drop [ID...]",
                                     drop_summary, available=False, plan=plan)
        out.append(choice)
    elif advice is not None and advice.drop is not None and not advice.drop.ok and advice.drop.why_not:
        # the guard filter entries of that compile say why no filter drops them
        out.append(RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary,
                                   available=False, plan=advice.drop, held_back=held))
    elif held:
        # every droppable failing guard is one the default leaves out: nothing by default, each selectable by id
        out.append(RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary,
                                   held_back=held))
    else:
        first = record.entries[0].compile_id if record.entries else "the newest entry"
        out.append(RecompileChoice(
            DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary, available=False,
            why_not=f"no failing guard of {first} can be dropped by a guard filter; "
                    f"name guard ids (see `guards fail`)"))
    suggestions = dynamic_suggestions(record)
    sized = {(d.name, d.dim): d for d in (advice.dynamic if advice is not None else ())}
    for name, dim in suggestions:
        marked = sized.get((name, dim), DynamicDim(name, dim))
        out.append(RecompileChoice(
            DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC, name=name, dim=dim), "dynamic NAME DIM",
            dynamic_summary, permanent=PermanentFix(DecisionKind.DYNAMIC, fn, dims=(marked,), call_site=site)))
    if not suggestions and record.auto_dynamic:
        # torch makes every changed dimension dynamic itself: nothing for mark_dynamic to do
        out.append(RecompileChoice(DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC), "dynamic NAME DIM",
                                   dynamic_summary, available=False, automatic=record.auto_dynamic))
    elif not suggestions:
        out.append(RecompileChoice(DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC), "dynamic NAME DIM",
                                   dynamic_summary, detail="no input tensor changed size at one dimension"))
    return tuple(out)
