"""Code objects as listings: `dis` instructions resolved into `Instr` rows (data), cached per code object."""

from __future__ import annotations

import dis
from types import CodeType

from .identity import IdentityCache
from .model import CodeView, ExceptionTableEntry, Instr

_cache: IdentityCache[CodeType, CodeView] = IdentityCache()  # code objects may be unhashable

#: Opcodes whose argument names something (``Instr.name``): globals and attributes, locals, cells and free vars.
_NAMED = frozenset(dis.hasname) | frozenset(dis.haslocal) | frozenset(dis.hasfree)


def code_view(code: CodeType, *, generated: bool = True, compile_id: str | None = None,
              is_resume: bool = False) -> CodeView:
    """The listing of `code` (CACHE entries hidden, EXTENDED_ARG shown as its own row like `dis` does).

    Cached per code object; a different `compile_id`/`generated`/`is_resume` gives a copy with those fields
    changed.
    """
    view = _cache.get(code)
    if view is None:
        view = _build(code, generated, compile_id)
        _cache[code] = view
    if view.generated != generated or view.compile_id != compile_id or view.is_resume != is_resume:
        from dataclasses import replace

        view = replace(view, generated=generated, compile_id=compile_id, is_resume=is_resume)
    return view


def _build(code: CodeType, generated: bool, compile_id: str | None) -> CodeView:
    raw = list(dis.get_instructions(code))
    index_of = {ins.offset: i for i, ins in enumerate(raw)}
    targets: set[int] = set()
    rows: list[Instr] = []
    lineno: int | None = None
    for i, ins in enumerate(raw):
        line = _line_of(ins)
        if line is not None:
            lineno = line
        jump = None
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            target = ins.argval if isinstance(ins.argval, int) else None
            jump = index_of.get(target) if target is not None else None
            if jump is not None:
                targets.add(jump)
        rows.append(
            Instr(
                index=i,
                offset=ins.offset,
                opname=ins.opname,
                arg=ins.arg,
                argrepr=ins.argrepr,
                lineno=line if line is not None else lineno,
                jump_target=jump,
                name=ins.argval if ins.opcode in _NAMED and isinstance(ins.argval, str) else None,
            )
        )
    # exception-table handlers are jump targets too
    for entry in exception_table(code):
        idx = index_of.get(entry[2])
        if idx is not None:
            targets.add(idx)
    rows = [r if r.index not in targets else _with_target(r) for r in rows]
    return CodeView(
        key=id(code),
        name=code.co_name,
        filename=code.co_filename,
        firstlineno=code.co_firstlineno,
        instructions=tuple(rows),
        generated=generated,
        compile_id=compile_id,
    )


def _with_target(row: Instr) -> Instr:
    from dataclasses import replace

    return replace(row, is_jump_target=True)


def _line_of(ins: dis.Instruction) -> int | None:
    pos: dis.Positions | None = getattr(ins, "positions", None)
    if pos is not None and pos.lineno is not None:
        return pos.lineno
    return ins.starts_line if isinstance(ins.starts_line, int) and not isinstance(ins.starts_line, bool) else None


def exception_table(code: CodeType) -> list[ExceptionTableEntry]:
    """The byte-offset entries (start, end, target, depth, lasti) of `code`'s exception table (3.11+)."""
    from .compat import parse_exception_table

    return parse_exception_table(code)
