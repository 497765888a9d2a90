"""The fake engine's recordings (`record_fake`) are what the real engine answers today: re-made and compared, so
they cannot drift silently. Re-make them with ``.venv/bin/python tests/app/record_fake.py`` when this fails on
purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
import record_fake

from dynadbg.core.model import StopKind
from forkrun import python


@pytest.mark.slow
@pytest.mark.parametrize("name", list(record_fake.RECORDERS))
def test_the_recording_matches_what_the_real_engine_answers_today(name: str) -> None:
    """A few seconds each, in a fresh interpreter (compile ids and Dynamo's counters are per process): ``counter``,
    one real run of ``tests/programs/module_int_counter.py`` to its second recompile stop and the entry stop after
    it; ``forward``, ``tests/app/fake_program.py``'s ``Scale.forward`` compiled for n=3 and called with n=4;
    ``mode_switch``, ``tests/programs/eval_after_training.py`` to its recompile stop and the entry stop after it."""
    path, _ = record_fake.RECORDERS[name]
    done = python([record_fake.__file__, "--only", name, "--stdout"], timeout=300, cwd=record_fake.ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == path.read_text(encoding="utf-8"), (
        f"the real engine answers otherwise than {path.name}: re-make it (tests/app/record_fake.py) and check the "
        "TUI tests that use it")


def test_the_recording_loads_as_model_values() -> None:
    from dynadbg.core.model import GuardTree, Stop

    recording = record_fake.load()
    for suffix in ("", "2"):
        stop = recording[f"stop{suffix}"]
        assert isinstance(stop, Stop) and stop.kind is StopKind.RECOMPILE and stop.recompile is not None
        assert all(isinstance(t, GuardTree) for t in recording[f"guard_trees{suffix}"])
        assert recording[f"guard_trees{suffix}"]
    # the failing guard is the module's int counter, as the program's docstring says: at the second recompile
    # in both cache entries (``== 1`` and ``== 0``, the counter now 2)
    assert [leaf.source for leaf in recording["stop"].recompile.entries[0].failing] == ["L['self'].counter"]
    second = recording["stop2"].recompile
    assert [(v.compile_id, [leaf.code for leaf in v.failing]) for v in second.entries] == [
        ("0/1", [("L['self'].counter == 1",)]), ("0/0", [("L['self'].counter == 0",)])]
    # after recompiling there: the entry stop into the new compile, Dynamo's generated code storing the count 3
    entry = recording["entry"]
    assert entry.kind is StopKind.ENTRY and entry.compile_id == second.compile_id == "0/2"
    assert entry.frame is not None and entry.frame.code.generated and entry.frame.code.compile_id == "0/2"
    assert [i.argrepr for i in entry.frame.code.instructions if i.opname == "LOAD_CONST"][-2:] == ["'counter'", "3"]


def test_the_forward_recording_is_one_tree_evaluated_for_n_3_and_n_4() -> None:
    from dynadbg.core.model import GuardStatus

    recording = record_fake.load(record_fake.FORWARD_RECORDING)
    (n3,), (n4,) = recording["n3"], recording["n4"]
    assert n3.compile_id == n4.compile_id == "0/0" and n3.leaf_count == n4.leaf_count
    assert n3.passed and not n3.failing
    assert [(leaf.code, leaf.status, leaf.actual) for leaf in n4.failing] == [
        (("L['n'] == 3",), GuardStatus.FAIL, "4")]
    # the n=4 recompile stop itself: its record names the program's forward and fails the same guard
    stop = recording["stop"]
    record = stop.recompile
    assert stop.kind is StopKind.RECOMPILE and record is not None and stop.choices
    assert (Path(record.filename).name, record.firstlineno, record.code_name) == ("fake_program.py", 15, "forward")
    assert dict(record.inputs)["n"] == "4" and [(c.name, c.expected, c.actual) for c in record.changed] == [
        ("n", "3", "4")]
    (verdict,) = record.entries
    assert verdict.compile_id == "0/0" and [leaf.code for leaf in verdict.failing] == [("L['n'] == 3",)]


def test_the_mode_switch_recording_fails_grad_mode_both_training_flags_and_the_step_count() -> None:
    """``tests/programs/eval_after_training.py``, as its docstring says: the entry compiled while training fails
    GLOBAL_STATE (grad mode), both BatchNorm ``.training`` flags (one group) and ``L['self'].steps == 0``."""
    recording = record_fake.load(record_fake.MODE_SWITCH_RECORDING)
    stop = recording["stop"]
    record = stop.recompile
    assert stop.kind is StopKind.RECOMPILE and record is not None
    (verdict,) = record.entries
    assert [(leaf.guard_type, leaf.source) for leaf in verdict.failing] == [
        ("GLOBAL_STATE", "L"),
        ("TRUE_MATCH", "L['self'].__dict__['_modules']['bn1'].training"),
        ("TRUE_MATCH", "L['self'].__dict__['_modules']['bn2'].training"),
        ("EQUALS_MATCH", "L['self'].steps")]
    assert "grad_mode" in (verdict.failing[0].reason or "")
    (group,) = record.groups
    assert group.leaf_ids == tuple(leaf.id for leaf in verdict.failing[1:3])
    entry = recording["entry"]
    assert entry.kind is StopKind.ENTRY and entry.compile_id == record.compile_id == "0/1"
    assert entry.frame is not None and entry.frame.code.generated
