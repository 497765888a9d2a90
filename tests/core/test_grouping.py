"""Grouping what repeats at a recompile stop: failing guards of one type and one expected/actual pair on sibling
sources become one group (`grouping`), said in one line with the cause the entry's guards show, and a printed
``guard_filter_fn`` that covers a group is one rule, checked on the compile's real filter entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynadbg.core import format as fmt
from dynadbg.core.filter_entries import FilterEntry, FilterTerm, checked_source, evaluate_filter
from dynadbg.core.format.recompile import group_lines
from dynadbg.core.grouping import accessors, group_changes, group_failing, spans
from dynadbg.core.model import (
    EntryVerdict,
    GroupCause,
    GuardNodeView,
    GuardStatus,
    GuardTree,
    InputChange,
    LeafGuardView,
    StopKind,
)

from helpers import drive_answering
from forkrun import python

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "core" / "programs"  # not tests/programs: that is the whole corpus, walked by every corpus test
BN = [f"self._modules['blocks']._modules['{i}']._modules['bn'].training" for i in range(5)]


def script(name: str):
    path = PROGRAMS / name
    return lambda s: s.start_script(str(path), [])


def test_a_source_splits_into_its_accessors():
    assert accessors("L['self']._modules['bn'].training") == ("L", "['self']", "._modules", "['bn']", ".training")
    assert accessors("L['x']") == ("L", "['x']")


def test_sibling_sources_share_a_head_and_a_tail_around_one_slot():
    head, tail, one_slot = spans(BN)
    assert (head, tail, one_slot) == ("self._modules['blocks']._modules", "._modules['bn'].training", True)
    head, tail, one_slot = spans(["self._modules['bn1'].training", "self._modules['layer1']._modules['0']"
                                  "._modules['bn1'].training"])
    assert (head, tail, one_slot) == ("self._modules", "['bn1'].training", False)


def test_changed_inputs_of_sibling_sources_become_one_group():
    changes = [InputChange(n, "True", "False") for n in BN] + [InputChange("n", "1", "2")]
    (group,) = group_changes(changes)
    assert group.names == tuple(BN) and group.pattern == "self._modules['blocks']._modules[*]._modules['bn'].training"
    assert group.cause is None                           # no failing-guard group showed one


def _flag(i: int, actual: str, status: GuardStatus = GuardStatus.FAIL) -> LeafGuardView:
    src = f"L['self']._modules['blocks']._modules['{i}']._modules['bn'].training"
    return LeafGuardView(f"g{i}", "TRUE_MATCH", src, (f"{src} == True",), status=status, expected="True",
                         actual=actual)


def _verdict_and_tree(leaves):
    root = GuardNodeView("m0", "L", "RootGuardManager", None, "<class 'dict'>", tuple(leaves), ())
    failing = tuple(leaf for leaf in leaves if leaf.status is GuardStatus.FAIL)
    return EntryVerdict("0/0", False, failing), GuardTree("0/0", root, evaluated=True, failing=failing)


def test_flags_that_all_flipped_name_the_switch_to_eval():
    verdict, tree = _verdict_and_tree([_flag(i, "False") for i in range(4)])
    (group,) = group_failing([verdict], [tree])
    assert group.cause is GroupCause.TRAIN_TO_EVAL and group.flags_total == 4 and group.one_slot
    assert "the model switched from train() to eval()" in "\n".join(group_lines(group))


def test_a_flag_that_did_not_flip_means_no_cause_is_named():
    # three BatchNorms went to eval, a fourth guarded one is still in training: not "the model switched"
    verdict, tree = _verdict_and_tree([_flag(i, "False") for i in range(3)] + [_flag(3, "True", GuardStatus.PASS)])
    (group,) = group_failing([verdict], [tree])
    assert group.cause is None and len(group.leaf_ids) == 3
    assert "switched" not in "\n".join(group_lines(group))


def _entries(names):
    return [FilterEntry(i, n, f"L['{n}']", "CONSTANT_MATCH", ("EQUALS_MATCH",), False) for i, n in enumerate(names)]


def test_a_filter_over_sibling_names_is_one_rule_when_it_drops_exactly_those_entries():
    terms = [FilterTerm(n, ("CONSTANT_MATCH",)) for n in BN]
    entries = _entries(BN + ["self._modules['head'].training", "x"])
    source, rules = checked_source(terms, [entries])
    assert len(rules) == 1 and source.count("e.name") == 2          # one clause: a prefix and a suffix test
    assert evaluate_filter(source, entries) == (False,) * 5 + (True, True)


def test_a_rule_that_would_drop_more_is_not_printed():
    terms = [FilterTerm(n, ("CONSTANT_MATCH",)) for n in BN[:3]]
    # a sibling not asked for matches the prefix and the suffix: the one-term-per-name text is printed
    source, rules = checked_source(terms, [_entries(BN)])
    assert rules == () and source.count("e.name ==") == 3


@pytest.mark.slow
def test_train_to_eval_stop_groups_the_batchnorm_flags_and_its_filter_removes_the_recompile(tmp_path):
    def answer(run, stop):  # noqa: ANN001, ANN202
        said = [c for c, _ in run.outputs]
        if "why --all" not in said:
            return "why --all"
        if not any(c.startswith("drop ") for c in said):
            # the group's guards and the grad mode's, named: the default drop leaves mode flags and global state
            # out (they are the model's mode); the program runs eval() under no_grad, so both changed
            (group,) = [g for g in stop.recompile.groups if g.guard_type == "TRUE_MATCH"]
            (state,) = [f.id for f in stop.recompile.entries[0].failing if f.guard_type == "GLOBAL_STATE"]
            return f"drop {state} " + " ".join(group.leaf_ids)
        return None

    run = drive_answering(script("batchnorm_train_eval.py"), answer, break_on=("recompile",))
    assert run.result.status == 0, run.result.traceback
    (stop,) = run.stops
    assert stop.kind is StopKind.RECOMPILE
    record = stop.recompile
    (group,) = [g for g in record.groups if g.guard_type == "TRUE_MATCH"]
    assert len(group.leaf_ids) == 8 and group.cause is GroupCause.TRAIN_TO_EVAL
    assert group.owner_types == ("BatchNorm2d",) and group.flags_total == 8
    text = fmt.stop_text(stop)
    (line,) = [ln for ln in text.splitlines() if "8 × TRUE_MATCH" in ln]
    assert "the model switched from train() to eval()" in line
    # no BatchNorm is listed alone: each source appears in no line of the stop but the groups
    assert "_modules['3']" not in text
    # the stop does not grow with the number of BatchNorm layers (8 or 20 of them), plus the glossary's lines for
    # the terms a session sees first
    assert len(text.splitlines()) <= 25, text
    # why --all lists every grouped source
    listed = run.output_of("why --all").output
    assert all(f"_modules['{i}']._modules['bn'].training" in listed for i in range(8))
    # the printed filter of dropping the group: one rule for the eight flags, on the user's own call
    (dropped,) = [r for c, r in run.outputs if c.startswith("drop ")]
    assert dropped.error is None and dropped.resumed, dropped.error
    said = dropped.output.splitlines()
    # the dropped group and its warning are said once each, not once per BatchNorm
    assert sum("_modules['bn'].training" in ln for ln in said if ln.startswith(("recompiling", "WARNING"))) == 2
    code = said[said.index("permanently:") + 1]
    assert code.count("e.name.startswith(") == 1 and "_modules['3']" not in code
    assert code.startswith('torch.compile(net, backend="eager", options={"guard_filter_fn": ')
    new = code.split("   # in place of ")[0]
    # pasted into the program in a child process: torch compiles the forward once, not twice
    jobs = [{"id": 0, "program": str(PROGRAMS / "batchnorm_train_eval.py"), "fix": {"kind": "none"}},
            {"id": 1, "program": str(PROGRAMS / "batchnorm_train_eval.py"),
             "fix": {"kind": "replace", "lineno": 28, "old": 'torch.compile(net, backend="eager")', "new": new}}]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    proc = python([str(ROOT / "tests" / "cases" / "apply_fix.py"), str(tmp_path / "jobs.json"),
                   str(tmp_path / "out.json")], timeout=300, cwd=str(PROGRAMS))
    assert proc.returncode == 0, proc.stderr[-3000:]
    base, fixed = json.loads((tmp_path / "out.json").read_text())
    assert base["error"] is None and fixed["error"] is None, fixed["error"]
    assert base["frames"] == 2 and fixed["frames"] == 1


@pytest.mark.slow
def test_the_report_json_carries_the_group():
    from dynadbg.core.report import run_report

    result = run_report(str(PROGRAMS / "batchnorm_train_eval.py"), [])
    assert result.status == 0
    analyses = [r["analysis"] for f in result.json()["frames"] for r in f["recompiles"] if r["analysis"]]
    (group,) = [g for a in analyses for g in a["guard_groups"] if g["guard_type"] == "TRUE_MATCH"]
    assert group["cause"] == "train to eval" and group["owner_types"] == ["BatchNorm2d"]
    assert len(group["ids"]) == len(group["sources"]) == 8
    assert group["pattern"] == "L['self']._modules['blocks']._modules[*]._modules['bn'].training"
