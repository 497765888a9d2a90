"""Live edits on the GPU: the bundled MLP demo (app/demos/mlp.py, on CUDA when available) run under the debugger
with an instruction edit and a guard edit, checked against a run without the debugger.

Self-contained (no helpers from tests/core). Run on a machine with CUDA:

    python -m pytest -q tests/gpu/test_gpu_edits.py -m gpu

What it does, at compile stops (``--break-on compile``):
* ``forward`` (0/0): ``guard drop`` of the ``L['scale'] == 1`` guard — the scale=2 call then reuses the entry
  compiled for scale=1 (no recompile; its output equals the scale=1 output: the warned-about constant folding);
* the resume function after the ``.item()`` graph break: ``insert`` ``LOAD_CONST 2.0; BINARY_OP *`` before its
  final ``RETURN_VALUE`` — every output doubles, computed on the GPU.
"""

from __future__ import annotations

import re
import runpy
from typing import Any

import pytest
import torch
from dynadbg.core.commands import CommandLine
from dynadbg.core.listeners import QueueListener

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

_LINE = re.compile(r"^scale=(\d+): out\[0\] = \[(.*)\]$")


def _outputs(text: str) -> list[list[float]]:
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            rows.append([float(v) for v in m.group(2).split(",")])
    return rows


def run_demo_with_edits(path: str) -> dict[str, Any]:
    """Run the demo under a session that drops the scale guard and doubles the resume function's result.
    Works on CPU too (the test itself needs CUDA)."""
    from dynadbg.core import guards
    from dynadbg.core.session import Session

    listener = QueueListener()
    session = Session(listener, break_on=("compile",))
    commands = CommandLine(session)
    said: dict[str, Any] = {"names": []}
    session.start_script(path, [])
    while True:
        kind, stop = listener.events.get(timeout=300)
        if kind == "exit":
            said["result"] = stop
            break
        frame = stop.frame
        name = frame.code.name
        said["names"].append(name)
        if name == "forward" and "drop" not in said:
            tree = commands.execute("guards").data
            leaf = next(lf for lf in guards.iter_leaves(tree) if lf.source == "L['scale']")
            said["drop"] = commands.execute(f"guard drop {leaf.id}")
        elif name.startswith("torch_dynamo_resume_in_forward") and "insert" not in said:
            ret = max(i.index for i in frame.code.instructions if i.opname == "RETURN_VALUE")
            said["insert"] = commands.execute(f"insert {ret} LOAD_CONST 2.0; BINARY_OP *")
        commands.execute("c")
    said["frames"] = {f.name: len(f.entries) for f in session.compiled_frames()}
    said["messages"] = listener.messages
    return said


def test_demo_on_gpu_with_an_instruction_edit_and_a_guard_edit(capsys):
    from dynadbg.demos import demo_path

    path = demo_path("mlp")
    torch._dynamo.reset()
    runpy.run_path(path, run_name="__main__")
    baseline_text = capsys.readouterr().out
    assert "device: cuda" in baseline_text
    baseline = _outputs(baseline_text)
    assert len(baseline) == 3

    torch._dynamo.reset()
    said = run_demo_with_edits(path)
    text = capsys.readouterr().out
    assert said["result"].status == 0, said["result"].traceback
    assert said["drop"].error is None and "WARNING" in said["drop"].output
    assert said["insert"].error is None, said["insert"].error
    assert "device: cuda" in text
    edited = _outputs(text)
    assert len(edited) == 3
    # every call ran the doubled resume function; the scale=2 call reused the scale=1 entry (no recompile)
    for got, want in zip(edited, [baseline[0], baseline[1], baseline[0]]):
        assert got == pytest.approx([2 * v for v in want], abs=3e-4)
    assert said["frames"].get("forward") == 1
    assert said["names"].count("forward") == 1
    torch.cuda.synchronize()
