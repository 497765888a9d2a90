"""Checked advice: what a recompile stop tells the user to do is built from what torch has and checked before it is
printed (guard filters from the compile's own ``GuardFilterEntry`` records, fixes on the user's own call, no
``mark_dynamic`` on sizes 0 and 1, stances described once), every choice does what it says on ``fullgraph=True``
code, misses after the recompile limit name their failing guards, duplicate graph breaks are judged as torch
judges them, a graph break with no resume function stops, torch's caveats are said, and every guard id shown
resolves. Programs run in-process under a real `Session` (tests/programs and tests/core/programs/advice_cases.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dynadbg.core import stances
from dynadbg.core.callsites import CallSite, CallSiteKind, with_keyword, with_option
from dynadbg.core.filter_entries import (
    CompileFilterEntries,
    FilterEntry,
    NoFilterKind,
    evaluate_filter,
    filter_source,
    plan_filter,
    FilterTerm,
)
from dynadbg.core.format import permanent_text
from dynadbg.core.format.advice import choice_detail_text, choice_why_not_text
from dynadbg.core.format.glossary import Glossary
from dynadbg.core.format.recompile import choice_warning_texts
from dynadbg.core.model import GuardStatus, LeafGuardView, StopKind

from helpers import builtin_filter_type, drive
from programs import advice_cases as cases

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "programs"


def script(name: str):
    return lambda s: s.start_script(str(PROGRAMS / name), [])


def call(fn, *args):
    return lambda s: s.start_callable(fn, *args)


def detail(stop) -> dict[str, str]:
    from dynadbg.core import format as fmt

    return dict(fmt.stop_blocks(stop))


def choice(stop, kind: str):
    return next(c for c in stop.choices if c.kind.value == kind)


# --------------------------------------------------------------------------------------------------------------
# the pure parts: a filter planned on recorded entries, the user's call rewritten
# --------------------------------------------------------------------------------------------------------------

def _entries(*rows: tuple[str, str, str, tuple[str, ...]]) -> CompileFilterEntries:
    return CompileFilterEntries(1, "f", "0/0", tuple(FilterEntry(i, name, source, gtype, derived, False)
                                                     for i, (name, source, gtype, derived) in enumerate(rows)))


def _leaf(lid: str, gtype: str, source: str, code: str = "") -> LeafGuardView:
    return LeafGuardView(lid, gtype, source, (code or f"{gtype}({source})",), status=GuardStatus.FAIL)


def test_a_builtin_function_argument_is_filtered_as_builtin_match_and_the_text_is_what_was_checked():
    recorded = _entries(("x", "L['x']", "TENSOR_MATCH", ("TENSOR_MATCH",)), ("op", "L['op']", "BUILTIN_MATCH",
                                                                            ("ID_MATCH",)))
    plan = plan_filter([_leaf("g5", "ID_MATCH", "L['op']")], recorded)
    assert plan.ok and [e.label for e in plan.dropped] == ["op BUILTIN_MATCH"] and plan.kept == 1
    assert plan.source == 'lambda entries: [not (e.name == "op" and e.guard_type == "BUILTIN_MATCH") for e in entries]'
    # the very text is run on the recorded entries: it keeps x, drops op
    assert evaluate_filter(plan.source, recorded.entries) == (True, False)


def test_a_value_guard_of_a_module_attribute_needs_both_of_its_entries():
    recorded = _entries(("self.counter", "L['self'].counter", "CONSTANT_MATCH", ("EQUALS_MATCH",)),
                        ("self.counter", "L['self'].counter", "EQUALS_MATCH", ("EQUALS_MATCH",)))
    plan = plan_filter([_leaf("g3", "EQUALS_MATCH", "L['self'].counter")], recorded)
    assert plan.ok and len(plan.dropped) == 2
    assert '("CONSTANT_MATCH", "EQUALS_MATCH")' in plan.source


@pytest.mark.parametrize(("leaf", "kind", "said"), [
    (_leaf("g7", "DIMENSION_DYNAMIC_MARKING_GUARD", "L['x']", "hasattr(L['x'], '_dynamo_dynamic_indices') == False"),
     NoFilterKind.SHARED_ENTRY, "TENSOR_MATCH"),
    (LeafGuardView("g9", "NO_TENSOR_ALIASING", "L['x']", ("check_no_aliasing(L['x'], L['y'])",), relational=True),
     NoFilterKind.RELATIONAL, None),
    (_leaf("backend", "BACKEND_MATCH", "L"), NoFilterKind.NOT_A_GUARD, None),
])
def test_no_filter_for_a_guard_no_entry_stands_for_alone(leaf, kind, said):
    recorded = _entries(("x", "L['x']", "TENSOR_MATCH", ("TENSOR_MATCH",)))
    plan = plan_filter([leaf], recorded)
    assert not plan.ok and not plan.source and [w.kind for w in plan.why_not] == [kind]
    if said:
        assert plan.why_not[0].collateral == (said,)


def test_a_tensor_subclass_metadata_guard_is_its_own_entry():
    recorded = _entries(("x", "L['x']", "TYPE_MATCH", ("TYPE_MATCH",)),
                        ("x", "L['x']", "TENSOR_SUBCLASS_METADATA_MATCH", ()),
                        ("x", "L['x']", "TENSOR_MATCH", ("TENSOR_MATCH",)))
    plan = plan_filter([_leaf("g5", "LAMBDA_GUARD", "L['x']", "___check_metadata_1_c0/0")], recorded)
    assert plan.ok and [e.label for e in plan.dropped] == ["x TENSOR_SUBCLASS_METADATA_MATCH"]


def test_without_recorded_entries_nothing_is_claimed():
    plan = plan_filter([_leaf("g4", "EQUALS_MATCH", "L['n']")], None, "0/0")
    assert not plan.ok and plan.why_not[0].kind is NoFilterKind.NOT_RECORDED


def test_a_filter_that_would_drop_more_than_asked_is_not_ok():
    recorded = _entries(("n", "L['n']", "CONSTANT_MATCH", ("EQUALS_MATCH",)))
    source = filter_source([FilterTerm("n", ("CONSTANT_MATCH",))])
    assert evaluate_filter(source, recorded.entries) == (False,)
    with pytest.raises(ValueError, match="does not run"):
        evaluate_filter("lambda entries: [e.nope for e in entries]", recorded.entries)


def _site(text: str, kind: CallSiteKind = CallSiteKind.TORCH_COMPILE) -> CallSite:
    return CallSite(1, kind, "prog.py", 3, text, text, "function f")


@pytest.mark.parametrize(("text", "fixed"), [
    ('torch.compile(f, backend="eager")', 'torch.compile(f, backend="eager", options={"guard_filter_fn": F})'),
    ("torch.compile", 'torch.compile(options={"guard_filter_fn": F})'),
    ('torch.compile(f, options={"mode": 1})', 'torch.compile(f, options={"mode": 1, "guard_filter_fn": F})'),
    ('torch.compile(f, options={"guard_filter_fn": old})', 'torch.compile(f, options={"guard_filter_fn": F})'),
    ('torch.compile(f,\n    backend="eager",\n)', 'torch.compile(f,\n    backend="eager", options={"guard_filter_fn": F},\n)'),
    ("torch.compile(f, options=opts)", None),
    ('torch.compile(f, mode="max-autotune")', None),          # torch takes mode or options, not both
])
def test_the_fix_is_the_users_own_call_with_one_more_option(text, fixed):
    assert with_option(_site(text), "guard_filter_fn", "F") == fixed


def test_optimize_takes_the_filter_as_a_keyword_and_a_limit_keeps_the_users_spelling():
    assert with_option(_site('torch._dynamo.optimize("eager")', CallSiteKind.OPTIMIZE), "guard_filter_fn", "F") == \
        'torch._dynamo.optimize("eager", guard_filter_fn=F)'
    assert with_keyword(_site("torch.compile(f, recompile_limit=8)"), "recompile_limit", "2") == \
        "torch.compile(f, recompile_limit=2)"


def test_readme_table_of_choices_is_the_one_the_code_prints():
    readme = (ROOT / "README.md").read_text()
    table = stances.choices_table_markdown()
    assert table in readme, "README's table of choices differs from stances.choices_table_markdown():\n" + table


def test_each_stance_line_has_one_description_wherever_it_is_printed():
    from dynadbg.core.decisions import choice_fix
    from dynadbg.core.model import DecisionKind

    for key, snippet in stances.SNIPPETS.items():
        if snippet.code.startswith("#"):
            continue
        lines = [ln for c in (DecisionKind.EAGER, DecisionKind.SKIP)
                 for ln in permanent_text(choice_fix(c, None)).splitlines()
                 if ln.startswith(snippet.code.split("{")[0])]
        assert len({ln.split("   # ", 1)[1] for ln in lines}) <= 1, key
    # eager_on_recompile compiles nothing at all from then on (torch's "run only" callback): said so
    assert "neither a recompile nor the first compile of another function" in stances.SNIPPETS[
        "eager_on_recompile"].effect


def test_the_compile_id_gloss_is_about_the_id_on_screen():
    glossary = Glossary()
    (gloss,) = [g for g in glossary.new_terms({"compile id"}, "0/0") if "compile id" in g]
    assert "compile 0/0: frame #0's first compile" in gloss
    assert "second" in Glossary().new_terms({"compile id"}, "2/1")[0]


# --------------------------------------------------------------------------------------------------------------
# on real programs
# --------------------------------------------------------------------------------------------------------------



@pytest.mark.slow
def test_drop_prints_the_checked_filter_on_the_users_call_and_drops_that_entry():
    run = drive(script("builtin_function_arg.py"), ["drop"], break_on=("recompile",))
    assert run.result.status == 0
    (stop,) = run.stops
    drop = choice(stop, "drop")
    kind = builtin_filter_type()
    assert drop.available and "checked on the" in choice_detail_text(drop) and f"op {kind}" in choice_detail_text(drop)
    code = permanent_text(drop.permanent)
    assert code.startswith('torch.compile(apply, backend="eager", options={"guard_filter_fn": ')
    assert "# in place of torch.compile(apply, backend=\"eager\") at builtin_function_arg.py:" in code
    out = run.output_of("drop").output
    assert "checked on the" in out and kind in out
    (said,) = [m for m in run.messages if m.startswith("drop:")]
    assert said.startswith(f"drop: compiled 0/1 without 1 guard(s): {kind} L['op']")


@pytest.mark.slow
def test_drop_of_a_dynamic_marking_guard_is_refused_with_the_reason():
    run = drive(script("mark_dynamic_input.py"), ["drop", "c"], break_on=("recompile",))
    (stop,) = run.stops
    drop = choice(stop, "drop")
    assert not drop.available and drop.permanent is None and "x TENSOR_MATCH" in choice_why_not_text(drop)
    res = run.output_of("drop")
    assert res.error is not None and "no guard filter entry of its own" in res.error
    assert run.result.status == 0


@pytest.mark.slow
def test_dynamic_on_a_size_one_dimension_is_refused_and_mark_unbacked_is_named():
    run = drive(script("size_one_dim.py"), ["dynamic x 0", "c", "dynamic x 0"], break_on=("recompile",))
    first, second = run.stops
    (sized,) = [c for c in first.choices if c.decision.command == "dynamic x 0"]
    assert any("torch specialises sizes 0 and 1" in w for w in choice_warning_texts(sized))
    assert permanent_text(sized.permanent).startswith("torch._dynamo.decorators.mark_unbacked(x, 0)")
    refused = run.output_of("dynamic x 0")
    assert refused.error is not None and "mark_unbacked(x, 0)" in refused.error and not refused.resumed
    # size 1 -> 6: marking works there, and the compile that follows is read back
    marked = [r for c, r in run.outputs if c == "dynamic x 0"][1]
    assert marked.resumed and "torch._dynamo.mark_dynamic(x, 0)" in marked.output
    (said,) = [m for m in run.messages if m.startswith("dynamic:")]
    assert "its TENSOR_MATCH on x has size=[None, 3], dimension 0 is dynamic" in said
    assert run.result.status == 0


@pytest.mark.slow
@pytest.mark.parametrize("answer", ["recompile", "eager", "skip", "drop"])
def test_every_choice_does_what_it_says_on_fullgraph_code(answer):
    results: list = []
    run = drive(call(cases.run_fullgraph_ints, results), [answer] * 3, break_on=("recompile",))
    assert run.result.status == 0, run.result.traceback        # no "found no compiled frames"
    # drop: 0/1 is compiled for n=2 without its guard, and serves n=3 with 2 baked in (as its warning says)
    expected = {"drop": [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]}.get(answer, [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    assert results == expected
    if answer == "skip":
        assert len(run.stops) == 1                             # skipped: later misses run eagerly, unasked


@pytest.mark.slow
def test_dynamic_does_what_it_says_on_fullgraph_code():
    results: list = []
    run = drive(call(cases.run_fullgraph_sizes, results), ["dynamic x 0"], break_on=("recompile",))
    assert run.result.status == 0, run.result.traceback
    assert results == [[3.0, 3.0], [3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    assert len(run.stops) == 1                                 # size 4 reused the dynamic entry


@pytest.mark.slow
def test_stack_at_a_recompile_stop_is_the_empty_stack_of_a_frame_not_started():
    run = drive(call(cases.run_fullgraph_ints, []), ["p __stack__", "p n", "recompile"], break_on=("recompile",))
    assert run.output_of("p __stack__").output.strip() == "[]"
    assert run.output_of("p n").output.strip() == "2"


@pytest.mark.slow
def test_misses_after_the_recompile_limit_name_every_failing_guard():
    run = drive(script("recompile_limit.py"), ["c"] * 4, break_on=("recompile",))
    after = [r for r in run.session.recompiles.records() if r.decision == "eager"]
    assert len(after) == 2
    for record in after:
        assert record.compile_id is None and [v.compile_id for v in record.entries] == ["0/1", "0/0"]
        assert all(v.failing and v.torch_leaf for v in record.entries)
    from dynadbg.core.format.recompile import record_text

    text = record_text(after[0])
    assert "not compiled" in text and "[?]" not in text and "no entries" not in text
    assert "expected 0, actual 3" in text


@pytest.mark.slow
def test_duplicate_graph_breaks_are_the_ones_torch_logs_as_duplicates():
    from dynadbg.core.report import run_report

    report = run_report(str(PROGRAMS / "duplicate_graph_break.py"), [], guards=False)
    flags = sorted((b.logged_id, b.duplicate) for f in report.frames for b in f.graph_breaks)
    # what torch logged (duplicate_graph_break.expected.md, TORCH_LOGS=graph_breaks): [0/0] in full, [1/0] [0/1]
    # [1/1] suppressed, and [3/0] in full again (g's own torch.compile call reset torch's record)
    logged = re.findall(r"^- `\[([^\]]+)\]` at `[^`]+`( \(user stack suppressed: duplicate\))?",
                        (PROGRAMS / "duplicate_graph_break.expected.md").read_text(), re.M)
    assert flags == sorted((cid, bool(dup)) for cid, dup in logged)
    assert ("3/0", False) in flags


@pytest.mark.slow
def test_a_graph_break_in_a_try_block_stops_where_the_frame_falls_back_to_eager():
    run = drive(script("try_graph_break.py"), ["p x", "c"], break_on=("graph-break",))
    (stop,) = run.stops
    assert stop.kind is StopKind.GRAPH_BREAK and "falls back to eager" in stop.message
    text = detail(stop)["graph break"]
    assert "what Dynamo did instead" in text and "try_graph_break.py:11" in text
    assert run.output_of("p x").output.strip() == "tensor([1., 1., 1.])"
    assert run.result.status == 0


@pytest.mark.slow
def test_a_zero_one_specialization_guard_says_its_line_is_only_the_first_use():
    run = drive(call(cases.run_sizes_to_one, []), ["c", "c"], break_on=("recompile",))
    last = run.stops[-1]
    text = detail(last)["failing guards"]
    assert "first use of the value (not what made the guard)" in text
    assert "torch._dynamo.decorators.mark_unbacked(x, 0)" in text
    assert "expected >= 2, actual 1" in text


@pytest.mark.slow
def test_every_guard_id_shown_resolves_in_guards_and_the_count_is_one_per_entry():
    run = drive(script("dict_length_guard.py"), ["why", "whatif", "c", "why", "whatif", "c"],
                break_on=("recompile",))
    counts: dict[str, set[int]] = {}
    for cmd, res in run.outputs:
        if cmd != "why" or res.data is None:
            continue
        for v in res.data.entries:
            counts.setdefault(v.compile_id, set()).add(v.leaf_count)
            for leaf in v.failing:
                # a pseudo-leaf (a dict's own length check) has no g-number: every gN is a leaf `guards` lists
                assert not re.fullmatch(r"g\d+", leaf.id) or leaf.guard_type != "DICT_LENGTH", leaf
    assert counts and all(len(n) == 1 for n in counts.values()), counts


@pytest.mark.slow
def test_a_resume_function_and_an_optimizer_step_name_the_users_call():
    run = drive(script("outer_resume_recompile.py"), ["c"], break_on=("recompile",))
    (record,) = run.session.recompiles.records()
    assert record.frame_name.startswith("torch_dynamo_resume_in_pipeline")
    assert record.advice.call_site.text == 'torch.compile(pipeline, backend="eager", dynamic=False)'
    run = drive(script("compiled_optimizer_step.py"), ["c"] * 3, break_on=("recompile",))
    sites = {r.advice.call_site.text for r in run.session.recompiles.records()}
    assert sites == {'torch.compile(opt.step, backend="eager")'}


def test_the_capture_records_each_compiles_entries_what_a_users_filter_kept_and_the_call_site():
    import torch

    from dynadbg.core.capture import Capture

    cap = Capture().install()
    try:
        f = torch.compile(cases.scale, backend="eager", dynamic=False,
                          options={"guard_filter_fn": lambda entries: [e.name != "n" for e in entries]})
        f(torch.ones(2), 3)
    finally:
        cap.uninstall()
    (rec,) = [r for r in cap.filter_entries.all() if r.code_name == "scale"]
    assert rec.filtered and [e.kept for e in rec.entries if e.name == "n"] == [False]
    assert all(e.kept for e in rec.entries if e.name != "n") and {"x", "n"} <= {e.name for e in rec.entries}
    site = cap.callsites.site_for(cases.scale.__code__)
    # the call's own text, across its lines, as written in this file
    assert site is not None and site.text.startswith("torch.compile(cases.scale, backend=\"eager\", dynamic=False,")
    assert site.text.endswith("for e in entries]})") and site.kind is CallSiteKind.TORCH_COMPILE
    assert torch.compile.__code__.co_filename.endswith("__init__.py")      # uninstalled: torch's own again
