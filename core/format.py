"""Plain text of stops, listings, value stacks and locals: used by `--plain`, the console log and golden tests.

One formatting path (like `dis.Formatter`): the TUI renders the same dataclasses with widgets, everything else
prints these strings. Output is deterministic for a given snapshot.
"""

from __future__ import annotations

from .model import CodeView, FrameView, Instr, Stop, StopKind, ValueSummary

#: Width of the opname column in listings.
OPNAME_WIDTH = 22


def instr_line(ins: Instr, *, current: bool = False, breakpoint: bool = False) -> str:
    """One listing line: marker, breakpoint, index, offset, source line, opname, argument, jump target.

    Example: ``"▶ ●   12    24  L18  LOAD_FAST              x"``.
    """
    mark = "▶" if current else " "
    bp = "●" if breakpoint else " "
    line = f"L{ins.lineno}" if ins.lineno is not None else ""
    arg = ins.argrepr if ins.argrepr else ("" if ins.arg is None else str(ins.arg))
    if ins.jump_target is not None and "to " not in arg:
        arg = f"{arg} → {ins.jump_target}".strip()
    elif ins.jump_target is not None:
        arg = f"{arg} (→ {ins.jump_target})"
    target = ">>" if ins.is_jump_target else "  "
    return f"{mark}{bp}{target}{ins.index:>5} {ins.offset:>6}  {line:<6}{ins.opname:<{OPNAME_WIDTH}} {arg}".rstrip()


def listing(code: CodeView, *, current: int = -1, breakpoints: tuple[int, ...] = (), around: int | None = None) -> str:
    """The listing of `code`, whole or `around` instructions either side of `current`."""
    rows = code.instructions
    if around is not None and current >= 0:
        lo, hi = max(0, current - around), min(len(rows), current + around + 1)
        rows = rows[lo:hi]
    bps = set(breakpoints)
    head = f"{code.name}  ({code.filename}:{code.firstlineno})" + (f"  compile {code.compile_id}" if code.compile_id else "")
    body = "\n".join(instr_line(r, current=r.index == current, breakpoint=r.index in bps) for r in rows)
    return f"{head}\n{body}"


def value_text(v: ValueSummary) -> str:
    if v.is_null:
        return "NULL"
    if v.unknown:
        return "<unknown>"
    if v.is_tensor:
        return v.text
    return f"{v.type_name:<10} {v.text}"


def stack_text(frame: FrameView) -> str:
    """The value stack, bottom first, TOS marked."""
    if not frame.stack:
        return "value stack: empty"
    if len(frame.stack) == 1 and frame.stack[0].unknown:
        return "value stack: unknown (this frame was not traced from its start)"
    note = "" if frame.stack_exact else " (depth tracked per instruction: this Python exposes no stack top)"
    lines = [f"value stack: {len(frame.stack)} slot{'s' if len(frame.stack) != 1 else ''}, TOS last{note}"]
    for i, v in enumerate(frame.stack):
        tos = "  <- TOS" if i == len(frame.stack) - 1 else ""
        lines.append(f"  [{i}] {value_text(v)}{tos}")
    return "\n".join(lines)


def locals_text(frame: FrameView) -> str:
    if not frame.locals:
        return "locals: none bound"
    width = max(len(n) for n, _ in frame.locals)
    lines = ["locals:"]
    for name, v in frame.locals:
        star = "*" if name in frame.changed else " "
        lines.append(f" {star}{name:<{width}}  {value_text(v)}")
    return "\n".join(lines)


def where_line(stop: Stop) -> str:
    """``"[entry] f  index 3 (offset 6)  line 12  compile 0/0, entry 1 of 2"``."""
    parts = [f"[{stop.kind.value}]"]
    frame = stop.frame
    if frame is not None:
        parts.append(frame.code.name)
        if frame.index >= 0:
            ins = frame.code.instructions[frame.index]
            parts.append(f"index {frame.index} (offset {ins.offset}) {ins.opname}")
        if frame.lineno is not None:
            parts.append(f"line {frame.lineno}")
    cid = stop.compile_id
    if cid:
        entry = f", entry {stop.entry_index} of {stop.entry_count}" if stop.entry_index else ""
        parts.append(f"compile {cid}{entry}")
    return "  ".join(parts)


def stop_text(stop: Stop, *, context: int = 2) -> str:
    """What the plain front end prints when the program stops: where, why, and the instructions around it."""
    lines = [f"--- {stop.message}", where_line(stop)]
    for title, text in stop.detail:
        lines.append(f"{title}:")
        lines.extend("  " + t for t in text.splitlines())
    if stop.return_value is not None:
        lines.append(f"return value: {value_text(stop.return_value)}")
    if stop.exception and not any(t == "exception" for t, _ in stop.detail):
        lines.append(f"exception: {stop.exception}")
    frame = stop.frame
    if frame is not None and frame.index >= 0:
        lines.append(listing(frame.code, current=frame.index, breakpoints=frame.breakpoints, around=context).split("\n", 1)[1])
    elif frame is not None and stop.kind is StopKind.COMPILE:
        lines.append(f"({len(frame.code.instructions)} instructions; `ll` lists them)")
    return "\n".join(lines)


def backtrace_text(stop: Stop, selected: int) -> str:
    if not stop.frames:
        return "no generated frames on the stack"
    lines = []
    for i, f in enumerate(stop.frames):
        mark = ">" if i == selected else " "
        where = f"index {f.index}" if f.index >= 0 else "not started"
        lines.append(f"{mark} #{i} {f.code.name}  {where}  line {f.lineno}  ({f.code.filename})")
    return "\n".join(lines)
