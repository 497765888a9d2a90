"""The teaching views through the engine API and the command language, on a real session: `ll` with its role
column and region headers, `explain` at the graph call and at the graph break, `stack` naming who pushed each
slot, guard-type lines under `guards`.

Program: `programs/teach.py` ``breaks_on_item`` (``y = x * w`` in a graph, ``int(y.sum())`` run eagerly, the
rest in a resume function).
"""

from __future__ import annotations

import re

import torch

from dynadbg.core.format.teach import ROLE_TAGS
from dynadbg.core.model import CodeRoles, EngineError, Explanation, Provenance, Role
from programs import teach
from test_parity import drive_fn

#: where the role column starts in a listing line (marker, breakpoint, jump target, index, offset, line)
TAG_COL = 1 + 1 + 2 + 5 + 1 + 6 + 2 + 6
INSTR = re.compile(r"^..(?:>>|  )\s*(\d+)\s+(\d+)  ")


def _walk() -> tuple[dict, dict]:
    """Stop at entry, list and look around; run `until` the graph call, then `until` the graph break."""
    torch._dynamo.reset()
    seen: dict = {}
    plan: list = []

    def answer(run, stop):
        s = run.session
        if not seen:
            cr = s.roles()
            seen["roles"] = cr
            seen["code"] = stop.frame.code
            g = cr.graph_calls[0]
            brk = next(r.index for r in cr.roles if r.role == Role.GRAPH_BREAK
                       and stop.frame.code.instructions[r.index].opname == "CALL")
            seen["call"], seen["break"] = g.call_index, brk
            plan.extend([("ll", "ll"), ("l", "l 0, 3"), ("guards", "guards"), ("explain 0", "explain 0"),
                         ("explain bad", "explain 99999"), (None, f"until {g.call_index}"),
                         ("explain call", "explain"), ("stack call", "stack"), ("api call", None),
                         (None, f"until {brk}"), ("stack break", "stack"), ("explain break", "explain")])
        while plan:
            key, line = plan.pop(0)
            if key == "api call":
                seen["api explain"] = s.explain()
                seen["api provenance"] = s.stack_provenance()
                seen["stop at call"] = stop
                continue
            if key is not None:
                seen.setdefault("at", {})[key] = len(run.outputs)  # where its result will be appended
            return line
        return None

    results: list = []
    run = drive_fn(lambda s: s.start_callable(teach.run_breaks_on_item, results), answer)
    assert run.result is not None and run.result.exception is None, run.result
    assert results == [[8.0, 8.0, 8.0]]  # y = 2 each, n = int(6): y + n, the program ran unchanged
    outs = {key: run.outputs[at][1] for key, at in seen["at"].items()}
    return seen, outs


_CACHE: list = []


def walked() -> tuple[dict, dict]:
    if not _CACHE:
        _CACHE.append(_walk())
    return _CACHE[0]


def test_ll_gives_every_instruction_a_role_none_unknown_with_region_headers():
    seen, outs = walked()
    text = outs["ll"].output
    rows = [line for line in text.splitlines() if INSTR.match(line)]
    assert len(rows) == len(seen["code"].instructions)
    tags = [row[TAG_COL:TAG_COL + 8].strip() for row in rows]
    assert set(tags) <= set(ROLE_TAGS.values()) - {"?"}, tags
    # the tags are the engine's roles, in order
    cr: CodeRoles = seen["roles"]
    assert tags == [ROLE_TAGS[r.role] for r in cr.roles]
    assert tags[seen["call"]] == "g-call" and tags[seen["break"]] == "BREAK"
    headers = [line for line in text.splitlines() if line.startswith("      -- ")]
    assert len(headers) == len(cr.regions)
    assert any(re.search(r"-- call of the FX graph __compiled_fn_\d+", h) for h in headers), headers
    # a range that starts mid-region still says which region it is in
    assert outs["l"].output.splitlines()[1].startswith("      -- ")


def test_explain_at_the_graph_call_names_the_compiled_fn_its_inputs_and_live_values():
    seen, outs = walked()
    text = outs["explain call"].output
    lines = text.splitlines()
    assert lines[0].startswith(f"{seen['call']} CALL")
    assert lines[1].startswith("  what it does: ")
    stack = next(line for line in lines if line.startswith("  stack: "))
    # the live values at this stop: the two input tensors are popped
    assert stack.count("Tensor[3] float32 cpu") >= 2 and "pops " in stack
    role = next(line for line in lines if line.startswith("  role: "))
    assert re.search(r"Graph call: calls the FX graph __compiled_fn_\d+ with x, w", role), role
    ex = seen["api explain"]
    assert isinstance(ex, Explanation) and ex.index == seen["call"] and ex.role.role == Role.GRAPH_CALL
    assert ex.stack is not None and any("Tensor[3]" in v for _, v in ex.stack.pops)


def test_explain_of_another_index_and_a_bad_one():
    seen, outs = walked()
    assert outs["explain 0"].error is None and outs["explain 0"].output.startswith("0 ")
    assert outs["explain bad"].error is not None and "outside" in outs["explain bad"].error
    brk = outs["explain break"].output
    assert "calls builtins.int eagerly" in brk


def test_stack_names_the_real_pushing_instruction_of_each_slot():
    seen, outs = walked()
    text = outs["stack call"].output
    instrs = seen["code"].instructions
    pushed = re.findall(r"<- (?:TOS, )?pushed by (\d+) (\S+)", text)
    depth = len(seen["stop at call"].frame.stack)
    assert len(pushed) == depth > 0
    for idx, opname in pushed:
        assert instrs[int(idx)].opname == opname and int(idx) < seen["call"]
    # the graph's inputs: each names the local it was loaded from
    assert re.search(r"<- pushed by \d+ LOAD_FAST x\s+— input 0 of __compiled_fn_\d+: x", text), text
    assert re.search(r"<- TOS, pushed by \d+ LOAD_FAST w\s+— input 1 of __compiled_fn_\d+: w", text), text
    prov = seen["api provenance"]
    assert isinstance(prov, Provenance) and len(prov.slots) == depth


def test_stack_at_the_graph_break_names_the_fx_node_of_a_graph_output():
    seen, outs = walked()
    text = outs["stack break"].output
    assert re.search(r"— output 0 of __compiled_fn_\d+ \(FX node sum_1\)", text), text


def test_guards_explain_each_guard_type_in_one_line():
    seen, outs = walked()
    text = outs["guards"].output
    assert "\nguard types:\n" in text
    legend = text.split("\nguard types:\n", 1)[1].splitlines()
    types = {line.split()[0] for line in legend}
    assert "TENSOR_MATCH" in types
    assert all("checks that " in line and "; fails on " in line for line in legend), legend


def test_teaching_methods_refuse_while_running_or_without_a_stop():
    from helpers import QueueListener

    from dynadbg.core.session import Session

    session = Session(QueueListener())
    for call in (session.roles, session.explain, session.stack_provenance):
        err = call()
        assert isinstance(err, EngineError) and err.kind == "not paused"


def test_explain_in_a_caller_suspended_in_the_resume_call_counts_the_calls_operands():
    """At a graph-break stop the caller (the generated code of the broken function) is suspended in the call of the
    resume function: its value stack holds only the slots under that call's operands, so `explain` there reads
    the operands from the code's flow (a CALL_FUNCTION_EX pops its callable, NULL and argument list), never "pops
    nothing"."""
    from pathlib import Path

    from helpers import drive

    program = Path(__file__).resolve().parents[2] / "app" / "demos" / "lessons" / "l3_graph_break.py"
    torch._dynamo.reset()
    run = drive(lambda s: s.start_script(str(program), []), ["u", "explain", "c"], break_on=("graph-break",))
    assert run.result is not None and run.result.status == 0
    stop = run.stops[0]
    assert stop.frames[0].below_call and stop.frames[0].code.instructions[stop.frames[0].index].opname == \
        "CALL_FUNCTION_EX"
    text = run.output_of("explain").output
    assert "CALL_FUNCTION_EX" in text and "pops nothing" not in text
    pops = re.search(r"stack: pops (\d+) \(", text)
    assert pops is not None and int(pops.group(1)) >= 3, text


def test_the_teaching_data_follows_the_selected_frame():
    """A front end that takes `Stop.teaching` (the TUI) gets the roles and provenance of the frame it selected: after
    `u` at a graph-break stop they are the caller's generated code, not the resume function's."""
    from pathlib import Path

    from dynadbg.core.listeners import QueueListener
    from dynadbg.core.model import Stop
    from dynadbg.core.session import Session

    class Teaching(QueueListener):
        wants_teaching = True

    program = Path(__file__).resolve().parents[2] / "app" / "demos" / "lessons" / "l3_graph_break.py"
    torch._dynamo.reset()
    listener = Teaching()
    session = Session(listener, break_on=("graph-break",))
    session.start_script(str(program), [])
    kind, stop = listener.events.get(timeout=120)
    assert kind == "stop" and stop.teaching.roles.key == stop.selected_frame.code.key
    up = session.up()
    assert isinstance(up, Stop) and up.selected_frame.code.key != stop.selected_frame.code.key
    assert up.teaching is not None and up.teaching.roles.key == up.selected_frame.code.key
    assert up.teaching.roles.roles[up.selected_frame.index].role is Role.RESUME_CALL
    session.detach()
    assert listener.events.get(timeout=120)[0] == "exit"
