"""What torch's own bytecode debugger does, done by dynadbg: each test mirrors a scenario of torch's
test/dynamo/test_bytecode_debugger.py (markers, exceptions in continue mode, return values, verbose mode,
expressions and user variables, NULL slots, empty-line repeat), plus the faults found driving real programs
(breakpoints in running callers, `r`, set_trace under scripted commands)."""

from __future__ import annotations

import io
import re
import sys

import pytest
import torch

from dynadbg.core.model import StopKind

from helpers import drive_answering as drive_fn
from helpers import scripted as _scripted
from programs import parity


def scripted(*lines):
    return _scripted(lines)


def graph_breaks() -> int:
    from torch._dynamo.utils import counters

    return sum(counters["graph_break"].values())


# ---------------------------------------------------------------------------------------------------------------
# breakpoint markers (upstream: test_breakpoint_marker, test_breakpoint_commands)
# ---------------------------------------------------------------------------------------------------------------


def test_torch_marker_stops_before_the_side_effects_are_replayed():
    torch._dynamo.reset()
    parity.log.clear()
    results: list = []
    before = graph_breaks()

    def answer(run, stop):
        done = [c for c, _r in run.outputs]
        if len(run.stops) == 1:
            if "b" not in done:
                return "b"
            if "p list(log)" not in done:
                return "p list(log)"
            rows = stop.frame.code.instructions
            loads = [i.index for i in rows if i.opname == "LOAD_GLOBAL" and i.argrepr == "log"]
            store = next(i.index for i in rows if i.index > loads[0] and i.opname == "STORE_SUBSCR")
            return f"until {store + 1}"
        if len(run.stops) == 2 and done[-1].startswith("until"):
            return "p list(log)"
        return None

    run = drive_fn(lambda s: s.start_callable(parity.run, parity.with_torch_marker, torch.ones(2),
                                               results=results), answer, break_on=())
    assert run.result is not None and run.result.status == 0
    first = run.stops[0]
    assert first.kind is StopKind.BREAKPOINT and "marker" in first.message
    assert first.frame.code.name == "with_torch_marker"  # the function's own code: no resume function
    assert "(marker: set_trace() / bytecode_debugger.breakpoint())" in run.output_of("b").output
    assert run.outputs[1][1].output == "[]"  # at the marker the list append has not been replayed
    assert run.outputs[-1][1].output == "['traced']"  # ... and after the generated code's STORE_SUBSCR it has
    assert [t.tolist() for t in results] == [[pytest.approx(1.5403, abs=1e-4)] * 2]
    assert graph_breaks() == before


def test_cleared_marker_no_longer_stops():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.with_dynadbg_marker, torch.ones(2), calls=3),
                   lambda run, stop: f"cl {stop.frame.index}" if not run.outputs else
                   ("b" if len(run.outputs) == 1 else ("c" if len(run.outputs) == 2 else None)), break_on=())
    assert run.result is not None and run.result.status == 0
    assert len(run.stops) == 1
    assert "cleared breakpoint 1" in run.outputs[0][1].output
    assert run.output_of("b").output == "no breakpoints"


def test_dynadbg_set_trace_in_compiled_code_is_a_marker_not_a_graph_break():
    torch._dynamo.reset()
    results: list = []
    before = graph_breaks()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.with_dynadbg_marker, torch.ones(2),
                                               results=results), scripted("bt", "c"), break_on=("exception",))
    assert run.result is not None and run.result.status == 0
    assert len(run.stops) == 1 and run.stops[0].kind is StopKind.BREAKPOINT
    assert run.stops[0].message.startswith("dynadbg.set_trace()")
    assert run.output_of("bt").output.count("#") == 1  # one generated frame: the function itself
    assert graph_breaks() == before
    assert results[0].tolist() == [2.0, 2.0]


def test_bare_set_trace_starts_a_session_at_the_marker(monkeypatch):
    torch._dynamo.reset()
    from dynadbg import api

    out = io.StringIO()
    monkeypatch.setattr(api, "make_driver", lambda: api.LineDriver(["locals", "c"], io.StringIO(), out))
    try:
        (result,) = parity.run(parity.with_dynadbg_marker, torch.ones(2))
        parity.run(parity.inner, torch.ones(2))  # a new generated code object after `c`: no entry stop
    finally:
        for s in list(api._active.values()):
            s.release()
        api._active.clear()
    text = out.getvalue()
    assert result.tolist() == [2.0, 2.0]
    assert text.count("--- ") == 1, text
    assert "--- dynadbg.set_trace() / bytecode_debugger.breakpoint() marker" in text
    assert "x  Tensor[2] float32 cpu" in text


# ---------------------------------------------------------------------------------------------------------------
# exceptions in continue mode (upstream: test_exception_in_bytecode)
# ---------------------------------------------------------------------------------------------------------------


def test_exception_stops_at_the_faulting_instruction_while_continuing():
    torch._dynamo.reset()
    results: list = []
    run = drive_fn(lambda s: s.start_callable(parity.run_catching, results),
                   scripted("locals", "1 + 1", "p y", "stack", "c"), break_on=("exception",))
    assert run.result is not None and run.result.status == 0
    assert len(run.stops) == 1
    stop = run.stops[0]
    assert stop.kind is StopKind.EXCEPTION
    assert "ZeroDivisionError" in stop.message and "31415 / 0" in (stop.exception or "")
    # the faulting instruction: the call of explode in the generated code
    assert stop.frame.code.name == "raises_inside"
    assert stop.frame.code.instructions[stop.frame.index].opname in ("CALL", "PRECALL")
    assert "x" in run.output_of("locals").output
    assert run.output_of("1 + 1").output == "2"
    if sys.version_info >= (3, 12):
        # sys.monitoring's RAISE event stops in the live frame: the slots below the call that raised are there
        assert "post-mortem" not in stop.message and "value stack: " in run.output_of("stack").output
        assert stop.frame.stack and not any(v.unknown for v in stop.frame.stack)
    else:
        # 3.11 sees it as it leaves the compiled call (its return was reported already in this run, so the
        # frame was not traced): not "empty": the stack is gone, not empty
        assert "post-mortem" in run.output_of("stack").output
    # the stop came before the program's own `except`, and the program went on unchanged
    assert results == [[4.0, 4.0], "caught 31415 / 0", [4.0, 4.0]]
    assert run.session.traced_instructions == 0  # nothing was traced to get there


# ---------------------------------------------------------------------------------------------------------------
# return values (upstream: test_return_value_printed, test_stack_at_return_value, test_graph_break)
# ---------------------------------------------------------------------------------------------------------------


def test_return_stop_shows_the_value_on_the_stack_and_returned_lines():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.tensor([1.0, 2.0])),
                   scripted("r", "stack", "p __stack__", "c"))
    assert run.stops[1].kind is StopKind.RETURN
    stack = run.output_of("stack").output
    assert "value stack: 1 slot" in stack and "Tensor[2] float32 cpu" in stack
    assert run.output_of("p __stack__").output == "[tensor([-2., -1.])]"
    assert [m for m in run.messages if "returned" in m] == ["inner returned: tensor([-2., -1.])"]


# ---------------------------------------------------------------------------------------------------------------
# verbose, expressions, user variables, NULL slots, globals, listings
# ---------------------------------------------------------------------------------------------------------------


def test_verbose_prints_each_instruction_before_it_runs(capsys):
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2)), scripted("s 2", "v", "c"))
    assert run.output_of("v").output.startswith("verbose mode on")
    printed = re.findall(r"^running inner \[(\d+)\] (\w+)", capsys.readouterr().out, re.MULTILINE)
    names = [i.opname for i in run.stops[0].frame.code.instructions]
    assert printed, "nothing printed"
    first = int(printed[0][0])
    assert first == run.stops[1].frame.index  # from where it was switched on ...
    # ... each instruction as it runs (its printed index names that very instruction), on to the return; the
    # generated code may jump (torch 2.15's does here), so the run is not always the listing's tail
    assert all(names[int(i)] == op for i, op in printed)
    assert len(printed) >= 3 and printed[-1][1].startswith("RETURN")
    indexes = [int(i) for i, _op in printed]
    assert indexes == sorted(indexes) or any(names[a].startswith(("JUMP", "POP_JUMP", "FOR_ITER"))
                                             for a in indexes)


def test_expressions_statements_and_user_variables():
    torch._dynamo.reset()
    results: list = []
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), results=results),
                   scripted("2 + 2", "a.shape", "!tmp = 42", "s", "tmp * 2", "p tmp", "other = tmp + 1", "p other",
                            "!a = a * 0 + 999", "locals a", "a += 1", "c"))
    assert run.output_of("2 + 2").output == "4"
    assert run.output_of("a.shape").output == "torch.Size([2])"
    assert run.output_of("tmp * 2").output == "84"  # still defined at the next stop
    assert run.output_of("p tmp").output == "42"
    assert run.output_of("p other").output == "43"  # a bare statement, as in pdb
    assert run.output_of("locals a").output == "a = tensor([999., 999.])"  # the values, not a summary
    # `!a = ...` changed the local for the rest of the call, and `a += 1` mutated it in place
    assert results[0].tolist() == [997.0, 997.0]


def test_null_slot_is_not_none_and_globals_list_dynamo_names():
    torch._dynamo.reset()

    def answer(run, stop):
        done = [c for c, _r in run.outputs]
        ins = stop.frame.code.instructions[stop.frame.index]
        if ins.opname not in ("PRECALL", "CALL"):
            return "s"
        for cmd in ("p __stack__", "p any(v is None for v in __stack__)", "stack", "globals compiled_fn"):
            if cmd not in done:
                return cmd
        return None

    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2)), answer)
    assert "<NULL>" in run.output_of("p __stack__").output
    assert run.output_of("p any(v is None for v in __stack__)").output == "False"
    assert "NULL" in run.output_of("stack").output
    assert re.search(r"__compiled_fn_\w+ +function", run.output_of("globals compiled_fn").output)


def test_list_ranges_continue_and_dot():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.two_stage, torch.ones(2)),
                   scripted("l 0, 3", "l", "l", "l .", "l 2", "l 99999", "c"), break_on=("entry",))
    outs = [r for c, r in run.outputs if c.startswith("l")]
    idx = [[int(m) for m in re.findall(r"^..\S*\s+(\d+) ", o.output, re.MULTILINE)] for o in outs[:5]]
    assert idx[0] == [0, 1, 2, 3]
    assert idx[1] == list(range(4, 15))[: len(idx[1])] and idx[1][0] == 4  # continues after the last listing
    assert idx[2][0] == idx[1][-1] + 1
    current = run.stops[0].frame.index
    assert current in idx[3] and "▶" in outs[3].output
    assert idx[4][0] == 2 and len(idx[4]) == 11
    assert outs[5].error


def test_empty_line_repeats_the_last_command_in_line_mode():
    torch._dynamo.reset()
    from dynadbg.plain import run_plain

    out = io.StringIO()
    result = run_plain(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2)), break_on=("entry",),
                       stdin=io.StringIO("s\n\n\nc\n"), out=out)
    assert result.status == 0
    assert out.getvalue().count("--- step") == 3


# ---------------------------------------------------------------------------------------------------------------
# faults 10-12
# ---------------------------------------------------------------------------------------------------------------


def _return_index(stop) -> int:
    code = stop.frames[0].code
    return max(i.index for i in code.instructions if i.opname in ("RETURN_VALUE", "RETURN_CONST"))


def test_breakpoint_in_a_running_caller_fires():
    torch._dynamo.reset()
    results: list = []

    def answer(run, stop):
        done = [c for c, _r in run.outputs]
        if len(run.stops) == 1:
            return "c"
        if len(run.stops) == 2 and "u" not in done:
            return "u"
        if len(run.stops) == 2 and not any(c.startswith("b ") for c in done):
            return f"b {_return_index(stop)}"
        return "c" if len(run.stops) == 2 else None

    run = drive_fn(lambda s: s.start_callable(parity.run, parity.two_stage, torch.ones(2), results=results), answer)
    assert run.stops[1].frame.code.name.startswith("torch_dynamo_resume_in_two_stage")
    hit = run.stops[2]
    assert hit.kind is StopKind.BREAKPOINT and hit.frame.code.name == "two_stage"
    assert hit.frame.index == _return_index(run.stops[1])
    assert results[0].tolist() == [3.0, 3.0]


def test_return_runs_to_this_frames_return_then_to_the_callers():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.two_stage, torch.ones(2), calls=2),
                   scripted("r", "c", "r", "r", "c"), break_on=("entry", "graph-break"))
    kinds = [(s.kind, "resume" if s.frame.code.name.startswith("torch_dynamo_resume_in_two_stage") else
              s.frame.code.name) for s in run.stops]
    assert kinds == [
        # call 1: entry, then `r` goes straight to two_stage's return (no stop at the first-time resume entry)
        (StopKind.ENTRY, "two_stage"),
        (StopKind.RETURN, "two_stage"),
        # call 2: `c` to the graph-break stop in the resume function, `r` to its return, `r` again: the caller's
        (StopKind.GRAPH_BREAK, "resume"),
        (StopKind.RETURN, "resume"),
        (StopKind.RETURN, "two_stage"),
    ]


def test_set_trace_under_scripted_commands_keeps_them_and_sees_the_new_values():
    torch._dynamo.reset()
    from dynadbg.plain import run_plain

    out = io.StringIO()
    result = run_plain(lambda s: s.start_callable(parity.run, parity.with_eager_set_trace, torch.ones(2)),
                       break_on=("exception",), commands=["bt", "p y", "entries", "c"], out=out)
    text = out.getvalue()
    assert result.status == 0, text
    assert "--- dynadbg.set_trace(): in the resume function" in text
    assert "(dynadbg) p y" in text and "tensor([5., 5.])" in text  # the value computed before the call
    bt = text.split("(dynadbg) bt", 1)[1].split("(dynadbg)", 1)[0]
    assert "#0 with_eager_set_trace" in bt and "#1 torch_dynamo_resume_in_with_eager_set_trace" in bt
    assert "no compiled code object here" not in text
    assert text.count("--- ") == 1


if sys.version_info >= (3, 12):  # pragma: no cover - the CPU machine runs 3.11
    pytestmark = pytest.mark.filterwarnings("ignore")


def test_set_trace_session_knows_the_compiles_made_before_it(monkeypatch):
    torch._dynamo.reset()
    from dynadbg import api

    out = io.StringIO()
    monkeypatch.setattr(api, "make_driver",
                        lambda: api.LineDriver(["compiles", "entries", "bt", "c"], io.StringIO(), out))
    try:
        parity.run(parity.inner, torch.ones(2))  # compiled before any session exists
        (result,) = parity.run(parity.with_eager_set_trace, torch.ones(2))
    finally:
        for s in list(api._active.values()):
            s.release()
        api._active.clear()
    text = out.getvalue()
    assert result.tolist() == [7.0, 7.0]
    compiles = text.split("(dynadbg) compiles", 1)[1].split("(dynadbg)", 1)[0]
    assert "inner" in compiles and "with_eager_set_trace" in compiles
    entries = text.split("(dynadbg) entries", 1)[1].split("(dynadbg)", 1)[0]
    assert "1 cache entry" in entries and "no compiled code object here" not in entries
    bt = text.split("(dynadbg) bt", 1)[1].split("(dynadbg)", 1)[0]
    assert "#0 with_eager_set_trace" in bt and "#1 torch_dynamo_resume_in_with_eager_set_trace" in bt
    assert text.count("--- ") == 1


def test_exception_being_handled_around_a_call_is_not_that_calls():
    torch._dynamo.reset()
    results: list = []
    run = drive_fn(lambda s: s.start_callable(parity.run_inside_handler, results, s), scripted("c"),
                   break_on=("exception",))
    assert results == [[4.0, 4.0]]
    assert run.stops == []


def test_builtin_breakpoint_is_a_marker_while_a_session_runs(monkeypatch):
    monkeypatch.setenv("PYTHONBREAKPOINT", "0")  # were it a graph break, the eager call would do nothing
    torch._dynamo.reset()
    results: list = []
    before = graph_breaks()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.with_builtin_breakpoint, torch.ones(2),
                                               results=results), scripted("c"), break_on=())
    assert [s.kind for s in run.stops] == [StopKind.BREAKPOINT]
    assert run.stops[0].frame.code.name == "with_builtin_breakpoint"
    assert graph_breaks() == before and results[0].tolist() == [10.0, 10.0]
    # after the session, breakpoint() in a newly compiled function is Dynamo's graph break again
    torch._dynamo.reset()
    parity.run(parity.with_builtin_breakpoint, torch.ones(2))
    assert graph_breaks() == before + 1


def test_marker_code_does_not_outlive_a_debug_region(monkeypatch, capsys):
    torch._dynamo.reset()
    import dynadbg
    from dynadbg import api

    after = io.StringIO()
    monkeypatch.setattr(api, "make_driver", lambda: api.LineDriver(["c"], io.StringIO(), after))
    cf = torch.compile(parity.with_dynadbg_marker, backend="eager")
    try:
        with dynadbg.debug(commands=["c"], break_on=(), out=io.StringIO()):
            cf(torch.ones(2))
        # after the region no debugger callback is set: torch would hand the marker to its own line debugger
        # (reading stdin); the marker code was dropped, so this call recompiles and set_trace() starts a
        # dynadbg session again
        assert cf(torch.ones(2)).tolist() == [2.0, 2.0]
    finally:
        for s in list(api._active.values()):
            s.release()
        api._active.clear()
    assert "(bdb)" not in capsys.readouterr().out
    assert "--- dynadbg.set_trace()" in after.getvalue()


def test_continue_after_a_stop_reports_what_the_call_returned():
    # upstream: test_debug_context_manager_basic / test_multiple_calls ("returned:" after `c`)
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.tensor([1.0, 2.0]), calls=2),
                   scripted("c"), break_on=("entry",))
    assert len(run.stops) == 1
    assert [m for m in run.messages if "returned" in m] == ["inner returned: tensor([-2., -1.])"]  # once: the
    # second call did not stop, so it reports nothing
