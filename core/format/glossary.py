"""One-line glosses of Dynamo's terms, for a first-time reader of a stop's output (line mode, the TUI console).

`stop_terms` says which terms a stop's text (`format.stop_text`) uses, from the stop's data, as the text is made
from it: its kind and where it is, its compile id and cache entry, its recompile record, the graph break behind a
resume function, and the instructions (and role headers) the listing around the current one shows.
`Glossary.new_terms` picks the terms this session has not glossed yet, so each is explained once, where the
user first meets it.
"""

from __future__ import annotations

import re
from typing import Iterable

from .. import facts
from ..model import CodeRoles, Role, Stop, StopKind
from .recompile import WARNING_TERMS

#: term → the gloss in one line. In the order a user meets them (and the glosses are printed).
TERMS: dict[str, str] = {
    # the terms of a lesson's or a run's first stop fit one 80-column row each (the TUI's console is 3 rows there)
    "generated code": "Dynamo's bytecode, run instead of yours; calls the graphs",
    "compile id": "compile {id}: frame #{frame}'s {nth} compile (frame # / compile #)",
    "cache entry": "a compiled version, reused while its guards pass (`entries`)",
    "guard": "a check on the inputs (type, shape, value) that an entry was compiled for; when one fails on every "
             "entry, the function recompiles (`guards` shows them)",
    "graph break": "where Dynamo stopped tracing your code (something it cannot put in a graph); the rest runs in "
                   "a resume function, or, where none can be made, the whole function runs eagerly",
    "resume function": "the function Dynamo makes for the code after a graph break (torch_dynamo_resume_in_*, held "
                       "in the global __resume_at_*); it receives the values on the stack (___stack0, ...) and the "
                       "live locals",
    "FX graph": "traced tensor operations; __compiled_fn_N runs them (`graph`)",
    # terms of the trace stops (compile time, inside Dynamo's own tracing)
    "variable tracker": "what Dynamo holds for each value while it traces your code: a TensorVariable stands for a "
                        "fake tensor and its FX node, a ConstantVariable for a value known at trace time",
    "unrealized": "an input Dynamo has not looked at yet (a lazy tracker); looking would add graph inputs and guards, "
                  "so dynadbg shows only its source and type",
    "fake tensor": "a tensor with a shape, strides, dtype and device but no data: what Dynamo runs each operation on "
                   "while it traces (`fake NAME`)",
}

#: Roles whose region headers in a listing name a term (``call of the FX graph ...``, ``call of the resume
#: function ...``).
_ROLE_TERMS: dict[Role, str] = {
    Role.GRAPH_CALL: "FX graph",
    Role.RESUME_CALL: "resume function",
}


def stop_terms(stop: Stop, roles: CodeRoles | None = None, *, context: int = 2) -> frozenset[str]:
    """The `TERMS` the text of `stop` uses (`format.stop_text` with the same `roles` and `context`), read off
    the data the text is made from."""
    if stop.trace is not None:  # inside Dynamo's tracing: the trace stop's own text (`format.trace`)
        from .trace import trace_stop_terms

        return frozenset(trace_stop_terms(stop.trace))
    used: set[str] = set()
    frame = stop.frame
    at_instruction = frame if frame is not None and frame.index >= 0 else None  # a frame at an instruction
    if at_instruction is not None and at_instruction.code.generated:
        used.add("generated code")
    if stop.compile_id is not None:
        used.add("compile id")
    if stop.entry_index and stop.entry_count:
        used.add("cache entry")
    record = stop.recompile
    if record is not None:
        used |= {"cache entry", "guard"}
        for choice in stop.choices:
            for warning in choice.warnings[:3]:    # as many as line mode prints (`format.choices_lines`)
                used |= WARNING_TERMS.get(warning.risk, frozenset())
        if record.stack_args or record.scalar_break:
            used.add("graph break")
        if record.is_resume:
            used.add("resume function")
    if stop.kind is StopKind.GRAPH_BREAK:
        used |= {"graph break", "resume function"}
    if stop.graph_break is not None and stop.kind in (StopKind.GRAPH_BREAK, StopKind.ENTRY):
        used |= {"graph break", "resume function", "compile id"}
    if frame is not None and frame.code.is_resume:
        used.add("resume function")
    if at_instruction is not None:
        rows = at_instruction.code.instructions
        lo, hi = max(0, at_instruction.index - context), min(len(rows), at_instruction.index + context + 1)
        if any(ins.name is not None and facts.is_graph_global(ins.name) for ins in rows[lo:hi]):
            used.add("FX graph")
        if roles is not None and roles.key == at_instruction.code.key:
            for region in roles.regions:
                if region.start < hi and region.end >= lo and region.role in _ROLE_TERMS:
                    used.add(_ROLE_TERMS[region.role])
    return frozenset(used)


class Glossary:
    """Which terms one session has glossed so far."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    @property
    def complete(self) -> bool:
        """Every term was glossed: nothing is left to look for."""
        return len(self._said) == len(TERMS)

    def new_terms(self, terms: Iterable[str], compile_id: str | None = None) -> list[str]:
        """``"(?) term: gloss"`` for each of `terms` (`stop_terms`) not glossed yet, in `TERMS` order (then
        marked as glossed); the compile-id gloss names `compile_id` (the stop's, ``Stop.compile_id``)."""
        wanted = set(terms)
        out = []
        for term, gloss in TERMS.items():
            if term in wanted and term not in self._said:
                self._said.add(term)
                out.append(f"(?) {term}: {_filled(gloss, compile_id)}")
        return out


_NTH = ("first", "second", "third", "fourth", "fifth")
_COMPILE_ID = re.compile(r"(?P<frame>\d+)/(?P<n>\d+)")


def _filled(gloss: str, compile_id: str | None) -> str:
    """A gloss about the stop it glosses: ``{id}``, ``{frame}`` and ``{nth}`` are the stop's compile id (a gloss
    that quoted a fixed example id was wrong on most stops) and its place among that frame's compiles."""
    if "{" not in gloss:
        return gloss
    m = _COMPILE_ID.match(compile_id or "")
    if m is None:
        compile_id, m = "0/1", _COMPILE_ID.match("0/1")
    assert m is not None
    n = int(m.group("n"))
    return gloss.format(id=compile_id, frame=m.group("frame"), nth=_NTH[n] if n < len(_NTH) else f"{n + 1}th")
