"""What the user can decide at a recompile stop, and what each decision means for good.

* `recompile_choices`: the stop's choices as data (`model.RecompileChoice`): recompile, eager, skip, drop (with
  its default guard ids), dynamic (one per suggested input dimension), each with the Python that gets the same
  effect permanently (`choice_code`, `filter_snippet`, ``mark_dynamic``) and its warnings;
* `GuardDropper`: the guard filter of ``drop``: the compile that follows the stop leaves the chosen guards out
  (a patched ``CheckFunctionManager``, `compat.install_guard_filter`), with the constant-folding warning where
  the dropped guard pinned a value Dynamo baked in.
"""

from __future__ import annotations

import dis
import re
import threading
from dataclasses import dataclass
from types import CodeType
from typing import Any, Callable, Sequence

from . import compat, stances
from .callsites import with_keyword
from .guard_filter import FilterRule, GuardFilter, Scope, drop_warning
from .model import Decision, DecisionKind, LeafGuardView, RecompileChoice, RecompileRecord
from .recompile import _PSEUDO, VALUE_GUARDS, RecompileLog


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
    #: match `filter_types` against ``guard_type`` only, as the printed ``guard_filter_fn`` does (set when the
    #: types come from the compile's recorded filter entries, `filter_entries.plan_filter`)
    exact: bool = False

    def matches(self, source: str, guard_type: str, derived: tuple[str, ...]) -> bool:
        if self.exact:
            return source == self.source and guard_type in self.filter_types
        return source == self.source and (guard_type in self.filter_types
                                          or any(d in self.filter_types for d in derived))


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
    warning = drop_warning(gtype, leaf.source, "; ".join(leaf.code), leaf.expected, leaf.actual)
    if gtype in VALUE_GUARDS:
        return DropSpec(leaf, leaf.source, tuple(sorted(_VALUE_FILTER_TYPES)), name, warning)
    types = _OTHER_FILTER_TYPES.get(gtype, (gtype,))
    return DropSpec(leaf, leaf.source, types, name, warning)


def filter_snippet(specs: Sequence[DropSpec], fn_name: str = "fn") -> str:
    """The ``guard_filter_fn`` a user would pass to drop the same guards permanently.

    >>> filter_snippet([spec_for_counter], "model")
    'torch.compile(model, options={"guard_filter_fn": lambda entries: [not (e.name == "s.counter" and \
e.guard_type in ("CONSTANT_MATCH", "EQUALS_MATCH")) for e in entries]})'
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
        message: where to say what happened (the session's ``message``).
        log: the run's `RecompileLog` (the record gets the outcome), optional.
    """

    def __init__(self, guard_filter: GuardFilter, message: Callable[[str], None],
                 log: RecompileLog | None = None) -> None:
        self.filter = guard_filter
        self.message = message
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
                                            warning=spec.warning, exact=spec.exact))
                 for spec in specs]
        with self._lock:
            self._pending[id(code)] = _Pending(code, list(specs), record, rules)

    def on_compiled(self, event: Any) -> None:
        """Compile hook: report the guards dropped from this compile (and retire the rules)."""
        with self._lock:
            pending = self._pending.pop(id(event.original_code), None)
        if pending is None:
            return
        self.filter.take_spent(event.original_code)
        cid = str(event.compile_id)
        dropped = [(i, source, gtype) for i, rule in enumerate(pending.rules) for source, gtype in rule.dropped]
        if not any(rule.fired for rule in pending.rules):
            text = f"drop: the guard filter did not run for {cid}; nothing was dropped"
        elif not dropped:
            text = _nothing_dropped_text(event, cid, pending.specs)
        else:
            what = ", ".join(f"{gtype} {source}" for _, source, gtype in dropped)
            text = f"drop: compiled {cid} without {len(dropped)} guard(s): {what}"
            hit = sorted({i for i, _, _ in dropped})
            missed = [s for i, s in enumerate(pending.specs) if i not in hit]
            if missed:
                text += f"\n  not built in {cid}, so nothing to drop for them: " + "; ".join(
                    _guarded_instead(event, cid, s) for s in missed)
            evidence = _constant_evidence(event, [pending.specs[i] for i in hit])
            if evidence:
                text += "\n" + evidence
        self.message(text)
        if self.log is not None and pending.record is not None:
            self.log.update(pending.record, outcome=f"compiled {cid}; " + text.split(": ", 1)[-1].split("\n")[0])

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


def _nothing_dropped_text(event: Any, cid: str, specs: Sequence[DropSpec]) -> str:
    """Why a drop dropped nothing in `cid`: what the new compile's filter entries have for each dropped name
    (recorded by `filter_entries.FilterEntryLog`), instead of a guess."""
    wanted = ", ".join(f"{s.leaf.id} {s.leaf.guard_type} {s.leaf.source}" for s in specs)
    return (f"drop: {cid} built none of the guards asked for ({wanted}); nothing was dropped\n  "
            + "\n  ".join(_guarded_instead(event, cid, s) for s in specs))


def _guarded_instead(event: Any, cid: str, spec: DropSpec) -> str:
    """What compile `cid` guards on a dropped guard's source instead, from its recorded filter entries."""
    from .filter_entries import recorded_for

    recorded = recorded_for(event.original_code, cid)
    what = f"{spec.leaf.guard_type} {spec.leaf.source}"
    if recorded is None:
        return f"{what} ({cid}'s guard filter entries were not recorded: what it guards there is not known)"
    have = tuple(dict.fromkeys(e.guard_type for e in recorded.entries if e.source == spec.source))
    why = (": automatic dynamic made it symbolic, only its type is guarded" if have and set(have) <= {"TYPE_MATCH"}
           else "")
    return f"{what} ({cid} guards it with " + (", ".join(have) if have else "nothing") + why + ")"


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
    if record.scalar_break:
        # torch says it where the graph break is logged (``Graph break from `Tensor.item()`, consider setting``),
        # not in the guard failure: bring it to the recompile it causes
        found.setdefault("torch._dynamo.config.capture_scalar_outputs = True", None)
    return list(found)


def fn_name_for(record_or_name: RecompileRecord | str) -> str:
    """A name for the compiled callable in snippets: ``model`` for a ``forward``, else the function's name."""
    name = record_or_name.frame_name if isinstance(record_or_name, RecompileRecord) else record_or_name
    short = name.rsplit(".", 1)[-1]
    if short == "forward" or short.startswith("torch_dynamo_resume_in_"):
        return "model" if short == "forward" else "fn"
    return short if short.isidentifier() else "fn"


def choice_code(decision: str, record: RecompileRecord | None) -> str:
    """What a user writes to get `decision` permanently, as comment-annotated lines of Python: the lines and
    their one description each come from `stances` (skip's per-call limit goes on the user's own call when the
    call site is known)."""
    lines: list[str]
    if decision == "skip" and record is not None and record.limit is not None and record.limit.hit_now \
            and record.limit.raises is None:
        lines = ["# nothing to write: this code has hit its recompile limit, torch compiles it no more (what skip "
                 "does)"]
    elif decision in stances.CHOICE_EFFECTS:
        n = record.limit.counted if record is not None and record.limit is not None else None
        if record is not None and record.limit is not None and record.limit.raises is not None:
            n = None   # a limit there raises FailOnRecompileLimitHit (fullgraph=True): not what skip does
        site = getattr(getattr(record, "advice", None), "call_site", None)
        call = with_keyword(site, "recompile_limit", str(n)) if site is not None and n else None
        where = f"in place of {site.text} at {site.where}" if call is not None and site is not None else ""
        lines = stances.choice_lines(decision, n=n or None, call_with_limit=call, where=where)
    else:
        lines = []
    if record is not None:
        lines += [f"{hint}   # torch's own hint" for hint in config_hints(record)]
    return "\n".join(lines)


def default_drop_leaves(record: RecompileRecord) -> list[LeafGuardView]:
    """The failing guards of the most recently used entry that a guard filter can drop (when the record's
    advice checked a filter on that entry's filter entries: the ones that filter drops)."""
    out = []
    if not record.entries:
        return out
    plan = getattr(getattr(record, "advice", None), "drop", None)
    if plan is not None and plan.ok:
        return [leaf for leaf in record.entries[0].failing if leaf.id in plan.leaf_ids]
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


#: Why drop and dynamic are not offered when the compile hits the recompile limit.
LIMIT_WHY_NOT = "this compile hits the recompile limit (Dynamo will not compile)"


def _hintless(code: str) -> str:
    return "\n".join(ln for ln in code.splitlines() if not ln.endswith("# torch's own hint"))


def recompile_choices(record: RecompileRecord) -> tuple[RecompileChoice, ...]:
    """What a recompile stop offers, as data: recompile, eager, skip, drop (with its default guard ids), then one
    dynamic choice per suggested (input, dimension), each with its permanent code and warnings."""
    fn = fn_name_for(record)
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
                        go_on, permanent=_hintless(choice_code("recompile", None))),
        RecompileChoice(DecisionKind.EAGER, Decision(DecisionKind.EAGER), "eager", stances.CHOICE_EFFECTS["eager"][0],
                        permanent=_hintless(choice_code("eager", None))),
        RecompileChoice(DecisionKind.SKIP, Decision(DecisionKind.SKIP), "skip", stances.CHOICE_EFFECTS["skip"][0],
                        permanent=_hintless(choice_code("skip", record))),
    ]
    drop_summary = "drop guards from the new entry and recompile"
    dynamic_summary = "mark that dimension dynamic and recompile"
    if record.limit is not None and record.limit.hit_now:
        out.append(RecompileChoice(DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary,
                                   available=False, why_not=LIMIT_WHY_NOT))
        out.append(RecompileChoice(DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC), "dynamic NAME DIM",
                                   dynamic_summary, available=False, why_not=LIMIT_WHY_NOT))
        return tuple(out)
    drops = default_drop_leaves(record)
    if drops:
        ids = tuple(leaf.id for leaf in drops)
        specs = [drop_spec(leaf) for leaf in drops]
        out.append(RecompileChoice(
            DecisionKind.DROP, Decision(DecisionKind.DROP, ids), "drop [ID...]", drop_summary,
            permanent=filter_snippet(specs, fn), warnings=tuple(s.warning for s in specs if s.warning),
            detail=f"default: {' '.join(ids)} of {record.entries[0].compile_id}"))
    else:
        first = record.entries[0].compile_id if record.entries else "the newest entry"
        out.append(RecompileChoice(
            DecisionKind.DROP, Decision(DecisionKind.DROP), "drop [ID...]", drop_summary, available=False,
            why_not=f"no failing guard of {first} can be dropped by a guard filter; "
                    f"name guard ids (see `guards fail`)"))
    suggestions = dynamic_suggestions(record)
    for name, dim in suggestions:
        out.append(RecompileChoice(
            DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC, name=name, dim=dim), "dynamic NAME DIM",
            dynamic_summary, permanent=f"torch._dynamo.mark_dynamic({name}, {dim})   # on the tensor, before the call"))
    if not suggestions:
        out.append(RecompileChoice(DecisionKind.DYNAMIC, Decision(DecisionKind.DYNAMIC), "dynamic NAME DIM",
                                   dynamic_summary, detail="no input tensor changed size at one dimension"))
    return tuple(out)
