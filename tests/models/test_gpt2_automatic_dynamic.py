"""Automatic dynamic on a real model: a 4-layer GPT-2 from `transformers` (random weights, nothing downloaded)
called at sequence lengths 8, 16, 17, 32. The one recompile stop says torch makes the sequence dimension of
``input_ids`` dynamic in the new entry and offers no ``dynamic`` for it; 17 and 32 need no compile (torch's count
and the report's agree); the report names the dimension.

Needs the ``[models]`` extra (``pip install -e ".[models]"``); skipped with that reason without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forkrun import python

pytest.importorskip("transformers", reason="needs the [models] extra: pip install -e '.[models]'")

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "gpt2_four_lengths.py")
pytestmark = pytest.mark.slow


def dynadbg(*args: str) -> str:
    proc = python(["-m", "dynadbg", *args, PROGRAM], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_sequence_length_recompile_says_torch_makes_the_dimension_dynamic() -> None:
    out = dynadbg("run", "--plain", "--break-on", "recompile", "-c", "why; c")
    assert out.count("is about to recompile") == 1                  # 17 and 32 hit the new entry
    assert ("torch makes L['kwargs']['input_ids'] dim 1 dynamic in the new entry 0/1: sizes 8 then 16 were seen; "
            "later sizes hit that entry") in out
    assert "dynamic kwargs['input_ids'] 1" not in out and "mark_dynamic(kwargs" not in out
    assert "dynamic        not available: torch's automatic dynamic shapes makes kwargs['input_ids'] 1" in out
    assert "length 32: logits (2, 32, 1000)" in out and "torch compiled graphs: 2" in out


def test_the_report_names_the_dimension_torch_made_dynamic() -> None:
    out = dynadbg("report")
    assert "torch compiled graphs: 2" in out
    assert "2 cache entries, 4 hits" in out
    assert ("entry 0/1 serves any size at L['kwargs']['input_ids'] dim 1 (torch's automatic dynamic, after sizes "
            "8 then 16)") in out
