"""Recompile insight (issue 4): the recompile stop's analysis, its choices (drop, dynamic, eager, skip), the
graph-break stop, the compiles/entries views and `report`'s additions — on real compiles, driven like test_bdb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from dynadbg.core import decisions
from dynadbg.core import recompile as rc
from dynadbg.core import format as fmt
from dynadbg.core.format import recompile as fmt_rc
from dynadbg.core.commands import help_text
from dynadbg.core.model import (CompiledFrameView, Decision, DecisionKind, DropRisk, GuardStatus, LeafGuardView,
                                StopKind)
from dynadbg.core.report import run_report
from helpers import drive
from programs import recompiles as progs
from programs import simple

PROGRAMS = Path(__file__).resolve().parent / "programs"


def detail(stop) -> dict[str, str]:
    """The stop's text blocks by title, as line mode prints them (`format.stop_blocks`)."""
    return dict(fmt.stop_blocks(stop))


def start(fn, *args):
    return lambda s: s.start_callable(fn, *args)


def entries_of(session, name: str):
    return [f for f in session.compiled_frames() if f.name == name and f.entries]


# ------------------------------------------------------------------------------------------------------------
# the recompile stop
# ------------------------------------------------------------------------------------------------------------


def test_a_fault_building_the_recompile_stop_is_said_and_the_program_goes_on(monkeypatch):
    """A debugger bug while building a recompile stop must not vanish into torch's cache-miss hook: the user is
    told there is no stop, torch recompiles, the program's results are unchanged."""
    from dynadbg.core import session as session_mod

    def broken(*args, **kwargs):
        raise ValueError("no stop for you")

    monkeypatch.setattr(session_mod, "build_stop", broken)
    results: list = []
    run = drive(start(progs.run_three, results), ["c"], break_on=("recompile",))
    assert not run.stops
    assert any("internal error at the recompile stop" in m and "no stop for you" in m for m in run.messages), \
        run.messages
    assert run.result is not None and run.result.status == 0 and len(results) == 2


def test_three_guards_failing_at_once_are_all_listed_at_the_stop():
    results: list = []
    run = drive(start(progs.run_three, results), ["why", "recompile"], break_on=("recompile",))
    (stop,) = run.stops
    assert stop.kind is StopKind.RECOMPILE and stop.entry_count == 1
    text = detail(stop)["failing guards"]
    assert "next compile: 0/1" in text
    assert "0/0: 3 failing guards" in text
    for code in ("L['n'] == 1", "L['flag'] == True", "L['cfg']['scale'] == 0.5"):
        assert code in text, code
    assert "expected 1, actual 2" in text and "expected 0.5, actual 0.25" in text
    # torch's own (first) reason is marked, spelled as torch prints it
    assert "torch reports: 0/0: n == 1" in text and "<- torch reports this one" in text
    why = run.output_of("why")
    assert why.error is None and isinstance(why.data, rc.RecompileRecord)
    assert {leaf.source for leaf in why.data.entries[0].failing} == {"L['n']", "L['flag']", "L['cfg']['scale']"}
    assert "n: 1 → 2" in detail(stop)["inputs"]
    assert results[1] == [0.5, 0.5, 0.5]


def test_each_stop_lists_every_entry_diffs_and_the_recompile_limit():
    results: list = []
    run = drive(start(progs.run_counter, results, 3), ["c", "c"], break_on=("recompile",))
    assert [s.entry_count for s in run.stops] == [1, 2]
    second = detail(run.stops[1])
    failing = second["failing guards"]
    assert "next compile: 0/2" in failing
    assert "0/1: 1 failing guard" in failing and "0/0: 1 failing guard" in failing
    assert "L['self'].counter == 1" in failing and "L['self'].counter == 0" in failing
    assert "0/0 → 0/1: 1 changed" in second["guard diffs"]
    assert "L['self'].counter == 0 → L['self'].counter == 1" in second["guard diffs"]
    assert second["recompile limit"].startswith("2 of recompile_limit 8 used")
    choices = second["choices"]
    assert 'torch._dynamo.config.allow_unspec_int_on_nn_module = True' in choices
    assert '"guard_filter_fn"' in choices and "RESULTS MAY BE WRONG" in choices
    records = run.session.recompiles.records()
    assert [(r.seq, r.compile_id, r.decision, fmt_rc.outcome_text(r)) for r in records] == [
        (1, "0/1", "recompile", "compiled 0/1"), (2, "0/2", "recompile", "compiled 0/2")]
    # `c` there decided for the user: it says so (a newcomer's stray `c` key recompiled, and only "> continue" showed)
    assert run.outputs[0][1].output == ("at a recompile stop this lets Dynamo compile a new cache entry for the call "
                                        "(the default decision; `eager` or `skip` decide otherwise)")


def test_recompile_limit_hit_is_flagged_and_drop_refused():
    results: list = []
    run = drive(start(progs.run_counter, results, 4, 2), ["c", "drop", "dynamic x 0", "compiles", "c"],
                break_on=("recompile",))
    first, second = run.stops
    assert "after this compile 2 of 2: the NEXT recompile of this code hits the limit" in detail(first)["recompile limit"]
    assert "LIMIT HIT" in detail(second)["recompile limit"]
    assert "recompile_limit" in run.output_of("drop").error
    assert run.output_of("dynamic x 0").error
    data = run.output_of("compiles").data
    assert isinstance(data, rc.CompilesData)
    assert [r.compile_id for r in data.limit_hits] == ["0/2"]
    assert "RECOMPILE LIMIT HIT" in run.output_of("compiles").output
    (frame,) = entries_of(run.session, "forward")
    assert [e.compile_id for e in frame.entries] == ["0/0", "0/1"]
    assert results[-1] == ("counter", 4)           # the rest ran eagerly, correctly


def test_eager_runs_uncompiled_and_keeps_the_entry_count():
    results: list = []
    run = drive(start(progs.run_counter, results, 4), ["eager", "eager", "entries", "eager"], break_on=("recompile",))
    assert len(run.stops) == 3
    out = run.output_of("eager").output
    assert 'torch.compiler.set_stance("eager_on_recompile")' in out
    entries = run.output_of("entries")
    assert entries.error is None and "1 cache entry" in entries.output
    assert isinstance(entries.data, rc.FrameRecompiles) and len(entries.data.entries) == 1
    assert isinstance(entries.data, CompiledFrameView)      # front ends that know only the base view still work
    assert [r.decision for r in entries.data.timeline] == ["eager", "eager", "recompile"]
    # eager compiled nothing: its records name no entry (not the id that was predicted at the miss)
    assert [r.compile_id for r in entries.data.timeline] == [None, None, "0/1"]
    assert "#1 → not compiled: eager" in entries.output and "→ 0/1: eager" not in entries.output, entries.output
    (frame,) = entries_of(run.session, "forward")
    assert len(frame.entries) == 1
    assert results == [0.5, 1.0, 1.5, 2.0, ("counter", 4)]   # eager results are right


def test_skip_stops_compiling_and_prints_the_permanent_code():
    results: list = []
    run = drive(start(progs.run_counter, results, 4), ["skip"], break_on=("recompile",))
    assert len(run.stops) == 1
    assert "eager_on_recompile" in run.output_of("skip").output
    (frame,) = entries_of(run.session, "forward")
    assert len(frame.entries) == 1
    assert results[-1] == ("counter", 4)


def test_drop_filters_the_failing_guard_out_of_the_next_compile_and_warns():
    results: list = []
    run = drive(start(progs.run_counter, results, 4), ["drop"], break_on=("recompile",))
    assert len(run.stops) == 1                     # no more recompiles: the new entry does not check the counter
    out = run.output_of("drop")
    assert out.resumed and out.error is None
    assert "recompiling without: g" in out.output and "L['self'].counter == 0" in out.output
    assert "WARNING" in out.output and "RESULTS MAY BE WRONG" in out.output
    assert ('lambda entries: [not (e.name == "self.counter" and e.guard_type in ("CONSTANT_MATCH", "EQUALS_MATCH"))'
            in out.output)
    assert any("compiled 0/1 without 2 guard(s)" in m for m in run.messages), run.messages
    (frame,) = entries_of(run.session, "forward")
    assert [e.compile_id for e in frame.entries] == ["0/0", "0/1"]
    # the counter was baked in as a constant: the dropped guard gives the wrong results the warning announced
    assert results[-1] == ("counter", 2)
    record = run.session.recompiles.records()[0]
    assert record.action.kind is DecisionKind.DROP and record.action.guard_ids[0].startswith("g")
    assert record.outcome.compile_id == "0/1" and record.outcome.drop.dropped
    assert fmt_rc.outcome_text(record).startswith("compiled 0/1 without 2 guard(s)")
    # the constant-folding warning is said once, with the decision; the compile's report does not repeat it
    assert not any("RESULTS MAY BE WRONG" in m for m in run.messages), run.messages
    # the guard filter patch is gone after the run
    import torch._dynamo.convert_frame as cf
    from torch._dynamo.guards import CheckFunctionManager

    assert cf.CheckFunctionManager is CheckFunctionManager


def test_drop_by_id_then_more_recompiles_stop_again():
    results: list = []
    # ids are stable: child managers are walked in source order (g7 = L['n'] == 1 in `guards fail`)
    run = drive(start(progs.run_three, results), ["drop 0/0:g7"], break_on=("recompile",))
    out = run.output_of("drop 0/0:g7")
    assert out.error is None and "L['n'] == 1" in out.output
    assert results[1] == [0.5, 0.5, 0.5]


def test_drop_says_which_guards_the_new_compile_no_longer_has():
    # n (int) and cfg['scale'] (float) become symbolic in 0/1 (automatic dynamic): only flag's guard is dropped
    run = drive(start(progs.run_three, []), ["drop"], break_on=("recompile",))
    (message,) = [m for m in run.messages if m.startswith("drop:")]
    assert message.startswith("drop: compiled 0/1 without 1 guard(s): CONSTANT_MATCH L['flag']")
    # what 0/1 guards instead, read off its recorded guard filter entries (not a guess)
    assert ("not built in 0/1, so nothing to drop for them: EQUALS_MATCH L['cfg']['scale'] (0/1 guards it with "
            "TYPE_MATCH: automatic dynamic made it symbolic, only its type is guarded); EQUALS_MATCH L['n'] (0/1 "
            "guards it with TYPE_MATCH: automatic dynamic made it symbolic, only its type is guarded)") in message
    # the warnings were said with the decision, each once; the compile's report does not repeat them
    assert "WARNING" not in message
    decided = run.output_of("drop").output
    assert decided.count("WARNING") == 3 and "L['flag'] is a constant" in decided


@pytest.mark.parametrize("line, message", [
    ("drop g999", "has no guard g999"),
    ("drop zz", "bad guard id"),
    ("drop 7/7:g1", "no cache entry 7/7"),
    ("dynamic", "usage: dynamic NAME DIM"),
    ("dynamic x", "usage: dynamic NAME DIM"),
    ("dynamic nosuch 0", "no input named 'nosuch'"),
    ("dynamic self 0", "not a tensor"),
    ("dynamic x zero", "DIM must be an integer"),
    ("dynamic x 5", "DIM must be in -1..0"),
    ("dynamic x[ 0", "bad NAME"),
    ("why 0/x", "bad compile id"),
    ("diff 0/0", "usage: diff"),
])
def test_bad_input_is_an_error_line_and_changes_nothing(line, message):
    results: list = []
    run = drive(start(progs.run_counter, results, 2), [line, "guards fail", "c"], break_on=("recompile",))
    res = run.output_of(line)
    assert res.error is not None and message in res.error, res.error
    assert not res.resumed
    assert run.session.recompiles.records()[0].action is None
    assert run.session._guard_dropper is None  # nothing was scheduled, so no guard filter was made
    (frame,) = entries_of(run.session, "forward")
    assert len(frame.entries) == 2                   # the `c` that followed recompiled as usual


def test_choices_need_a_recompile_stop():
    run = drive(start(simple.run_graph_break, []), ["drop", "dynamic x 0"], break_on=("entry",))
    assert run.output_of("drop").error == "only at a recompile stop"
    assert run.output_of("dynamic x 0").error == "only at a recompile stop"


def test_dynamic_marks_the_dimension_and_later_sizes_reuse_the_entry():
    results: list = []
    run = drive(start(progs.run_sizes, results), ["dynamic x 0"], break_on=("recompile",))
    out = run.output_of("dynamic x 0")
    assert out.error is None and out.resumed
    assert "torch._dynamo.mark_dynamic(x, 0)" in out.output
    assert len(run.stops) == 1                     # sizes 5 and 6 reuse the dynamic entry
    (frame,) = entries_of(run.session, "scale_rows")
    assert [e.compile_id for e in frame.entries] == ["0/0", "0/1"]
    assert results == [6.0, 8.0, 10.0, 12.0]
    assert run.session.recompiles.records()[0].action == Decision(DecisionKind.DYNAMIC, name="x", dim=0)
    assert fmt_rc.action_text(run.session.recompiles.records()[0]) == "mark_dynamic(x, 0)"


def test_without_dynamic_every_size_recompiles():
    run = drive(start(progs.run_sizes, []), ["c", "c", "c"], break_on=("recompile",))
    assert len(run.stops) == 3
    assert "dynamic x 0" in detail(run.stops[0])["choices"]         # the stop suggests it


# ------------------------------------------------------------------------------------------------------------
# failures that are not about the inputs, what-if on missing values, relational guards
# ------------------------------------------------------------------------------------------------------------


def test_grad_mode_change_is_named_as_global_state():
    run = drive(start(progs.run_grad_mode, []), ["c"], break_on=("recompile",))
    (stop,) = run.stops
    text = detail(stop)["not about the inputs"]
    assert "[global state]" in text and "grad_mode" in text and "grad mode is off" in text


def test_invalidated_entry_is_named():
    results: list = []
    run = drive(start(progs.run_invalidated, results), ["c"], break_on=("recompile",))
    if results[1] is not True:
        pytest.skip("this interpreter kept the guarded class alive, so torch did not invalidate the entry")
    (stop,) = run.stops
    d = detail(stop)
    assert "got deallocated" in d["failing guards"]
    assert "[invalidated]" in d["not about the inputs"]


def test_aliasing_is_judged_through_the_root():
    run = drive(start(progs.run_aliasing, []), ["why", "c"], break_on=("recompile",))
    record = run.output_of("why").data
    (leaf,) = record.entries[0].failing
    assert leaf.guard_type == "NO_TENSOR_ALIASING" and leaf.status is GuardStatus.FAIL
    assert leaf.relational


def test_what_if_marks_missing_closure_variable_and_key_no_value():
    inner = progs.make_closure(3.0)
    cf = torch.compile(inner, backend="eager")
    cf(torch.ones(2), {"a": 1.0})
    entries = torch._dynamo.eval_frame._debug_get_cache_entry_list(inner.__code__)
    # no free variable `k`, no key "a": guards on them have no value; nothing raises
    (tree,) = rc.what_if(entries, {"x": torch.ones(2), "cfg": {}})
    statuses = {leaf.source: leaf.status for leaf in tree.failing}
    assert statuses.get("L['k']") is GuardStatus.NO_VALUE
    assert statuses.get("L['cfg']['a']") is GuardStatus.NO_VALUE
    # the closure variable given back: only the key is missing
    (tree,) = rc.what_if(entries, {"x": torch.ones(2), "cfg": {}}, closure={"k": 3.0})
    assert [leaf.source for leaf in tree.failing] == ["L['cfg']['a']"]
    record = rc.analyze_miss(inner.__code__, {"x": torch.ones(2), "cfg": {}}, entries)
    assert record.error is None and "no value" in fmt_rc.failing_text(record)


def test_relational_guard_evaluated_through_root_in_what_if():
    cf = torch.compile(progs.add, backend="eager")
    t = torch.ones(2)
    cf(t, torch.ones(2))
    entries = torch._dynamo.eval_frame._debug_get_cache_entry_list(progs.add.__code__)
    (tree,) = rc.what_if(entries, {"a": t, "b": t})
    (leaf,) = tree.failing
    assert leaf.guard_type == "NO_TENSOR_ALIASING" and leaf.status is GuardStatus.FAIL
    (tree,) = rc.what_if(entries, {"a": t, "b": torch.ones(2)})
    assert tree.passed


def test_relational_and_pseudo_guards_cannot_be_dropped():
    with pytest.raises(ValueError, match="relational"):
        decisions.drop_spec(LeafGuardView("g1", "NO_TENSOR_ALIASING", "L['a']", ("x",), relational=True))
    with pytest.raises(ValueError, match="not a guard"):
        decisions.drop_spec(LeafGuardView("g0", "CACHE_ENTRY_INVALIDATED", "L", ("gone",)))
    spec = decisions.drop_spec(LeafGuardView("g2", "GLOBAL_STATE", "L", ("___check_global_state()",)))
    assert spec.source == "" and spec.filter_types == ("GLOBAL_STATE",)
    assert spec.warning.risk is DropRisk.GLOBAL_STATE and "global-state" in fmt_rc.drop_warning_text(spec.warning)


# ------------------------------------------------------------------------------------------------------------
# graph-break stop, compiles / entries
# ------------------------------------------------------------------------------------------------------------


def test_graph_break_stop_names_the_break_the_resume_function_and_the_stack_passed():
    run = drive(start(simple.run_graph_break, []), [], break_on=("graph-break",))
    (stop,) = run.stops
    text = detail(stop)["graph break"]
    assert "resume function torch_dynamo_resume_in_graph_break_at_8 (compile 1/0) continues graph_break" in text
    assert "at offset" in text
    assert "graph break in graph_break during compile 0/0, at" in text and 'print("brk")' in text
    assert "reason: Encountered graph break" in text and "Explanation:" in text
    assert "stack passed to it" in text and "___stack0 = None" in text
    assert "locals carried over:\n  y = Tensor[3] float32 cpu" in text


def test_hits_are_real_numbers_and_the_timeline_is_in_compile_order():
    results: list = []
    run = drive(start(progs.run_counter, results, 4), ["c", "c", "compiles", "entries"], break_on=("recompile",))
    comp = run.output_of("compiles")
    assert "hits=?" not in comp.output
    data = comp.data
    (frame,) = [f for f in data.frames if f.name == "forward"]
    assert [e.hits for e in frame.entries] == [1, 1, 1]     # the fourth call is paused before its compile
    assert [r.seq for r in data.timeline] == [1, 2, 3]
    assert [r.compile_id for r in data.timeline] == ["0/1", "0/2", "0/3"]
    assert data.timeline[1].torch_reasons[0].startswith("0/1: self.counter == 1")
    assert "recompiles (in the order they happened):" in comp.output
    ent = run.output_of("entries")
    assert "hits=1" in ent.output and "pending" in ent.output
    # after the run every call is counted
    session = run.session
    (view,) = entries_of(session, "forward")
    assert sum(e.hits for e in view.entries) == 4


def test_why_and_diff_away_from_a_recompile_stop():
    results: list = []
    lines = ["why", "c", "c", "why", "why 0/1", "diff", "diff 0/0 0/2", "why 0/9", "diff 0/0 0/7"]
    run = drive(start(progs.run_counter, results, 3), lines, break_on=("entry",))
    assert [s.compile_id for s in run.stops] == ["0/0", "0/1", "0/2"]     # entry stops of each new entry
    assert "has not recompiled" in run.outputs[0][1].output
    why = run.outputs[3][1]
    assert why.error is None and [r.compile_id for r in why.data] == ["0/1", "0/2"]
    assert "#1 Counter.forward → 0/1: recompile; compiled 0/1" in why.output
    assert [r.compile_id for r in run.output_of("why 0/1").data] == ["0/1"]
    diff = run.output_of("diff")
    assert "0/0 → 0/1: 1 changed" in diff.output and "0/1 → 0/2: 1 changed" in diff.output
    assert "L['self'].counter == 0 → L['self'].counter == 2" in run.output_of("diff 0/0 0/2").output
    assert "no recompile of forward produced 0/9" in run.output_of("why 0/9").error
    assert "no live cache entry 0/7" in run.output_of("diff 0/0 0/7").error


def test_help_lists_the_new_commands():
    text = help_text()
    for name in ("drop [ID...]", "dynamic NAME DIM", "why [COMPILE_ID]", "diff [OLD NEW]"):
        assert name in text


# ------------------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------------------


def test_report_lists_all_failing_guards_diffs_and_hits():
    result = run_report(str(PROGRAMS / "three_guards_script.py"))
    assert result.status == 0
    data = json.loads(json.dumps(result.json()))
    (frame,) = [f for f in data["frames"] if f["name"] == "three"]
    (rec,) = frame["recompiles"]
    analysis = rec["analysis"]
    assert analysis["compile_id"] == "0/1" == rec["compile_id"]
    (checked,) = analysis["entries_checked"]
    assert checked["compile_id"] == "0/0"
    codes = {tuple(g["code"]) for g in checked["failing"]}
    assert codes == {("L['n'] == 1",), ("L['flag'] == True",), ("L['cfg']['scale'] == 0.5",)}
    assert [g["torch_reports"] for g in checked["failing"]].count(True) == 1
    assert checked["torch_reason"].startswith("0/0: n == 1")
    assert analysis["limit"]["limit"] == torch._dynamo.config.recompile_limit
    assert [e["hits"] for e in frame["entries"]] == [1, 2]
    (diffs,) = frame["guard_diffs"]
    assert (diffs["old"], diffs["new"]) == ("0/0", "0/1") and diffs["diffs"]
    assert data["summary"]["misses"] == 1 and data["summary"]["recompile_limit_hits"] == 0
    (row,) = data["recompile_timeline"]
    assert row["compile_id"] == "0/1" and row["failing_guards"] == 3 and row["outcome"] == "compiled 0/1"
    text = result.text(full=True)
    assert "every failing guard" in text
    for code in ("L['n'] == 1", "L['flag'] == True", "L['cfg']['scale'] == 0.5"):
        assert code in text
    assert "guard diffs of consecutive entries:" in text and "recompile timeline" in text
