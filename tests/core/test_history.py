"""Stepping back: `back N` / `forward N` show exactly what `stack` and `locals` showed at those stops, read-only;
stepping on after history runs the program as a plain run does; the history stays within its bounds."""

from __future__ import annotations

import pytest

from dynadbg.core.history import History, HistoryCursor, HistoryError
from dynadbg.core.model import FrameView, CodeView, Instr, Stop, StopKind, ValueSummary
from helpers import drive
from programs import simple

K = 8


def start(results):
    return lambda s: s.start_callable(simple.run_graph_break, results, ((3.0, 2),))


def _body(text: str) -> str:
    """A command's output without the history line above it."""
    return text.split("\n", 1)[1] if text.startswith("HISTORY ") else text


def _views(run, first: int, count: int) -> list[tuple[str, str]]:
    outs = [r for c, r in run.outputs if c in ("stack", "locals")]
    pairs = [(outs[i].output, outs[i + 1].output) for i in range(0, len(outs), 2)]
    return pairs[first:first + count]


def test_back_then_forward_shows_exactly_the_recorded_stack_and_locals():
    plain: list[float] = []
    drive(start(plain), [])
    results: list[float] = []
    live = ["stack", "locals"] + ["s", "stack", "locals"] * K
    hist = []
    for n in range(1, K + 1):
        hist += [f"back {n}" if n == 1 else "back", "stack", "locals"]
    hist += [f"forward {K}", "stack", "locals", "s", "s"]
    run = drive(start(results), live + hist)
    assert run.result is not None and run.result.status == 0
    recorded = _views(run, 0, K + 1)
    going_back = _views(run, K + 1, K)
    # back 1, back, back... walks the stops newest to oldest and shows what the live commands showed then
    for i, (stack, loc) in enumerate(going_back):
        want_stack, want_locals = recorded[K - 1 - i]
        assert stack.startswith(f"HISTORY {K - i}/{K + 1} ") and loc.startswith("HISTORY ")
        assert _body(stack) == want_stack
        assert _body(loc) == want_locals
    # forward K is the present again: live values, no history line
    now_stack, now_locals = _views(run, 2 * K + 1, 1)[0]
    assert (now_stack, now_locals) == recorded[K]
    fwd = run.output_of(f"forward {K}")
    assert fwd.error is None and fwd.output.startswith("back to the present")
    # stepping on after history runs the program to the same output as a plain run
    assert results == plain == [19.0]


def test_back_output_names_the_instruction_and_steps_return_to_the_present():
    results: list[float] = []
    run = drive(start(results), ["s", "s", "back 2", "p x", "set n = 3", "b 3", "s", "stack"])
    back = run.output_of("back 2")
    assert back.error is None
    first = run.stops[0].frame
    ins = first.code.instructions[first.index]
    assert back.output.startswith("HISTORY 1/3 ")
    assert f"index {first.index} (offset {ins.offset}) {ins.opname}" in back.output
    # read-only: a command that reads or changes the live frame is refused with the way back
    for cmd in ("p x", "set n = 3", "b 3"):
        err = run.output_of(cmd).error
        assert err is not None and "read-only" in err and "`present`" in err
    step = [r for c, r in run.outputs if c == "s"][-1]
    assert step.resumed and step.output.startswith("back to the present")
    # the step went on from the present stop (the third), not from the one shown
    assert run.stops[3].frame.index == run.stops[2].frame.index + 1
    assert not run.output_of("stack").output.startswith("HISTORY")
    assert results == [19.0]


def test_bad_history_input_gets_a_clear_error_and_changes_nothing():
    results: list[float] = []
    cmds = ["back", "forward", "s", "s", "back 0", "back -1", "back x", "back 5", "back 1", "forward 2",
            "forward 1", "forward", "history limit x", "history memory -3", "history", "stack"]
    run = drive(start(results), cmds, break_on=("compile", "entry"))
    errors = {c: r.error for c, r in run.outputs}
    # the compile stop is at no instruction: nothing recorded yet
    assert "no history recorded" in errors["back"]
    assert "already at the present" in errors["forward"]
    assert "at least 1" in errors["back 0"] and "at least 1" in errors["back -1"]
    assert "integer" in errors["back x"]
    assert "only 1 earlier stop recorded" in errors["back 5"]
    assert errors["back 1"] is None
    assert "the present is 1 stop ahead" in errors["forward 2"]
    assert errors["forward 1"] is None
    assert errors["history limit x"] is not None and errors["history memory -3"] is not None
    assert "2 stops recorded" in run.output_of("history").output
    assert not run.output_of("stack").output.startswith("HISTORY")
    assert results == [19.0]


def test_history_bounds_evict_the_oldest_stops():
    results: list[float] = []
    run = drive(start(results), ["history limit 3", "s", "s", "s", "s", "s", "history", "back 2", "back 1",
                                 "history limit 0"])
    info = run.output_of("history").output
    assert info.startswith("history: 3 stops recorded (at most 3") and "3 older dropped" in info
    assert run.output_of("back 2").output.startswith("HISTORY 1/3 ")
    assert "oldest recorded stop" in run.output_of("back 1").error
    assert "forward" in run.output_of("history limit 0").error  # bounds change only at the present
    assert len(run.session.history) == 3
    assert results == [19.0]


def _stop(seq: int, text: str) -> Stop:
    code = CodeView(1, "f", "f.py", 1, (Instr(0, 0, "LOAD_FAST", 0, "x", 1),))
    fv = FrameView(code, 0, 1, (ValueSummary("str", text),), True, (("x", ValueSummary("str", text)),))
    return Stop(StopKind.STEP, "step", (fv,), seq=seq)


def test_memory_cap_keeps_the_newest_entries_within_bytes():
    h = History(limit=100, max_bytes=20000)
    for seq in range(1, 50):
        h.record(_stop(seq, "v" * 500))
    assert 1 < len(h) < 49 and h.nbytes <= 20000
    assert h.entry(len(h)).seq == 49  # the newest survive
    assert h.record(_stop(49, "again")) is None  # the same stop is recorded once
    with pytest.raises(HistoryError):
        History(limit=-1)
    cursor = HistoryCursor(h)
    assert cursor.back(1, present_seq=49) == len(h) - 1
    assert cursor.forward(1, present_seq=49) is None


def test_history_every_records_the_instructions_s_n_runs_through():
    stepwise = drive(start([]), ["stack"] + ["s", "stack"] * 5)
    want = [r.output for c, r in stepwise.outputs if c == "stack"]
    results: list[float] = []
    cmds = ["history every on", "s 5"] + ["back", "stack"] * 5 + ["history", "forward 5", "history every off",
                                                                  "s 3", "history"]
    run = drive(start(results), cmds)
    got = [_body(r.output) for c, r in run.outputs if c == "stack"]
    # newest first: the instructions `s 5` ran through, then the entry stop; each as single steps showed it
    assert got == want[4::-1]
    listing = [r.output for c, r in run.outputs if c == "history"]
    assert "[ran through]" in listing[0] and "6 stops recorded" in listing[0]
    assert "7 stops recorded" in listing[1]  # every off: `s 3` adds its stop only
    assert results == [19.0]
