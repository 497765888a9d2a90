"""The unguarded-edit check: an edit that makes generated code feed its FX graph another object or value (a new
global, attribute, constant or local) must leave that object guarded, or be refused with the source it would
leave unguarded.

Dynamo guards exactly the sources it traced: ``TENSOR_MATCH`` on ``G['lin_a']._parameters['weight']`` says the
graph input read from there has that dtype, device, shape and stride. An instruction edit (``LOAD_GLOBAL lin_a``
→ ``lin_b``) changes the source but not the guards, so a later dtype change of ``lin_b`` would run the stale graph
(it raised inside the graph when this was tried). `guard_new_inputs` compares, input by input, the graph calls of
Dynamo's code and of the edited code (`toolkit_sources.graph_calls`); for each input whose source changed, the
guards torch built on the old source are called on the live object at the new one (they must all pass: the graph
was traced for them) and rebuilt there (`toolkit_guards.carry`), the way torch builds them. A source with no live
object to read (a local at a stop where the call's inputs are not known), a computed value the check cannot
follow, or a constant where the graph takes a tensor is refused. Used by `dynadbg.core.toolkit` (drafts) and
`dynadbg.core.patches` (``edit`` at a stop, ``--patch`` replay). Worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Iterable

from . import compat
from .toolkit_guards import Carried, Scope, carry, find_raw
from .toolkit_model import AddedGuard, Problem, ProblemKind
from .toolkit_sources import GraphInput, graph_calls


@dataclass
class InputCheck:
    """What `guard_new_inputs` found: guards added to the copy, problems, and each changed input
    (position, old source text or None, new source text or None)."""

    added: list[AddedGuard] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    changed: list[tuple[int, str | None, str | None]] = field(default_factory=list)


def changed_inputs(base_code: CodeType, new_code: CodeType) -> list[tuple[GraphInput, GraphInput | None]]:
    """(Dynamo's input, the edit's input) for each graph input whose loading instructions differ, calls matched
    by graph name and order; the edit's side is None when the edit dropped that call."""
    out: list[tuple[GraphInput, GraphInput | None]] = []
    base_calls, new_calls = graph_calls(base_code), graph_calls(new_code)
    by_name: dict[str, list[Any]] = {}
    for call in new_calls:
        by_name.setdefault(call.name, []).append(call)
    for call in base_calls:
        mine = by_name.get(call.name)
        new = mine.pop(0) if mine else None
        if new is None:
            continue
        for k, old in enumerate(call.inputs):
            now = new.inputs[k] if k < len(new.inputs) else None
            if now is None or now.text != old.text:
                out.append((old, now))
    return out


def guard_new_inputs(base_code: CodeType, new_code: CodeType, base_root: Any, new_root: Any, scope: Scope, *,
                     dropped: Iterable[str] = ()) -> InputCheck:
    """Guard on `new_root` (a copy of `base_root`'s tree that the edited code will run under) every source the
    edited code `new_code` feeds the graph that Dynamo's `base_code` did not, or say why not.

    `dropped`: sources whose managers the copy left out (a dropped guard on a graph input is refused too).
    Returns the guards added, the problems and the changed inputs. Nothing is added for an input whose new
    source already carries the guard types torch had on the old one (the user guarded it)."""
    out = InputCheck()
    base_raw = compat.read_guard_manager(base_root)
    new_raw = compat.read_guard_manager(new_root)
    dropped = tuple(dropped)
    for call in graph_calls(new_code):
        for inp in call.inputs:
            if inp.source is not None and any(inp.source.text == d or inp.source.text.startswith((d + ".", d + "["))
                                              for d in dropped):
                out.problems.append(Problem(ProblemKind.UNGUARDED_INPUT, inp.source.text, graph_input=inp.position,
                                            detail="its guards were dropped"))
    for old, new in changed_inputs(base_code, new_code):
        old_text = old.source.text if old.source is not None else None
        new_text = new.source.text if new is not None and new.source is not None else None
        out.changed.append((old.position, old_text, new_text))
        if new is None:
            continue
        if old.source is None:
            out.problems.append(Problem(ProblemKind.UNGUARDED_INPUT, new_text, graph_input=old.position,
                                        detail=f"Dynamo's code computes this input ({old.text}); the check cannot "
                                               f"follow it to a source"))
            continue
        old_node = find_raw(base_raw, old.source.text)
        if new.constant:
            _constant(old, new, old_node, out)
            continue
        if new.source is None:
            out.problems.append(Problem(ProblemKind.UNGUARDED_INPUT, None, graph_input=old.position,
                                        old_source=old_text, detail=f"the edited code computes it ({new.text}); "
                                                                    f"the check cannot follow it to a source"))
            continue
        if old_node is None or not old_node.leaves:
            # Dynamo put no guard of its own on the old source (a value reached through a guarded parent):
            # guard the new one like a value of its kind
            out.problems.extend(_guard_plain(new_root, new.source, scope, old_text, out))
            continue
        have = find_raw(new_raw, new.source.text)
        wanted = {lf.guard_type for lf in old_node.leaves if not lf.relational}
        if have is not None and wanted <= {lf.guard_type for lf in have.leaves}:
            continue
        done: Carried = carry(old_node, new_root, new.source, scope, why="validator", subtree=False)
        for problem in done.problems:
            out.problems.append(Problem(problem.kind, problem.source or new_text, problem.guard_type,
                                        problem.guard_code, old.position, old_text, problem.detail))
        out.added.extend(done.added)
    return out


def _constant(old: GraphInput, new: GraphInput, old_node: Any, out: InputCheck) -> None:
    """A constant where Dynamo's code loaded a source: it never changes, so it needs no guard; it must pass the
    guards torch built for the old source (a tensor input cannot become a literal)."""
    if old_node is None:
        return
    for leaf in old_node.leaves:
        if leaf.relational:
            continue
        try:
            ok = bool(leaf.guard(new.value))
        except Exception:  # noqa: BLE001
            ok = False
        if not ok:
            out.problems.append(Problem(ProblemKind.GUARD_FAILS, repr(new.value), leaf.guard_type,
                                        leaf.parts[0] if leaf.parts else None, old.position, old_node.source,
                                        detail="the edit feeds the graph a constant there"))


def _guard_plain(root: Any, source: Any, scope: Scope, old_text: str | None, out: InputCheck) -> list[Problem]:
    from .toolkit_guards import add_guard

    try:
        out.added.append(add_guard(root, source, scope, why="validator", from_source=old_text))
    except Exception as exc:  # noqa: BLE001 - no live value, or torch refused the leaf
        kind = ProblemKind.NO_VALUE if isinstance(exc, (KeyError, AttributeError, IndexError)) else \
            ProblemKind.UNSUPPORTED
        return [Problem(kind, source.text, old_source=old_text, detail=f"{type(exc).__name__}: {exc}")]
    return []


def guard_edit(base_code: CodeType, new_code: CodeType, wrapper: Any, original: CodeType,
               f_locals: dict[str, Any] | None, f_globals: dict[str, Any]) -> tuple[Any, InputCheck]:
    """The guard manager an instruction edit must run under: (None, check) when the edit feeds the graph no
    new source, or when `check` has problems (refuse the edit); else (a copy of `wrapper` with the guards
    `guard_new_inputs` added, check). `f_locals`/`f_globals` are the live objects of this stop (None locals:
    a new local cannot be guarded). What ``edit`` at a stop and ``--patch`` replay use
    (`dynadbg.core.patches`)."""
    if not changed_inputs(base_code, new_code):
        return None, InputCheck()
    clone = wrapper.root.clone_manager(lambda _m: True)
    check = guard_new_inputs(base_code, new_code, wrapper.root, clone, Scope(original, f_globals, f_locals))
    if check.problems or not check.added:
        return None, check
    return compat.wrap_guard_root(clone, wrapper), check
