"""Line mode on the bundled demo, read as a first-time user reads it: the resume function's ``___stack0`` named
by what it carries, the graph break at a resume function's entry, the user's call named instead of torch's
wrapper, and the first Dynamo terms glossed once."""

from __future__ import annotations


import pytest

from dynadbg.demos import demo_path
from forkrun import python


@pytest.fixture(scope="module")
def demo_out() -> str:
    """The whole demo run on: every stop's output, in order."""
    proc = python(["-m", "dynadbg", "run", "--plain", "-c", "c; c; c; c; c; c; q",
                  str(demo_path(None))], timeout=300)
    return proc.stdout


def _stop(out: str, head: str) -> str:
    """The output of the stop that starts with `head` (up to the next prompt)."""
    start = out.index(head)
    return out[start:out.index("(dynadbg)", start)]


def test_the_resume_functions_recompile_says_what_stack0_is_and_how_to_keep_item_in_the_graph(demo_out):
    stop = _stop(demo_out, "--- torch_dynamo_resume_in_forward_at_26 is about to recompile")
    assert "___stack0 is peak in forward: the value of `h.abs().max().item()` (line 26)" in stop
    assert "___stack0 (peak): 1.47" in stop  # the changed input, named by the user's variable
    assert "torch._dynamo.config.capture_scalar_outputs = True" in stop
    # the forward's own recompile (an int argument) has no ___stack arguments and no .item() advice
    forward = _stop(demo_out, "--- forward is about to recompile")
    assert "capture_scalar_outputs" not in forward and "___stack" not in forward


def test_a_compiled_module_calls_return_is_named_by_the_model_not_torchs_wrapper(demo_out):
    assert "_wrapped_call_impl" not in demo_out
    assert "\nMLP.forward returned: tensor(" in demo_out.replace("dynadbg: ", "")


def test_guard_cost_cuts_name_the_compiled_callable_as_the_recompile_choices_do():
    proc = python(["-m", "dynadbg", "run", "--plain", "-c", "entries; c; c; c; q",
                  str(demo_path(None))], timeout=300)
    cuts = [ln for ln in proc.stdout.splitlines() if "cut: torch.compile(" in ln]
    drops = [ln for ln in proc.stdout.splitlines() if "permanently: torch.compile(" in ln]
    assert cuts and drops
    assert all("torch.compile(model," in ln for ln in cuts + drops), cuts + drops


def test_a_resume_functions_entry_stop_explains_the_graph_break_that_made_it(demo_out):
    stop = _stop(demo_out, "[entry]  torch_dynamo_resume_in_forward_at_26")
    assert "graph break:" in stop
    assert "continues forward" in stop and "STORE_FAST peak, line 26" in stop  # where the original frame stopped
    assert "peak = h.abs().max().item()" in stop
    assert "___stack0 = 1.47" in stop and "(peak in forward" in stop  # the stack value passed, named
    assert "locals carried over:" in stop and "h = Tensor[8, 16]" in stop
    # the forward's own entry is no resume function: no such block
    assert "graph break:" not in _stop(demo_out, "[entry]  forward")


def test_each_dynamo_term_is_glossed_once_where_it_is_first_met(demo_out):
    glosses = [ln for ln in demo_out.splitlines() if ln.startswith("(?) ")]
    terms = [ln[4:].split(":", 1)[0] for ln in glosses]
    assert {"generated code", "cache entry", "guard", "graph break", "resume function"} <= set(terms)
    assert len(terms) == len(set(terms))  # once per session
    # "resume function" is explained at the first stop that shows one, before the recompile stops
    first_resume = demo_out.index("[entry]  torch_dynamo_resume_in_forward_at_26")
    assert first_resume < demo_out.index("(?) resume function:") < demo_out.index("is about to recompile")


NESTED = '''
import torch

def g(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2

def f(x):
    y = x.sin()
    return 3 + g(y)

print(torch.compile(f, backend="eager")(torch.ones(3)))
'''


def test_after_u_the_callers_stack_shows_the_slots_below_its_pending_call(tmp_path):
    script = tmp_path / "nested.py"
    script.write_text(NESTED)
    proc = python(["-m", "dynadbg", "run", "--plain", "-c", "c; u; stack; q", str(script)],
                  timeout=300)
    stack = proc.stdout.split("(dynadbg) stack\n", 1)[1].split("(dynadbg)", 1)[0]
    assert "unknown" not in stack, stack
    assert "below the pending call" in stack and "not traced from its start" in stack
    assert "int        3  <- TOS" in stack  # `3 + g(y)`: the 3 waits under the call of g


def test_int_of_a_tensor_is_named_and_gets_the_capture_scalar_outputs_advice_too():
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "programs" / "item_graph_break.py"
    proc = python(["-m", "dynadbg", "run", "--plain", "-c", "c; c; c; c; q", str(script)],
                  timeout=300)
    stop = _stop(proc.stdout, "is about to recompile")
    assert "___stack0 is n in span: the value of `int(v[1] - v[0])` (line 9)" in stop
    assert "torch._dynamo.config.capture_scalar_outputs = True" in stop


def test_after_u_an_empty_caller_stack_says_it_is_empty_below_the_pending_call():
    proc = python(["-m", "dynadbg", "run", "--plain", "-c", "c; u; stack; q",
                  str(demo_path(None))], timeout=300)
    stack = proc.stdout.split("(dynadbg) stack\n", 1)[1].split("(dynadbg)", 1)[0]
    # forward waits in its call of the resume function, which consumed everything it had pushed
    assert stack.startswith("value stack: empty (below the pending call"), stack
