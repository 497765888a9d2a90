"""Checked advice for a recompile: each permanent fix built from what torch really has, and checked on it.

`advise` runs when a cache miss is analysed (`recompile.RecompileLog`), with the capture's records of that run:

* the call site the code object was compiled under (`callsites.CallSiteLog`): a fix goes on the user's own
  ``torch.compile`` call, or says that no call site is known;
* the ``guard_filter_fn`` of the default ``drop`` (the failing guards of the most recently used entry), built from
  and evaluated on that entry's recorded ``GuardFilterEntry`` records (`filter_entries.plan_filter`);
* for each ``dynamic NAME DIM`` suggestion, the size the call has there: torch specialises sizes 0 and 1, so
  ``mark_dynamic`` cannot make such a dimension dynamic (``mark_unbacked`` can).

`DynamicCheck` is the other half of ``dynamic``: a compile hook that reads the new entry's ``TENSOR_MATCH`` on the
marked input and records whether that dimension really is dynamic there.

Results are frozen records (`model.DynamicDim`, `model.DynamicOutcome`, `RecompileAdvice`);
`dynadbg.core.format.advice` turns them into sentences.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import CodeType
from typing import Any, Callable, Mapping, Sequence

from .callsites import CallSite
from .filter_entries import CompileFilterEntries, FilterEntryLog, FilterPlan, NoFilter, entries_for_leaf, plan_filter
from .guards import tensor_match_sizes
from .model import DynamicDim, DynamicOutcome

__all__ = ["DynamicCheck", "RecompileAdvice", "advise", "entries_of", "plan_for_leaves"]


@dataclass(frozen=True)
class RecompileAdvice:
    """What the permanent fixes of one recompile rest on.

    Attributes:
        call_site: the user's ``torch.compile`` call whose call missed (else the one the code object was last
            compiled under), None when unknown.
        call_sites: every call site it was compiled under (a function two compiled callers share).
        drop: the checked ``guard_filter_fn`` of the default ``drop``, None when there is nothing to drop.
        dynamic: the ``dynamic`` suggestions with the call's size there (`model.DynamicDim`; torch specialises
            sizes 0 and 1, so ``mark_dynamic`` cannot make such a dimension dynamic).
        recorded: the capture recorded call sites and filter entries in this run (False: attached late or a
            torch without the hooks; then nothing here can be checked).
        drop_left_out: failing guards of that entry the default drop leaves out, because no filter drops them
            alone (each with why).
    """

    call_site: CallSite | None
    call_sites: tuple[CallSite, ...] = ()
    drop: FilterPlan | None = None
    dynamic: tuple[DynamicDim, ...] = ()
    recorded: bool = True
    drop_left_out: tuple[NoFilter, ...] = ()


def entries_of(capture: Any, code: CodeType | int, compile_id: str) -> CompileFilterEntries | None:
    """The recorded filter entries of one compile, through the capture (None when not recorded)."""
    log: FilterEntryLog | None = getattr(capture, "filter_entries", None)
    if log is None:
        return None
    return log.for_compile(code, compile_id)


def plan_for_leaves(capture: Any, code_key: int, leaves_by_compile: Mapping[str, Sequence[Any]]) -> FilterPlan:
    """One filter for leaves of one or more entries of a code object: each compile's leaves planned on that
    compile's entries; the plan is ok only when each part is. The merged plan's text is evaluated on each part's
    entries again (a term built for one compile must not drop something else in another)."""
    from dataclasses import replace

    from .filter_entries import checked_source, evaluate_filter

    parts = [plan_filter(leaves, entries_of(capture, code_key, cid), cid) for cid, leaves in leaves_by_compile.items()]
    if len(parts) == 1:
        return parts[0]
    why = tuple(w for p in parts for w in p.why_not)
    ids = tuple(i for p in parts for i in p.leaf_ids)
    if why or not all(p.ok for p in parts):
        return FilterPlan(parts[0].compile_id, ids, why_not=why,
                          unexpected=tuple(e for p in parts for e in p.unexpected),
                          missed=tuple(e for p in parts for e in p.missed))
    terms = tuple(dict.fromkeys(t for p in parts for t in p.terms))
    recorded_sets = [r.entries for cid in leaves_by_compile if (r := entries_of(capture, code_key, cid)) is not None]
    source, rules = checked_source(terms, recorded_sets)
    dropped = []
    unexpected = []
    for cid, part in zip(leaves_by_compile, parts):
        recorded = entries_of(capture, code_key, cid)
        assert recorded is not None  # an ok part had entries
        flags = evaluate_filter(source, recorded.entries)
        mine = {e.index for e in part.dropped}
        for e, keep in zip(recorded.entries, flags):
            if not keep:
                dropped.append(e)
                if e.index not in mine:
                    unexpected.append(e)
    return replace(parts[0], leaf_ids=ids, terms=terms, source=source, dropped=tuple(dropped),
                   ok=not unexpected, unexpected=tuple(unexpected), rules=rules)


def _size_at(value: Any, dim: int) -> int | None:
    try:
        return int(value.shape[dim])
    except Exception:  # noqa: BLE001 - not a tensor, or no such dimension
        return None


def advise(record: Any, capture: Any, f_locals: dict[str, Any] | None = None) -> RecompileAdvice:
    """The advice of one `model.RecompileRecord`, from the capture's records of this run.

    Args:
        record: the analysed miss.
        capture: the run's `capture.Capture` (its ``callsites`` and ``filter_entries``), or None.
        f_locals: the call's inputs (for the sizes of ``dynamic`` suggestions).
    """
    from .decisions import default_drop_leaves, dynamic_suggestions, held_back_reason

    sites_log = getattr(capture, "callsites", None)
    entries_log = getattr(capture, "filter_entries", None)
    recorded = bool(sites_log is not None and sites_log.installed and entries_log is not None
                    and entries_log.available)
    # the call that missed (on the stack now, when the miss is being analysed), else the one it compiled under
    site = None
    if sites_log is not None:
        site = sites_log.site_on_stack() or sites_log.site_for(record.code_key)
    sites = sites_log.sites_for(record.code_key) if sites_log is not None else ()
    drop = None
    left_out: tuple[NoFilter, ...] = ()
    if record.entries and not (record.limit is not None and record.limit.hit_now):
        leaves = default_drop_leaves(record)
        if not leaves:
            # no guard filter drops any of them (the guard taxonomy says so): the plan says why, per guard
            # (the guards the default leaves out on purpose are not asked about: `decisions.held_back` says them)
            failing = [leaf for leaf in record.entries[0].failing if not leaf.epilogue
                       and held_back_reason(leaf) is None]
            if failing:
                drop = plan_filter(failing, entries_of(capture, record.code_key, record.entries[0].compile_id),
                                   record.entries[0].compile_id)
        if leaves:
            cid = record.entries[0].compile_id
            recorded_entries = entries_of(capture, record.code_key, cid)
            # the default drops what a filter can drop alone; the others are said, not silently taken along
            alone = [leaf for leaf in leaves if droppable_alone(leaf, recorded_entries)]
            drop = plan_filter(alone or leaves, recorded_entries, cid)
            if alone and len(alone) < len(leaves):
                left_out = plan_filter([leaf for leaf in leaves if leaf not in alone], recorded_entries, cid).why_not
    dynamic = [DynamicDim(name, dim, _size_at((f_locals or {}).get(name), dim))
               for name, dim in dynamic_suggestions(record)]
    return RecompileAdvice(site, sites, drop, tuple(dynamic), recorded, left_out)


def droppable_alone(leaf: Any, recorded: CompileFilterEntries | None) -> bool:
    """Whether a filter can drop `leaf` alone (its entries make no other guard), on recorded entries; True when
    nothing was recorded (the plan then says it could not check)."""
    if recorded is None:
        return True
    _, problem = entries_for_leaf(leaf, recorded.entries, recorded.compile_id)
    return problem is None


# --------------------------------------------------------------------------------------------------------------
# ``dynamic NAME DIM``: did the new entry really make that dimension dynamic?
# --------------------------------------------------------------------------------------------------------------

class DynamicCheck:
    """A compile hook: after ``dynamic NAME DIM``, read the next compile of that code object.

    Args:
        on_outcome: called with the `DynamicOutcome` and the record the expectation was given with (the engine
            says it and puts it in the record's outcome).
    """

    def __init__(self, on_outcome: Callable[[DynamicOutcome, Any], None]) -> None:
        self.on_outcome = on_outcome
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[CodeType, str, int, Any]] = {}
        #: what each checked compile made of its marked dimension, in order
        self.outcomes: list[DynamicOutcome] = []

    def expect(self, code: CodeType, name: str, dim: int, record: Any = None) -> None:
        """The next compile of `code` should make input `name` (``"x"`` or ``"L['x']"``) dimension `dim` dynamic."""
        with self._lock:
            self._pending[id(code)] = (code, name, dim, record)

    def discard(self, code: CodeType) -> None:
        with self._lock:
            self._pending.pop(id(code), None)

    def on_compiled(self, event: Any) -> None:
        """Compile hook (`capture.CompileEvent`)."""
        with self._lock:
            pending = self._pending.pop(id(event.original_code), None)
        if pending is None:
            return
        _, name, dim, record = pending
        from . import compat

        source = name if name.startswith("L[") else f"L['{name}']"
        sizes = tensor_match_sizes(event.guard_manager, source)
        dynamic = None if sizes is None or dim >= len(sizes) else sizes[dim] is None
        outcome = DynamicOutcome(compat.strip_local_scope(source), dim, str(event.compile_id), sizes, dynamic)
        self.outcomes.append(outcome)
        self.on_outcome(outcome, record)
