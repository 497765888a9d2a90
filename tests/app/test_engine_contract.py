"""One contract, two engines: the same assertions on the real engine (a small torch.compile program) and the fake.

The TUI is written against `dynadbg.core.protocol.Engine`; its fast tests use `fake_engine.FakeEngine`. These tests
keep the fake honest: whatever the TUI relies on (result types, error values and their kinds, the stop that
follows a control call, breakpoint marks in the next snapshot, watch values and errors, the command language's
errors) behaves the same on both.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fake_engine import FakeEngine
from fake_scenarios import forward_scenario

from dynadbg.core import format as fmt
from dynadbg.core.model import (
    BreakpointView,
    CodeRoles,
    CodeView,
    Decision,
    DecisionKind,
    EditPreview,
    EngineError,
    EvalResult,
    Explanation,
    GuardTree,
    HistoryView,
    Provenance,
    Resumed,
    Stop,
    StopKind,
    WatchValue,
)
from dynadbg.core.commands import CommandLine
from dynadbg.core.edits import parse_edit
from dynadbg.core.listeners import QueueListener


def _program() -> None:
    import torch

    def forward(x, n):  # noqa: ANN001, ANN202
        y = x * n
        return y + 1

    compiled = torch.compile(forward, backend="eager")
    compiled(torch.ones(4, 4), 3)


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.slow)])
def engine(request: pytest.FixtureRequest) -> Iterator[tuple[Any, QueueListener]]:
    """A paused engine at the entry of ``forward``'s generated code (x: a 4x4 tensor, n: 3), and its listener."""
    listener = QueueListener()
    if request.param == "fake":
        session: Any = FakeEngine(listener, forward_scenario(teach=True))
        threading.Thread(target=session.start_callable, args=(None,), daemon=True).start()
    else:
        from dynadbg.core.session import Session

        session = Session(listener)
        session.start_callable(_program)
    kind, stop = listener.next()
    assert kind == "stop", stop
    yield session, listener
    session.quit()
    session.wait(timeout=10)


def _stop(engine: Any) -> Stop:
    stop = engine.current_stop()
    assert isinstance(stop, Stop), stop
    return stop


def test_first_stop_is_the_entry_of_generated_code(engine) -> None:  # noqa: ANN001
    session, _ = engine
    stop = _stop(session)
    assert stop.kind is StopKind.ENTRY
    frame = stop.selected_frame
    assert frame is not None and frame.code.generated and 0 <= frame.index <= 2  # at the code's start
    assert frame is stop.frames[-1]
    names = [name for name, _ in frame.locals]
    assert "x" in names and "n" in names
    assert session.paused and not session.finished


def test_step_resumes_and_the_next_stop_follows(engine) -> None:  # noqa: ANN001
    session, listener = engine
    before = _stop(session)
    resumed = session.set_step()
    assert isinstance(resumed, Resumed) and resumed.action == "step"
    kind, stop = listener.next()
    assert kind == "stop" and stop.kind is StopKind.STEP
    assert stop.seq > before.seq
    assert stop.frame.index > before.frame.index
    # the same listing object at every stop in one code object: front ends compare it by identity, not by value
    assert stop.frame.code is before.frame.code
    assert session.set_step(0).kind == "usage"


def test_breakpoints_are_values_and_marked_in_the_next_snapshot(engine) -> None:  # noqa: ANN001
    session, _ = engine
    code = _stop(session).frame.code
    index = len(code.instructions) - 1
    bp = session.set_break(index)
    assert isinstance(bp, BreakpointView)
    assert (bp.index, bp.code_key, bp.opname) == (index, code.key, code.instructions[index].opname)
    assert bp in session.list_breakpoints()
    assert index in _stop(session).frame.breakpoints
    cleared = session.clear_break(index)
    assert isinstance(cleared, tuple) and [b.index for b in cleared] == [index]
    assert index not in _stop(session).frame.breakpoints
    again = session.clear_break(index)
    assert isinstance(again, EngineError) and "no breakpoint" in again.message
    outside = session.set_break(len(code.instructions) + 100)
    assert isinstance(outside, EngineError) and outside.kind == "usage"


def test_watches_evaluate_in_the_selected_frame_and_errors_are_values(engine) -> None:  # noqa: ANN001
    session, listener = engine
    good = session.add_watch("x")
    assert isinstance(good, WatchValue) and good.number == 1 and good.error is None
    bad = session.add_watch("not_a_name_here")
    assert isinstance(bad, WatchValue) and bad.error is not None and "NameError" in bad.error
    refused = session.add_watch("x +")
    assert isinstance(refused, EngineError) and refused.message.startswith("syntax error")
    watches = _stop(session).watches
    assert [w.expr for w in watches] == ["x", "not_a_name_here"]
    assert watches[0].value is not None and watches[0].value.shape == (4, 4)
    assert not watches[0].changed
    session.set_step()
    kind, stop = listener.next()
    assert kind == "stop" and [w.number for w in stop.watches] == [1, 2]
    assert not stop.watches[0].changed  # x is the same tensor one instruction later
    removed = session.remove_watch(2)
    assert isinstance(removed, WatchValue) and removed.expr == "not_a_name_here"
    assert isinstance(session.remove_watch(2), EngineError)
    assert [w.number for w in session.watches()] == [1]


def test_queries_answer_with_model_types(engine) -> None:  # noqa: ANN001
    session, _ = engine
    value = session.evaluate("x")
    assert isinstance(value, EvalResult) and value.value is not None and value.value.shape == (4, 4)
    missing = session.evaluate("not_a_name_here")
    assert isinstance(missing, EngineError) and missing.kind == "eval"
    trees = session.guard_trees()
    assert isinstance(trees, tuple) and trees and isinstance(trees[0], GuardTree) and trees[0].leaf_count > 0
    original = session.original_code()
    assert isinstance(original, CodeView) and not original.generated
    assert session.recompile_records() == ()  # not a recompile stop, and nothing recompiled


def test_wrong_place_and_bad_input_are_error_values(engine) -> None:  # noqa: ANN001
    session, _ = engine
    up = session.up()
    assert isinstance(up, EngineError) and "outermost" in up.message
    decision = session.decide(Decision(DecisionKind.EAGER))
    assert isinstance(decision, EngineError) and decision.kind == "not here"
    preview = session.preview_drop()
    assert isinstance(preview, EngineError) and preview.kind == "not here"
    assert _stop(session).choices == ()
    unknown = CommandLine(session).execute("frobnicate")
    assert unknown.error is not None and "unknown command 'frobnicate'" in unknown.error
    assert _stop(session).kind is StopKind.ENTRY  # nothing changed


def test_edit_preview_installs_nothing(engine) -> None:  # noqa: ANN001
    session, _ = engine
    frame = _stop(session).frame
    op = parse_edit("insert", f"{len(frame.code.instructions) - 1} NOP")
    preview = session.preview_edit(op)
    assert isinstance(preview, EditPreview) and preview.op == op and preview.error is None
    assert preview.diff is not None and preview.diff.added == 1 and preview.diff.removed == 0
    assert session.patch_diff().changed is False  # nothing was installed


def test_back_shows_the_recorded_stop_read_only_and_a_step_returns_to_the_present(engine) -> None:  # noqa: ANN001
    session, listener = engine
    first = _stop(session)
    assert session.history_position() is None
    assert isinstance(session.back(), EngineError)  # only the present is recorded so far
    session.set_step()
    kind, second = listener.next()
    assert kind == "stop"
    view = session.back()
    assert isinstance(view, HistoryView) and view.entry is not None
    assert (view.mark.position, view.mark.total) == (1, 2)
    shown = _stop(session)
    assert shown.history == view.mark == session.history_position()
    assert shown.frame.index == first.frame.index and shown.frame.stack == first.frame.stack
    assert shown.frame.locals == first.frame.locals
    # the live frame is not the one shown: reading or changing it is refused
    assert isinstance(session.evaluate("x"), EngineError)
    assert isinstance(session.set_break(len(first.frame.code.instructions) - 1), EngineError)
    for bad in (0, -1):
        assert session.back(bad).kind == "usage"
    assert session.forward(2).kind == "usage"  # past the present
    again = session.forward()
    assert isinstance(again, HistoryView) and again.at_present and again.stop.seq == second.seq
    assert _stop(session).history is None
    session.back()
    resumed = session.set_step()
    assert isinstance(resumed, Resumed) and resumed.left_history
    assert fmt.resumed_text(resumed).startswith("back to the present")
    kind, third = listener.next()
    assert kind == "stop" and third.frame.index > second.frame.index and third.history is None


def test_after_the_end_methods_answer_not_paused(engine) -> None:  # noqa: ANN001
    session, listener = engine
    session.set_continue()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        kind, _ = listener.next()
        if kind == "exit":
            break
        session.set_continue()
    assert session.finished and not session.paused
    for result in (session.current_stop(), session.set_step(), session.guard_trees(), session.set_break(0)):
        assert isinstance(result, EngineError) and result.kind == "not paused", result
    assert CommandLine(session).execute("s").error == "the program has finished"
    quit_result = CommandLine(session).execute("q")  # a typed quit is still heard: the front end leaves on it
    assert quit_result.quit and not quit_result.error


def _recompiling_program() -> None:
    import torch

    def forward(x, n):  # noqa: ANN001, ANN202
        return x * n

    compiled = torch.compile(forward, backend="eager")
    compiled(torch.ones(2, 4), 1)
    compiled(torch.ones(2, 4), 2)  # L['n'] == 1 fails: a recompile stop


@pytest.fixture(params=["fake", "recorded", pytest.param("real", marks=pytest.mark.slow)])
def at_recompile(request: pytest.FixtureRequest) -> Iterator[tuple[Any, QueueListener, Stop]]:
    """An engine paused at a recompile stop (the fake: the recording of ``tests/programs/module_int_counter.py``'s
    second recompile stop (third call), or its first recompile stop; the real one: ``n`` 1 → 2)."""
    from fake_scenarios import counter_recompile_scenario, recorded_recompile_scenario

    listener = QueueListener()
    if request.param in ("fake", "recorded"):
        scenario = counter_recompile_scenario() if request.param == "fake" else recorded_recompile_scenario()
        session: Any = FakeEngine(listener, scenario)
        threading.Thread(target=session.start_callable, args=(None,), daemon=True).start()
    else:
        from dynadbg.core.session import Session

        session = Session(listener)
        session.start_callable(_recompiling_program)
    kind, stop = listener.next()
    while kind == "stop" and stop.kind is not StopKind.RECOMPILE:
        session.set_continue()
        kind, stop = listener.next()
    assert kind == "stop", stop
    yield session, listener, stop
    session.quit()
    session.wait(timeout=10)


def test_a_recompile_stop_carries_its_choices_as_data(at_recompile) -> None:  # noqa: ANN001
    from dynadbg.core.model import RecompileRecord

    session, listener, stop = at_recompile
    kinds = [c.kind for c in stop.choices]
    assert kinds[:4] == [DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP, DecisionKind.DROP]
    assert set(kinds[4:]) == {DecisionKind.DYNAMIC}
    by_kind = {c.kind: c for c in stop.choices}
    assert all(by_kind[k].available for k in (DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP))
    assert by_kind[DecisionKind.DROP].syntax == "drop [ID...]"
    code = {k: fmt.permanent_text(c.permanent) if c.permanent else "" for k, c in by_kind.items()}
    assert 'set_stance("eager_on_recompile")' in code[DecisionKind.EAGER]
    assert code[DecisionKind.SKIP] != code[DecisionKind.EAGER]
    # what the Recompile view shows first for each: skip's code is not eager's stance line
    first = {k: code[k].splitlines()[0] for k in (DecisionKind.EAGER, DecisionKind.SKIP)}
    assert first[DecisionKind.EAGER] != first[DecisionKind.SKIP]
    assert "recompile_limit" in first[DecisionKind.SKIP]
    # drop asks first: the preview of its default changes nothing and matches the choice's ids
    from dynadbg.core.model import DropPreview

    preview = session.preview_drop()
    assert isinstance(preview, DropPreview) and preview.selected == by_kind[DecisionKind.DROP].decision.guard_ids
    assert preview.default == preview.selected and preview.error is None and preview.permanent is not None
    assert {c.guard.leaf_id for c in preview.candidates} >= set(preview.default)
    assert isinstance(session.preview_drop(("g99999",)), DropPreview) and session.preview_drop(("g99999",)).error
    records = session.recompile_records()
    assert isinstance(records, tuple) and len(records) == 1 and isinstance(records[0], RecompileRecord)
    assert records[0].entries and records[0].entries[0].failing
    resumed = session.decide(Decision(DecisionKind.EAGER))
    assert isinstance(resumed, Resumed) and resumed.action == "eager" and resumed.permanent is not None
    assert 'set_stance("eager_on_recompile")' in fmt.permanent_text(resumed.permanent)


def test_roles_cover_every_instruction_and_explain_refuses_a_bad_index(engine) -> None:  # noqa: ANN001
    session, _ = engine
    frame = _stop(session).selected_frame
    code = frame.code
    roles = session.roles()
    assert isinstance(roles, CodeRoles) and roles.key == code.key  # the TUI matches roles to its listing by key
    assert [r.index for r in roles.roles] == list(range(len(code.instructions)))
    spans = [(r.start, r.end) for r in roles.regions]
    assert spans[0][0] == 0 and spans[-1][1] == len(code.instructions) - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(spans, spans[1:]))  # regions tile the code, in order
    ex = session.explain()
    assert isinstance(ex, Explanation) and ex.index == frame.index
    assert ex.opname == code.instructions[frame.index].opname and ex.meaning and ex.stack is not None
    other = session.explain(0)
    assert isinstance(other, Explanation) and other.index == 0
    bad = session.explain(len(code.instructions) + 5)
    assert isinstance(bad, EngineError) and bad.kind == "usage"


def test_stack_provenance_names_an_instruction_that_pushed_each_slot(engine) -> None:  # noqa: ANN001
    session, listener = engine
    for _ in range(12):  # on until something sits on the value stack
        frame = _stop(session).selected_frame
        if frame.stack:
            break
        assert isinstance(session.set_step(), Resumed)
        assert listener.next()[0] == "stop"
    frame = _stop(session).selected_frame
    assert frame.stack
    prov = session.stack_provenance()
    assert isinstance(prov, Provenance) and prov.index == frame.index
    assert len(prov.slots) == len(frame.stack)
    for k, slot in enumerate(prov.slots):
        assert slot.slot == k and 0 <= slot.index < frame.index
        assert code_opname(frame.code, slot.index) == slot.opname


def code_opname(code: CodeView, index: int) -> str:
    return code.instructions[index].opname


def test_the_fake_has_every_engine_method_with_its_signature() -> None:
    """A method the TUI may call exists on the fake with the protocol's parameters (names, kinds, defaults): a
    renamed parameter or a new method in `Engine` fails here, not in a TUI test that happens to call it."""
    import inspect

    from dynadbg.core.protocol import Engine

    def params(fn: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    names = [n for n in vars(Engine) if not n.startswith("_")]
    assert [n for n in names if not hasattr(FakeEngine, n)] == []
    drifted = {}
    for name in names:
        spec, fake = inspect.getattr_static(Engine, name), inspect.getattr_static(FakeEngine, name)
        if isinstance(spec, property) or not callable(spec):
            assert isinstance(fake, property) or not callable(fake), name
            continue
        if params(spec) != params(getattr(FakeEngine, name)):
            drifted[name] = (str(inspect.signature(spec)), str(inspect.signature(getattr(FakeEngine, name))))
    assert drifted == {}


def test_until_checks_its_index_and_stops_there(engine) -> None:  # noqa: ANN001
    session, listener = engine
    before = _stop(session)
    n = len(before.frame.code.instructions)
    bad = session.set_until(n)
    assert isinstance(bad, EngineError) and bad.kind == "usage" and f"outside 0..{n - 1}" in bad.message
    assert session.paused  # a refused `until` leaves the program where it was
    target = before.frame.index + 1
    resumed = session.set_until(target)
    assert isinstance(resumed, Resumed) and resumed.action == "until"
    kind, stop = listener.next()
    assert kind == "stop" and stop.frame.code is before.frame.code and stop.frame.index == target


def test_frame_selection_is_checked_and_answers_with_the_stop(engine) -> None:  # noqa: ANN001
    session, _ = engine
    stop = _stop(session)
    last = len(stop.frames) - 1
    assert stop.selected == last  # the innermost generated frame is selected at a stop
    bad = session.select_frame(last + 1)
    assert isinstance(bad, EngineError) and f"outside 0..{last}" in bad.message
    again = session.select_frame(last)
    assert isinstance(again, Stop) and again.selected == last
    assert again.selected_frame.code is stop.selected_frame.code and again.selected_frame.index == stop.selected_frame.index
    down = session.down()
    assert isinstance(down, EngineError) and "innermost" in down.message
    if last == 0:
        up = session.up()
        assert isinstance(up, EngineError) and "outermost" in up.message


# -- decisions: each one at a recompile stop, on both engines -----------------------------------------------------

def _next_event(listener: QueueListener) -> str:
    kind, _ = listener.next()
    return kind


@pytest.mark.parametrize("kind", [DecisionKind.RECOMPILE, DecisionKind.EAGER, DecisionKind.SKIP])
def test_a_plain_decision_resumes_with_its_permanent_code(at_recompile, kind: DecisionKind) -> None:  # noqa: ANN001
    session, listener, stop = at_recompile
    resumed = session.decide(Decision(kind))
    assert isinstance(resumed, Resumed) and resumed.action.value == kind.value
    assert resumed.dropped == () and resumed.dynamic == ()
    if kind is not DecisionKind.RECOMPILE:
        assert resumed.permanent is not None and resumed.permanent.kind is kind
    assert _next_event(listener) in ("stop", "exit")  # the program went on
    assert isinstance(session.decide(Decision(kind)), EngineError)  # not at that recompile stop any more


def test_drop_with_ids_drops_exactly_those_guards(at_recompile) -> None:  # noqa: ANN001
    session, listener, stop = at_recompile
    preview = session.preview_drop()
    ids = preview.default
    assert ids, "the default drop is empty"
    wrong = session.decide(Decision(DecisionKind.DROP, ("g99999",)))
    assert isinstance(wrong, EngineError) and session.paused  # an unknown guard is refused; nothing resumed
    resumed = session.decide(Decision(DecisionKind.DROP, ids))
    assert isinstance(resumed, Resumed) and resumed.action.value == "drop"
    assert tuple(ref.leaf_id for ref in resumed.dropped) == ids
    assert all(ref.compile_id == stop.recompile.entries[0].compile_id for ref in resumed.dropped)
    assert _next_event(listener) in ("stop", "exit")


def test_dynamic_name_dim_is_checked_against_the_failing_guards(at_recompile) -> None:  # noqa: ANN001
    """`dynamic x 0` where only another input's guard failed changes nothing: refused, the stop stays."""
    session, listener, stop = at_recompile
    x = dict(stop.selected_frame.locals)["x"]
    assert x.shape is not None
    unknown = session.decide(Decision(DecisionKind.DYNAMIC, name="not_an_input", dim=0))
    assert isinstance(unknown, EngineError) and session.paused
    outside = session.decide(Decision(DecisionKind.DYNAMIC, name="x", dim=len(x.shape)))
    assert isinstance(outside, EngineError) and "DIM must be in" in outside.message
    unneeded = session.decide(Decision(DecisionKind.DYNAMIC, name="x", dim=0))
    assert isinstance(unneeded, EngineError) and unneeded.kind == "rejected"
    assert "no failing guard checks x" in unneeded.message
    assert session.paused and _stop(session).kind is StopKind.RECOMPILE


def test_recompile_queries_answer_at_a_recompile_stop(at_recompile) -> None:  # noqa: ANN001
    from dynadbg.core.model import EntryDiff

    session, _, stop = at_recompile
    trees = session.guard_trees()  # every entry, evaluated on this call's inputs: at least one fails
    assert isinstance(trees, tuple) and trees and any(t.failing for t in trees)
    what_if = session.what_if()
    assert isinstance(what_if, tuple) and {t.compile_id for t in what_if} >= {t.compile_id for t in trees}
    diffs = session.guard_diffs()
    assert isinstance(diffs, tuple) and all(isinstance(d, EntryDiff) for d in diffs)
    listing = session.listing()  # the recompile stop's original code
    assert isinstance(listing, CodeView) and not listing.generated and listing is stop.selected_frame.code


# -- instruction edits: preview, apply, the patch's diff, undo ------------------------------------------------------

def test_an_applied_edit_shows_in_the_patch_diff_until_undone(engine) -> None:  # noqa: ANN001
    from dynadbg.core.model import EditOutcome, PatchDiff

    session, _ = engine
    code = _stop(session).frame.code
    bad = session.preview_edit(parse_edit("insert", "0 POP_TOP"))  # pops from the empty stack at row 0
    assert isinstance(bad, EditPreview) and bad.error is not None and bad.error.kind == "stack underflow"
    refused = session.apply_edit(parse_edit("insert", "0 POP_TOP"))
    assert isinstance(refused, EditOutcome) and refused.error is not None
    op = parse_edit("insert", f"{len(code.instructions) - 1} NOP")
    outcome = session.apply_edit(op)
    assert isinstance(outcome, EditOutcome) and outcome.error is None
    diff = session.patch_diff()
    assert isinstance(diff, PatchDiff) and (diff.added, diff.removed) == (1, 0)
    assert [line.text for line in diff.lines if line.tag == "+"] == ["NOP"]
    undone = session.undo_patch()
    assert isinstance(undone, EditOutcome) and undone.error is None
    assert session.patch_diff().changed is False
    again = session.undo_patch()
    assert isinstance(again, EditOutcome) and again.error is not None  # nothing left to undo


# -- queries about the code and its compiles ----------------------------------------------------------------------

def test_code_and_compile_queries_answer_with_model_types(engine) -> None:  # noqa: ANN001
    from dynadbg.core.model import CompilesData, FrameRecompiles, GraphView

    session, _ = engine
    stop = _stop(session)
    assert session.listing() == stop.frame.code
    name, start, lines = session.source()
    assert lines and lines[0].lstrip().startswith("def forward") and start >= 1
    whole = session.source(whole_file=True)
    assert whole[0] == name and whole[1] == 1 and whole[2][start - 1:start - 1 + len(lines)] == lines
    graphs = session.graphs()
    assert isinstance(graphs, tuple) and graphs and all(isinstance(g, GraphView) for g in graphs)
    assert all(g.name.startswith("__compiled_fn") for g in graphs)
    entries = session.entries()
    assert isinstance(entries, FrameRecompiles) and stop.compile_id in {e.compile_id for e in entries.entries}
    what_if = session.what_if()
    assert isinstance(what_if, tuple) and what_if and all(isinstance(t, GuardTree) for t in what_if)
    assert isinstance(session.guard_diffs(), tuple)
    compiles = session.compiles()
    assert isinstance(compiles, CompilesData) and "forward" in {f.name for f in compiles.frames}


# -- control: next, return, detach -----------------------------------------------------------------------------------

def test_next_goes_on_in_the_selected_frame(engine) -> None:  # noqa: ANN001
    session, listener = engine
    before = _stop(session)
    resumed = session.set_next()
    assert isinstance(resumed, Resumed) and resumed.action.value == "next"
    kind, stop = listener.next()
    assert kind == "stop" and stop.frame.code is before.frame.code and stop.frame.index > before.frame.index
    assert session.set_next(0).kind == "usage"
    returned = session.set_return()
    assert isinstance(returned, Resumed) and returned.action.value == "return"
    assert _next_event(listener) in ("stop", "exit")


def test_detach_clears_breakpoints_and_runs_to_the_end(engine) -> None:  # noqa: ANN001
    session, listener = engine
    code = _stop(session).frame.code
    session.set_break(len(code.instructions) - 1)
    resumed = session.detach()
    assert isinstance(resumed, Resumed) and resumed.action.value == "detach"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _next_event(listener) != "exit":
        pass  # a stop here would be a breakpoint or a stop kind that detach should have cleared
    assert session.finished and session.list_breakpoints() == ()


# -- breakpoints: stop kinds ---------------------------------------------------------------------------------------

def test_stop_kinds_switch_on_and_off(engine) -> None:  # noqa: ANN001
    session, _ = engine
    before = session.set_break_on()
    assert isinstance(before, frozenset)
    off = session.set_break_on("exception", False)
    assert off == before - {"exception"}
    on = session.set_break_on("exception", True)
    assert on == off | {"exception"}
    bad = session.set_break_on("not_a_kind")
    assert isinstance(bad, EngineError) and bad.kind == "usage"


def test_verbose_switches_and_toggles(engine) -> None:  # noqa: ANN001
    session, _ = engine
    assert session.set_verbose(True) is True
    assert session.set_verbose() is False  # None toggles
    assert session.set_verbose(False) is False


# -- history: its bounds and the present -------------------------------------------------------------------------------

def test_history_info_bounds_and_present(engine) -> None:  # noqa: ANN001
    from dynadbg.core.model import HistoryInfo

    session, listener = engine
    for _ in range(2):
        session.set_step()
        assert _next_event(listener) == "stop"
    info = session.history_info()
    assert isinstance(info, HistoryInfo) and info.count == 3 and info.position is None
    assert [n for n, _ in session.history_info(recent=2).recent] == [2, 3]
    session.back()
    refused = session.set_history_bounds(limit=2)
    assert isinstance(refused, EngineError)  # not while history is shown
    present = session.present()
    assert isinstance(present, Stop) and present.history is None and session.history_position() is None
    bounded = session.set_history_bounds(limit=2)
    assert isinstance(bounded, HistoryInfo) and (bounded.count, bounded.limit) == (2, 2) and bounded.evicted == 1


# -- every method of `Engine` has a contract test ---------------------------------------------------------------------

#: Each group of `Engine` methods and the contract tests above that run them on both engines.
GROUPS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "the stop": (frozenset({"paused", "finished", "current_stop"}),
                 ("test_first_stop_is_the_entry_of_generated_code", "test_after_the_end_methods_answer_not_paused")),
    "history": (frozenset({"back", "forward", "present", "history_position", "history_info", "set_history_bounds"}),
                ("test_back_shows_the_recorded_stop_read_only_and_a_step_returns_to_the_present",
                 "test_history_info_bounds_and_present")),
    "control": (frozenset({"set_step", "set_next", "set_return", "set_continue", "set_until", "detach", "quit"}),
                ("test_step_resumes_and_the_next_stop_follows", "test_next_goes_on_in_the_selected_frame",
                 "test_until_checks_its_index_and_stops_there", "test_detach_clears_breakpoints_and_runs_to_the_end",
                 "test_after_the_end_methods_answer_not_paused")),
    "breakpoints": (frozenset({"set_break", "clear_break", "list_breakpoints", "set_break_on"}),
                    ("test_breakpoints_are_values_and_marked_in_the_next_snapshot",
                     "test_stop_kinds_switch_on_and_off")),
    "frames": (frozenset({"select_frame", "up", "down"}),
               ("test_frame_selection_is_checked_and_answers_with_the_stop",
                "test_wrong_place_and_bad_input_are_error_values")),
    "values and watches": (frozenset({"evaluate", "set_verbose", "add_watch", "remove_watch", "watches"}),
                           ("test_queries_answer_with_model_types", "test_verbose_switches_and_toggles",
                            "test_watches_evaluate_in_the_selected_frame_and_errors_are_values")),
    "decisions": (frozenset({"decide", "preview_drop"}),
                  ("test_a_recompile_stop_carries_its_choices_as_data",
                   "test_a_plain_decision_resumes_with_its_permanent_code",
                   "test_drop_with_ids_drops_exactly_those_guards",
                   "test_dynamic_name_dim_is_checked_against_the_failing_guards")),
    "queries": (frozenset({"listing", "original_code", "source", "graphs", "entries", "guard_trees", "what_if",
                           "recompile_records", "guard_diffs", "compiles"}),
                ("test_queries_answer_with_model_types", "test_code_and_compile_queries_answer_with_model_types",
                 "test_recompile_queries_answer_at_a_recompile_stop")),
    "teaching": (frozenset({"roles", "explain", "stack_provenance"}),
                 ("test_roles_cover_every_instruction_and_explain_refuses_a_bad_index",
                  "test_stack_provenance_names_an_instruction_that_pushed_each_slot")),
    "instruction edits": (frozenset({"preview_edit", "apply_edit", "patch_diff", "undo_patch"}),
                          ("test_edit_preview_installs_nothing",
                           "test_an_applied_edit_shows_in_the_patch_diff_until_undone")),
}

#: Methods the fake does not simulate (it answers them with an error value of the engine's type), and why; the
#: real engine's own tests cover them (tests/core). A method named here needs no contract test.
NOT_IN_THE_FAKE = {
    "interrupt": "needs a program that runs on its own (the fake's held-running scenarios: tests/app/test_tui_app.py)",
    "exec_statement": "runs a statement in a live frame (the real engine: tests/core)",
    "global_values": "reads a live frame's globals (the real engine: tests/core)",
    "set_local": "writes a live frame's local (the real engine: tests/core)",
    "patches": "patch files (tests/core/test_patches.py)",
    "save_patches": "patch files (tests/core/test_patches.py)",
    "load_patches": "patch files (tests/core/test_patches.py)",
    "add_guard": "guard edits (tests/core/test_guard_edits.py)",
    "drop_guard": "guard edits (tests/core/test_guard_edits.py)",
    "undo_guard_edit": "guard edits (tests/core/test_guard_edits.py)",
    "guard_edits": "guard edits (tests/core/test_guard_edits.py)",
    "export_guard_filter": "guard edits (tests/core/test_guard_edits.py)",
}


def test_every_engine_method_belongs_to_a_contract_group() -> None:
    """A new `Engine` method fails here until a contract test runs it on both engines (and names it in its group)
    or it is listed, with why, among the methods the fake does not simulate."""
    from dynadbg.core.protocol import Engine

    methods = {n for n in vars(Engine) if not n.startswith("_")}
    grouped = set().union(*(names for names, _ in GROUPS.values()))
    assert sorted(methods - grouped - set(NOT_IN_THE_FAKE)) == []
    assert sorted((grouped | set(NOT_IN_THE_FAKE)) - methods) == []  # no stale name
    assert grouped.isdisjoint(NOT_IN_THE_FAKE)
    here = globals()
    for group, (_, tests) in GROUPS.items():
        assert tests, group
        for name in tests:
            assert callable(here.get(name)), f"{group}: no contract test {name}"
