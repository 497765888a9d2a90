"""train() then eval() on a real model: a 4-layer GPT-2 from `transformers` (random weights, dropout 0, nothing
downloaded). The eval() call's recompile stop says the 13 dropout/attention `.training` failures once, as one group
naming the switch to eval(), in a stop a screen long; `drop` with no ids leaves those mode flags out (it drops
nothing and says why) and the program's results stay those of an uncompiled run.

Needs the ``[models]`` extra (``pip install -e ".[models]"``); skipped with that reason without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from forkrun import python

pytest.importorskip("transformers", reason="needs the [models] extra: pip install -e '.[models]'")

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "gpt2_train_eval.py")
pytestmark = pytest.mark.slow


def test_the_train_to_eval_stop_is_one_group_and_drop_leaves_the_mode_flags_alone() -> None:
    proc = python(["-m", "dynadbg", "run", "--plain", "--break-on", "recompile",
                  "-c", "drop; c", PROGRAM], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert out.count("is about to recompile") == 1
    stop = out.split("is about to recompile", 1)[1].split("\n(?) ", 1)[0]
    (group,) = [line for line in stop.splitlines() if "× TRUE_MATCH on " in line]
    assert group.strip().startswith("13 × TRUE_MATCH on L['self']._modules['transformer']._modules")
    assert "(Dropout, GPT2Attention)" in group and "the model switched from train() to eval()" in group
    assert "_modules['h']._modules['2']._modules['mlp']" not in stop.split("choices:")[0]  # no flag listed alone
    assert len(stop.splitlines()) <= 25, stop
    assert "*** drop: nothing to drop by default of 0/0" in out
    assert "left out (module mode flags): g" in out
    assert "eval max difference from eager: 0.0" in out
