"""Plain text of the continue-mode notices: the line for a generated frame that returned, the count of those
past the per-run limit, the status line of a breakpoint marker and of a re-entry stop, and the one-time note
that a statement changed a local of generated code."""

from __future__ import annotations

from typing import Sequence

from ..model import MarkerView, ReturnedView, ReturnsOmitted, SlotOrigin
from .teach import pushed_by


def returned_line(view: ReturnedView) -> str:
    """``fn returned: tensor([2., 3.])``; a module's ``forward`` is named by its class (``MLP.forward``)."""
    name = f"{view.owner}.{view.code_name}" if view.owner else view.code_name
    return f"{name} returned: {view.text}"


def returns_omitted_line(omitted: ReturnsOmitted) -> str:
    n = omitted.count
    return (f"{n} more generated code object{'s' if n != 1 else ''} returned since the last stop "
            f"(one line each is printed for the first few of a run)")


def marker_message(marker: MarkerView) -> str:
    """The status line of a stop at a breakpoint marker, with where the graph call lies relative to it."""
    head = (f"dynadbg.set_trace() / bytecode_debugger.breakpoint() marker at index {marker.index} "
            f"(`cl {marker.index}` clears it); ")
    calls = marker.graph_calls
    if marker.graph_ran is None:
        return head + "this code calls no compiled graph"
    if marker.graph_ran:
        before = [i for i in calls if i < marker.index]
        return head + f"the graph of this code has run (called at index {before[-1]})"
    return head + f"the graph of this code has not run yet (called at index {calls[0]})"


REENTRY_MESSAGE = "entering generated code again: you stepped in its last call (`break-on reentry off` skips this)"


def local_change_note(names: tuple[str, ...], code_name: str) -> str:
    """Said once per session, the first time a statement rebinds a local of generated code."""
    listed = ", ".join(names)
    return (f"note: this changed {listed} in the running frame of {code_name}: the program goes on with the new "
            f"value (pdb does the same; torch's bytecode debugger would keep a debugger-only copy). `p` and "
            f"expressions never change the program; a name that is no local (`tmp = 42`) stays the debugger's.")


def consumed_operands_text(slots: Sequence[SlotOrigin]) -> str:
    """At an exception stop: the operands the raising instruction had popped when it failed (no longer on the
    stack: named by the instruction that pushed each, from the code's flow, never read from freed slots)."""
    lines = ["popped by the raising instruction before it failed (no longer on the stack):"]
    for s in slots:
        what = s.expression or s.argrepr or s.opname
        lines.append(f"  [{s.slot}] {what}  <- {pushed_by(s)}")
    return "\n".join(lines)
