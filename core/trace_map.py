"""Dynamo's instruction list of a code object, mapped back to the user's ``dis`` offsets.

Dynamo traces ``cleaned_instructions(code)``, not the code's own instructions: it drops ``EXTENDED_ARG`` and
``CACHE``, renumbers offsets, and rewrites some instructions on every Python version it supports (``is None``
jumps into ``LOAD_CONST None; IS_OP; POP_JUMP_IF_*``, zero-argument ``super()`` into an explicit one on 3.11,
``BINARY_SLICE`` / ``STORE_SLICE`` into ``BUILD_SLICE`` + subscript on 3.12+, ``LOAD_FAST_LOAD_FAST`` and its
relatives into two instructions on 3.13). The map aligns the two lists on (opname, argument), the argument left
out for jumps (their targets are renumbered): an aligned instruction is the user's own (`RewriteKind.SAME`); a
block that differs is Dynamo's rewrite of the user's instructions in the same place (`RewriteKind.REWRITE`,
mapped to the first of them); an instruction with no counterpart was added (`RewriteKind.ADDED`, no offset).
"""

from __future__ import annotations

import dis
import difflib
from types import CodeType
from typing import Any, Sequence

from .trace_model import RewriteKind

#: one Dynamo instruction's place in the user's listing: (user dis offset or None, kind, user opname(s) rewritten)
Mapped = tuple[int | None, RewriteKind, str | None]

_NO_ARG_KEY = frozenset({"KW_NAMES", "SEND", "FOR_ITER", "SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH",
                         "BEFORE_WITH"})


def _key(opname: str, argval: Any, is_jump: bool) -> tuple[str, str | None]:
    if is_jump or opname in _NO_ARG_KEY or "JUMP" in opname:
        return opname, None
    try:
        text = repr(argval)
    except Exception:  # noqa: BLE001
        text = type(argval).__name__
    return opname, text[:200]


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def user_instructions(code: CodeType) -> list[dis.Instruction]:
    """The user's listing (``dis.get_instructions``: no CACHE entries), what `user_offset` refers to."""
    return list(dis.get_instructions(code))


def map_instructions(code: CodeType, dynamo: Sequence[Any]) -> tuple[Mapped, ...]:
    """For each of Dynamo's instructions of `code` (``Instruction`` with ``opname``, ``opcode``, ``argval``), its
    place in the user's listing (see the module docstring)."""
    user = user_instructions(code)
    ukeys = [_key(i.opname, i.argval, i.opcode in _JUMPS) for i in user]
    dkeys = [_key(i.opname, i.argval, getattr(i, "opcode", -1) in _JUMPS) for i in dynamo]
    out: list[Mapped] = [(None, RewriteKind.ADDED, None)] * len(dynamo)
    matcher = difflib.SequenceMatcher(None, ukeys, dkeys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(j2 - j1):
                out[j1 + k] = (user[i1 + k].offset, RewriteKind.SAME, None)
        elif tag == "replace":
            names = "+".join(u.opname for u in user[i1:i2])
            for k in range(j2 - j1):
                # pairwise when the block keeps its length, else every instruction maps to the block's first
                target = user[i1 + k] if (i2 - i1) == (j2 - j1) else user[i1]
                out[j1 + k] = (target.offset, RewriteKind.REWRITE, names)
        elif tag == "insert":
            for k in range(j2 - j1):
                out[j1 + k] = (None, RewriteKind.ADDED, None)
        # "delete": user instructions Dynamo dropped (EXTENDED_ARG, ...): nothing of Dynamo's maps to them
    return tuple(out)


def user_index_of_offset(code: CodeType, offset: int | None) -> int | None:
    """The index in the user's listing (`disasm.code_view(code)`) of ``dis`` offset `offset`, or None."""
    if offset is None:
        return None
    for i, ins in enumerate(dis.get_instructions(code)):
        if ins.offset == offset:
            return i
    return None
