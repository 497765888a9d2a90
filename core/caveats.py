"""Torch's own caveats on a guard: when the user line a guard points at is not what made it.

Torch writes two such remarks into a guard's code part, after the location: a symbolic size guarded against 0 and
1 (``2 <= L['x'].size()[0]``: "the guard itself is not due user code but due to 0/1 specialization in the
framework ... try torch._dynamo.decorators.mark_unbacked(tensor, dim)"), and a float input traced as a symbol
guarded against NaN (``not math.isnan(L['s'])``: "implicit guard for float input due to NaN specialization in the
framework"; it has no user line at all). `caveat_of` reads them off a `model.LeafGuardView` (its ``note``), so the
text and the TUI say that the line shown is only the first use of the value, and what to do instead
(`dynadbg.core.format.advice.caveat_lines`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Caveat", "CaveatKind", "caveat_of"]


class CaveatKind(str, enum.Enum):
    """Which of torch's remarks."""

    ZERO_ONE = "0/1 specialization"
    NAN = "NaN specialization"


@dataclass(frozen=True)
class Caveat:
    """A guard torch says the user's code did not cause.

    Attributes:
        kind: which remark.
        source: the guarded value (``"L['x'].size()[0]"``, ``"L['s']"``), when it can be read off the code.
        dim: for a 0/1 specialization of a tensor size, the dimension, else None.
        tensor: for a 0/1 specialization, the tensor's source (``"L['x']"``), else None.
    """

    kind: CaveatKind
    source: str | None = None
    dim: int | None = None
    tensor: str | None = None


_SIZE = re.compile(r"(?P<tensor>L\[[^\]]+\](?:\.\w+|\[[^\]]+\])*)\.size\(\)\[(?P<dim>\d+)\]")
_ISNAN = re.compile(r"math\.isnan\((?P<src>[^)]+)\)")


def caveat_of(leaf: Any) -> Caveat | None:
    """The caveat torch wrote on `leaf` (a `model.LeafGuardView`), else None."""
    note = getattr(leaf, "note", None) or ""
    code = " ".join(getattr(leaf, "code", ()) or ())
    if "0/1 specialization" in note:
        m = _SIZE.search(code)
        if m is not None:
            return Caveat(CaveatKind.ZERO_ONE, m.group(0), int(m.group("dim")), m.group("tensor"))
        return Caveat(CaveatKind.ZERO_ONE)
    if "NaN specialization" in note:
        m = _ISNAN.search(code)
        return Caveat(CaveatKind.NAN, m.group("src") if m else None)
    return None
