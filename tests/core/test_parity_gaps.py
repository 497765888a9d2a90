"""The last gaps against torch's own bytecode debugger, one scenario per kind its upstream suite checks: a live
exception stop in continue mode, pdb's empty-line rule, a return line for every generated frame, the marker's
place relative to the graph call, a stop at the next call of a code object stepped in, what a bare assignment
does, and the `debug()` context's queries and nesting. Written for dynadbg's engine, in its own terms."""

from __future__ import annotations

import dis
import io
import re
import sys

import pytest
import torch

from dynadbg.core.model import ReturnedView, StopKind

from helpers import drive_answering as drive_fn
from helpers import scripted as _scripted
from programs import parity


def scripted(*lines):
    return _scripted(lines)


def returned(run) -> list[str]:
    return [m for m in run.messages if " returned: " in m]


def _last_return(stop) -> int:
    return max(i.index for i in stop.frame.code.instructions if i.opname in ("RETURN_VALUE", "RETURN_CONST"))


# ---------------------------------------------------------------------------------------------------------------
# 1. an exception raised by generated code, reached with `c`: the frame is live at the raising instruction
# ---------------------------------------------------------------------------------------------------------------

DIVIDE = "LOAD_CONST 31415; LOAD_CONST 0; BINARY_OP 11; POP_TOP"


def _divide_by_zero_before_return(run, stop):
    """At the compile stop: make the generated code divide 31415 by 0 just before it returns; then continue."""
    done = [c for c, _r in run.outputs]
    if stop.kind is StopKind.COMPILE and not any(c.startswith("insert") for c in done):
        return f"insert {_last_return(stop)} {DIVIDE}"
    if stop.kind is StopKind.EXCEPTION:
        for cmd in ("stack", "locals", "1 + 1", "p __stack__"):
            if cmd not in done:
                return cmd
    return "c"


def test_exception_in_generated_bytecode_stops_live_at_the_raising_instruction():
    torch._dynamo.reset()
    results: list = []

    def program():
        cf = torch.compile(parity.scale, backend="eager")
        try:
            cf(torch.ones(2))
        except ZeroDivisionError as exc:
            results.append(f"caught {exc}")

    run = drive_fn(lambda s: s.start_callable(program), _divide_by_zero_before_return,
                   break_on=("compile", "exception"))
    assert run.result is not None and run.result.status == 0
    assert results == ["caught division by zero"]  # the program's own except ran after the stop
    stop = next(s for s in run.stops if s.kind is StopKind.EXCEPTION)
    ins = stop.frame.code.instructions[stop.frame.index]
    assert ins.opname == "BINARY_OP" and stop.exception == "ZeroDivisionError: division by zero"
    assert "post-mortem" not in stop.message
    # the live stack: the two operands are consumed; below them the value the code was about to return
    assert [v.type_name for v in stop.frame.stack] == ["Tensor"] and stop.frame.stack[0].shape == (2,)
    assert run.output_of("p __stack__").output == "[tensor([3., 3.])]"
    # what torch's debugger shows as its top slots: the operands, named from the code's flow (their slots were
    # released when the division failed, so they are not read)
    consumed = run.output_of("stack").output.split("popped by the raising instruction", 1)[1]
    assert re.search(r"\[1\] 31415  <- pushed by \d+ LOAD_CONST 31415", consumed)
    assert re.search(r"\[2\] 0  <- pushed by \d+ LOAD_CONST 0", consumed)
    assert "x" in run.output_of("locals").output and run.output_of("1 + 1").output == "2"
    assert run.session.traced_instructions == 0  # nothing was stepped to get there


def test_live_exception_stop_costs_no_tracing_on_calls_that_do_not_raise():
    # the same code called 20 times without raising, then once raising, all after `c`
    torch._dynamo.reset()
    caught: list = []

    def program():
        cf = torch.compile(parity.raises_inside, backend="eager")
        for _ in range(20):
            cf(torch.ones(2), False)
        try:
            cf(torch.ones(2), True)
        except ZeroDivisionError:
            caught.append(True)

    run = drive_fn(lambda s: s.start_callable(program), scripted("c", "bt", "c"), break_on=("entry", "exception"))
    assert caught == [True]
    assert [s.kind for s in run.stops] == [StopKind.ENTRY, StopKind.ENTRY, StopKind.EXCEPTION]
    exc = run.stops[-1]
    assert exc.frame.code.name == "raises_inside" and exc.frame.code.instructions[exc.frame.index].opname in (
        "CALL", "PRECALL")
    if sys.version_info >= (3, 12):
        # RAISE reaches the untraced frame while it is live: the slots below the failed call are readable
        assert exc.frame.stack and not any(v.unknown for v in exc.frame.stack)
    assert run.session.traced_instructions < 200  # the two entry stops' own instructions, not 21 calls' worth


# ---------------------------------------------------------------------------------------------------------------
# 2. an empty line repeats the last command; at the first prompt, the step
# ---------------------------------------------------------------------------------------------------------------


def test_empty_entries_of_a_command_list_repeat_and_the_first_one_steps():
    torch._dynamo.reset()
    from dynadbg.plain import run_plain

    out = io.StringIO()
    result = run_plain(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2)), break_on=("entry",),
                       commands=["", "", "v", "", "c"], out=out)
    text = out.getvalue()
    assert result.status == 0, text
    assert text.count("--- step") == 2  # the first empty entry steps, the second repeats that step
    assert "verbose mode on" in text and "verbose mode off" in text  # `v`, then the empty entry toggles it back


def test_first_empty_line_at_an_interactive_prompt_steps():
    torch._dynamo.reset()
    from dynadbg.plain import run_plain

    out = io.StringIO()
    run_plain(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2)), break_on=("entry",),
              stdin=io.StringIO("\n\nc\n"), out=out)
    assert out.getvalue().count("--- step") == 2


def test_c_string_and_commands_file_keep_empty_entries(tmp_path):
    from dynadbg.cli import build_parser, split_commands, _commands_from

    assert split_commands("s; ; v; ; c") == ["s", "", "v", "", "c"]
    assert split_commands("s; c;") == ["s", "c"]  # a `;` at the very end only ends the list
    assert split_commands("insert 9 POP_TOP; LOAD_CONST 7; ; c") == ["insert 9 POP_TOP; LOAD_CONST 7", "", "c"]
    f = tmp_path / "cmds"
    f.write_text("s\n\n# a comment\nstack\n\nc\n")
    args = build_parser().parse_args(["run", "--commands", str(f), "x.py"])
    assert _commands_from(args) == ["s", "", "stack", "", "c"]


def test_debug_region_commands_repeat_too():
    torch._dynamo.reset()
    import dynadbg

    out = io.StringIO()
    cf = torch.compile(parity.inner, backend="eager")
    with dynadbg.debug(commands=["", "", "c"], out=out):
        cf(torch.ones(2))
    assert out.getvalue().count("--- step") == 2


# ---------------------------------------------------------------------------------------------------------------
# 3. a return line for every generated frame, resume functions included, bounded per run
# ---------------------------------------------------------------------------------------------------------------


def test_every_generated_frame_that_returns_after_c_gets_its_line():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.two_stage, torch.ones(2)), scripted("c", "c"),
                   break_on=("entry",))
    assert [s.frame.code.name.startswith("torch_dynamo_resume_in_two_stage") for s in run.stops] == [False, True]
    lines = returned(run)
    assert len(lines) == 2, lines
    assert re.fullmatch(r"torch_dynamo_resume_in_two_stage_at_\d+ returned: tensor\(\[3\., 3\.\]\)", lines[0])
    assert lines[1] == "two_stage returned: tensor([3., 3.])"  # the compiled frame after the resume function


def test_a_call_that_never_stopped_reports_its_return_once_per_code_object():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), calls=5), scripted(),
                   break_on=("exception",))
    assert run.stops == []
    assert returned(run) == ["inner returned: tensor([-2., -2.])"]  # 5 calls in one run: one line


def test_return_lines_past_the_count_are_summarised():
    torch._dynamo.reset()
    from dynadbg.core.session import RETURN_LINES_PER_RUN

    fns = parity.make_many(RETURN_LINES_PER_RUN + 3)
    run = drive_fn(lambda s: s.start_callable(parity.run_each, fns, torch.ones(1)), scripted(),
                   break_on=("exception",))
    assert len(returned(run)) == RETURN_LINES_PER_RUN
    assert "3 more generated code objects returned since the last stop" in " ".join(run.messages)


def test_a_front_end_gets_returns_as_data():
    torch._dynamo.reset()
    from helpers import QueueListener

    from dynadbg.core.session import Session

    class Listener(QueueListener):
        def __init__(self):
            super().__init__()
            self.returns = []

        def on_returned(self, item):
            self.returns.append(item)

    listener = Listener()
    session = Session(listener, break_on=())
    session.start_callable(parity.run, parity.two_stage, torch.ones(2))
    assert session.wait(120) is not None
    names = [r.code_name for r in listener.returns]
    assert all(isinstance(r, ReturnedView) for r in listener.returns)
    assert names[-1] == "two_stage" and names[0].startswith("torch_dynamo_resume_in_two_stage")
    assert listener.returns[0].is_resume and not listener.returns[-1].is_resume
    assert listener.returns[-1].value.shape == (2,) and not any(" returned" in m for m in listener.messages)


# ---------------------------------------------------------------------------------------------------------------
# 4. a marker's message says whether the graph has run, from where its call lies
# ---------------------------------------------------------------------------------------------------------------


def test_marker_before_the_graph_call_says_the_graph_has_not_run():
    # Dynamo emits the marker in the code that comes before the graph call
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.with_torch_marker, torch.ones(2)), scripted("c"),
                   break_on=())
    stop = run.stops[0]
    assert stop.kind is StopKind.BREAKPOINT and stop.marker is not None
    assert stop.marker.graph_calls and stop.marker.index < stop.marker.graph_calls[0]
    assert stop.marker.graph_ran is False
    assert f"not run yet (called at index {stop.marker.graph_calls[0]})" in stop.message
    code = stop.frame.code.instructions
    assert code[stop.marker.index].opname == "LOAD_CONST" and code[stop.marker.index].argrepr == "<BREAKPOINT>"


def _marker_after_the_graph_call(event):
    """A compile hook: put a breakpoint marker right after the generated code's call of its graph (where a
    Dynamo developer's codegen would emit one before the side effects are replayed)."""
    import bytecode

    from torch._dynamo.bytecode_debugger import BREAKPOINT_MARKER

    from dynadbg.core.roles import code_roles

    (graph_call,) = code_roles(event.code).graph_calls
    bc = bytecode.Bytecode.from_code(event.code)
    rows = [i for i in bc if isinstance(i, bytecode.Instr)]  # a small code: no EXTENDED_ARG, rows = listing rows
    assert rows[graph_call.call_index].name == "CALL"
    at = next(k for k, i in enumerate(bc) if i is rows[graph_call.call_index]) + 1  # by identity: CALLs compare equal
    bc[at:at] = [bytecode.Instr("LOAD_CONST", BREAKPOINT_MARKER), bytecode.Instr("POP_TOP")]
    event.code = bc.to_code()


def test_marker_after_the_graph_call_says_the_graph_has_run():
    torch._dynamo.reset()
    results: list = []

    def start(session):
        session.compile_hooks.append(_marker_after_the_graph_call)
        session.start_callable(parity.run, parity.scale, torch.ones(2), results=results)

    run = drive_fn(start, scripted("p __stack__", "c"), break_on=())
    stop = run.stops[0]
    assert stop.kind is StopKind.BREAKPOINT and stop.marker is not None
    assert stop.marker.graph_ran is True and stop.marker.graph_calls[-1] < stop.marker.index
    assert f"the graph of this code has run (called at index {stop.marker.graph_calls[-1]})" in stop.message
    assert "tensor([3., 3.])" in run.output_of("p __stack__").output  # its output is on the stack already
    assert results[0].tolist() == [3.0, 3.0]


# ---------------------------------------------------------------------------------------------------------------
# 5. the next call of a code object the user stepped in stops at its entry
# ---------------------------------------------------------------------------------------------------------------


def test_next_call_of_a_code_stepped_in_stops_at_entry_even_after_c():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), calls=3),
                   scripted("s", "s", "c", "locals", "c"), break_on=("entry", "reentry"))
    kinds = [(s.kind, s.reentry) for s in run.stops]
    # call 1: entry, two steps, `c`; call 2: an entry stop again (the user stepped in call 1); call 3: none
    assert kinds == [(StopKind.ENTRY, False), (StopKind.STEP, False), (StopKind.STEP, False),
                     (StopKind.ENTRY, True)]
    assert "again" in run.stops[-1].message and run.stops[-1].frame.index == run.stops[0].frame.index
    assert "a  Tensor[2] float32 cpu" in run.output_of("locals").output  # the scripted command is used


def test_reentry_is_off_when_not_asked_and_without_stepping():
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), calls=3),
                   scripted("s", "c", "c"), break_on=("entry",))
    assert len(run.stops) == 2  # no `reentry` kind: call 2 runs on
    torch._dynamo.reset()
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), calls=3),
                   scripted("c", "c"), break_on=("entry", "reentry"))
    assert len(run.stops) == 1  # nothing was stepped in call 1


# ---------------------------------------------------------------------------------------------------------------
# 6. a bare assignment changes the frame's local (pdb's semantics), and says so the first time
# ---------------------------------------------------------------------------------------------------------------


def test_bare_assignment_writes_the_local_and_says_so_once():
    torch._dynamo.reset()
    results: list = []
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.ones(2), results=results),
                   scripted("p a", "tmp = 1", "a = a * 0 + 10", "a = a + 1", "c"), break_on=("entry",))
    assert "note:" not in run.output_of("p a").output and "note:" not in run.output_of("tmp = 1").output
    first = run.output_of("a = a * 0 + 10").output
    assert first.startswith("note: this changed a in the running frame of inner")
    assert "pdb does the same" in first and "torch's bytecode debugger" in first
    assert "note:" not in run.output_of("a = a + 1").output  # once per session
    assert results[0].tolist() == [8.0, 8.0]  # inner returns a - 3 with a = 11: the program saw the change


def test_torch_style_exploration_with_p_and_user_names_leaves_the_program_alone():
    torch._dynamo.reset()
    results: list = []
    run = drive_fn(lambda s: s.start_callable(parity.run, parity.inner, torch.tensor([1.0, 2.0]), results=results),
                   scripted("tmp = 42", "tmp * 2", "p a * 100", "c"), break_on=("entry",))
    assert run.output_of("tmp * 2").output == "84"
    assert results[0].tolist() == [-2.0, -1.0]


# ---------------------------------------------------------------------------------------------------------------
# 7. the debug() context: get_instructions() / get_tracked_codes(), and a nested region of its own
# ---------------------------------------------------------------------------------------------------------------


def test_debug_context_lists_tracked_codes_and_their_instructions():
    torch._dynamo.reset()
    import dynadbg

    out = io.StringIO()
    cf = torch.compile(parity.two_stage, backend="eager")
    with dynadbg.debug(commands=["c", "c"], out=out) as ctx:
        assert ctx.get_instructions() == [] and ctx.get_tracked_codes() == []
        cf(torch.ones(2))
    codes = ctx.get_tracked_codes()
    assert [c.co_name.startswith("torch_dynamo_resume_in_two_stage") for c in codes] == [False, True]
    assert codes[0].co_name == "two_stage"
    latest = ctx.get_instructions()
    assert [i.opname for i in latest] == [i.opname for i in dis.get_instructions(codes[-1])]
    assert [i.offset for i in ctx.get_instructions(codes[0])] == [i.offset for i in dis.get_instructions(codes[0])]
    assert ctx.get_instructions(parity.two_stage.__code__) == []  # the user's own code is not tracked
    assert ctx.compiled_frames()  # the session's own API is still there


def test_stepping_to_the_return_takes_one_step_per_instruction():
    torch._dynamo.reset()
    import dynadbg

    out = io.StringIO()
    cf = torch.compile(parity.inner, backend="eager")
    with dynadbg.debug(commands=["s"] * 400, out=out) as ctx:
        cf(torch.ones(2))
    text = out.getvalue()
    before_return = text[: text.index(" returned: ")]
    steps = before_return.count("--- step")
    n = len(ctx.get_instructions())
    assert steps + 1 <= n + 1, (steps, n)  # the entry stop and one stop per instruction run, at most all of them
    # one instruction per step: the next stop is the next instruction, unless the one stepped over jumps (torch
    # 2.15's generated code branches around its bytecode hooks, so not every instruction runs)
    stepped = [(int(i), op) for i, op in re.findall(r"\[step\]  inner  index (\d+) \(offset \d+\) (\w+)", before_return)]
    assert len(stepped) == steps and steps >= n // 2, (steps, n)
    for (a, op), (b, _) in zip(stepped, stepped[1:]):
        assert b == a + 1 or "JUMP" in op or op in ("FOR_ITER", "SEND"), (a, op, b)


def test_nested_debug_region_gets_its_own_session_and_the_outer_one_comes_back():
    torch._dynamo.reset()
    import dynadbg

    outer_out, inner_out = io.StringIO(), io.StringIO()
    cf = torch.compile(parity.inner, backend="eager")
    cg = torch.compile(parity.two_stage, backend="eager")
    ch = torch.compile(parity.scale, backend="eager")
    with dynadbg.debug(commands=["c", "c"], out=outer_out) as outer:
        first = cf(torch.ones(2))
        with dynadbg.debug(commands=["bt", "c", "c"], out=inner_out) as inner:
            assert inner.session is not outer.session
            second = cg(torch.ones(2))
        third = ch(torch.ones(2))  # a new code object: the outer session stops at its entry again
    assert first.tolist() == [-2.0, -2.0] and second.tolist() == [3.0, 3.0] and third.tolist() == [3.0, 3.0]
    outer_text, inner_text = outer_out.getvalue(), inner_out.getvalue()
    assert "[entry]  inner" in outer_text and "[entry]  scale" in outer_text
    assert "two_stage" not in outer_text
    assert "[entry]  two_stage" in inner_text and "(dynadbg) bt" in inner_text
    assert [c.co_name for c in outer.get_tracked_codes()] == ["inner", "scale"]
    assert inner.get_tracked_codes()[0].co_name == "two_stage"


if sys.version_info >= (3, 12):  # pragma: no cover - the CPU machine runs 3.11
    pytestmark = pytest.mark.filterwarnings("ignore")
