"""Trace stops on the real engine: stepping Dynamo's own tracing of real programs (`dynadbg.core.trace_stops`).

Each test drives a `Session` like CPython's test_bdb (commands answered at each stop, the stops recorded) and
checks what a user reads at a trace stop against an independent source: the user's own bytecode (``dis``, the
static stack depth of `core.flow`), torch's own graph-break log, the resume functions the capture saw.
"""

from __future__ import annotations

import logging
import types
from pathlib import Path

import pytest

from dynadbg.core import flow
from dynadbg.core.format.glossary import stop_terms
from dynadbg.core.model import EngineError, ResumeAction, Stop, StopKind
from dynadbg.core.trace_model import TraceStopReason, TraceValueKind
from helpers import Run, drive_answering

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
CORE_PROGRAMS = Path(__file__).resolve().parent / "programs"
TRACE_KINDS = ("trace", "trace-break", "trace-error")


def start(path: Path):  # noqa: ANN201
    return lambda s: s.start_script(str(path))


def trace_stops(run: Run) -> list[Stop]:
    return [s for s in run.stops if s.trace is not None]


def _codes(path: Path) -> dict[tuple[str, int], types.CodeType]:
    """Every code object of the program's source, by (name, first line): the bytecode the user's dis shows."""
    out: dict[tuple[str, int], types.CodeType] = {}

    def walk(code: types.CodeType) -> None:
        out[(code.co_name, code.co_firstlineno)] = code
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)

    walk(compile(path.read_text(), str(path), "exec"))
    return out


def step_until_break(path: Path, limit: int = 400) -> Run:
    """From the first traced instruction, `s` until the first graph break or tracing error (then `c`)."""
    state = {"n": 0}

    def answer(run: Run, stop: Stop) -> str | None:
        state["n"] += 1
        if stop.trace is None or state["n"] > limit:
            return None
        if stop.kind in (StopKind.TRACE_BREAK, StopKind.TRACE_ERROR):
            return None
        return "s"

    return drive_answering(start(path), answer, break_on=TRACE_KINDS, timeout=300)


# --------------------------------------------------------------------------------------------------------------
# stepping to the break: the user's lines and the symbolic stack at each step
# --------------------------------------------------------------------------------------------------------------

BREAKING = ["inline_helpers_break.py", "item_graph_break.py", "data_dependent_branch.py", "print_in_forward.py",
            "generator_graph_break.py", "fullgraph_error.py"]


@pytest.mark.parametrize("name", BREAKING)
def test_stepping_to_the_break_shows_the_users_lines_and_the_symbolic_stack(name: str) -> None:
    path = PROGRAMS / name
    run = step_until_break(path)
    stops = trace_stops(run)
    assert stops and stops[0].trace.reason is TraceStopReason.START
    assert stops[-1].kind in (StopKind.TRACE_BREAK, StopKind.TRACE_ERROR), [s.kind for s in stops[-3:]]
    codes = _codes(path)
    checked = 0
    for stop in stops[:-1]:
        view = stop.trace
        step = view.step
        assert step.attempt == 0 and not step.replay
        if step.user_offset is None or step.rewrite.value != "same" or step.filename != str(path):
            continue  # Dynamo's own instructions, or torch's code it inlines (nn.Module's call, Linear.forward)
        code = codes[(step.code_name, step.firstlineno)]
        index = view.user_index
        assert index is not None and view.code.instructions[index].offset == step.user_offset
        # the line is the user's line of that instruction, as dis has it
        assert view.code.instructions[index].lineno == step.line, (step, view.code.instructions[index])
        assert view.code.instructions[index].opname == step.opname
        # the symbolic stack has as many slots as CPython's value stack has before that instruction
        before = flow.analyse(code).before[index]
        assert before is not None and len(view.stack) == len(before), (step.opname, step.line, view.stack)
        checked += 1
    assert checked >= 5
    last = stops[-1].trace
    # the break (or error) stop shows the breaking instruction with the operands its pre-instruction record holds
    prev = stops[-2].trace
    assert (last.step.compile_id, last.step.attempt, last.step.ordinal) == (prev.step.compile_id, 0, prev.step.ordinal)
    assert last.stack == prev.stack


def test_an_unrealized_input_is_shown_as_such_with_its_source() -> None:
    run = step_until_break(PROGRAMS / "inline_helpers_break.py", limit=3)
    second = trace_stops(run)[1].trace
    assert second.step.opname in ("LOAD_METHOD", "LOAD_ATTR")  # x.sin: 3.11 / 3.12+
    tos = second.stack[-1]
    assert tos.kind is TraceValueKind.UNREALIZED and tos.source == "L['x']" and tos.type_name == "Tensor"
    # the glossary reads the stop's terms off the same data: the line shows an unrealized input
    terms = stop_terms(trace_stops(run)[1])
    assert "unrealized" in terms and "compile id" in terms and "graph break" not in terms
    # summarising it did not realize it: the step before still showed no guard on it (TENSOR_MATCH comes when
    # the attribute load looks at it)
    assert second.guards_total == trace_stops(run)[0].trace.guards_total
    assert trace_stops(run)[2].trace.guards_total > second.guards_total


# --------------------------------------------------------------------------------------------------------------
# the break stop names the instruction torch's own graph_breaks log names
# --------------------------------------------------------------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.parametrize("name", ["inline_helpers_break.py", "item_graph_break.py", "data_dependent_branch.py",
                                  "print_in_forward.py", "ctx_manager_graph_break.py"])
def test_the_break_stop_names_the_instruction_torchs_graph_breaks_log_names(name: str) -> None:
    import re

    import torch

    handler = _Records()
    logger = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
    torch._logging.set_logs(graph_breaks=True)
    logger.addHandler(handler)
    try:
        run = drive_answering(start(PROGRAMS / name), lambda r, s: "c" if s.trace is not None else None,
                              break_on=("trace-break",), timeout=300)
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()
    logged = []
    for text in handler.messages:
        where = re.search(r"Graph break (?:\(user stack suppressed[^)]*\) )?in user code at (\S+):(\d+)", text)
        if where is None:
            continue
        opname = re.search(r"when attempting to trace (\w+)", text)
        logged.append((Path(where[1]).name, int(where[2]), opname[1] if opname else None))
    ours = []
    for stop in trace_stops(run):
        assert stop.kind is StopKind.TRACE_BREAK
        brk = stop.trace.brk
        ours.append((Path(brk.filename).name, brk.line, brk.step.opname, brk.step.line))
    assert logged, "torch logged no graph break"
    assert len(ours) == len(logged)
    for (file, line, opname), (ofile, oline, oop, step_line) in zip(logged, ours):
        assert (ofile, oline, step_line) == (file, line, line)
        if opname is not None:
            # torch names CALL for 3.11's PRECALL + CALL pair too
            assert oop == opname, (oop, opname)
        else:
            assert "JUMP" in oop  # a data-dependent branch: torch's reason names no opname


def test_the_resume_function_dynamo_makes_is_named_after_the_re_trace() -> None:
    run = drive_answering(start(PROGRAMS / "inline_helpers_break.py"), lambda r, s: "c" if s.trace else None,
                          break_on=("trace-break",), timeout=300)
    session = run.session
    compiles = session.trace_compiles()
    first = compiles[0]
    assert [a.outcome for a in first.attempts] == ["restart", "done"]
    brk = first.breaks[0]
    assert brk.path.value == "call" and brk.step.depth == 3 and brk.plan.restart
    resumes = {f.name for f in session.compiled_frames() if f.is_resume}
    assert brk.plan.resume_name in resumes
    assert brk.plan.graph_names and brk.plan.graph_names[0].startswith("__compiled_fn")
    # the eager call at depth 0 is the call of scale(...): the whole inlined chain runs eagerly
    assert brk.plan.eager_callee is not None and "scale" in brk.plan.eager_callee


# --------------------------------------------------------------------------------------------------------------
# s / n / r / until, replay, back / forward
# --------------------------------------------------------------------------------------------------------------


def answer_to_call_then(commands: list[str], line: int | None = None):  # noqa: ANN201
    """`s` until the trace stops at a CALL at depth 0 (on `line`, when given), then `commands` (3.11 has a PRECALL
    before each CALL, 3.12+ not: the count of steps differs)."""
    pending = list(commands)
    state = {"at_call": False}

    def answer(run: Run, stop: Stop) -> str | None:
        if not state["at_call"]:
            step = stop.trace.step if stop.trace is not None else None
            if step is not None and step.opname == "CALL" and step.depth == 0 and (line is None or step.line == line):
                state["at_call"] = True
            else:
                return "s"
        return pending.pop(0) if pending else None

    return answer


def scripted_trace(path: Path, commands: list[str], *, break_on=TRACE_KINDS) -> Run:  # noqa: ANN001
    pending = list(commands)

    def answer(run: Run, stop: Stop) -> str | None:
        if not pending:
            return None
        return pending.pop(0)

    return drive_answering(start(path), answer, break_on=break_on, timeout=300)


def test_a_trace_verb_that_reads_no_argument_refuses_one() -> None:
    """`why 0/1` at a trace stop showed the trace stop's break (the compile id ignored) and looked like an answer
    about compile 0/1: at a trace stop the verbs that read no argument there refuse one."""
    path = CORE_PROGRAMS / "trace_helpers.py"
    run = scripted_trace(path, ["why 0/1", "graph 1", "l 5", "stack", "c"], break_on=("trace",))
    for line in ("why 0/1", "graph 1", "l 5"):
        verb = line.split()[0]
        assert run.output_of(line).error == (f"at a trace stop `{verb}` takes no argument: it shows the trace stop "
                                             f"in front of you"), line
    assert run.output_of("stack").error is None


def test_n_steps_over_an_inlined_call_and_r_leaves_it() -> None:
    path = CORE_PROGRAMS / "trace_helpers.py"
    run = scripted_trace(path, ["until 23", "c"])
    stops = trace_stops(run)
    # until LINE: on through the inlined calls of line 22 without a stop, to line 23 of the same frame
    assert stops[0].trace.step.line == 22
    assert stops[1].trace.step.line == 23 and stops[1].trace.reason is TraceStopReason.UNTIL
    assert stops[1].trace.step.depth == 0 and stops[1].trace.step.ordinal > 40
    run = drive_answering(start(path), answer_to_call_then(["n", "c"]), break_on=TRACE_KINDS, timeout=300)
    stops = trace_stops(run)
    at_call = next(s.trace for s in stops if s.trace.step.opname == "CALL" and s.trace.step.depth == 0)
    after = stops[stops.index(next(s for s in stops if s.trace is at_call)) + 1].trace
    assert at_call.step.opname == "CALL" and at_call.step.depth == 0
    # n went over the whole inlined outer(x) (and inner, twice): the next stop is at depth 0 again, with the
    # nodes the inlined calls added
    assert after.reason is TraceStopReason.NEXT and after.step.depth == 0 and after.step.opname == "STORE_FAST"
    assert after.step.ordinal > at_call.step.ordinal + 10 and after.nodes_total > at_call.nodes_total
    run = scripted_trace(path, ["tb trace_helpers.py:9", "c", "bt", "r", "c"])
    stops = trace_stops(run)
    inside = stops[1].trace
    assert inside.reason is TraceStopReason.BREAKPOINT and inside.step.depth == 2
    assert [f.code_name for f in inside.chain] == ["forward", "outer", "inner"]
    returned = stops[2].trace
    assert returned.reason is TraceStopReason.RETURN and returned.step.depth == 1
    assert returned.step.code_name == "outer"


def test_n_over_a_call_that_breaks_the_graph_stops_at_the_break_then_s_skips_the_replay() -> None:
    path = PROGRAMS / "inline_helpers_break.py"
    run = drive_answering(start(path), answer_to_call_then(["n", "s", "why", "c"], line=25), break_on=TRACE_KINDS,
                          timeout=300)
    stops = trace_stops(run)
    i = next(i for i, s in enumerate(stops) if s.trace.step.opname == "CALL" and s.trace.step.line == 25)
    call = stops[i].trace
    assert call.step.depth == 0
    brk = stops[i + 1]
    assert brk.kind is StopKind.TRACE_BREAK and brk.trace.step.depth == 3
    again = stops[i + 2].trace
    # the replay of attempt 1 ran through: the next stop is the instruction that restarted the trace
    assert again.step.attempt == 1 and not again.step.replay
    assert (again.step.code_name, again.step.index) == (call.step.code_name, call.step.index)
    assert "Dynamo restarts the trace" in run.output_of("why").output


def test_trace_replay_on_stops_in_the_replay() -> None:
    path = PROGRAMS / "item_graph_break.py"
    run = scripted_trace(path, ["trace replay on", "c", "s", "c"], break_on=("trace", "trace-break"))
    stops = trace_stops(run)
    assert stops[1].kind is StopKind.TRACE_BREAK
    replayed = stops[2].trace
    assert replayed.step.attempt == 1 and replayed.step.replay and replayed.step.ordinal == 0


def test_back_and_forward_walk_the_recorded_trace_read_only() -> None:
    path = PROGRAMS / "item_graph_break.py"
    run = scripted_trace(path, ["s 4", "back 2", "stack", "s", "c"], break_on=("trace",))
    back = run.output_of("back 2")
    view = back.data
    assert view.mark is not None and not view.live
    stops = trace_stops(run)
    assert view.step.ordinal == stops[1].trace.step.ordinal - 2
    assert "TRACE HISTORY" in run.output_of("stack").output
    # any step goes on from the live stop, not from the recorded one, and says so
    assert stops[2].trace.step.ordinal == stops[1].trace.step.ordinal + 1
    stepped = run.output_of("s")
    assert stepped.resumed and stepped.data.action is ResumeAction.TRACE_STEP and stepped.data.left_history
    assert stepped.output == "back to the present"


def test_a_recorded_step_before_a_break_does_not_say_its_operands_were_popped() -> None:
    """At a trace-break stop the stack is said to lack the breaking instruction's operands (Dynamo popped them);
    `back` to an earlier step of the same trace shows that step's stack, whose operands were all there: the
    caption says no more than "before OPNAME"."""
    path = PROGRAMS / "item_graph_break.py"
    run = scripted_trace(path, ["trace record full", "stack", "back 2", "stack", "c"], break_on=("trace-break",))
    at_break = run.output_of("stack").output
    assert "Dynamo had popped them when it found the break" in at_break
    back = [r for c, r in run.outputs if c == "stack"][-1].output
    assert "TRACE HISTORY" in back and "symbolic stack before " in back
    assert "popped" not in back, back


def test_rewind_re_traces_to_an_earlier_instruction() -> None:
    path = CORE_PROGRAMS / "trace_helpers.py"
    run = scripted_trace(path, ["s 12", "rewind 5", "s", "c"], break_on=("trace",))
    stops = trace_stops(run)
    here, rewound, after = stops[1].trace, stops[2].trace, stops[3].trace
    assert rewound.reason is TraceStopReason.REWIND
    assert rewound.step.attempt == here.step.attempt + 1
    said = run.output_of("rewind 5")
    assert said.data.action is ResumeAction.TRACE_REWIND and said.data.rewind.attempt == rewound.step.attempt
    assert said.output == (f"rewinding: Dynamo traces {here.chain[0].code_name} again from its start (attempt "
                           f"{rewound.step.attempt})")
    assert rewound.step.ordinal == here.step.ordinal - 5
    # the re-trace after a rewind is there to be stepped: `s` goes one instruction on, not past the replay
    assert after.step.attempt == rewound.step.attempt and after.step.ordinal == rewound.step.ordinal + 1
    assert after.step.replay
    assert run.result is not None and run.result.status == 0


# --------------------------------------------------------------------------------------------------------------
# what a stop shows, and what it refuses
# --------------------------------------------------------------------------------------------------------------


def test_fake_graph_and_guards_at_a_stop_of_a_dynamic_compile() -> None:
    path = PROGRAMS / "dynamic_shapes_trace.py"
    run = scripted_trace(path, ["tb dynamic_shapes_trace.py:12", "c", "fake x", "fake n", "graph", "guards", "fake q",
                                "detach"], break_on=("trace",))
    fx = run.output_of("fake x").data
    assert fx.shape[0].symbolic and fx.shape[0].hint == 3 and fx.dtype == "float32"
    fn = run.output_of("fake n").data
    assert fn.shape[0].symbolic and fn.shape[0].hint == 2
    graph = run.output_of("graph").output
    assert "l_x_" in graph and "mul" in graph
    assert "symbolic-shape guards so far: 1" in run.output_of("guards").output
    assert "not a symbolic local" in run.output_of("fake q").error


@pytest.mark.parametrize("added", [True, False])
def test_graph_and_guards_at_a_trace_stop_name_the_plus_mark_only_when_a_row_has_it(added: bool) -> None:
    """``graph`` / ``guards`` at a trace stop say what ``+`` marks only when the last instruction added a row; else
    they say it added none (lesson 8's `graph` said "+ marks ..." over rows without one)."""
    from dynadbg.core.format import trace as tfmt

    node = types.SimpleNamespace(name="l_x_", op="placeholder", target="l_x_", value="", new=added)
    guard = types.SimpleNamespace(guard_type="TENSOR_MATCH", source="L['x']", new=added)
    view = types.SimpleNamespace(mark=None, nodes=[node], nodes_total=1, guards=[guard], guards_total=1,
                                 shape_guards=[])
    graph, guards = tfmt.graph_text(view), tfmt.guards_text(view)  # type: ignore[arg-type]
    rows = graph.splitlines()[1:] + guards.splitlines()[1:]
    assert any(row.startswith("+") for row in rows) is added
    assert ("+ marks what the last instruction added" in graph) is added
    assert ("+ marks what the last instruction installed" in guards) is added
    if not added:
        assert "the last instruction added no node" in graph and "the last instruction installed none" in guards


def test_commands_that_need_a_running_frame_are_refused_at_a_trace_stop() -> None:
    run = scripted_trace(PROGRAMS / "item_graph_break.py", ["p 1 + 1", "1 + 1", "entries", "eager", "b 3", "u",
                                                             "globals", "explain", "trace", "c"], break_on=("trace",))
    assert "no frame" in run.output_of("1 + 1").error
    for cmd in ("p 1 + 1", "entries", "eager", "b 3", "globals"):
        assert "compile lock" in run.output_of(cmd).error, cmd
    assert "inlining chain" in run.output_of("u").error
    assert "Dynamo" in run.output_of("explain").output
    assert "compile 0/0" in run.output_of("trace").output
    assert run.result.status == 0


def test_a_conditional_trace_breakpoint_stops_only_where_it_holds() -> None:
    path = PROGRAMS / "inline_helpers_break.py"
    run = scripted_trace(path, ["tb inline_helpers_break.py:10 if depth == 1", "break-on trace off", "c", "c"],
                         break_on=("trace",))
    hits = [s.trace for s in trace_stops(run) if s.trace.reason is TraceStopReason.BREAKPOINT]
    assert hits and all(h.step.depth == 1 for h in hits)


def test_light_recording_is_always_on_and_bounded() -> None:
    run = drive_answering(start(PROGRAMS / "item_graph_break.py"), lambda r, s: None, break_on=(), timeout=300)
    session = run.session
    compiles = session.trace_compiles()
    assert compiles and compiles[0].steps > 0
    rec = session.trace_stops.recorder
    assert all(not a.details for c in rec.compiles.values() for a in c.attempts)  # light: no summaries
    settings = session.trace_settings(limit=5)
    assert settings.steps <= max(5, 0) or settings.evicted > 0
    assert session.trace_compiles()[0].attempts  # summaries survive eviction


def test_a_graph_break_stop_points_at_the_traced_break_and_trace_steps_opens_it() -> None:
    """From the run-time side to the compile-time side: the resume function's graph-break stop names the step of
    Dynamo's recorded trace that broke (light recording, no trace stop armed), and `trace steps` with no id lists
    that attempt up to the breaking CALL, not the resume function's own compile."""
    seen: dict[str, object] = {}

    def answer(run: Run, stop: Stop) -> str | None:
        if stop.kind is StopKind.GRAPH_BREAK and "steps" not in seen:
            seen["traced"] = stop.graph_break.traced
            seen["steps"] = run.commands.execute("trace steps")
            seen["stop_text"] = stop
            return "c"
        return "c"

    run = drive_answering(start(PROGRAMS / "item_graph_break.py"), answer, break_on=("graph-break",), timeout=300)
    assert run.result is not None and run.result.status == 0
    traced = seen["traced"]
    assert traced is not None and traced.compile_id == "0/0" and traced.opname == "CALL" and traced.line == 9
    from dynadbg.core import format as fmt

    text = fmt.graph_break_text(seen["stop_text"].graph_break)
    assert (f"Dynamo traced it: step {traced.ordinal} of compile 0/0 attempt {traced.attempt}, CALL at line 9 "
            f"(`trace steps 0/0 {traced.attempt}` lists the steps up to it)") in text
    steps = seen["steps"]
    assert steps.error is None, steps.error
    rows = steps.data
    assert rows and {r.compile_id for r in rows} == {"0/0"} and rows[-1].ordinal == traced.ordinal
    assert rows[-1].opname == "CALL" and rows[-1].line == 9


def test_a_missing_hook_disables_trace_stops_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from dynadbg.core import compat

    monkeypatch.setitem(compat.TRACE_PATCH_TARGETS, "trace: steps",
                        ("torch._dynamo.symbolic_convert", "InstructionTranslatorBase.no_such_step"))
    run = drive_answering(start(PROGRAMS / "item_graph_break.py"), lambda r, s: None, break_on=("trace",),
                          timeout=300)
    assert any("trace stops disabled" in m and "no_such_step" in m for m in run.messages)
    assert run.result.status == 0
    err = run.session.trace_settings()
    assert not err.available and err.record == "off"
    assert isinstance(run.session.trace_view(), EngineError)
    compat.trace_targets()  # probe again with the real target, so FEATURES is right for later tests


def test_the_report_has_a_trace_summary_per_compile() -> None:
    from dynadbg.core.report import run_report

    result = run_report(str(PROGRAMS / "item_graph_break.py"))
    data = result.json()
    assert data["schema"] == "dynadbg.report/3"
    first = data["trace"][0]
    assert first["compile_id"] == "0/0" and first["name"] == "span"
    assert first["restarts"] == 1 and [a["outcome"] for a in first["attempts"]] == ["restart", "done"]
    assert first["instructions"] == sum(a["instructions"] for a in first["attempts"]) > 0
    brk = first["breaks"][0]
    assert brk["line"] == 9 and brk["instruction"]["opname"] == "CALL" and brk["path"] == "call"
    resumes = {f.name for f in result.frames if f.is_resume}
    assert brk["resume_function"] in resumes
    # the resume function is a compile of its own, and its trace is there too
    assert any(c["name"] == brk["resume_function"] for c in data["trace"])
    text = result.text(full=True)  # the detail (the default text is the summary)
    assert "Dynamo's tracing, per compile" in text and "breaking instruction: CALL" in text


def test_the_break_rows_of_the_generated_code_point_at_the_traced_break() -> None:
    """A front end taking `Stop.teaching` gets, for the graph-break region of the caller's generated code, the same
    traced break as the resume function's stop names: the compile that generated the code, the breaking CALL at
    line 9 (what the TUI's `T` opens from a break row)."""
    import torch

    from dynadbg.core.listeners import QueueListener
    from dynadbg.core.model import Role
    from dynadbg.core.session import Session

    class Teaching(QueueListener):
        wants_teaching = True

    torch._dynamo.reset()
    listener = Teaching()
    session = Session(listener, break_on=("graph-break",))
    session.start_script(str(PROGRAMS / "item_graph_break.py"), [])
    kind, stop = listener.events.get(timeout=300)
    assert kind == "stop" and stop.kind is StopKind.GRAPH_BREAK and stop.graph_break.traced is not None
    assert stop.teaching.traced_breaks == ()  # the resume function's own code has no break region
    up = session.up()
    assert isinstance(up, Stop)
    roles = up.teaching.roles
    breaks = [k for k, r in enumerate(roles.roles) if r.role is Role.GRAPH_BREAK]
    assert breaks and [k for k, _ in up.teaching.traced_breaks] == breaks
    assert all(up.teaching.traced_break_at(k) == stop.graph_break.traced for k in breaks)
    assert up.teaching.traced_break_at(0) is None
    session.detach()
    assert listener.events.get(timeout=120)[0] == "exit"


def test_after_a_restart_the_trace_stop_shows_the_attempt_strip() -> None:
    """The restart strip: once a graph break restarted the compile, each trace stop of the next attempt says so in
    one line (the attempt that restarted, at which step; the attempt being traced, marked), in line mode and the
    TUI's Trace view alike; the first attempt's stops have no strip."""
    from dynadbg.core.format import trace as tfmt

    stops: list[Stop] = []

    def answer(run: Run, stop: Stop) -> str | None:
        if stop.trace is not None:
            stops.append(stop)
            return "s" if stop.trace.step.attempt == 0 or len(stops) < 3 else "c"
        return "c"

    run = drive_answering(start(PROGRAMS / "item_graph_break.py"), answer, break_on=("trace",), timeout=300)
    assert run.result is not None and run.result.status == 0
    first = [s for s in stops if s.trace.step.compile_id == "0/0" and s.trace.step.attempt == 0]
    again = [s for s in stops if s.trace.step.compile_id == "0/0" and s.trace.step.attempt == 1]
    assert first and again
    assert all("attempts:" not in tfmt.trace_stop_text(s) for s in first)
    view = again[0].trace
    restart = view.attempts[0].restart
    assert restart is not None and restart.at_ordinal is not None
    strip = f"attempts: 0 restarted at step {restart.at_ordinal} → ▶1 step {view.step.ordinal}"
    assert tfmt.trace_stop_text(again[0]).splitlines()[2].startswith(strip)
    from dynadbg.tui.trace_view import render

    assert strip in "\n".join(p.plain for p in render(view).renderables if hasattr(p, "plain"))


def test_trace_steps_rows_fit_80_columns_under_a_header_that_names_each_column() -> None:
    """`trace steps` in the TUI console at 80 columns wrapped every row (92 cells) into an orphan line; its
    columns (``d0``, ``3n 8g``) were never named."""
    from dynadbg.core.format.trace import steps_text
    from dynadbg.core.trace_model import RewriteKind, TraceStep

    def step(n: int, depth: int, name: str) -> TraceStep:
        return TraceStep(ordinal=n, compile_id="0/0", attempt=0, depth=depth, code_name=name, filename="m.py",
                         firstlineno=1, line=120, index=n, opname="CALL_FUNCTION_EX", argrepr="1", user_offset=n,
                         rewrite=RewriteKind.SAME, rewrite_of=None, nodes=1234, guards=56789, replay=n == 2)

    steps = [step(0, 0, "normalise"), step(1, 1, "a_very_long_inlined_helper_name"), step(2, 1, "helper")]
    for narrow, width in ((False, 78), (True, 45)):
        rows = steps_text(steps, current=1, narrow=narrow).splitlines()
        # (a narrow row of a re-trace ends in " replay" past the 45th column, where the pane's width allows)
        assert all(len(row.removesuffix(" replay" if narrow else "")) <= width for row in rows), (narrow, rows)
        assert rows[0].split() == (["step", "line", "instruction", "nodes", "guards"] if narrow else
                                   ["step", "depth", "code", "line", "instruction", "nodes", "guards"])
    wide = steps_text(steps, current=1).splitlines()
    assert wide[2].startswith(">    1     1 a_very_long_inl…") and wide[2].split()[-2:] == ["1234", "56789"]
    assert wide[3].endswith(" replay")
