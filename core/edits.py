"""Instruction edits on Dynamo-generated code, pure functions: parse, apply, validate, diff.

Layers, as in `dis`: data (`EditOp` and the frozen results, in `dynadbg.core.model`), resolution (`apply_edit`
turns an edit's text argument into a ``bytecode`` instruction against the code it applies to), validation
(`analyze_stack`, `check_layout`, `validate`) and presentation (`diff_code`, `format_*`). Nothing here touches a
session or torch's caches: `dynadbg.core.patches` installs what these functions build.

Indexes are the rows of the listing the user sees (``ll``, `disasm.code_view`: one row per `dis` instruction,
``EXTENDED_ARG`` rows included, inline ``CACHE`` entries hidden). A patch is a sequence of `EditOp` applied one
after the other to Dynamo's code: each op's index refers to the listing the previous ops produced.

How an edit is made (torch-internals §6): the code is converted with ``bytecode.Bytecode.from_code``, the one
instruction is inserted, replaced or removed in the abstract instruction list (labels and the exception table
move with the instructions), and ``to_code()`` assembles it, recomputing the stack size and the exception-table
depths (never ``compute_exception_stack_depths=False``: that code crashes CPython). The result is then checked
(`validate`) before anything is installed: the stack depth on every path (no underflow, the same depth wherever
paths meet, within ``co_stacksize``), jump targets, the exception table, and the argument/cell/free-variable
layout and frame prologue, which must stay as Dynamo made them. An invalid edit comes back as an `EditError`
(errors are values) and nothing changes.
"""

from __future__ import annotations

import ast
import difflib
import dis
import hashlib
import re
from dataclasses import replace
from types import CodeType
from typing import Any, Sequence

from . import compat
from .model import (
    DiffLine,
    EditError,
    EditOp,
    EditOpKind,
    EditPreview,
    NewInstr,
    PatchDiff,
    StackAnalysis,
    StackRow,
)

#: The kinds of edit op, as commands: ``edit IDX OPNAME [ARG]``, ``insert IDX OPNAME [ARG]``, ``delete IDX``.
EDIT_KINDS: tuple[str, ...] = ("edit", "insert", "delete")


# ==============================================================================================================
# Parsing an edit command
# ==============================================================================================================


def parse_edit(kind: str, text: str) -> EditOp | EditError:
    """Parse the argument text of an edit command into an `EditOp`.

    ``parse_edit("insert", "12 POP_TOP; LOAD_CONST 7")``, ``parse_edit("edit", "5 LOAD_FAST x")``,
    ``parse_edit("delete", "4")``. ``insert`` takes several instructions separated by ``;`` (a ``;`` followed by
    an upper-case OPNAME; a literal may contain one). Arguments stay text; `apply_edit` resolves them.
    """
    if kind not in EDIT_KINDS:
        return EditError("syntax", f"unknown edit {kind!r} (one of {', '.join(EDIT_KINDS)})")
    usage = {"delete": "delete IDX", "edit": "edit IDX OPNAME [ARG]",
             "insert": "insert IDX OPNAME [ARG][; OPNAME [ARG]...]"}[kind]
    head, _, rest = text.strip().partition(" ")
    if not head:
        return EditError("syntax", f"usage: {usage}")
    try:
        index = int(head)
    except ValueError:
        return EditError("syntax", f"the index must be an integer, not {head!r} (usage: {usage})")
    rest = rest.strip()
    if kind == "delete":
        if rest:
            return EditError("syntax", f"usage: {usage}")
        return EditOp(EditOpKind.DELETE, index)
    if not rest:
        return EditError("syntax", f"missing OPNAME (usage: {usage})")
    instrs = []
    for part in _split_instrs(rest):
        opname, _, arg = part.strip().partition(" ")
        if not opname:
            return EditError("syntax", f"an empty instruction in {rest!r} (usage: {usage})")
        instrs.append(NewInstr(opname.upper(), arg.strip() or None))
    if kind == "edit" and len(instrs) != 1:
        return EditError("syntax", "edit replaces one instruction; use insert to add more")
    return EditOp(EditOpKind(kind), index, tuple(instrs))


_INSTR_SPLIT = re.compile(r";\s*(?=[A-Z][A-Z0-9_]*(?:\s|$))")


def _split_instrs(text: str) -> list[str]:
    """``"POP_TOP; LOAD_CONST 'a;b'"`` → ``["POP_TOP", "LOAD_CONST 'a;b'"]``."""
    return [p for p in _INSTR_SPLIT.split(text)]


# ==============================================================================================================
# Applying one edit
# ==============================================================================================================


def _bytecode() -> Any:
    import bytecode

    return bytecode


def _jump_opcodes() -> frozenset[int]:
    return frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _valid_opname(opname: str) -> EditError | None:
    if (opname not in dis.opmap or opname in compat.EDIT_FORBIDDEN_OPNAMES or opname.startswith("INSTRUMENTED_")
            or dis.opmap[opname] >= 256):
        near = difflib.get_close_matches(opname, [n for n in dis.opmap if not n.startswith("INSTRUMENTED_")], 3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        return EditError("unknown opcode", f"{opname} is not an opcode of Python {compat.PYTHON_VERSION}{hint}")
    return None


def _jump_direction(opcode: int) -> str | None:
    """``"forward"``/``"backward"`` for relative jumps that only go one way, else None."""
    from bytecode.instr import HAS_BACKWARD_RELATIVE_JUMP, HAS_FORWARD_RELATIVE_JUMP

    if opcode in HAS_FORWARD_RELATIVE_JUMP:
        return "forward"
    if opcode in HAS_BACKWARD_RELATIVE_JUMP:
        return "backward"
    return None


class _ArgResolver:
    """Resolves an edit's text argument against one code object (like `dis.ArgResolver`, the other way)."""

    def __init__(self, code: CodeType, rows: list[dis.Instruction]) -> None:
        self.code = code
        self.rows = rows

    def resolve(self, opname: str, text: str | None, at: int, kind: str, slot: int = 0,
                count: int = 1) -> tuple[Any, int | None] | EditError:
        """(bytecode-level argument, jump target row or None) for `opname`, the `slot`-th of `count` instructions
        an op of `kind` puts at row `at`."""
        bc = _bytecode()
        from bytecode.instr import BITFLAG_OPCODES, DUAL_ARG_OPCODES

        opcode = dis.opmap[opname]
        if opcode < dis.HAVE_ARGUMENT:
            if text is not None:
                return EditError("bad argument", f"{opname} takes no argument (got {text!r})", at)
            return bc.UNSET, None
        if text is None:
            return EditError("bad argument", f"{opname} needs an argument ({self._expects(opname)})", at)
        if opcode in _jump_opcodes():
            return self._jump(opname, opcode, text, at, kind, slot, count)
        if opcode in dis.hasconst:
            try:
                return ast.literal_eval(text), None
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return EditError("bad argument", f"{opname} needs a Python literal (7, 2.5, 'text', None, (1, 2)), "
                                                 f"not {text!r}", at)
        if opcode in BITFLAG_OPCODES:
            m = re.fullmatch(r"(?:(NULL(?:\|self)?)\s*\+\s*)?(\S+)", text)
            if m is None or not m.group(2).isidentifier():
                return EditError("bad argument", f"{opname} needs a name, optionally 'NULL + name' (got {text!r})",
                                 at)
            return (m.group(1) is not None, m.group(2)), None
        if opcode in DUAL_ARG_OPCODES:
            names = [t.strip() for t in text.split(",")]
            if len(names) != 2:
                return EditError("bad argument", f"{opname} needs two local names 'a, b' (got {text!r})", at)
            for name in names:
                if name not in self.code.co_varnames:
                    return EditError("bad argument", f"{name!r} is not a local of {self.code.co_name}", at)
            return tuple(names), None
        if opcode in dis.haslocal:
            return self._local(opname, text, at)
        if opcode in dis.hasname:
            if not text.isidentifier():
                return EditError("bad argument", f"{opname} needs a name, not {text!r}", at)
            return text, None
        if opcode in dis.hasfree:
            return self._free(opname, text, at)
        if opcode in dis.hascompare:
            if text in dis.cmp_op:
                return bc.Compare(dis.cmp_op.index(text)), None
            value = _int(text)
            if value is None:
                return EditError("bad argument", f"{opname} needs one of {' '.join(dis.cmp_op)} (got {text!r})", at)
            try:
                return bc.Compare(value), None
            except ValueError:
                return EditError("bad argument", f"{value} is not a comparison of {opname}", at)
        if opname == "BINARY_OP":
            symbols = [sym for _name, sym in getattr(dis, "_nb_ops", [])]
            if text in symbols:
                return symbols.index(text), None
            value = _int(text)
            if value is None or not 0 <= value < max(len(symbols), 1):
                return EditError("bad argument", f"BINARY_OP needs an operator ({' '.join(symbols)}) or its number, "
                                                 f"not {text!r}", at)
            return value, None
        value = _int(text)
        if value is None or not 0 <= value < 2**31:
            return EditError("bad argument", f"{opname} needs an integer argument 0..2**31-1, not {text!r}", at)
        return value, None

    @staticmethod
    def _expects(opname: str) -> str:
        opcode = dis.opmap[opname]
        if opcode in _jump_opcodes():
            return "a jump target row"
        if opcode in dis.hasconst:
            return "a Python literal"
        if opcode in dis.haslocal:
            return "a local name"
        if opcode in dis.hasname:
            return "a name"
        if opcode in dis.hasfree:
            return "a cell or free variable name"
        return "an integer"

    def _jump(self, opname: str, opcode: int, text: str, at: int, kind: str, slot: int,
              count: int) -> tuple[Any, int] | EditError:
        n = len(self.rows)
        target = _int(text[3:] if text.startswith("to ") else text)
        if target is None:
            return EditError("bad argument", f"{opname} needs the row it jumps to (an index in the listing), "
                                             f"not {text!r}", at)
        if not 0 <= target < n:
            return EditError("jump to nowhere", f"{opname} at row {at} jumps to row {target}, outside 0..{n - 1}", at)
        # where the jump and its target end up in the new listing
        new_target = target + count if kind == "insert" and target >= at else target
        here = at + slot
        direction = _jump_direction(opcode)
        if direction == "forward" and new_target <= here:
            return EditError("jump to nowhere", f"{opname} only jumps forward, but row {target} is not after it "
                                                f"(use a backward jump)", at)
        if direction == "backward" and new_target > here:
            return EditError("jump to nowhere", f"{opname} only jumps backward, but row {target} is after it "
                                                f"(use a forward jump)", at)
        return None, target

    def _local(self, opname: str, text: str, at: int) -> tuple[Any, None] | EditError:
        names = self.code.co_varnames
        value = _int(text)
        if value is not None:
            if not 0 <= value < len(names):
                return EditError("bad argument", f"{opname}: local number {value} is outside 0..{len(names) - 1}", at)
            return names[value], None
        if not text.isidentifier():
            return EditError("bad argument", f"{opname} needs a local name, not {text!r}", at)
        if text not in names and not opname.startswith("STORE_"):
            return EditError("bad argument", f"{text!r} is not a local of {self.code.co_name} "
                                             f"(locals: {', '.join(names) or 'none'})", at)
        return text, None

    def _free(self, opname: str, text: str, at: int) -> tuple[Any, None] | EditError:
        bc = _bytecode()
        cells, frees = self.code.co_cellvars, self.code.co_freevars
        value = _int(text)
        if value is not None:
            both = cells + frees
            if not 0 <= value < len(both):
                return EditError("bad argument", f"{opname}: cell number {value} is outside 0..{len(both) - 1}", at)
            text = both[value]
        if not text.isidentifier():
            return EditError("bad argument", f"{opname} needs a cell or free variable name, not {text!r}", at)
        if text in frees and text not in cells:
            return bc.FreeVar(text), None
        if text in cells:
            return bc.CellVar(text), None
        return EditError("changed argument layout", f"{text!r} is not a cell or free variable of {self.code.co_name} "
                                                    f"(cells: {', '.join(cells) or 'none'}; free: "
                                                    f"{', '.join(frees) or 'none'}): a new one would change the "
                                                    f"frame layout", at)


def _int(text: str) -> int | None:
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def apply_edit(code: CodeType, op: EditOp, *, probe: list[CodeType] | None = None) -> CodeType | EditError:
    """Apply one edit op to `code` and assemble the result; no stack or layout validation (see `validate`).

    Returns the new code object, or an `EditError` for a bad index, an unknown opcode, a bad argument, a jump to
    nowhere, or code the ``bytecode`` library cannot assemble (a stack underflow is found there too; its kind is
    then ``"stack underflow"``, with the row from `analyze_stack`). When that happens and `probe` is a list, a
    never-to-run assembly of the rejected instructions is appended to it, for showing stack depths.
    """
    bc_mod = _bytecode()
    if op.kind not in EDIT_KINDS:
        return EditError("syntax", f"unknown edit {op.kind!r}")
    expected = {"edit": (1, 1), "insert": (1, 10_000), "delete": (0, 0)}[op.kind]
    if not expected[0] <= len(op.instrs) <= expected[1]:
        return EditError("syntax", f"{op.kind} takes {'no' if op.kind == 'delete' else 'an'} OPNAME"
                                   + (" (one instruction)" if op.kind == "edit" else ""), op.index)
    rows = list(dis.get_instructions(code))
    n = len(rows)
    limit = n if op.kind == "insert" else n - 1
    if not 0 <= op.index <= limit:
        return EditError("index", f"row {op.index} is outside 0..{limit} of {code.co_name}", op.index)
    if op.kind != "insert" and rows[op.index].opname == "EXTENDED_ARG":
        return EditError("index", f"row {op.index} is the EXTENDED_ARG prefix of the next instruction: "
                                  f"{op.kind} that one (the assembler adds prefixes itself)", op.index)
    resolver = _ArgResolver(code, rows)
    resolved: list[tuple[str, Any, int | None]] = []
    for slot, new in enumerate(op.instrs):
        bad = _valid_opname(new.opname)
        if bad is not None:
            return replace(bad, index=op.index)
        got = resolver.resolve(new.opname, new.arg, op.index, op.kind, slot, len(op.instrs))
        if isinstance(got, EditError):
            return got
        resolved.append((new.opname, got[0], got[1]))
    try:
        bc = bc_mod.Bytecode.from_code(code)
    except Exception as exc:  # noqa: BLE001 - the library cannot read this code: nothing to edit
        return EditError("cannot assemble", f"the bytecode library cannot read {code.co_name}: {exc}")
    positions = [p for p, el in enumerate(bc) if isinstance(el, bc_mod.Instr)]
    real_rows = [k for k, row in enumerate(rows) if row.opname != "EXTENDED_ARG"]
    if len(positions) != len(real_rows) or any(bc[p].name != rows[k].opname for p, k in zip(positions, real_rows)):
        return EditError("cannot assemble", f"cannot map the listing of {code.co_name} onto the bytecode library's "
                                            f"instructions")
    pos_of_row: dict[int, int] = {}
    nxt = len(bc)
    next_real = dict(zip(real_rows, positions))
    for k in range(n - 1, -1, -1):  # an EXTENDED_ARG row stands for the instruction it prefixes
        nxt = next_real.get(k, nxt)
        pos_of_row[k] = nxt
    anchor = pos_of_row.get(op.index, len(bc))
    template = bc[anchor] if anchor < len(bc) else bc[positions[-1]]
    labels: dict[int, Any] = {}  # bytecode position of a jump target -> the label placed right before it
    new_instrs = []
    for opname, arg, target_row in resolved:
        if target_row is not None:
            arg = labels.setdefault(pos_of_row[target_row], bc_mod.Label())
        try:
            new_instrs.append(bc_mod.Instr(opname, arg, location=template.location))
        except (TypeError, ValueError) as exc:
            return EditError("bad argument", f"{opname}: {exc}", op.index)
    out: list[Any] = []
    for p, el in enumerate(bc):
        if p == anchor and op.kind == "insert":
            out.extend(new_instrs)
        if p in labels:
            out.append(labels[p])
        if p == anchor and op.kind == "edit":
            out.extend(new_instrs)
            continue
        if p == anchor and op.kind == "delete":
            continue
        out.append(el)
    if op.kind == "insert" and anchor >= len(bc):
        out.extend(new_instrs)
    bc[:] = out
    try:
        assembled: CodeType = bc.to_code()  # stack size and exception-table depths recomputed (never the SIGSEGV mode)
    except Exception as exc:  # noqa: BLE001 - the library's own checks: report them as a rejection
        return _assembly_error(bc, code, exc, probe)
    return assembled


def _assembly_error(bc: Any, code: CodeType, exc: BaseException, keep: list[CodeType] | None) -> EditError:
    """Turn a ``to_code`` failure into an `EditError`; a negative stack size becomes a stack underflow located
    by `analyze_stack` on a never-run assembly of the same instructions."""
    text = str(exc)
    if "negative size" in text:
        try:
            probe = bc.to_code(stacksize=code.co_stacksize + 64, compute_exception_stack_depths=False)
        except Exception:  # noqa: BLE001
            probe = None
        if probe is not None:  # analysed only: this code object never runs
            if keep is not None:
                keep.append(probe)
            found = analyze_stack(probe, check_exception_table=False, check_stacksize=False)
            for problem in found.problems:
                if problem.kind.startswith("stack"):
                    return replace(problem, message=f"edited code: {problem.message}")
        return EditError("stack underflow", f"an instruction pops more values than the stack holds ({text})")
    return EditError("cannot assemble", f"{type(exc).__name__}: {text}")


def build_patched(base: CodeType, ops: Sequence[EditOp]) -> CodeType | EditError:
    """Apply `ops` to Dynamo's code `base` one after the other and `validate` the result against `base`.

    Returns `base` itself for no ops. An error names the op that failed (``"op 2 (insert 12 POP_TOP): ..."``)
    when there is more than one.
    """
    code = base
    for number, op in enumerate(ops, 1):
        result = apply_edit(code, op)
        if isinstance(result, EditError):
            return _for_op(result, number, op, len(ops))
        code = result
    if code is base:
        return base
    problem = validate(base, code)
    if problem is not None:
        return _for_op(problem, len(ops), ops[-1], len(ops)) if len(ops) > 1 else problem
    return code


def _for_op(error: EditError, number: int, op: EditOp, total: int) -> EditError:
    if total <= 1:
        return error
    return replace(error, message=f"op {number} ({op.text}): {error.message}")


# ==============================================================================================================
# Validation
# ==============================================================================================================


def analyze_stack(code: CodeType, *, check_exception_table: bool = True, check_stacksize: bool = True) -> StackAnalysis:
    """Walk every path through `code` and compute the value-stack depth before each instruction.

    Paths start at row 0 with an empty stack and follow fall-through, jumps and the exception table (a handler
    starts at the entry's depth, plus the pushed ``lasti``, plus the exception). Depths use the real stack
    (`compat.edit_stack_effect`); what each instruction needs comes from `compat.edit_stack_requirement`.

    Problems found (each an `EditError`): ``stack underflow`` (an instruction needs more values than the stack
    holds), ``stack overflow`` (deeper than ``co_stacksize``), ``stack depth mismatch`` (two paths reach a row
    with different depths), ``values left on the stack`` (a return with more than its value on the stack),
    ``falls off the end`` (execution runs past the last instruction), ``jump to nowhere``
    (a jump or handler target that is not an instruction), ``exception table`` (a handler unwinds to a depth the
    stack does not have there), ``unknown opcode``.
    """
    rows = list(dis.get_instructions(code))
    n = len(rows)
    row_of_offset = {row.offset: k for k, row in enumerate(rows)}
    table = compat.parse_exception_table(code)
    depth: list[int | None] = [None] * n
    effects: list[int] = [0] * n
    needs: list[int] = [0] * n
    problems: dict[tuple[str, int], EditError] = {}
    jumps = _jump_opcodes()
    ext_arg = dis.opmap.get("EXTENDED_ARG")

    def problem(kind: str, k: int, message: str) -> None:
        problems.setdefault((kind, k), EditError(kind, message, k))

    def reach(k: int, d: int, came_from: int, how: str) -> None:
        if k >= n:
            problem("falls off the end", came_from, f"execution runs past the last instruction after row "
                                                    f"{came_from} {rows[came_from].opname}")
            return
        if check_stacksize and d > code.co_stacksize:
            problem("stack overflow", k, f"the stack reaches depth {d} at row {k} {rows[k].opname} ({how} row "
                                         f"{came_from}), more than co_stacksize {code.co_stacksize}")
        if depth[k] is None:
            depth[k] = d
            work.append(k)
        elif depth[k] != d:
            problem("stack depth mismatch", k, f"row {k} {rows[k].opname} is reached with depth {depth[k]} and "
                                               f"with depth {d} ({how} row {came_from})")

    work: list[int] = []
    if n:
        depth[0] = 0
        work.append(0)
    max_depth = 0
    while work:
        k = work.pop()
        d = depth[k]
        assert d is not None
        row = rows[k]
        max_depth = max(max_depth, d)
        if row.opcode == ext_arg:
            reach(k + 1, d, k, "after")
            continue
        try:
            effects[k] = compat.edit_stack_effect(row.opcode, row.arg, False)
            needs[k] = compat.edit_stack_requirement(row.opcode, row.arg)
        except (ValueError, TypeError) as exc:
            problem("unknown opcode", k, f"row {k} {row.opname}: {exc}")
            continue
        if d < needs[k]:
            what = "value" if needs[k] == 1 else "values"
            problem("stack underflow", k, f"row {k} {row.opname} needs {needs[k]} {what} but the stack holds {d}")
            continue
        for start, end, target, hdepth, lasti in table:
            if start <= row.offset < end:
                if check_exception_table and hdepth > d:
                    problem("exception table", k, f"the handler for row {k} {row.opname} unwinds to depth "
                                                  f"{hdepth}, but the stack holds {d} there")
                t = row_of_offset.get(target)
                if t is None:
                    problem("jump to nowhere", k, f"the exception handler of row {k} is at offset {target}, "
                                                  f"which is not an instruction")
                else:
                    reach(t, hdepth + (1 if lasti else 0) + 1, k, "exception from")
                break
        if row.opcode in jumps:
            t = row_of_offset.get(row.argval) if isinstance(row.argval, int) else None
            if t is None:
                problem("jump to nowhere", k, f"row {k} {row.opname} jumps to offset {row.argval}, which is not "
                                              f"an instruction")
            else:
                reach(t, d + compat.edit_stack_effect(row.opcode, row.arg, True), k, "jump from")
        if row.opname not in compat.EDIT_TERMINAL_OPNAMES:
            after = d + effects[k]
            if after > max_depth:
                max_depth = after
            reach(k + 1, after, k, "after")
    for k, row in enumerate(rows):
        left = _RETURN_LEAVES.get(row.opname)
        reached = depth[k]
        if left is not None and reached is not None and reached > left:
            extra = reached - left
            problem("values left on the stack", k, f"row {k} {row.opname} returns with {extra} more value"
                                                   f"{'s' if extra != 1 else ''} on the stack than it takes")
    out_rows = tuple(
        StackRow(k, row.offset, row.opname, row.argrepr, depth[k], effects[k], needs[k]) for k, row in enumerate(rows)
    )
    ordered = tuple(sorted(problems.values(), key=lambda e: (e.index if e.index is not None else -1, e.kind)))
    return StackAnalysis(out_rows, max_depth, code.co_stacksize, ordered)


#: what the stack holds when a function returns: the value RETURN_VALUE takes, nothing for RETURN_CONST
_RETURN_LEAVES = {"RETURN_VALUE": 1, "RETURN_CONST": 0}

_ARG_FLAGS = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS


def _prologue(code: CodeType) -> list[tuple[str, Any]]:
    out = []
    for row in dis.get_instructions(code):
        if row.opname not in compat.EDIT_PROLOGUE_OPNAMES:
            break
        out.append((row.opname, row.argval))
        if row.opname == "RESUME":
            break
    return out


def check_layout(base: CodeType, new: CodeType) -> EditError | None:
    """The argument, cell and free-variable layout of `new` must be `base`'s (Dynamo, and CPython's frame
    setup, rely on it; ``_load_precompile_entry`` does not check it: torch-internals §6). So must the frame
    prologue (``MAKE_CELL`` / ``COPY_FREE_VARS`` / ``RESUME``)."""
    nargs = base.co_argcount + base.co_kwonlyargcount + bool(base.co_flags & 0x04) + bool(base.co_flags & 0x08)
    checks = (
        ("co_argcount", base.co_argcount, new.co_argcount),
        ("co_posonlyargcount", base.co_posonlyargcount, new.co_posonlyargcount),
        ("co_kwonlyargcount", base.co_kwonlyargcount, new.co_kwonlyargcount),
        ("*args/**kwargs flags", base.co_flags & _ARG_FLAGS, new.co_flags & _ARG_FLAGS),
        ("argument names", base.co_varnames[:nargs], new.co_varnames[:nargs]),
        ("co_cellvars", base.co_cellvars, new.co_cellvars),
        ("co_freevars", base.co_freevars, new.co_freevars),
    )
    for what, old, now in checks:
        if old != now:
            return EditError("changed argument layout", f"{what} would change from {old!r} to {now!r}")
    old_pro, new_pro = _prologue(base), _prologue(new)
    if old_pro != new_pro:
        def show(prologue: list[tuple[str, Any]]) -> str:
            return "; ".join(f"{name} {arg}" for name, arg in prologue) or "nothing"

        return EditError("changed argument layout", f"the frame prologue must stay {show(old_pro)} "
                                                    f"(it would become {show(new_pro)})", 0)
    return None


def validate(base: CodeType, new: CodeType) -> EditError | None:
    """The first reason `new` (an edit of Dynamo's code `base`) must not be installed, or None.

    Checks `check_layout`, then `analyze_stack` (every path, jump targets, the exception table, co_stacksize).
    """
    problem = check_layout(base, new)
    if problem is not None:
        return problem
    analysis = analyze_stack(new)
    if not analysis.problems:
        return None
    first = analysis.problems[0]
    return replace(first, message=f"edited code: {first.message}")


# ==============================================================================================================
# Presentation: diffs and fingerprints
# ==============================================================================================================


def _rows_text(code: CodeType) -> tuple[list[str], list[str], list[int | None]]:
    """(match keys, display texts, jump target rows) of `code`'s listing."""
    rows = list(dis.get_instructions(code))
    row_of_offset = {row.offset: k for k, row in enumerate(rows)}
    jumps = _jump_opcodes()
    keys, texts, targets = [], [], []
    for row in rows:
        if row.opcode in jumps:
            t = row_of_offset.get(row.argval) if isinstance(row.argval, int) else None
            keys.append(row.opname)
            texts.append(f"{row.opname} to {t if t is not None else row.argval}")
            targets.append(t)
        else:
            text = f"{row.opname} {row.argrepr}".rstrip()
            keys.append(text)
            texts.append(text)
            targets.append(None)
    return keys, texts, targets


def diff_code(old: CodeType, new: CodeType) -> PatchDiff:
    """Align the listings of `old` (Dynamo's code) and `new` (the edit) row by row.

    Jumps are matched by name, then compared by target: a jump whose target moved to another instruction shows as
    removed and added, a jump whose target only shifted with an insertion is unchanged.
    """
    okeys, otexts, otargets = _rows_text(old)
    nkeys, ntexts, ntargets = _rows_text(new)
    matcher = difflib.SequenceMatcher(a=okeys, b=nkeys, autojunk=False)
    blocks = matcher.get_opcodes()
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in blocks:
        if tag == "equal":
            mapping.update(zip(range(i1, i2), range(j1, j2)))
    lines: list[DiffLine] = []
    added = removed = 0
    for tag, i1, i2, j1, j2 in blocks:
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                ot, nt = otargets[i], ntargets[j]
                if ot is not None and mapping.get(ot) != nt:
                    lines.append(DiffLine("-", i, None, otexts[i]))
                    lines.append(DiffLine("+", None, j, ntexts[j]))
                    added, removed = added + 1, removed + 1
                else:
                    lines.append(DiffLine(" ", i, j, ntexts[j]))
            continue
        for i in range(i1, i2):
            lines.append(DiffLine("-", i, None, otexts[i]))
            removed += 1
        for j in range(j1, j2):
            lines.append(DiffLine("+", None, j, ntexts[j]))
            added += 1
    return PatchDiff(new.co_name, tuple(lines), added, removed)


_NORMALIZE = (
    (re.compile(r"__compiled_fn_\d+_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12}"), "__compiled_fn_#"),
    (re.compile(r"__compiled_fn_\d+"), "__compiled_fn_#"),
    (re.compile(r"(__resume_at_\d+)_\d+"), r"\1_#"),
    (re.compile(r" at 0x[0-9a-f]+"), " at 0x#"),
    (re.compile(r"__builtins_dict___\d+"), "__builtins_dict___#"),
)


def _normalized(text: str) -> str:
    for pattern, repl in _NORMALIZE:
        if "__" in text or " at 0x" in text:
            text = pattern.sub(repl, text)
    return text


def fingerprint(code: CodeType) -> str:
    """A hash of a Dynamo-generated code object that is the same in every run that generates the same code.

    SHA-256 over the argument layout and every instruction (name and `dis`'s argument text), with the names that
    change from run to run masked: ``__compiled_fn_<n>_<uuid>``, the counter of ``__resume_at_<offset>_<n>``,
    object addresses. Hex digest.
    """
    h = hashlib.sha256()
    h.update(repr((code.co_argcount, code.co_kwonlyargcount, code.co_flags & _ARG_FLAGS, code.co_cellvars,
                   code.co_freevars)).encode())
    for row in dis.get_instructions(code):
        h.update(f"\n{row.opname} {_normalized(row.argrepr)}".encode())
    return h.hexdigest()


def preview_edit(base: CodeType, ops: Sequence[EditOp], op: EditOp) -> EditPreview:
    """What adding `op` to the patch `ops` of Dynamo's code `base` would give, installing nothing.

    The result carries the error (if any), the stack depths of the resulting code (also when the only problem is
    a stack problem, so a dialog can show where it goes wrong) and the diff against `base`.
    """
    current = build_patched(base, ops) if ops else base
    if isinstance(current, EditError):
        return EditPreview(op, current)
    probe: list[CodeType] = []
    result = apply_edit(current, op, probe=probe)
    if isinstance(result, EditError):
        analysis = analyze_stack(probe[0], check_exception_table=False, check_stacksize=False) if probe else None
        if analysis is not None:
            # the probe was assembled with room to spare (`_assembly_error`): the stack size to show is the code's
            analysis = replace(analysis, stacksize=current.co_stacksize)
        return EditPreview(op, result, analysis)
    problem = validate(base, result)
    return EditPreview(op, problem, analyze_stack(result), diff_code(base, result), None if problem else result)
