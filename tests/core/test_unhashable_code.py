"""Generated code that cannot be hashed (its constants hold a dict) is listed, stepped and reported like any other."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from helpers import drive
from programs import nested_fn
from forkrun import python

PROGRAM = Path(nested_fn.__file__)


def _unhashable(code) -> bool:
    try:
        hash(code)
    except TypeError:
        return True
    return False


def test_step_every_instruction_through_unhashable_resume_function():
    torch._dynamo.reset()
    out: list = []
    run = drive(lambda s: s.start_callable(nested_fn.main, out),
                ["s 100000"], break_on=("entry", "graph-break"), check_depth=True)
    assert run.result is not None and run.result.exception is None, run.result
    assert out == [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]
    stepped = {id(s.frame.code) for s in run.stops if s.frame is not None}
    assert run.session.traced_instructions > 20  # both generated code objects, twice
    assert stepped
    # the program really produced unhashable generated code (else this test proves nothing)
    assert any(_unhashable(c) for c in run.session.generated.values())


def test_graph_break_stop_and_listing_in_unhashable_code():
    torch._dynamo.reset()
    out: list = []
    run = drive(lambda s: s.start_callable(nested_fn.main, out), ["ll", "stack", "c"],
                break_on=("graph-break",))
    assert run.stops and run.stops[0].kind.value == "graph-break"
    assert run.stops[0].frame.code.name.startswith("torch_dynamo_resume_in_scale_then_inc")
    assert run.output_of("ll").error is None
    assert out == [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]


def test_report_json_lists_unhashable_generated_code():
    proc = python(["-m", "dynadbg", "report", "--json", str(PROGRAM)],
                  timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    names = [f["name"] for f in doc["frames"]]
    assert "scale_then_inc" in names
    assert any(n.startswith("torch_dynamo_resume_in_scale_then_inc") for n in names)
    assert doc["summary"]["graph_breaks"] == 1


def test_a_fault_in_the_debugger_callback_never_reaches_torch():
    """torch calls the debugger callback from C++; an exception escaping it aborts Python 3.13. It is reported."""
    from dynadbg.core.session import Session

    torch._dynamo.reset()
    out: list = []

    def broken(self, code):
        raise RuntimeError("simulated engine fault")

    orig = Session._on_generated_code
    Session._on_generated_code = broken
    try:
        run = drive(lambda s: s.start_callable(nested_fn.main, out), [], break_on=("entry",))
    finally:
        Session._on_generated_code = orig
    assert run.result is not None and run.result.exception is None
    assert out == [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]
    assert any("simulated engine fault" in m and "the program goes on" in m for m in run.messages)
