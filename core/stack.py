"""Value-stack reads and stack-depth tracking for frames of generated code.

The depth of a frame's value stack is tracked per instruction with ``dis.stack_effect`` (jump-aware) and re-based
from the exception table when an exception is raised (the handler starts at the table's depth, plus the pushed
``lasti`` when the entry says so, plus the exception). On Python 3.11 the live frame also exposes its real stack
top while a trace function runs, so the current frame's stack is read exactly; for suspended parent frames only
the slots below the call they are suspended in are read (the callable and its arguments have been consumed), and
the view says it is not exact.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from . import compat
from .disasm import exception_table
from .model import ExceptionTableEntry


@dataclass
class CodeIndex:
    """Per-code lookup tables: byte offset → instruction index, and the raw instructions."""

    code: CodeType
    instructions: list[dis.Instruction]
    index_of_offset: dict[int, int]
    handlers: list[ExceptionTableEntry]
    jump_target: dict[int, int]

    @classmethod
    def of(cls, code: CodeType) -> "CodeIndex":
        ins = list(dis.get_instructions(code))
        index: dict[int, int] = {}
        for i, row in enumerate(ins):
            index[row.offset] = i
        # offsets inside inline CACHE entries map to their instruction (exception offsets may land there)
        for i, row in enumerate(ins):
            end = ins[i + 1].offset if i + 1 < len(ins) else len(code.co_code)
            for off in range(row.offset + 2, end, 2):
                index.setdefault(off, i)
        targets: dict[int, int] = {}
        for i, row in enumerate(ins):
            if (row.opcode in dis.hasjrel or row.opcode in dis.hasjabs) and isinstance(row.argval, int):
                if row.argval in index:
                    targets[i] = index[row.argval]
        return cls(code, ins, index, exception_table(code), targets)

    def is_handler(self, offset: int) -> bool:
        return any(target == offset for _s, _e, target, _d, _l in self.handlers)

    def handler_depth(self, offset: int) -> int | None:
        """Stack depth at the handler for an exception raised at `offset`, or None if nothing handles it here."""
        for start, end, _target, depth, lasti in self.handlers:
            if start <= offset < end:
                return depth + (1 if lasti else 0) + 1
        return None


_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE"})
_RAISES = frozenset({"RERAISE", "RAISE_VARARGS"})

#: instructions that push nothing (they store, delete, pop, jump, raise or return)
_PUSH_NOTHING_PREFIXES = ("STORE_", "DELETE_", "POP_", "JUMP", "RETURN_", "RAISE_", "RERAISE", "IMPORT_STAR",
                          "PRINT_EXPR", "SETUP_ANNOTATIONS", "LIST_APPEND", "LIST_EXTEND", "SET_ADD", "SET_UPDATE",
                          "MAP_ADD", "DICT_UPDATE", "DICT_MERGE", "END_FOR", "END_SEND", "CHECK_EG_MATCH")


def _pushes(opname: str, effect: int) -> int:
    """How many results an instruction pushes when it completes: 0 for stores, pops, jumps, raises and
    container updates; UNPACK_* push one per element (their effect plus the one they pop); every other
    instruction that can raise pushes one result."""
    if opname.startswith(_PUSH_NOTHING_PREFIXES):
        return 0
    if opname in ("UNPACK_SEQUENCE", "UNPACK_EX"):
        return effect + 1
    return 1


_indexes: dict[int, CodeIndex] = {}


def code_index(code: CodeType) -> CodeIndex:
    """Cached `CodeIndex` of `code` (the engine keeps generated code alive for the session)."""
    found = _indexes.get(id(code))
    if found is None or found.code is not code:
        with compat.dynamo_off():  # called from trace functions inside compiled code: keep dis out of Dynamo
            found = _indexes[id(code)] = CodeIndex.of(code)
    return found


@dataclass
class FrameState:
    """What the engine tracks for one traced frame of generated code.

    Attributes:
        frame: the live frame.
        index: index of the instruction about to run (-1 before the first instruction event).
        depth: tracked value-stack depth before that instruction.
        inputs: the frame's locals at its first traced event (the call's inputs, what guards are checked on).
        last_ids: local name → id() at the previous stop, to mark changed locals.
        snapshots: stops this frame was shown at (a local first bound after the first one counts as changed).
        pending_exception_offset: set by an exception event; the next instruction re-bases the depth (a property
            over ``_pending_exception``; ``_raise_depth`` keeps the depth when it was set).
        depth_from_flow: True while `depth` comes from the code's flow at `index` (an exception in a frame no
            instruction of which was followed), not from tracking.
    """

    frame: FrameType
    table: CodeIndex
    index: int = -1
    depth: int = 0
    inputs: dict[str, Any] = field(default_factory=dict)
    last_ids: dict[str, int] = field(default_factory=dict)
    snapshots: int = 0
    _pending_exception: int | None = None
    _raise_depth: int = 0
    depth_from_flow: bool = False

    @property
    def pending_exception_offset(self) -> int | None:
        """Offset of the instruction an exception was raised at, until the next instruction event re-bases the
        depth; setting it also keeps the tracked depth at that moment (what `exception_depth` starts from,
        whatever a stop does to `depth` meanwhile)."""
        return self._pending_exception

    @pending_exception_offset.setter
    def pending_exception_offset(self, offset: int | None) -> None:
        if offset is not None and self._pending_exception is None:
            self._raise_depth = self.depth
        self._pending_exception = offset

    def advance(self, offset: int) -> None:
        """Move to the instruction at `offset`, applying the previous instruction's stack effect."""
        self.depth_from_flow = False
        table = self.table
        new_index = table.index_of_offset.get(offset, -1)
        if self.pending_exception_offset is not None:
            depth = table.handler_depth(self.pending_exception_offset)
            self.pending_exception_offset = None
            if depth is not None:
                self.depth = depth
                self.index = new_index
                return
        if self.index >= 0:
            prev = table.instructions[self.index]
            jumped = new_index != self.index + 1
            if jumped and prev.opname == "FOR_ITER" and compat.FOR_ITER_EXIT_SKIPS_END_FOR:
                target = table.jump_target.get(self.index)
                if target is not None and new_index > target:
                    # the loop ended: the interpreter popped the iterator and went past END_FOR (3.12+), so
                    # neither dis's jump effect (+1, meant for landing on END_FOR) nor END_FOR's pops applies
                    self.depth = max(self.depth - 1, 0)
                    self.index = new_index
                    return
            raised = prev.opname in _RAISES
            if raised or (jumped and table.jump_target.get(self.index) != new_index and prev.opname not in _RETURNS):
                # control reached an exception handler without an 'exception' event (RERAISE, or a raise in
                # a C call the tracer did not report): the handler starts at the exception table's depth
                depth = table.handler_depth(prev.offset)
                if depth is not None and table.is_handler(offset):
                    self.depth = depth
                    self.index = new_index
                    return
            try:
                self.depth += compat.stack_effect(prev.opcode, prev.arg, jumped)
            except ValueError:
                pass
            self.depth = max(self.depth, 0)
        self.index = new_index

    def exact_stack(self) -> list[Any] | None:
        """The live stack of this frame when the interpreter exposes its top (3.11, current frame), else None.

        At an exception event (before the handler runs) the interpreter exposes no valid top (3.11 leaves it
        unset there, so a read returns slots up to ``co_stacksize``: popped, even freed objects); the stack is
        then read at `exception_depth`.
        """
        if not compat.STACKTOP_IS_EXACT:
            return None
        if self.pending_exception_offset is not None:
            return self._read(self.exception_depth())
        return compat.frame_value_stack(self.frame, self.frame.f_code.co_stacksize)

    def tracked_stack(self) -> list[Any]:
        """The current frame's stack read at the tracked depth (where the interpreter exposes no stack top);
        at an exception event, at `exception_depth`."""
        if self.pending_exception_offset is not None:
            return self._read(self.exception_depth())
        return self._read(self.depth)

    def _read(self, depth: int) -> list[Any]:
        depth = max(0, min(depth, self.frame.f_code.co_stacksize))
        return compat.frame_value_stack(self.frame, depth) if depth else []

    def exception_depth(self) -> int:
        """Slots still live while the instruction at `index` raises: its operands are consumed and its result
        was never pushed, i.e. the depth after it would have run, less what it pushes (`_pushes`). The tracked
        depth is before the instruction (3.11's PRECALL/CALL split included, both sides counted the same way).
        """
        depth = self._raise_depth if self._pending_exception is not None else self.depth
        if not 0 <= self.index < len(self.table.instructions):
            return depth
        ins = self.table.instructions[self.index]
        try:
            effect = compat.stack_effect(ins.opcode, ins.arg, False)
        except ValueError:
            return depth
        return max(0, depth + effect - _pushes(ins.opname, effect))

    def safe_stack(self) -> list[Any]:
        """Slots the tracked depth can vouch for in a frame suspended in a call (the call's operands excluded).

        Slots above those are freed or stale (torch-internals §7) and are never read.
        """
        depth = self.depth
        if 0 <= self.index < len(self.table.instructions):
            ins = self.table.instructions[self.index]
            try:
                effect = compat.stack_effect(ins.opcode, ins.arg, False)
            except ValueError:
                effect = 0
            # The instruction consumed its operands and has not pushed its one result yet: vouch for
            # depth + effect - 1 slots.
            depth += min(effect, 1) - 1
        depth = max(0, min(depth, self.frame.f_code.co_stacksize))
        return compat.frame_value_stack(self.frame, depth) if depth else []
