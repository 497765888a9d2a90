"""The text a user reads in an SVG screenshot Textual wrote: one string per terminal row, left to right.

Textual's SVG export draws each run of same-styled cells as a ``<text x=... y=...>`` element; the elements of one
row share their ``y``. Spaces are written as no-break spaces and some runs are split, so callers compare with
`squeeze` (whitespace removed) rather than exact spacing.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

_TEXT = re.compile(r'<text[^>]*?x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', re.S)


def svg_rows(path: Path) -> list[str]:
    """The screen's rows, top to bottom (tags inside a text element dropped, entities decoded)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in _TEXT.finditer(path.read_text(encoding="utf-8")):
        text = html.unescape(re.sub(r"<[^>]+>", "", m.group(3)))
        rows.setdefault(float(m.group(2)), []).append((float(m.group(1)), text))
    return ["".join(t for _, t in sorted(cells)).replace("\xa0", " ").rstrip() for _, cells in sorted(rows.items())]


def squeeze(text: str) -> str:
    """`text` without any whitespace: what to compare screen text with."""
    return re.sub(r"\s+", "", text)
