"""`dynadbg report` on a real model: a 4-layer GPT-2 from `transformers` (built from a config, random weights,
nothing downloaded) called at sequence lengths 8 and 16, so its forward recompiles once on the input's size.

Needs the ``[models]`` extra (``pip install -e ".[models]"``); skipped with that reason without it. Before the
summary, the default text report of this program was 5,480 lines / 905 KB with lines up to 6,166 characters.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from forkrun import python

pytest.importorskip("transformers", reason="needs the [models] extra: pip install -e '.[models]'")

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "gpt2_two_lengths.py")
pytestmark = pytest.mark.slow
RECOMPILE = "recompile 0/1: 0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 8, actual 16"


def report(*args: str) -> subprocess.CompletedProcess[str]:
    proc = python(["-m", "dynadbg", "report", *args, PROGRAM], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _report_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("dynadbg report: "))
    return lines[start:]


def test_summary_fits_a_screen_and_names_the_recompile_and_its_cause() -> None:
    proc = report()
    assert "length 16: logits (2, 16, 1000)" in proc.stdout        # the program's own output, unchanged
    lines = _report_lines(proc.stdout)
    assert len(lines) <= 60 and max(len(ln) for ln in lines) <= 120
    text = "\n".join(lines)
    assert lines[0].startswith("dynadbg report: 1 frame, 2 cache entries, 1 recompile, 0 graph breaks, ")
    assert "[1] wrapper  transformers/utils/generic.py:" in text  # the library file, not a venv path
    assert RECOMPILE in text                                       # the recompile and its cause, in one line
    look = " ".join(text.split("look at first:")[1].split())
    assert look.startswith("1. [1] wrapper recompiled once (0/1; every failing guard: dynadbg report --frame 1); "
                           "torch's first reason: 0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. "
                           "expected 8, actual 16")
    # hundreds of guards an entry: the guard cost is the second thing, with torch's cuts that fit
    assert "2. [1] wrapper: entry 0/" in look and "skip_guard_on_inbuilt_nn_modules_unsafe" in look
    assert "original bytecode:" not in text and "FX graph __compiled_fn" not in text and "  guards:" not in text


def test_full_keeps_the_detail_and_the_guard_diff_shows_the_size() -> None:
    proc = report("--full")
    text = proc.stdout
    lines = _report_lines(text) if text.startswith("dynadbg report: ") else text.splitlines()
    assert len(lines) > 5000                                        # every instruction, guard and FX node
    for part in ("original bytecode:", "transformed bytecode:", "  guards:", "FX graph __compiled_fn",
                 "[0/1] recompiling wrapper, triggered by the following guard failure(s):",
                 "guard cost: 7", "guard diffs of consecutive entries:"):
        assert part in text, part
    # the size guard that changed, cut around what changed (not two identical cut texts)
    (diff,) = [ln for ln in text.splitlines() if "changed TENSOR_MATCH L['kwargs']['input_ids']" in ln]
    assert "size=[2, 8]" in diff and "size=[2, None]" in diff
    # FX signatures of thousands of characters are cut with a marker naming what was left out
    assert "characters; the JSON report has the whole line]" in text
    assert max(len(ln) for ln in text.splitlines()) < 1200
