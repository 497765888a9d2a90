"""Torch's own caveats on a guard: when the user line a guard points at is not what made it.

Torch writes two such remarks into a guard's code part, after the location: a symbolic size guarded against 0 and
1 (``2 <= L['x'].size()[0]``: "the guard itself is not due user code but due to 0/1 specialization in the
framework ... try torch._dynamo.decorators.mark_unbacked(tensor, dim)"), and a float input traced as a symbol
guarded against NaN (``not math.isnan(L['s'])``: "implicit guard for float input due to NaN specialization in the
framework"; it has no user line at all). `caveat_of` reads them off a `model.LeafGuardView` (its ``note``), so the
text and the TUI say (`model.LeafGuardView.caveat`, set when the leaf is built)
that the line shown is only the first use of the value, and what to do instead
(`dynadbg.core.format.guards.caveat_lines`).
"""

from __future__ import annotations

import re

from .model import Caveat, CaveatKind

__all__ = ["Caveat", "CaveatKind", "caveat_of"]


_SIZE = re.compile(r"(?P<tensor>L\[[^\]]+\](?:\.\w+|\[[^\]]+\])*)\.size\(\)\[(?P<dim>\d+)\]")
_ISNAN = re.compile(r"math\.isnan\((?P<src>[^)]+)\)")


def caveat_of(note: str | None, code: tuple[str, ...]) -> Caveat | None:
    """The caveat torch wrote in a leaf guard's `note` (its code parts `code` name the value), else None."""
    note = note or ""
    if "specialization" not in note:
        return None
    code_text = " ".join(code)
    if "0/1 specialization" in note:
        m = _SIZE.search(code_text)
        if m is not None:
            return Caveat(CaveatKind.ZERO_ONE, m.group(0), int(m.group("dim")), m.group("tensor"))
        return Caveat(CaveatKind.ZERO_ONE)
    if "NaN specialization" in note:
        m = _ISNAN.search(code_text)
        return Caveat(CaveatKind.NAN, m.group("src") if m else None)
    return None
