"""Stack-slot provenance: for each value-stack slot before an instruction, the instruction that pushed it.

`provenance(code, index, path=...)` replays the instructions the frame really executed when the engine
recorded them (``path``), else uses the static flow of the code (`flow.analyse`: for Dynamo's straight-line
code the two agree; at a merge of paths with different origins the result says ``ambiguous``). Slots that
hold a graph output name the FX node; at a resume-function call the argument slots name the user variables
and stack values they carry (from `roles`). Pure functions over the code object: cheap after the first call
for a code object (the flow analysis is cached per code object).
"""

from __future__ import annotations

import threading
from types import CodeType
from typing import Sequence

from . import compat, flow
from .model import CodeRoles, Provenance, Role, SlotOrigin
from .roles import CodegenFacts, _Exprs, code_roles, flow_of

_exprs_cache: dict[int, tuple[CodeType, _Exprs]] = {}


def _exprs(code: CodeType, ops: Sequence[flow.Op], state: flow.FlowState) -> _Exprs:
    hit = _exprs_cache.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    ex = _Exprs(ops, state)
    if len(_exprs_cache) > 512:
        _exprs_cache.clear()
    _exprs_cache[id(code)] = (code, ex)
    return ex


#: `SlotOrigin.opname` of a slot the interpreter pushed when it entered an exception handler.
HANDLER = "(exception handler)"

_replayers: dict[int, tuple[CodeType, flow.PathReplayer]] = {}
_replay_lock = threading.Lock()


def _replayer(code: CodeType, ops: Sequence[flow.Op]) -> flow.PathReplayer:
    hit = _replayers.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    rep = flow.PathReplayer(ops, compat.parse_exception_table(code))
    if len(_replayers) > 512:
        _replayers.clear()
    _replayers[id(code)] = (code, rep)
    return rep


def provenance(code: CodeType, index: int, *, path: Sequence[int] | None = None,
               facts: CodegenFacts | None = None, roles: CodeRoles | None = None,
               generated: bool = True) -> Provenance:
    """Who pushed each value-stack slot before instruction `index` of `code` runs.

    Args:
        code: the code object.
        index: the instruction about to run (as in `CodeView.instructions`).
        path: the instruction indexes the frame executed, in order, ending with `index` (what a stepping
            engine records). None: use the static flow (exact for straight-line code).
        facts: capture records, for notes on graph outputs and resume arguments (see `roles`).
        roles: already computed roles of `code` (else computed here when `generated`).
        generated: False for user code: no role notes.

    Returns:
        `Provenance` with one `SlotOrigin` per slot, bottom first. ``index=-1`` in a slot means the value was
        on the stack before the analysed path (an exception handler's saved values).

    Raises:
        IndexError: `index` is out of range.
    """
    ops, state = flow_of(code)
    stack, how = raw_stack(code, index, path)
    ex = _exprs(code, ops, state)
    notes = _role_notes(code, index, stack, facts, roles) if generated else {}
    slots = []
    for pos, s in enumerate(stack):
        idx, kind = s
        if kind in ("exc", "lasti"):
            # pushed by the interpreter's unwinding, not by an instruction
            raised = ops[idx] if 0 <= idx < len(ops) else None
            where = f"{idx} {raised.opname}" if raised is not None else "?"
            slots.append(SlotOrigin(
                slot=pos, index=-1, opname=HANDLER, argrepr=(
                    f"the exception raised at {where}" if kind == "exc" else f"the offset of {where}, saved to "
                    "re-raise from"), value_index=idx, expression="<exception>" if kind == "exc" else "<lasti>",
                note=notes.get(pos, ""),
            ))
            continue
        op = ops[idx] if 0 <= idx < len(ops) else None
        value_index = flow.origin_of(s)
        slots.append(SlotOrigin(
            slot=pos,
            index=idx,
            opname=op.opname if op is not None else "",
            argrepr=op.argrepr if op is not None else "",
            value_index=value_index,
            is_null=kind == "null",
            expression="" if kind == "null" else ex.slot(s),
            note=notes.get(pos, ""),
        ))
    return Provenance(index, tuple(slots), how, ambiguous=(how == "static" and index in state.merged))


def raw_stack(code: CodeType, index: int, path: Sequence[int] | None = None) -> tuple[tuple[flow.Slot, ...], str]:
    """(abstract slots before `index`, ``"executed"`` or ``"static"``): what `provenance` builds on, without
    the per-slot records (cheap for deep stacks).

    Raises:
        IndexError: `index` is out of range.
    """
    ops, state = flow_of(code)
    if not 0 <= index < len(ops):
        raise IndexError(f"instruction index {index} out of range (0..{len(ops) - 1})")
    if path:
        p = list(path)
        if p[-1] != index:
            p.append(index)
        try:
            with _replay_lock:  # one replayer per code object: the UI and the worker may both ask
                return _replayer(code, ops).before(p), "executed"
        except ValueError:
            pass
    return state.before[index] or (), "static"


def slot_expression(code: CodeType, slot: flow.Slot) -> str:
    """The Python expression for one abstract slot (``"self.fc1.weight"``, ``"NULL"``)."""
    ops, state = flow_of(code)
    return _exprs(code, ops, state).slot(slot)


def _role_notes(code: CodeType, index: int, stack: Sequence[flow.Slot], facts: CodegenFacts | None,
                roles: CodeRoles | None) -> dict[int, str]:
    """Notes for slots that hold graph outputs, graph inputs at the graph call, resume arguments."""
    try:
        roles = roles if roles is not None else code_roles(code, facts)
    except Exception:  # noqa: BLE001 - notes are a bonus; provenance must not fail on odd code
        return {}
    out: dict[int, str] = {}
    rs = roles.roles
    for pos, s in enumerate(stack):
        v = flow.origin_of(s)
        if 0 <= v < len(rs):
            r = rs[v]
            if r.role == Role.GRAPH_OUTPUT and r.output is not None:
                short, k, node = r.output
                out[pos] = f"output {k} of {short}" + (f" (FX node {node})" if node else "")
            elif r.role == Role.GRAPH_OUTPUT and s[1].startswith("item:") and v == s[0]:
                k = int(s[1][5:])
                for g in roles.graph_calls:
                    if g.call_index < v:
                        node = f" (FX node {g.outputs[k]})" if k < len(g.outputs) else ""
                        out[pos] = f"output {k} of {g.short_name}{node}"
        for g in roles.graph_calls:
            if v == g.call_index:
                outs = ", ".join(g.outputs) if g.outputs else "?"
                out[pos] = f"the output tuple of {g.short_name} (FX nodes: {outs})"
    for g in roles.graph_calls:
        if index == g.call_index:
            n = len(g.inputs)
            for k in range(n):
                pos = len(stack) - n + k
                if pos >= 0:
                    ph = f" (FX placeholder {g.placeholders[k]})" if g.placeholders else ""
                    out[pos] = f"input {k} of {g.short_name}: {g.inputs[k]}{ph}"
    for resume in roles.resume_calls:
        if index == resume.call_index and resume.carries:
            op = _opname_at(code, index)
            if op == "CALL_FUNCTION_EX":
                pos = len(stack) - 1
                out[pos] = (f"the arguments of {resume.function_name or resume.global_name}: "
                            + "; ".join(resume.carries))
            else:
                n = len(resume.carries)
                for k in range(n):
                    pos = len(stack) - n + k
                    if pos >= 0:
                        out[pos] = resume.carries[k]
    return out


def _opname_at(code: CodeType, index: int) -> str:
    ops, _ = flow_of(code)
    return ops[index].opname


class PathRecorder:
    """The executed path of one frame, for `provenance(path=...)`: feed it each instruction index as the
    frame reaches it (the engine's instruction events). Bounded: keeps the last `limit` indexes, and falls
    back to the static flow beyond that (the path must start at the frame's entry to be replayed)."""

    __slots__ = ("path", "limit", "truncated")

    def __init__(self, limit: int = 100_000) -> None:
        self.path: list[int] = []
        self.limit = limit
        self.truncated = False

    def add(self, index: int) -> None:
        if len(self.path) >= self.limit:
            self.truncated = True
            return
        self.path.append(index)

    def replayable(self) -> list[int] | None:
        """The path from the frame's entry, or None when it was cut (then use the static flow)."""
        return None if self.truncated else self.path
