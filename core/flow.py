"""Abstract interpretation of a code object's value stack: which instruction pushed each slot.

This is the data under stack-slot provenance (`provenance`), the role tagging (`roles`) and the stack effect
that `explain` shows. Nothing here touches a frame or torch: every function takes a code object (or its
instructions) and returns plain data, so it is safe on any thread and cheap to cache.

The model follows what the interpreter really does on this Python (3.11–3.13), not ``dis.stack_effect``'s
bookkeeping: on 3.11 ``PRECALL`` leaves the stack alone and ``CALL n`` pops the callable pair and its n
arguments; ``LOAD_GLOBAL``/``LOAD_ATTR`` with their low bit push two slots (a NULL and the value, in the order
the version uses); ``COPY`` pushes a new slot (remembered as a copy of the slot it duplicated) and ``SWAP``
only moves slots. The net effect of every modelled opcode equals `compat.stack_effect` (tested), so the depth
here agrees with `stack.FrameState`'s tracked depth at every instruction.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass
from types import CodeType
from typing import Iterable, Sequence

from . import compat

#: A slot on the abstract stack: (index of the instruction that pushed it, how: "" for a value, "null" for a
#: NULL the instruction pushed, "copy:K" for a COPY of the slot pushed by instruction K, "exc" / "lasti" for
#: what an exception handler finds).
Slot = tuple[int, str]

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_ENDS_FLOW = frozenset({
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
    "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT", "INTERPRETER_EXIT",
})
#: Jumps that always go to their target (no fall-through).
UNCONDITIONAL = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                            "JUMP_NO_INTERRUPT"})


@dataclass(frozen=True)
class Op:
    """One instruction, reduced to what the flow analysis needs (built once per code object).

    Attributes:
        index: position in the listing (no CACHE rows), as `disasm.code_view` numbers it.
        offset: byte offset.
        opname, arg, argval, argrepr: as `dis` resolves them.
        target: index of the jump target, or None.
    """

    index: int
    offset: int
    opname: str
    opcode: int
    arg: int | None
    argval: object
    argrepr: str
    target: int | None


def ops_of(code: CodeType) -> tuple[Op, ...]:
    """The instructions of `code` as `Op` rows (same numbering as `disasm.code_view`)."""
    raw = list(dis.get_instructions(code))
    index_of = {ins.offset: i for i, ins in enumerate(raw)}
    out = []
    for i, ins in enumerate(raw):
        target = None
        if ins.opcode in _JUMPS and isinstance(ins.argval, int):
            target = index_of.get(ins.argval)
        out.append(Op(i, ins.offset, ins.opname, ins.opcode, ins.arg, ins.argval, ins.argrepr, target))
    return tuple(out)


def pops_pushes(op: Op, jump: bool = False) -> tuple[int, int]:
    """(slots popped, slots pushed) by `op` on this Python, taking it as (`jump`=True) or not taking its jump.

    Ops that leave an operand in place (``LIST_EXTEND``, ``FOR_ITER``) do not count it as popped. Opcodes the
    table does not know fall back to their net ``stack_effect`` (depth stays right; the origins of the slots
    they touch are then approximate).
    """
    name, arg = op.opname, op.arg or 0
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    if name == "LOAD_GLOBAL":
        return (0, 2 if arg & 1 else 1)
    if name == "LOAD_ATTR":
        return (1, 2 if compat.PY312 and arg & 1 else 1)
    if name == "LOAD_SUPER_ATTR":
        return (3, 2 if arg & 1 else 1)
    if name == "CALL":
        return (arg + 2, 1)
    if name == "CALL_KW":
        return (arg + 3, 1)
    if name == "CALL_FUNCTION_EX":
        return (3 + (arg & 1), 1)
    if name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return (arg, 1)
    if name == "BUILD_MAP":
        return (2 * arg, 1)
    if name == "BUILD_CONST_KEY_MAP":
        return (arg + 1, 1)
    if name == "UNPACK_SEQUENCE":
        return (1, arg)
    if name == "UNPACK_EX":
        return (1, (arg & 0xFF) + (arg >> 8) + 1)
    if name == "MAKE_FUNCTION":
        if compat.PY313:
            return (1, 1)
        return (1 + bin(arg & 0x0F).count("1"), 1)
    if name == "FORMAT_VALUE":
        return (2 if (arg & 0x04) else 1, 1)
    if name == "RAISE_VARARGS":
        return (arg, 0)
    if name in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
                "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_NONE",
                "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE",
                "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"):
        return (1, 0)
    if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
        return (0, 0) if jump else (1, 0)
    if name == "FOR_ITER":
        if jump:
            # exhausted: 3.11 pops the iterator; 3.12+ jumps past END_FOR, which pops both (modelled there as
            # a push of the sentinel here and END_FOR's pops)
            return (1, 0) if not compat.PY312 else (0, 1)
        return (0, 1)
    if name == "END_FOR":
        return (1, 0) if compat.PY313 else (2, 0)
    if name == "SEND" and not jump:
        return (1, 1)
    return _generic(op, jump)


def _generic(op: Op, jump: bool) -> tuple[int, int]:
    try:
        eff = compat.stack_effect(op.opcode, op.arg, jump)
    except ValueError:
        eff = 0
    return (max(0, -eff), max(0, eff))


# (pops, pushes) of opcodes whose effect does not depend on the argument.
_FIXED: dict[str, tuple[int, int]] = {
    "NOP": (0, 0), "RESUME": (0, 0), "CACHE": (0, 0), "EXTENDED_ARG": (0, 0), "COPY_FREE_VARS": (0, 0),
    "MAKE_CELL": (0, 0), "PRECALL": (0, 0), "KW_NAMES": (0, 0), "JUMP_FORWARD": (0, 0),
    "JUMP_BACKWARD": (0, 0), "JUMP_BACKWARD_NO_INTERRUPT": (0, 0), "JUMP": (0, 0), "JUMP_NO_INTERRUPT": (0, 0),
    "LOAD_FAST": (0, 1), "LOAD_FAST_CHECK": (0, 1), "LOAD_FAST_AND_CLEAR": (0, 1), "LOAD_CONST": (0, 1),
    "LOAD_DEREF": (0, 1), "LOAD_CLOSURE": (0, 1), "LOAD_NAME": (0, 1), "LOAD_CLASSDEREF": (0, 1),
    "LOAD_ASSERTION_ERROR": (0, 1), "LOAD_BUILD_CLASS": (0, 1), "LOAD_LOCALS": (0, 1), "PUSH_NULL": (0, 1),
    "LOAD_FAST_LOAD_FAST": (0, 2), "LOAD_METHOD": (1, 2), "LOAD_FROM_DICT_OR_GLOBALS": (1, 1),
    "LOAD_FROM_DICT_OR_DEREF": (1, 1),
    "STORE_FAST": (1, 0), "STORE_NAME": (1, 0), "STORE_GLOBAL": (1, 0), "STORE_DEREF": (1, 0),
    "STORE_FAST_STORE_FAST": (2, 0), "STORE_FAST_LOAD_FAST": (1, 1), "STORE_FAST_MAYBE_NULL": (1, 0),
    "STORE_ATTR": (2, 0), "STORE_SUBSCR": (3, 0), "STORE_SLICE": (4, 0),
    "DELETE_FAST": (0, 0), "DELETE_NAME": (0, 0), "DELETE_GLOBAL": (0, 0), "DELETE_DEREF": (0, 0),
    "DELETE_ATTR": (1, 0), "DELETE_SUBSCR": (2, 0),
    "POP_TOP": (1, 0), "RETURN_VALUE": (1, 0), "RETURN_CONST": (0, 0),
    "BINARY_OP": (2, 1), "BINARY_SUBSCR": (2, 1), "BINARY_SLICE": (3, 1), "COMPARE_OP": (2, 1),
    "IS_OP": (2, 1), "CONTAINS_OP": (2, 1),
    "UNARY_NEGATIVE": (1, 1), "UNARY_NOT": (1, 1), "UNARY_INVERT": (1, 1), "UNARY_POSITIVE": (1, 1),
    "TO_BOOL": (1, 1), "GET_ITER": (1, 1), "GET_LEN": (0, 1), "CALL_INTRINSIC_1": (1, 1),
    "CALL_INTRINSIC_2": (2, 1), "SET_FUNCTION_ATTRIBUTE": (2, 1), "FORMAT_SIMPLE": (1, 1),
    "FORMAT_WITH_SPEC": (2, 1), "CONVERT_VALUE": (1, 1), "LIST_TO_TUPLE": (1, 1),
    "LIST_EXTEND": (1, 0), "LIST_APPEND": (1, 0), "SET_UPDATE": (1, 0), "SET_ADD": (1, 0),
    "DICT_UPDATE": (1, 0), "DICT_MERGE": (1, 0), "MAP_ADD": (2, 0),
    "IMPORT_NAME": (2, 1), "IMPORT_FROM": (0, 1), "IMPORT_STAR": (1, 0),
    "BEFORE_WITH": (1, 2), "BEFORE_ASYNC_WITH": (1, 2), "PUSH_EXC_INFO": (1, 2), "POP_EXCEPT": (1, 0),
    "CHECK_EXC_MATCH": (1, 1), "WITH_EXCEPT_START": (0, 1), "RERAISE": (1, 0), "CLEANUP_THROW": (3, 2),
    "YIELD_VALUE": (1, 1), "GET_YIELD_FROM_ITER": (1, 1),
    "MATCH_MAPPING": (0, 1), "MATCH_SEQUENCE": (0, 1), "MATCH_KEYS": (0, 1), "MATCH_CLASS": (3, 1),
    "SETUP_ANNOTATIONS": (0, 0), "PRINT_EXPR": (1, 0), "END_SEND": (2, 1), "INTERPRETER_EXIT": (1, 0),
    "EXIT_INIT_CHECK": (1, 0), "GET_AWAITABLE": (1, 1), "GET_AITER": (1, 1), "GET_ANEXT": (0, 1),
    "END_ASYNC_FOR": (2, 0), "ASYNC_GEN_WRAP": (1, 1),
    # the value sent into a new generator lands on the stack when it first resumes (`dis` counts 0)
    "RETURN_GENERATOR": (0, 1),
}
# COPY and SWAP are handled by `step` (they move or duplicate slots rather than compute new ones).
_FIXED["COPY"] = (0, 1)
_FIXED["SWAP"] = (0, 0)


def _push_slots(op: Op, n: int) -> list[Slot]:
    """The `n` slots `op` pushes, bottom first, with a NULL marked where this Python puts it."""
    i = op.index
    name, arg = op.opname, op.arg or 0
    if n == 2 and name == "LOAD_GLOBAL" and arg & 1:
        # 3.11/3.12: NULL below the callable; 3.13: the callable, then NULL
        return [(i, ""), (i, "null")] if compat.PY313 else [(i, "null"), (i, "")]
    if n == 2 and name in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"):
        # a method and its self (or, for a plain attribute, NULL and the attribute on 3.12 / attribute and
        # NULL on 3.13): which one depends on the object, so neither is statically NULL
        return [(i, "method"), (i, "self")]
    if name == "PUSH_NULL":
        return [(i, "null")]
    if name == "LOAD_FAST_LOAD_FAST":
        return [(i, "fast:0"), (i, "fast:1")]
    if name == "UNPACK_SEQUENCE":
        # the last item goes deepest, item 0 ends on top
        return [(i, f"item:{n - 1 - j}") for j in range(n)]
    return [(i, "")] * n


def step(stack: Sequence[Slot], op: Op, jump: bool = False) -> tuple[Slot, ...]:
    """The abstract stack after `op` runs on `stack` (bottom first), taking its jump or not.

    Raises:
        ValueError: `op` needs more slots than `stack` has (the path given does not reach `op` this way).
    """
    name = op.opname
    if name == "COPY":
        n = op.arg or 1
        if n > len(stack):
            raise ValueError(f"COPY {n} with {len(stack)} slot(s) at index {op.index}")
        src = stack[-n]
        return (*stack, (op.index, f"copy:{origin_of(src)}"))
    if name == "SWAP":
        n = op.arg or 2
        if n > len(stack):
            raise ValueError(f"SWAP {n} with {len(stack)} slot(s) at index {op.index}")
        out = list(stack)
        out[-1], out[-n] = out[-n], out[-1]
        return tuple(out)
    pops, pushes = pops_pushes(op, jump)
    if pops > len(stack):
        raise ValueError(f"{name} pops {pops} with {len(stack)} slot(s) at index {op.index}")
    base = tuple(stack[: len(stack) - pops]) if pops else tuple(stack)
    if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP") and jump:
        return base
    if name == "STORE_FAST_LOAD_FAST":
        return (*base, (op.index, ""))
    return base + tuple(_push_slots(op, pushes))


@dataclass(frozen=True)
class FlowState:
    """The static abstract stacks of one code object.

    Attributes:
        ops: the instructions.
        before: for each instruction index, the abstract stack before it runs (bottom first), or None when no
            path from the entry reaches it (dead code, or only an exception handler the analysis did not enter).
        merged: indexes where two paths met with different origins for some slot (the first path's origins
            are kept there; provenance says so).
        consumers: for each instruction index, the indexes of instructions that popped a slot it pushed (on
            any analysed path), in instruction order.
    """

    ops: tuple[Op, ...]
    before: tuple[tuple[Slot, ...] | None, ...]
    merged: frozenset[int]
    consumers: tuple[tuple[int, ...], ...]
    handler_only: frozenset[int] = frozenset()


def analyse(code: CodeType, ops: Sequence[Op] | None = None) -> FlowState:
    """Static abstract stacks of `code` over its control-flow graph (exception handlers included).

    Each instruction's stack comes from the first path that reaches it (straight-line first, then jump
    targets in order); exception handlers start from the exception table's depth with the slots that were
    there, plus the ``lasti`` slot when the entry says so, plus the exception. O(instructions × depth).
    """
    ops = tuple(ops) if ops is not None else ops_of(code)
    n = len(ops)
    before: list[tuple[Slot, ...] | None] = [None] * n
    merged: set[int] = set()
    consumers: list[list[int]] = [[] for _ in range(n)]
    index_of = {op.offset: op.index for op in ops}
    handlers = compat.parse_exception_table(code)
    work: list[int] = []
    if n:
        before[0] = ()
        work.append(0)

    def reach(i: int, st: tuple[Slot, ...]) -> None:
        cur = before[i]
        if cur is None:
            before[i] = st
            work.append(i)
        elif cur != st:
            merged.add(i)

    seen_handler: set[tuple[int, int]] = set()  # (handler index, raising index)
    while work:
        i = work.pop()
        # run straight-line from i as far as it goes, queueing jump targets
        while True:
            op = ops[i]
            st = before[i]
            assert st is not None
            for start, end, target, depth, lasti in handlers:
                if start <= op.offset < end:
                    t = index_of.get(target)
                    if t is not None and (t, i) not in seen_handler and before[t] is None:
                        seen_handler.add((t, i))
                        hst = tuple(st[:depth]) + ((i, "lasti"),) * (1 if lasti else 0) + ((i, "exc"),)
                        reach(t, hst)
                    break
            pops = _popped(st, op)
            for src in pops:
                if 0 <= src < n and (not consumers[src] or consumers[src][-1] != i):
                    consumers[src].append(i)
            if op.target is not None:
                try:
                    reach(op.target, step(st, op, jump=True))
                except ValueError:
                    pass
            if op.opname in _ENDS_FLOW or i + 1 >= n:
                break
            try:
                nxt = step(st, op, jump=False)
            except ValueError:
                break
            if before[i + 1] is None:
                before[i + 1] = nxt
                i += 1
                continue
            if before[i + 1] != nxt:
                merged.add(i + 1)
            break
    return FlowState(ops, tuple(before), frozenset(merged), tuple(tuple(c) for c in consumers),
                     frozenset(range(n)) - _normal_reach(ops))


def _normal_reach(ops: Sequence[Op]) -> set[int]:
    """Indexes reachable from the entry without going through an exception handler."""
    seen: set[int] = set()
    todo = [0] if ops else []
    n = len(ops)
    while todo:
        i = todo.pop()
        while 0 <= i < n and i not in seen:
            seen.add(i)
            op = ops[i]
            if op.target is not None:
                todo.append(op.target)
            if op.opname in _ENDS_FLOW:
                break
            i += 1
    return seen


def _popped(stack: Sequence[Slot], op: Op) -> list[int]:
    """Indexes of the instructions whose slots `op` consumes (COPY/SWAP consume nothing)."""
    if op.opname in ("COPY", "SWAP"):
        return []
    pops, _ = pops_pushes(op, False)
    if pops == 0 or pops > len(stack):
        return []
    return [s[0] for s in stack[len(stack) - pops:]]


def step_inplace(stack: list[Slot], op: Op, jump: bool = False) -> None:
    """`step` on a mutable list (no copy of the whole stack per instruction: deep stacks stay cheap).

    Raises:
        ValueError: as `step`; `stack` is then left as it was.
    """
    name = op.opname
    if name == "COPY":
        n = op.arg or 1
        if n > len(stack):
            raise ValueError(f"COPY {n} with {len(stack)} slot(s) at index {op.index}")
        stack.append((op.index, f"copy:{origin_of(stack[-n])}"))
        return
    if name == "SWAP":
        n = op.arg or 2
        if n > len(stack):
            raise ValueError(f"SWAP {n} with {len(stack)} slot(s) at index {op.index}")
        stack[-1], stack[-n] = stack[-n], stack[-1]
        return
    pops, pushes = pops_pushes(op, jump)
    if pops > len(stack):
        raise ValueError(f"{name} pops {pops} with {len(stack)} slot(s) at index {op.index}")
    if pops:
        del stack[len(stack) - pops:]
    if name in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP") and jump:
        return
    if name == "STORE_FAST_LOAD_FAST":
        stack.append((op.index, ""))
        return
    if pushes:
        stack.extend(_push_slots(op, pushes))


class PathReplayer:
    """Replays executed paths of one code object, reusing the previous replay when the new path extends it
    (a stepping engine's path grows by one instruction per stop, so each stop costs O(1) amortised)."""

    __slots__ = ("ops", "path", "stack", "handlers", "index_of")

    def __init__(self, ops: Sequence[Op], handlers: Sequence[tuple[int, int, int, int, bool]] = ()) -> None:
        self.ops = ops
        self.path: list[int] = []      # the stack below is the one before path[-1]
        self.stack: list[Slot] = []
        self.handlers = tuple(handlers)
        self.index_of = {op.offset: op.index for op in ops}

    def before(self, path: Sequence[int]) -> tuple[Slot, ...]:
        """The abstract stack before the last index of `path` (see `run_path`).

        Raises:
            ValueError: the path is not a possible execution.
        """
        if not path:
            return ()
        n = len(self.path)
        if not (n and n <= len(path) and self.path[-1] == path[n - 1] and list(path[:n]) == self.path):
            self.path, self.stack, n = [path[0]], [], 1
        ops, stack = self.ops, self.stack
        try:
            for k in range(n, len(path)):
                prev = path[k - 1]
                nxt = path[k]
                op = ops[prev]
                if op.opname in ("RERAISE", "RAISE_VARARGS"):
                    # never falls through: the next instruction is a handler even when it is adjacent
                    handled = self._handler_stack(stack, op, nxt)
                    if handled is None:
                        raise ValueError(f"no handler leads from {prev} to {nxt}")
                    stack[:] = handled
                elif op.opname == "FOR_ITER" and op.target is not None and nxt > op.target and \
                        all(ops[j].opname in ("END_FOR", "POP_TOP") for j in range(op.target, nxt)):
                    # 3.12+: an exhausted FOR_ITER jumps past the END_FOR (and 3.13's POP_TOP) that `dis`
                    # names as its target; the net effect is the same as running them
                    step_inplace(stack, op, jump=True)
                    for j in range(op.target, nxt):
                        step_inplace(stack, ops[j])
                elif nxt != prev + 1 and op.target != nxt and op.opname not in _ENDS_FLOW:
                    # control went to an exception handler: its stack is the exception table's depth, plus
                    # the saved offset when the entry says so, plus the exception
                    handled = self._handler_stack(stack, op, nxt)
                    if handled is None:
                        raise ValueError(f"no jump or handler leads from {prev} to {nxt}")
                    stack[:] = handled
                else:
                    step_inplace(stack, op, jump=(nxt != prev + 1))
                self.path.append(nxt)
        except ValueError:
            self.path, self.stack = [], []
            raise
        return tuple(stack)

    def _handler_stack(self, stack: list[Slot], op: Op, target: int) -> list[Slot] | None:
        for start, end, handler, depth, lasti in self.handlers:
            if start <= op.offset < end:
                if self.index_of.get(handler) != target or depth > len(stack):
                    return None
                return stack[:depth] + [(op.index, "lasti")] * (1 if lasti else 0) + [(op.index, "exc")]
        return None


def run_path(ops: Sequence[Op], path: Iterable[int]) -> tuple[Slot, ...]:
    """The abstract stack before the last index of `path`, replaying the executed instructions in order.

    `path` is the sequence of instruction indexes the frame executed, ending with the current one; a jump is
    taken when the next index is not the fall-through. An exception (the next index is a handler the current
    instruction did not jump to) is not modelled: use `analyse` for handler code.

    Raises:
        ValueError: the path is not a possible execution (an instruction lacks operands).
    """
    stack: tuple[Slot, ...] = ()
    prev: int | None = None
    for i in path:
        if prev is not None:
            op = ops[prev]
            stack = step(stack, op, jump=(i != prev + 1))
        prev = i
    return stack


def origin_of(slot: Slot) -> int:
    """The instruction that produced the *value* in `slot` (through any chain of COPYs)."""
    idx, how = slot
    if how.startswith("copy:"):
        return int(how[5:])
    return idx
