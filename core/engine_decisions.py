"""The engine methods of a recompile stop: the decision (`decide`) and what a drop or a dynamic dimension would do.

`Decisions` is a group of `Session` (`engine_base.Group`); `Session` names its public methods (see
`dynadbg.core.protocol.Engine` for each one's contract)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import compat
from .engine_base import Group, EngineHost, Refused, engine_method, refuse
from .model import (
    Decision,
    DecisionKind,
    DropCandidate,
    DropPreview,
    DynamicDim,
    EngineError,
    ErrorKind,
    GuardRef,
    HeldBack,
    OutcomeKind,
    PermanentFix,
    RecompileOutcome,
    RecompileRecord,
    ResumeAction,
    Resumed,
    StopKind,
)
from . import facts
from .decisions import choice_fix, config_hints, default_drop_leaves, drop_spec, filter_fix, held_back
from .format import advice as advice_text
from .format import drop_default as drop_default_text
from .format import recompile as format_recompile
from .recompile import analyze_miss
from .state import Mode

if TYPE_CHECKING:
    from .events import CacheMissEvent

#: a guard id as the user types it: ``g5`` or ``COMPILE_ID:g5`` (``0/1:g5``)
_ID_RE = re.compile(r"^(?:(?P<cid>!?\d+(?:/\d+)+):)?(?P<leaf>g\d+)$")


class Decisions(Group):
    """The engine methods of a recompile stop: the decision and what a drop or a dynamic dimension would do."""

    def __init__(self, host: EngineHost) -> None:
        super().__init__(host)
        #: the compile hook of ``dynamic`` (`advice.DynamicCheck`), made at the first ``dynamic`` decision
        self._dynamic_checker: Any = None

    def current_record(self) -> RecompileRecord:
        """The record of the current recompile stop (refuses elsewhere)."""
        ctx = self.host._paused()
        if ctx.kind is not StopKind.RECOMPILE or ctx.miss_event is None:
            refuse("only at a recompile stop", ErrorKind.NOT_HERE)
        record = ctx.extra.get("recompile")
        if record is None:
            ev = ctx.miss_event
            record = ctx.extra["recompile"] = analyze_miss(ev.code, ev.f_locals, ev.entries)
        kept = self.host.recompiles.latest(record.seq)
        if kept is not None and kept.code_key == record.code_key:
            record = kept
        return record

    @engine_method()
    def decide(self, decision: Decision) -> Resumed | EngineError:
        ctx = self.host._paused()
        if ctx.kind is not StopKind.RECOMPILE:
            refuse("only at a recompile stop", ErrorKind.NOT_HERE)
        kind = decision.kind
        if kind is DecisionKind.DROP:
            return self._decide_drop(decision.guard_ids)
        if kind is DecisionKind.DYNAMIC:
            if decision.name is None or decision.dim is None:
                refuse("usage: dynamic NAME DIM   (e.g. dynamic x 0)")
            return self._decide_dynamic(decision.name, decision.dim)
        try:
            record: RecompileRecord | None = self.current_record()
        except Refused:
            record = None
        ctx.decision = kind.value
        self.host.mode = Mode.CONTINUE
        result = Resumed(ResumeAction(kind.value), left_history=self.host._leave_history(),
                         permanent=choice_fix(kind, record))
        self.host._resumed = result
        return result

    def _miss_event(self) -> CacheMissEvent:
        """The cache miss the current recompile stop is for (refuses elsewhere)."""
        event = self.host._paused().miss_event
        if event is None:
            refuse("only at a recompile stop", ErrorKind.NOT_HERE)
        return event

    def _resume_recompile(self, result: Resumed) -> Resumed:
        ctx = self.host._paused()
        ctx.decision = "recompile"
        self.host.mode = Mode.CONTINUE
        result = replace(result, left_history=self.host._leave_history())
        self.host._resumed = result
        return result

    def _decide_drop(self, guard_ids: tuple[str, ...]) -> Resumed:
        record, specs, plan, fix, held = self._drop_of(guard_ids)
        # everything validated: now change state
        self.host.guard_dropper.schedule(self._miss_event().code, specs, record)
        ids = tuple(s.leaf.id for s in specs)
        self.host.recompiles.update(record, action=Decision(DecisionKind.DROP, ids))
        return self._resume_recompile(Resumed(
            ResumeAction.DROP, dropped=tuple(s.ref for s in specs),
            warnings=tuple(s.warning for s in specs if s.warning is not None), permanent=fix, plan=plan,
            held_back=held, groups=record.groups))

    @engine_method()
    def preview_drop(self, guard_ids: tuple[str, ...] | None = None) -> DropPreview | EngineError:
        """What ``drop`` would do at this recompile stop, before anything runs: every failing guard of the most
        recently used entry a filter could drop (`DropCandidate`: in the default, or left out with why), and for
        `guard_ids` (None: the default's) the warnings, the checked filter and the permanent code, or why that
        selection would be refused (`DropPreview.error`). Changes nothing.

        Errors: NOT_HERE away from a recompile stop or with no entry analysed, REJECTED at the recompile limit.
        """
        ctx = self.host._paused()
        if ctx.kind is not StopKind.RECOMPILE:
            refuse("only at a recompile stop", ErrorKind.NOT_HERE)
        record = self.current_record()
        if not record.entries:
            refuse("no cache entry was analysed at this stop", ErrorKind.NOT_HERE)
        first = record.entries[0].compile_id
        held = {h.guard.leaf_id: h.reason for h in held_back(record)}
        default = tuple(leaf.id for leaf in default_drop_leaves(record))
        candidates = tuple(DropCandidate(GuardRef.of(leaf, first), held.get(leaf.id))
                           for leaf in record.entries[0].failing if leaf.id in held or leaf.id in default)
        ids = default if guard_ids is None else tuple(guard_ids)
        listed = {c.guard.leaf_id for c in candidates}
        groups = tuple(g for g in record.groups if g.compile_id == first and set(g.leaf_ids) <= listed)
        if not ids:
            return DropPreview(candidates, default, ids, groups=groups)
        try:
            _, specs, plan, fix, _ = self._drop_of(ids)
        except Refused as exc:
            return DropPreview(candidates, default, ids, error=exc.error.message, groups=groups)
        return DropPreview(candidates, default, ids, tuple(s.warning for s in specs if s.warning is not None),
                           fix, plan, groups=groups)

    def _drop_of(self, guard_ids: tuple[str, ...]) -> tuple[RecompileRecord, list[Any], Any, Any, tuple[Any, ...]]:
        """(record, drop specs, checked plan, permanent fix or None, held-back guards) of a ``drop``; refuses what
        cannot be dropped. Changes nothing."""
        record = self.current_record()
        if record.limit is not None and record.limit.hit_now:
            refuse(f"this compile hits torch._dynamo.config.{record.limit.exceeds}: Dynamo will not compile, "
                   f"so there is no new entry to drop guards from (eager or skip instead)", ErrorKind.REJECTED)
        if not record.entries:
            refuse("no cache entry was analysed at this stop", ErrorKind.NOT_HERE)
        held: tuple[HeldBack, ...] = ()
        if guard_ids:
            leaves = [self._leaf_by_id(record, tok) for tok in guard_ids]
        else:
            first = record.entries[0].compile_id
            leaves = [(leaf, first) for leaf in default_drop_leaves(record)]
            held = held_back(record)
            plan = record.advice.drop if record.advice is not None else None
            if not leaves and held:
                # the default leaves out every droppable guard: drop nothing rather than all of them (and say why
                # no filter drops the others, when the compile's filter entries say so)
                why = [advice_text.plan_check_text(plan)] if plan is not None and plan.why_not else []
                refuse("\n".join([drop_default_text.empty_default_text(held, first), *why]), ErrorKind.REJECTED)
            if not leaves and plan is not None and plan.why_not:
                # what the compile's guard filter entries say: why no filter drops them
                refuse(advice_text.plan_check_text(plan), ErrorKind.REJECTED)
            if not leaves:
                refuse(f"no failing guard of {record.entries[0].compile_id} can be dropped by a guard filter; "
                       f"name guard ids (see `guards fail`)", ErrorKind.REJECTED)
        specs = []
        for leaf, cid in leaves:
            try:
                specs.append(drop_spec(leaf, cid))
            except ValueError as exc:
                refuse(str(exc), ErrorKind.REJECTED)
        # the same filter the permanent code prints, checked on each leaf's own compile (`advice.plan_for_leaves`)
        plan, specs = self._checked_drop(record, guard_ids, [leaf for leaf, _ in leaves], specs)
        advice = record.advice
        site = advice.call_site if advice is not None else None
        # the permanent code only where the filter was checked on the compile's recorded entries
        fix = (replace(filter_fix(specs, facts.callable_name(record.frame_name), config_hints(record)),
                       call_site=site, plan=plan) if plan is not None and plan.ok else None)
        return record, specs, plan, fix, held

    def _checked_drop(self, record: RecompileRecord, guard_ids: tuple[str, ...], leaves: list[Any],
                      specs: list[Any]) -> tuple[Any, list[Any]]:
        """(the checked filter plan, the drop specs matching exactly what it drops) for a ``drop``; refuses when no
        filter can drop one of the leaves alone (the live drop would then miss or take more than asked)."""
        from .advice import plan_for_leaves
        from .filter_entries import NoFilterKind

        entries = self._miss_event().entries
        first = str(entries[0].compile_id) if entries else ""
        by_cid: dict[str, list[Any]] = {}
        tokens = guard_ids or tuple(leaf.id for leaf in leaves)
        for token, leaf in zip(tokens, leaves):
            m = _ID_RE.match(token)
            by_cid.setdefault(m.group("cid") if m is not None and m.group("cid") else first, []).append(leaf)
        plan = plan_for_leaves(self.host.capture, record.code_key, by_cid)
        unchecked = bool(plan.why_not) and all(w.kind is NoFilterKind.NOT_RECORDED for w in plan.why_not)
        if unchecked:
            return plan, specs        # nothing recorded to check on: the drop matches as before, unprinted
        if not plan.ok:
            refuse(advice_text.plan_check_text(plan), ErrorKind.REJECTED)
        exact = []
        for spec in specs:
            types = tuple(sorted({t for term in plan.terms if spec.leaf.id in term.leaf_ids
                                  for t in term.guard_types}))
            exact.append(replace(spec, filter_types=types or spec.filter_types, exact=bool(types)))
        return plan, exact

    def _leaf_by_id(self, record: RecompileRecord, token: str) -> tuple[Any, str]:
        """(the leaf `token` names, its entry's compile id): ``g5`` of the first entry listed, or ``0/1:g5``,
        from the entry's full tree."""
        from . import guards

        m = _ID_RE.match(token)
        if m is None:
            refuse(f"bad guard id {token!r}: use g5 or COMPILE_ID:g5 (e.g. 0/1:g5)")
        cid, leaf_id = m.group("cid"), m.group("leaf")
        ev = self._miss_event()
        entries = list(ev.entries)
        if cid is None:
            entry = entries[0]
        else:
            entry = next((e for e in entries if str(e.compile_id) == cid), None)
            if entry is None:
                refuse(f"no cache entry {cid} here (entries: {', '.join(str(e.compile_id) for e in entries)})")
        for verdict in record.entries:
            if verdict.compile_id == str(entry.compile_id):
                for leaf in verdict.failing:
                    if leaf.id == leaf_id:
                        return leaf, verdict.compile_id
        tree = guards.entry_guard_tree(entry, ev.f_locals)
        for leaf in guards.iter_leaves(tree):
            if leaf.id == leaf_id:
                return leaf, str(entry.compile_id)
        refuse(f"entry {entry.compile_id} has no guard {leaf_id} (it has g0..g{max(tree.leaf_count - 1, 0)})")

    def _decide_dynamic(self, name: str, dim: int) -> Resumed:
        record = self.current_record()
        if record.limit is not None and record.limit.hit_now:
            refuse(f"this compile hits torch._dynamo.config.{record.limit.exceeds}: Dynamo will not compile",
                   ErrorKind.REJECTED)
        f_locals = self._miss_event().f_locals
        value = self._input_value(name, f_locals)
        compat.load()
        torch = compat.torch
        if not isinstance(value, torch.Tensor):
            kind = type(value).__name__
            extra = (" (ints and floats become dynamic on their own once they change: automatic dynamic)"
                     if isinstance(value, (int, float)) else "")
            refuse(f"{name} is a {kind}, not a tensor{extra}")
        ndim = value.dim()
        if not -ndim <= dim < ndim:
            refuse(f"{name} has {ndim} dimension(s): DIM must be in {-ndim}..{ndim - 1}")
        dim %= ndim
        shown_name = compat.strip_local_scope(name) if name.startswith("L[") else name
        failing = {compat.strip_local_scope(leaf.source) for v in record.entries for leaf in v.failing
                   if leaf.source and leaf.source.startswith("L[")}
        if failing and not any(src == shown_name or src.startswith((shown_name + ".", shown_name + "["))
                               for src in failing):
            # marking an input that no failing guard checks cannot make this call fit an entry
            refuse(f"no failing guard checks {shown_name} (failing: {', '.join(sorted(failing))}); marking it "
                   f"dynamic would not avoid this recompile", ErrorKind.REJECTED)
        shown = compat.strip_local_scope(name) if name.startswith("L[") else name
        marked = DynamicDim(shown, dim, int(value.shape[dim]))
        site = record.advice.call_site if record.advice is not None else None
        fix = PermanentFix(DecisionKind.DYNAMIC, facts.callable_name(record.frame_name), dims=(marked,),
                           call_site=site)
        if marked.specialised:
            # torch specialises sizes 0 and 1: the new entry would pin this size, and the next call recompile
            refuse(f"{advice_text.dynamic_warning(marked)}; nothing was marked. Permanently: "
                   f"{format_recompile.permanent_text(fix)}", ErrorKind.REJECTED)
        try:
            compat.mark_dynamic(value, dim)
        except Exception as exc:  # noqa: BLE001 - torch refuses (e.g. marked static): nothing changed
            refuse(f"torch refused: {type(exc).__name__}: {exc}", ErrorKind.REJECTED)
        self.host.recompiles.update(record, action=Decision(DecisionKind.DYNAMIC, name=shown, dim=dim))
        self._dynamic_check().expect(self._miss_event().code, name, dim, record)
        return self._resume_recompile(Resumed(ResumeAction.DYNAMIC, dynamic=(marked,), permanent=fix))

    def _dynamic_check(self) -> Any:
        """The compile hook that reads what the compile after ``dynamic`` made of the dimension (made on first
        use; `advice.DynamicCheck`)."""
        check = self._dynamic_checker
        if check is None:
            from .advice import DynamicCheck

            def said(outcome: Any, record: Any) -> None:
                self.host.message(advice_text.dynamic_outcome_text(outcome))
                if record is not None:
                    outcome_kept = RecompileOutcome(OutcomeKind.COMPILED, outcome.compile_id, dynamic=outcome)
                    self.host.recompiles.update(record, outcome=outcome_kept)

            check = self._dynamic_checker = DynamicCheck(said)
            self.host.compile_hooks.append(check.on_compiled)
        return check

    @staticmethod
    def _input_value(name: str, f_locals: dict[str, Any]) -> Any:
        if name.isidentifier():
            if name not in f_locals:
                refuse(f"no input named {name!r} (inputs: {', '.join(sorted(f_locals)) or 'none'})")
            return f_locals[name]
        try:
            code = compile(name, "<dynamic>", "eval")
        except SyntaxError:
            refuse(f"bad NAME {name!r}: an input name or expression such as L['x'] or batch['x']")
        try:
            return eval(code, {"__builtins__": {}, "L": f_locals}, dict(f_locals))  # noqa: S307 - user's own names
        except Exception as exc:  # noqa: BLE001
            refuse(f"{name}: {type(exc).__name__}: {exc}", ErrorKind.EVAL, raised=exc)
