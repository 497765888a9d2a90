"""The typed engine API (`dynadbg.core.protocol.Engine`) on the real engine: each method returns a frozen model
value or an `EngineError`; control methods resume; watches are evaluated at every stop and never stop the
program; the recompile stop carries its choices as data; line mode prints the watches after each stop."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any, Callable


from dataclasses import replace

from dynadbg.core import commands
from dynadbg.core import format as fmt
from dynadbg.core.model import (
    BreakpointView,
    CodeView,
    DecisionKind,
    EngineError,
    EvalResult,
    ResumeAction,
    Resumed,
    Stop,
    StopKind,
    WatchValue,
)
from dynadbg.core.session import Session
from helpers import QueueListener
from programs import recompiles as progs
from programs import simple
from forkrun import python


def drive_typed(start: Callable[[Session], None], handler: Callable[[Session, Stop, int], Any], *,
                break_on=("entry",), timeout: float = 120.0) -> tuple[list[Stop], Session, Any]:
    """Run a program; at each stop call ``handler(session, stop, n)`` from this (non-worker) thread. When the
    handler did not resume the program, detach."""
    listener = QueueListener()
    session = Session(listener, break_on=break_on)
    stops: list[Stop] = []
    start(session)
    while True:
        kind, payload = listener.events.get(timeout=timeout)
        if kind == "exit":
            return stops, session, payload
        stops.append(payload)
        resumed = handler(session, payload, len(stops) - 1)
        if not isinstance(resumed, Resumed):
            session.detach()


def test_control_and_breakpoints_return_values_not_text():
    results: list = []
    seen: dict[str, Any] = {}

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        if n == 0:
            assert stop.kind is StopKind.ENTRY
            assert s.set_step(0) == EngineError("count must be at least 1", "usage")
            bad = s.set_break(10_000)
            assert isinstance(bad, EngineError) and "outside 0.." in bad.message
            target = stop.frame.index + 3
            bp = s.set_break(target, "n > 1")
            assert isinstance(bp, BreakpointView) and bp.index == target and bp.condition == "n > 1"
            assert bp.opname == stop.frame.code.instructions[target].opname
            assert s.list_breakpoints() == (bp,)
            # the stop the front end reads back shows the new breakpoint in the gutter
            assert target in s.current_stop().frame.breakpoints
            seen["bp"] = bp
            return s.set_continue()
        if n == 1:
            assert stop.kind is StopKind.BREAKPOINT and stop.frame.index == seen["bp"].index
            cleared = s.clear_break(seen["bp"].index)
            assert [b.number for b in cleared] == [seen["bp"].number]
            assert isinstance(s.clear_break(seen["bp"].index), EngineError)
            assert s.list_breakpoints() == ()
            return s.set_continue()
        return None

    stops, session, result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, results), at_stop)
    assert result.status == 0 and results == [19.0]
    # while running or after the end, methods that need a stop say so
    assert session.set_step() == EngineError("the program has finished", "not paused")


def test_frame_selection_moves_every_query_to_the_caller():
    results: list = []
    seen: dict[str, Any] = {}

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        if stop.kind is not StopKind.GRAPH_BREAK:
            return s.set_continue()
        assert len(stop.frames) == 2 and stop.selected in (-1, 1)
        inner = s.listing()
        up = s.up()
        assert isinstance(up, Stop) and up.seq == stop.seq and up.selected == 0
        outer = s.listing()
        assert isinstance(outer, CodeView) and outer.key != inner.key and outer.key == stop.frames[0].code.key
        assert s.evaluate("n") == EvalResult("2", s.evaluate("n").value)
        assert s.up() == EngineError("already at the outermost generated frame", "usage")
        down = s.down()
        assert isinstance(down, Stop) and down.selected == 1
        assert isinstance(s.select_frame(5), EngineError)
        seen["ok"] = True
        return s.set_continue()

    _stops, _session, result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, results), at_stop,
                                           break_on=("graph-break",))
    assert seen.get("ok") and result.status == 0 and results == [19.0]


def test_a_verb_that_reads_no_argument_refuses_one_and_u_says_when_fewer_levels_were_left():
    """A newcomer's `ll 5` listed everything (the 5 ignored) and `u 2` with one frame above went one up: both looked
    as if they had done what was typed. A verb that reads no argument refuses one; `u`/`d` say how far they went;
    `until` refuses an index that is not ahead."""
    seen: dict[str, Any] = {}

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        if stop.kind is not StopKind.GRAPH_BREAK:
            return s.set_continue()
        line = commands.CommandLine(s)
        seen["ll"] = line.execute("ll 5").error
        seen["c"] = line.execute("c 2").error
        seen["whatif"] = line.execute("whatif x").error
        seen["until"] = (stop.frame.index, line.execute(f"until {stop.frame.index}").error)
        assert line.execute("ll").error is None and line.execute("l 5").error is None
        seen["u"] = line.execute("u 2").output.splitlines()[-1]
        seen["d"] = line.execute("d 1").output.splitlines()[-1]
        return s.set_continue()

    _stops, _session, result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, []), at_stop,
                                           break_on=("graph-break",))
    assert result.status == 0
    assert seen["ll"] == "`ll` takes no argument (`l 5` lists around index 5)"
    assert seen["c"] == "`c` takes no argument (`until IDX` runs to an instruction)"
    assert seen["whatif"] == "`whatif` takes no argument"
    # `until` to an index not ahead stopped at the next instruction, silently (a newcomer's `until 10` at 50)
    at, error = seen["until"]
    assert error == (f"index {at} is not ahead of the current instruction ({at}): `until` runs forward (`b {at}` "
                     f"then `c` stops there if the code comes back to it)")
    assert seen["u"] == "(went 1 level up, not 2: #0 is the outermost generated frame)"
    assert not seen["d"].startswith("(went")         # one level asked, one went


def test_watches_are_evaluated_at_every_stop_and_a_bad_one_never_stops_the_program():
    results: list = []
    watched: list[tuple[WatchValue, ...]] = []

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        if n == 0:
            depth = s.add_watch("len(__stack__)")
            assert isinstance(depth, WatchValue) and depth.error is None and depth.text == str(len(stop.frame.stack))
            bad = s.add_watch("no_such_name + 1")
            assert isinstance(bad, WatchValue) and bad.error and "NameError" in bad.error
            assert s.add_watch("1 +").kind == "usage"          # a syntax error is refused outright
            assert [w.number for w in s.watches()] == [1, 2]
            assert [w.number for w in s.current_stop().watches] == [1, 2]
        watched.append(stop.watches)
        if n < 3:
            return s.set_step(1)
        if n == 3:
            removed = s.remove_watch(2)
            assert isinstance(removed, WatchValue) and removed.expr == "no_such_name + 1"
            assert isinstance(s.remove_watch(2), EngineError)
            return s.set_step(1)
        return None

    stops, _session, result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, results), at_stop)
    assert result.status == 0 and results == [19.0]
    assert watched[0] == ()                       # added after the first stop was built
    for i, ws in enumerate(watched[1:4], start=1):
        depth, bad = ws
        assert depth.text == str(len(stops[i].frame.stack)), (i, depth, stops[i].frame.stack)
        assert bad.error is not None and not bad.changed
    # the stack depth changes between those steps: the watch says so
    assert any(ws[0].changed for ws in watched[2:4])
    assert [w.number for w in watched[4]] == [1]


def test_a_recompile_stop_carries_its_choices_as_data():
    results: list = []
    seen: dict[str, Any] = {}

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        assert stop.kind is StopKind.RECOMPILE
        kinds = [c.kind for c in stop.choices]
        assert kinds[:4] == [DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP, DecisionKind.DROP]
        drop = stop.choices[3]
        assert drop.available and drop.decision.guard_ids and "guard_filter_fn" in fmt.permanent_text(drop.permanent)
        assert drop.decision.command.startswith("drop g")
        eager = stop.choices[1]
        assert "set_stance" in fmt.permanent_text(eager.permanent)
        seen["drop"] = drop
        result = s.decide(drop.decision)
        assert isinstance(result, Resumed) and result.action is ResumeAction.DROP
        # the fix the choice offered, with torch's own hints after it
        assert replace(result.permanent, hints=()) == drop.permanent and result.permanent.hints
        assert [g.leaf_id for g in result.dropped] == list(drop.decision.guard_ids)
        return result

    _stops, session, result = drive_typed(lambda s: s.start_callable(progs.run_counter, results, 2), at_stop,
                                          break_on=("recompile",))
    assert result.status == 0 and seen
    assert session.recompiles.records()[0].action.command.startswith("drop g")


def test_decisions_and_edits_elsewhere_are_refused_with_a_reason():
    results: list = []

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        from dynadbg.core.model import Decision

        refused = s.decide(Decision(DecisionKind.EAGER))
        assert refused == EngineError("only at a recompile stop", "not here")
        assert isinstance(s.recompile_records(), tuple)
        assert isinstance(s.guard_trees(), tuple) and s.guard_trees()[0].compile_id == stop.compile_id
        return s.set_continue()

    _stops, _session, result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, results), at_stop)
    assert result.status == 0


def test_the_command_table_is_the_one_place_verbs_are_known():
    assert {"s", "step", "n", "next", "c", "cont", "continue", "r", "until", "eager", "drop", "q"} <= commands.RESUMING
    assert not {"b", "p", "watch", "guards", "u"} & commands.RESUMING
    assert commands.help_text().splitlines() == [c.help for c in commands.COMMANDS]
    assert commands.split("display x") == ("watch", "x")


def _running_refusal(verb: str) -> str:
    return f"the program is running; {verb!r} needs a stop (Ctrl+C interrupts)"


def test_a_verb_works_while_the_program_runs_exactly_when_the_engine_method_it_calls_does():
    """One policy: each verb names the engine method it calls (another one without an argument, as `b` lists),
    and the method's own ``anytime`` flag decides whether the verb is refused while the program runs."""
    session = Session(QueueListener())  # not started: neither paused nor finished, as while the program runs
    line = commands.CommandLine(session)
    for spec in commands.COMMANDS:
        for arg in ("", "1"):
            method = spec.method(arg)
            assert method is None or callable(getattr(Session, method, None)), (spec.name, method)
            anytime = method is None or getattr(getattr(Session, method), "anytime", False)
            refused = line.execute(f"{spec.name} {arg}").error == _running_refusal(spec.name)
            assert refused is not anytime, (spec.name, arg, method, anytime)
    # `b` with no argument lists the breakpoints (`list_breakpoints` works any time); setting one needs a stop
    assert line.execute("b").output == fmt.breakpoints_text(())
    assert line.execute("b 3").error == _running_refusal("b")


def test_an_engine_method_that_extends_another_keeps_its_running_flag():
    """The flag is read off the method the facade exposes: an override (the trace stops' `detach`) keeps it."""
    for name in dir(Session):
        flags = {getattr(getattr(cls.__dict__[name], "fn", cls.__dict__[name]), "anytime", False)
                 for cls in Session.__mro__ if name in cls.__dict__}
        assert len(flags) == 1, name


def test_no_verb_offers_a_recorded_stop_to_an_engine_method_that_refuses_one():
    """Which verbs work while a recorded stop is shown is the verb row's `history` flag (the engine has no flag for
    it); an engine method that refuses outside the present (`_live_only`) is never called by a form the row lets
    through, so the user gets the command language's one refusal, not the engine's."""
    import ast

    core = Path(commands.__file__).resolve().parent
    live_only = {fn.name for path in core.glob("engine*.py")
                 for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(fn, ast.FunctionDef)
                 and any(isinstance(c, ast.Attribute) and c.attr == "_live_only" for c in ast.walk(fn))
                 and not fn.name.startswith("_")}
    assert {"set_break", "evaluate", "add_watch", "apply_edit"} <= live_only
    for spec in commands.COMMANDS:
        for arg in ("", "1"):
            if spec.method(arg) in live_only:
                assert not spec.shows_history(arg), (spec.name, arg)


def test_each_command_line_keeps_its_own_list_continuation():
    """`l` again lists the next 11 instructions: what one front end's command line remembers, not the engine's."""
    seen: dict[str, Any] = {}

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        one, other = commands.CommandLine(s), commands.CommandLine(s)
        seen["first"] = one.execute("l").output
        seen["other"] = other.execute("l").output  # a second front end starts around the current instruction
        seen["next"] = one.execute("l").output
        return s.set_continue()

    drive_typed(lambda s: s.start_callable(simple.run_graph_break, []), at_stop)
    assert seen["other"] == seen["first"] and seen["next"] != seen["first"]
    first_rows = [r.split()[0] for r in seen["first"].splitlines() if r.split() and r.split()[0].isdigit()]
    next_rows = [r.split()[0] for r in seen["next"].splitlines() if r.split() and r.split()[0].isdigit()]
    assert first_rows and next_rows and int(next_rows[0]) == int(first_rows[-1]) + 1, (seen["first"], seen["next"])


def test_line_mode_prints_the_watches_after_each_stop(tmp_path: Path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import torch

        def f(x):
            y = x + 1
            return y * 2

        print(torch.compile(f, backend="eager")(torch.ones(3)).tolist())
    """))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    out = python(["-m", "dynadbg", "run", "--plain", "-c", "watch x.sum(); s 3; c",
                 str(script)], timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "watch 1: x.sum() = tensor(3.)" in text
    after_step = text.split("(dynadbg) s 3", 1)[1].split("(dynadbg) c", 1)[0]
    assert "--- step" in after_step and "watches:\n  1: x.sum() = tensor(3.)" in after_step
    assert "[4.0, 4.0, 4.0]" in text


def test_session_implements_every_method_of_the_engine_protocol():
    from dynadbg.core.protocol import Engine

    names = [n for n in vars(Engine) if not n.startswith("_")]
    assert len(names) > 40
    assert [n for n in names if not hasattr(Session, n)] == []


def test_submit_queues_on_the_paused_worker_and_answers_there():
    """`Session.submit` (the TUI's path for a step): it returns at once, the worker runs the call and hands its
    answer over; a call queued behind a resuming one is answered with an error, never run; nothing is queued
    from the worker itself or once the program has finished."""
    import queue
    import threading

    results: list = []
    answers: "queue.Queue[tuple[str, Any, str]]" = queue.Queue()
    release = threading.Event()
    seen: dict[str, Any] = {}

    def answer(tag: str):
        return lambda value: answers.put((tag, value, threading.current_thread().name))

    def blocker(s: Session) -> int:
        seen["nested"] = s.submit(lambda: 0, answer("nested"))  # on the worker: refused, never deadlocks
        release.wait(30)
        return s.current_stop().frame.index

    def at_stop(s: Session, stop: Stop, n: int) -> Any:
        if n == 0:
            assert s.submit(lambda: blocker(s), answer("first"))
            assert s.submit(lambda: s.set_step(1), answer("step"))
            assert s.submit(lambda: 1 / 0, answer("behind"))
            release.set()
            got = {tag: (value, thread) for tag, value, thread in (answers.get(timeout=30) for _ in range(3))}
            seen["got"], seen["index"] = got, stop.frame.index
            return got["step"][0]
        return s.set_continue()

    stops, session, _result = drive_typed(lambda s: s.start_callable(simple.run_graph_break, results), at_stop)
    got = seen["got"]
    assert seen["nested"] is False
    assert got["first"][0] == seen["index"]
    assert isinstance(got["step"][0], Resumed)
    behind = got["behind"][0]
    assert isinstance(behind, EngineError) and "resumed before" in behind.message  # queued behind: never ran
    assert got["first"][1] == got["step"][1] != threading.current_thread().name  # answered on the worker
    assert stops[1].frame.index == seen["index"] + 1
    assert session.submit(lambda: 0, answer("late")) is False  # finished: nothing to queue on
    assert answers.empty()


def test_the_front_end_is_told_what_compiles_while_it_compiles():
    """A first compile can take tens of seconds: the listener hears ``compiling NAME (FILE:LINE)`` when torch
    starts converting a frame and ``running`` when it returned, so a front end can say what the program waits on."""

    class Recording(QueueListener):
        def __init__(self) -> None:
            super().__init__()
            self.running: list[str] = []

        def on_running(self, message: str) -> None:
            self.running.append(message)

    listener = Recording()
    session = Session(listener, break_on=())
    results: list[Any] = []
    session.start_callable(simple.run_graph_break, results)
    kind, _payload = listener.events.get(timeout=120)
    assert kind == "exit"
    line = simple.graph_break.__code__.co_firstlineno
    assert f"compiling graph_break (simple.py:{line})" in listener.running
    at = listener.running.index(f"compiling graph_break (simple.py:{line})")
    assert "running" in listener.running[at + 1:]  # the compile ended: the status goes back to running
    assert listener.running[-1] == "running"
    # the graph break's resume function compiles on its own, later, and is said by its own name
    assert any(m.startswith("compiling torch_dynamo_resume_in_graph_break") for m in listener.running)
