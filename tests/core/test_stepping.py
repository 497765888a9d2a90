"""Engine tests in the style of CPython's test_bdb: command tables → expected stops, no UI."""

from __future__ import annotations

import sys

import pytest
import torch

from helpers import drive, stop_row
from programs import simple

# Exact instruction indexes depend on the Python and torch versions that generated the code.
EXACT = sys.version_info[:2] == (3, 11) and torch.__version__.startswith("2.13")
exact_only = pytest.mark.skipif(not EXACT, reason="instruction tables recorded on Python 3.11 + torch 2.13")


def start_graph_break(results, calls=((3.0, 2),)):
    return lambda s: s.start_callable(simple.run_graph_break, results, calls)


@exact_only
def test_entry_then_single_steps_table():
    results: list[float] = []
    run = drive(start_graph_break(results), ["s", "s", "s"])
    assert [stop_row(s) for s in run.stops] == [
        ("entry", "graph_break", 1, "LOAD_GLOBAL", ()),
        ("step", "graph_break", 2, "LOAD_GLOBAL", ("NULL", "function")),
        ("step", "graph_break", 3, "LOAD_ATTR", ("NULL", "function", "NULL", "module")),
        ("step", "graph_break", 4, "COPY", ("NULL", "function", "NULL", "function")),
        # detached after the list ran out: the resume function's first entry is the next stop kind... no:
        # detach clears every stop kind, so nothing else stops
    ][: len(run.stops)]
    assert len(run.stops) == 4
    assert results == [19.0]


def test_step_n_lands_where_n_single_steps_land():
    a = drive(start_graph_break([]), ["s", "s", "s", "s", "s"])
    b = drive(start_graph_break([]), ["s 5"])
    assert stop_row(a.stops[-1]) == stop_row(b.stops[-1])
    assert a.stops[-1].frame.index == a.stops[0].frame.index + 5


def test_step_into_resume_function_then_return_value():
    results: list[float] = []
    # `until` the CALL that enters the resume function, step into it, then run to its return
    probe = drive(start_graph_break([]), ["ll"])
    listing = probe.stops[0].frame.code.instructions
    call_idx = max(i.index for i in listing if i.opname.startswith("CALL") and i.index < len(listing) - 1
                   and any(j.opname == "RETURN_VALUE" for j in listing[i.index:]))
    torch._dynamo.reset()
    run = drive(start_graph_break(results), [f"until {call_idx}", "s", "r"], break_on=("entry",))
    kinds = [(s.kind.value, s.frame.code.name) for s in run.stops]
    assert kinds[0] == ("entry", "graph_break")
    assert kinds[1] == ("step", "graph_break") and run.stops[1].frame.index == call_idx
    assert run.stops[2].frame.code.name.startswith("torch_dynamo_resume_in_graph_break")
    assert run.stops[2].kind.value in ("entry", "step")
    # the resume function's frame sits on top of the original's in the backtrace
    assert [f.code.name for f in run.stops[2].frames][0] == "graph_break"
    ret = run.stops[3]
    assert ret.kind.value == "return" and ret.return_value is not None
    assert results == [19.0]


def test_next_steps_over_the_resume_call():
    probe = drive(start_graph_break([]), [])
    listing = probe.stops[0].frame.code.instructions
    call_idx = max(i.index for i in listing if i.opname.startswith("CALL") and any(
        j.opname == "RETURN_VALUE" for j in listing[i.index:]))
    torch._dynamo.reset()
    run = drive(start_graph_break([]), [f"until {call_idx}", "n"], break_on=("entry",))
    last = run.stops[-1]
    assert last.frame.code.name == "graph_break", "n must not stop inside the resume function"
    assert last.frame.index > call_idx
    assert last.frame.stack[-1].type_name == "Tensor"  # the resume function's result is on the stack


def test_breakpoint_with_condition_stops_only_when_true():
    results: list[float] = []
    calls = ((1.0, 2), (3.0, 2), (5.0, 2))  # one cache entry serves all three: breakpoints belong to its code
    run = drive(start_graph_break(results, calls), ["b 9 if x[0] == 5", "c", "c", "p float(x[0])"], break_on=("entry",))
    bp_stops = [s for s in run.stops if s.kind.value == "breakpoint"]
    assert len(bp_stops) == 1
    assert bp_stops[0].frame.index == 9 and 9 in bp_stops[0].frame.breakpoints
    assert run.output_of("p float(x[0])").output == "5.0"
    assert results == [7.0, 19.0, 31.0]


def test_p_reads_the_value_stack_and_locals():
    run = drive(start_graph_break([]), ["s 2", "p len(__stack__)", "p type(__stack__[-1]).__name__", "p n * 2"])
    stop = run.stops[-1]
    assert run.output_of("p len(__stack__)").output == str(len(stop.frame.stack))
    assert run.output_of("p type(__stack__[-1]).__name__").output == repr(stop.frame.stack[-1].type_name)
    assert run.output_of("p n * 2").output == "4"


def test_set_changes_a_local_for_the_rest_of_the_call():
    results: list[float] = []
    # at the resume function's entry, y is the tensor x*n: zero it, the call returns 0 + 1
    run = drive(start_graph_break(results), ["c", "set y = y * 0", "locals"], break_on=("entry",))
    assert run.stops[1].frame.code.name.startswith("torch_dynamo_resume_in")
    assert "y = Tensor[3] float32 cpu" == run.output_of("set y = y * 0").output
    assert results == [1.0]


def test_bad_commands_are_errors_and_change_nothing():
    cmds = ["frobnicate", "s x", "s 0", "b 100000", "b 3 if (", "p 1 +", "until -4", "cl 7", "set 1 = 2", "guards x", "s"]
    run = drive(start_graph_break([]), cmds)
    for c in cmds[:-1]:
        res = run.output_of(c)
        assert res.error and not res.resumed, c
    # the stop is unchanged by the errors: the final `s` moves exactly one instruction on
    assert run.stops[1].frame.index == run.stops[0].frame.index + 1
    assert run.stops[0].frame.breakpoints == ()


def test_handled_exception_rebases_stack_depth():
    results: list = []
    run = drive(lambda s: s.start_callable(simple.run_with_block, results), ["s 1000000"] * 20,
                break_on=("entry", "exception"), check_depth=True)
    assert results == [[3.0, 3.0, 3.0], "caught boom"]
    exc = [s for s in run.stops if s.kind.value == "exception"]
    assert exc and exc[0].exception == "ValueError: boom"
    assert exc[0].frame.code.name == "with_block"
    assert run.session.traced_instructions > 100
    assert run.session.depth_mismatches == []


@exact_only
def test_exception_stop_table():
    # exceptions are seen in traced generated frames (stepping, breakpoints) and post-mortem when uncaught
    run = drive(lambda s: s.start_callable(simple.run_with_block, []), ["c", "s 100000", "stack", "p len(__stack__)"],
                break_on=("entry", "exception"))
    rows = [stop_row(s) for s in run.stops]
    assert rows[:2] == [("entry", "with_block", 1, "LOAD_GLOBAL", ()),
                        ("entry", "torch_dynamo_resume_in_with_block_at_22", 1, "LOAD_GLOBAL", ())]
    assert rows[2][:4] == ("exception", "with_block", 69, "CALL")
    # the call that raised consumed its operands (the resume function and its tensor argument) and pushed no
    # result: only the slots below them are live (the context manager itself sits in a local, not on the stack)
    assert "Tensor" not in rows[2][4] and "function" not in rows[2][4] and rows[2][4]
    assert run.outputs[-1][1].output.strip() == str(len(rows[2][4]))


def test_quit_ends_the_program_and_restores_hooks():
    from dynadbg.core import compat

    results: list[float] = []
    run = drive(start_graph_break(results, ((1.0, 1), (1.0, 1))), ["q"])
    assert run.result.quit
    assert results == []
    assert compat.eval_frame_c.get_bytecode_debugger_callback() is None
    assert sys.gettrace() is None
    # a second session in the same process works
    torch._dynamo.reset()
    again: list[float] = []
    run2 = drive(start_graph_break(again), ["s 3", "stack"])
    assert len(run2.stops) == 2 and again == [19.0]


def test_script_that_raises_reports_traceback_and_status(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("print('before')\nraise RuntimeError('kaput')\n")
    run = drive(lambda s: s.start_script(str(script), []), [])
    assert run.result.status == 1
    assert "RuntimeError: kaput" in run.result.traceback
    assert any("no frame was compiled" in m for m in run.messages)


def test_script_exit_status_is_the_scripts_own(tmp_path):
    script = tmp_path / "exit3.py"
    script.write_text("import sys\nsys.exit(3)\n")
    run = drive(lambda s: s.start_script(str(script), []), [])
    assert run.result.status == 3
