"""Plain text of checked advice: the guard filter a ``drop`` prints and what it was checked on, why no filter can
drop a guard, the call site a fix goes on, ``mark_dynamic`` on sizes 0 and 1, what the compile after ``dynamic``
made of the dimension, and the one description of each stance or config line.

Made from `dynadbg.core.advice`, `dynadbg.core.filter_entries` and `dynadbg.core.callsites` records, and from
`dynadbg.core.stances` (the snippets and what each does); `describe_choices` fills the text fields of a recompile
stop's `model.RecompileChoice` says about its checked filter (`choice_detail_text`, `choice_why_not_text`,
`choice_warning_texts`), and the permanent code of a fix with a call site or a checked plan (`fix_lines`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..callsites import passes_mode, with_option
from ..filter_entries import FilterPlan, NoFilter, NoFilterKind
from .drop_default import listed_once
from ..model import AutoDynamicDim, DecisionKind, DynamicDim, DynamicOutcome, PermanentFix, RecompileChoice

if TYPE_CHECKING:
    from ..callsites import CallSite


def call_site_text(site: "CallSite | None", code_name: str = "") -> str:
    """``"torch.compile(forward) at prog.py:12"`` or what is known instead."""
    if site is None:
        who = f" for {code_name}" if code_name else ""
        return (f"no torch.compile call site is known{who} (it was compiled before the debugger attached, or by a "
                f"call the debugger did not see)")
    return f"{site.text} at {site.where}" + (" (a decorator)" if site.decorator else "")


def _leaf_label(reason: NoFilter) -> str:
    return f"{reason.leaf_id} {reason.leaf_type}" + (f" on {reason.source}" if reason.source not in ("", "L") else "")


def no_filter_text(reason: NoFilter) -> str:
    """Why no ``guard_filter_fn`` drops one guard alone, one sentence."""
    what = _leaf_label(reason)
    cid = f" in {reason.compile_id}" if reason.compile_id else ""
    if reason.kind is NoFilterKind.NOT_RECORDED:
        return (f"{what}: the guard filter entries of {reason.compile_id or 'its compile'} were not recorded "
                f"(compiled before the debugger attached), so no filter can be checked on them")
    if reason.kind is NoFilterKind.NOT_A_GUARD:
        return f"{what} is the debugger's note, not a guard any compile built: nothing to filter"
    if reason.kind is NoFilterKind.RELATIONAL:
        return (f"{what} is a relational guard Dynamo builds from every tensor input together; torch's guard "
                f"filter has no entry for it")
    if reason.kind is NoFilterKind.SHAPE_ENV:
        return (f"{what} is one symbolic-shape guard; torch's filter has one SHAPE_ENV entry for all of them, "
                f"so a filter cannot drop it alone")
    if reason.kind is NoFilterKind.SHARED_ENTRY and reason.entry is not None:
        other = ", ".join(_WHAT_IT_CHECKS.get(t, t) for t in reason.collateral)
        text = (f"{what} has no guard filter entry of its own in {reason.compile_id or 'that compile'}: torch "
                f"builds it as part of the entry `{reason.entry.label}`, which also holds {other}; a filter that "
                f"drops it drops those too")
        if reason.leaf_type == "DIMENSION_DYNAMIC_MARKING_GUARD":
            text += (" (the entry was compiled for a tensor marked differently: mark the input the same way "
                     "before its first call, so every entry is compiled for a marked tensor)")
        return text
    return f"{what}: no guard filter entry{cid} stands for it, so no filter can drop it"


#: What the guards a shared filter entry also holds check, in words.
_WHAT_IT_CHECKS = {
    "TENSOR_MATCH": "the tensor's TENSOR_MATCH (dtype, device, shape, strides, requires_grad)",
    "DIMENSION_DYNAMIC_MARKING_GUARD": "its dynamic-dimension markings (DIMENSION_DYNAMIC_MARKING_GUARD)",
}


def plan_check_text(plan: FilterPlan) -> str:
    """What the printed filter was checked on and what it drops (``plan.ok``), or why it is not printed."""
    if plan.ok:
        # entries a rule of the filter stands for are said once, as that rule's count and pattern
        items: list[str | int] = []
        counts: dict[int, int] = {}
        for e in plan.dropped:
            k = next((k for k, r in enumerate(plan.rules) if e.name in r.names and e.guard_type in r.guard_types),
                     None)
            if k is None:
                items.append(e.label)  # a guard torch builds as several entries of one name: once, with ×N
                continue
            if k not in counts:
                items.append(k)
                counts[k] = len(set(plan.rules[k].names))
        drops = "; ".join(listed_once(x if isinstance(x, str) else
                                      f"{counts[x]} × {plan.rules[x].pattern} {'/'.join(plan.rules[x].guard_types)}"
                                      for x in items))
        ids = plan.leaf_ids
        shown = ", ".join(ids) if len(ids) <= 6 else f"{', '.join(ids[:3])}, … {ids[-1]}: {len(ids)} guards"
        if len(plan.dropped) == 1 and len(ids) == 1 and not counts:
            # one entry for one leaf: name the leaf type torch built from it (GuardFilterEntry.derived_guard_types),
            # so a CONSTANT_MATCH entry reads as the EQUALS_MATCH leaf the tree shows
            (entry,) = plan.dropped
            derived = "/".join(entry.derived_guard_types)
            built = f"the leaf it built: {ids[0]}" + (f" {derived}" if derived else "")
            return (f"checked on the {plan.total} guard filter entries of {plan.compile_id} (torch's list of the "
                    f"guards to build, not the tree's leaves: counts and names differ): it drops {entry.label} "
                    f"({built}) and keeps the other {plan.kept}")
        # the filter's entries are torch's guard list before it is built into the tree: another count than the
        # tree's leaves, and names of how a guard was made (CONSTANT_MATCH builds an EQUALS_MATCH leaf)
        built = f"the leaf it built: {shown}" if len(ids) == 1 else f"the leaves they built: {shown}"
        return (f"checked on the {plan.total} guard filter entries of {plan.compile_id} (torch's list of the guards "
                f"to build, not the tree's leaves: counts and names differ): it drops {drops} ({built}) and keeps "
                f"the other {plan.kept}")
    if plan.why_not:
        return "no guard_filter_fn: " + "; ".join(no_filter_text(w) for w in plan.why_not)
    parts = []
    if plan.unexpected:
        parts.append("it would also drop " + ", ".join(e.label for e in plan.unexpected))
    if plan.missed:
        parts.append("it would keep " + ", ".join(e.label for e in plan.missed))
    return "no guard_filter_fn: checked on the entries of " + plan.compile_id + ", " + "; ".join(parts)


def drop_fix(plan: FilterPlan | None, site: "CallSite | None") -> str | None:
    """The user's call with the plan's filter added (``torch.compile(fn, options={"guard_filter_fn": ...})``),
    None when the plan is not ok, no call site is known, or the call cannot be rewritten (`callsites.with_option`)."""
    if plan is None or not plan.ok or site is None:
        return None
    return with_option(site, "guard_filter_fn", plan.source)


def drop_permanent(plan: FilterPlan, site: "CallSite | None", fix: str | None, code_name: str = "") -> str | None:
    """The code a user writes to drop the guards for good, when the plan is ok; None otherwise."""
    if not plan.ok:
        return None
    if fix is not None:
        return f"{fix}   # in place of {site.text} at {site.where}" if site is not None else fix
    if site is not None and passes_mode(site):
        return (f"# {site.text} at {site.where} passes mode=, and torch.compile takes mode or options, not both: "
                f"pass options={{\"guard_filter_fn\": {plan.source}}} in place of mode")
    if site is not None:
        return (f"# add {{\"guard_filter_fn\": {plan.source}}} to the options of {site.text} at {site.where}")
    return (f"# {call_site_text(None, code_name)}; pass options={{\"guard_filter_fn\": {plan.source}}} to the "
            f"torch.compile call that compiles it")


def dynamic_warning(advice: DynamicDim) -> str | None:
    """The warning of a ``dynamic NAME DIM`` on a size torch specialises (0 or 1), else None."""
    if not advice.specialised:
        return None
    return (f"{advice.name} has size {advice.size} at dimension {advice.dim} in this call: torch specialises sizes "
            f"0 and 1, so mark_dynamic would leave that dimension static here; "
            f"torch._dynamo.decorators.mark_unbacked({advice.name}, {advice.dim}) makes it dynamic for every size")


def dynamic_permanent(advice: DynamicDim, site: "CallSite | None", code_name: str = "") -> str:
    """The ``mark_dynamic`` (or ``mark_unbacked`` for sizes 0 and 1) line, and where it goes."""
    call = (f"torch._dynamo.decorators.mark_unbacked({advice.name}, {advice.dim})" if advice.specialised else
            f"torch._dynamo.mark_dynamic({advice.name}, {advice.dim})")
    target = f"the function {site.text} compiled ({site.where})" if site is not None else code_name or "it"
    return f"{call}   # on the tensor, before calling {target}"


def dynamic_outcome_text(outcome: DynamicOutcome, *, lead: bool = True) -> str:
    """What the compile after ``dynamic`` made of the marked dimension: a line for the log (`lead`: with the
    ``dynamic:`` lead; without it, as a record's outcome)."""
    sizes = "?" if outcome.sizes is None else "[" + ", ".join("None" if s is None else str(s)
                                                               for s in outcome.sizes) + "]"
    if outcome.dynamic is None:
        text = (f"could not read {outcome.name}'s TENSOR_MATCH in {outcome.compile_id}; whether dimension "
                f"{outcome.dim} is dynamic there is unknown")
    elif outcome.dynamic:
        text = (f"checked {outcome.compile_id}: its TENSOR_MATCH on {outcome.name} has size={sizes}, "
                f"dimension {outcome.dim} is dynamic")
    else:
        text = (f"{outcome.compile_id} did NOT make {outcome.name} dimension {outcome.dim} dynamic: its "
                f"TENSOR_MATCH pins size={sizes}; the next call with another size there recompiles")
    return f"dynamic: {text}" if lead else text


def choice_detail_text(c: RecompileChoice) -> str:
    """The text after a choice's summary: its `detail`, and for drop what its filter was checked on (or that the
    compile's filter entries were not recorded, so none is printed)."""
    text = c.detail
    if c.kind is DecisionKind.DROP and c.available:
        if c.plan is not None:
            check = plan_check_text(c.plan)
            if c.left_out:
                check += "; left out: " + "; ".join(no_filter_text(w) for w in c.left_out)
            text = f"{text}; {check}" if text else check
        elif c.permanent is None:
            text = (text + "; " if text else "") + ("no guard_filter_fn printed: this compile's guard filter "
                                                    "entries were not recorded")
    return text


def auto_dynamic_text(d: AutoDynamicDim, compile_id: str | None = None) -> str:
    """What torch's automatic dynamic shapes does with one dimension at a recompile: ``"torch makes L['x'] dim 1
    dynamic in the new entry: sizes 8 then 16 were seen; later sizes hit that entry"``."""
    entry = f"the new entry {compile_id}" if compile_id else "the new entry"
    if d.already:
        return (f"torch makes {d.source} dim {d.dim} dynamic in {entry}: an earlier compile already saw it change "
                f"size (now {d.seen[-1]}); later sizes hit that entry")
    sizes = " then ".join(str(n) for n in d.seen)
    return f"torch makes {d.source} dim {d.dim} dynamic in {entry}: sizes {sizes} were seen; later sizes hit that entry"


def auto_dynamic_check_text(outcome: DynamicOutcome) -> str:
    """The new entry read back after automatic dynamic (`RecompileOutcome.auto_dynamic`), one clause."""
    sizes = "?" if outcome.sizes is None else "[" + ", ".join("None" if s is None else str(s)
                                                               for s in outcome.sizes) + "]"
    if outcome.dynamic is None:
        return f"could not read {outcome.name}'s TENSOR_MATCH in {outcome.compile_id}"
    if outcome.dynamic:
        return f"its TENSOR_MATCH on {outcome.name} has size={sizes}: dim {outcome.dim} is dynamic"
    return f"its TENSOR_MATCH on {outcome.name} pins size={sizes}: dim {outcome.dim} is NOT dynamic"


def choice_why_not_text(c: RecompileChoice) -> str | None:
    """Why a choice is not available (its `why_not`, that torch makes the changed dimensions dynamic itself, or
    why no filter drops its guards), None when it is."""
    if c.available:
        return None
    if c.why_not is not None:
        return c.why_not
    if c.automatic:
        dims = ", ".join(f"{d.name} {d.dim}" for d in c.automatic)
        return (f"torch's automatic dynamic shapes makes {dims} dynamic in the new entry itself: "
                f"nothing to mark (recompile does it)")
    return plan_check_text(c.plan) if c.plan is not None else None


def fix_lines(fix: PermanentFix) -> list[str] | None:
    """The permanent code of a drop or dynamic fix the advice built (a checked plan, a call site, a size torch
    specialises), None when `fix` carries none of it (the plain snippet of `format.permanent_lines` applies)."""
    if fix.kind is DecisionKind.DROP and fix.plan is not None:
        plan = fix.plan
        site = fix.call_site
        code = drop_permanent(plan, site, drop_fix(plan, site), fix.fn_name)
        return [code] if code is not None else []
    if fix.kind is DecisionKind.DYNAMIC and (fix.call_site is not None or any(d.size is not None for d in fix.dims)):
        return [dynamic_permanent(d, fix.call_site, fix.fn_name) for d in fix.dims]
    return None
