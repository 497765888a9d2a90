"""Plain text of the toolkit's records: why a draft is refused, what validation added, an entry in one line, a
re-bind. Made from `dynadbg.core.toolkit_model` data only."""

from __future__ import annotations

from typing import Any, Iterable

from ..toolkit_model import AddedGuard, Problem, ProblemKind, RebindResult, Validation


def problem_text(p: Problem) -> str:
    """One line per problem (``graph input 1 reads G['lin_b']._parameters['weight']: ...``)."""
    where = f"graph input {p.graph_input}: " if p.graph_input is not None else ""
    guard = f"{p.guard_type} " if p.guard_type else ""
    code = f"({p.guard_code}) " if p.guard_code else ""
    detail = f": {p.detail}" if p.detail else ""
    was = f" (Dynamo's code read {p.old_source})" if p.old_source and p.old_source != p.source else ""
    if p.kind is ProblemKind.EDIT:
        return f"the instruction edits do not validate{detail}"
    if p.kind is ProblemKind.UNGUARDED_INPUT:
        what = f"reads {p.source}" if p.source else "is computed"
        return f"{where}{what}{was} and no guard covers it{detail}"
    if p.kind is ProblemKind.GUARD_FAILS:
        return (f"{where}the object at {p.source} fails {guard}{code}— a guard torch built for "
                f"{p.old_source or 'the old object'}: the graph was traced for what it checks{detail}")
    if p.kind is ProblemKind.NO_VALUE:
        return f"{where}{p.source} cannot be read on live objects{was}{detail}"
    if p.kind is ProblemKind.BAKED_VALUE:
        return (f"dropping {guard}on {p.source} {code}— Dynamo specialised the code on that value (it may be baked "
                f"into the graph as a constant), so other values would run it unchecked and can give wrong results")
    if p.kind is ProblemKind.NOT_FOUND:
        return f"{guard}on {p.source or '?'}{detail}" if p.source else (p.detail or "not found")
    return f"{guard}on {p.source or '?'}" + (f" {code.rstrip()}" if code else "") + detail


def refusal_text(validation: Validation) -> str:
    """Why a copy of entry `validation.compile_id` is refused, one problem per line, and how to override."""
    lines = [f"copy of entry {validation.compile_id or '?'} refused ({len(validation.problems)} problem"
             f"{'s' if len(validation.problems) != 1 else ''}):"]
    lines += [f"  - {problem_text(p)}" for p in validation.problems]
    lines.append("  install(..., force=True) installs it anyway; the problems then stay in the entry's warnings")
    return "\n".join(lines)


def added_text(added: Iterable[AddedGuard]) -> list[str]:
    """``+ TENSOR_MATCH on G['lin_b']._parameters['weight'] (transported from G['lin_a']...)`` lines."""
    out = []
    for a in added:
        why = {"added": "added", "transported": f"transported from {a.from_source}",
               "validator": f"the edit makes the graph read it (was {a.from_source})",
               "kept": "kept beside a dropped guard"}.get(a.why, a.why)
        out.append(f"+ {a.guard_type} on {a.source} ({why})")
    return out


def validation_text(validation: Validation) -> str:
    """The whole validation: problems (or "ok"), guards added, guards dropped, graph inputs that changed."""
    lines = [refusal_text(validation) if validation.problems else f"copy of entry {validation.compile_id} "
                                                                  f"validates"]
    lines += [f"  {line}" for line in added_text(validation.added)]
    lines += [f"  - {t or 'the whole manager'} on {s} (dropped)" for s, t in validation.dropped]
    lines += [f"  graph input {k}: {old} -> {new}" for k, old, new in validation.new_sources]
    return "\n".join(lines)


def entry_line(entry: Any) -> str:
    """``0/1  cache  eager  28 guards  3 hits  toolkit  (called at demo.py:12)``."""
    parts = [entry.compile_id, entry.kind.value, entry.backend or "-", f"{entry.guards.leaf_count} guards"]
    if entry.hits is not None:
        parts.append(f"{entry.hits} hits")
    parts.append(entry.made_by)
    if entry.invalidated:
        parts.append("invalidated")
    if entry.warnings:
        parts.append(f"FORCED past {len(entry.warnings)} problem{'s' if len(entry.warnings) != 1 else ''}")
    if entry.call_site is not None:
        import os

        how = "installed at" if entry.made_by == "toolkit" else "compiled by the call at"
        if getattr(entry, "reapplied_from", None):
            how = f"re-applied from copy {entry.reapplied_from} installed at"
        parts.append(f"({how} {os.path.basename(entry.call_site.filename)}:{entry.call_site.lineno})")
    return "  ".join(parts)


def rebind_text(result: RebindResult) -> str:
    """What one re-bind did."""
    if result.swapped and not result.installed:
        return (f"{result.key}: swapped in at {result.old_source}; the guards of entr"
                f"{'ies' if len(result.accepted_by) != 1 else 'y'} {', '.join(result.accepted_by)} accept it as "
                f"they are: nothing installed, no recompile")
    how = "swapped in" if result.swapped else f"the code now reads {result.new_source}"
    return (f"{result.key}: {how}; copies {', '.join(result.installed)} of {', '.join(result.copied_from)} "
            f"installed" + (f"; {', '.join(result.accepted_by)} accept it as they are" if result.accepted_by else ""))
