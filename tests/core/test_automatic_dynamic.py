"""Automatic dynamic shapes at a recompile stop: when torch will make a changed dimension dynamic in the new entry
the stop, ``why`` and the report say so, and ``dynamic`` is not offered for it; when torch will not (the config
off, ``dynamic=False``, ``mark_static``) nothing new is said and ``dynamic`` is offered as before. On the real
program `programs/sequence_lengths.py` (lengths 8, 16, 17, 32), compiles counted by the engine and by torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynadbg.core import compat
from dynadbg.core import format as fmt
from dynadbg.core.model import AutoDynamicDim, DecisionKind
from dynadbg.core.report import run_report
from helpers import drive
from programs import sequence_lengths as prog
from forkrun import python

compat.load()
#: torch's size record is private (torch/_dynamo/pgo.py): on a torch without it the feature is off, said at start-up
needs_record = pytest.mark.skipif(compat.FEATURES.get("automatic dynamic") is not None,
                                  reason=str(compat.FEATURES.get("automatic dynamic")))

PROGRAM = Path(prog.__file__)
SAID = ("torch makes L['tokens'] dim 1 dynamic in the new entry 0/1: sizes 8 then 16 were seen; "
        "later sizes hit that entry")


def run_program(mode: str = "", commands: tuple[str, ...] = ("why", "c")):
    results: list = []
    run = drive(lambda s: s.start_callable(prog.run, results, prog.LENGTHS, mode), list(commands) * 4,
                break_on=("recompile",))
    assert run.result is not None and run.result.status == 0, run.messages
    return run, results


def entries(run):
    (frame,) = [f for f in run.session.compiled_frames() if f.name == "pooled" and f.entries]
    return frame.entries


@needs_record
def test_the_stop_says_torch_makes_the_sequence_dimension_dynamic_and_offers_no_dynamic_for_it():
    run, results = run_program()
    assert results[:4] == [4.0, 8.0, 8.5, 16.0]                 # the program's results, unchanged
    (stop,) = run.stops                                          # 17 and 32 needed no compile
    assert stop.recompile.auto_dynamic == (AutoDynamicDim("L['tokens']", "tokens", 1, (8, 16)),)
    blocks = dict(fmt.stop_blocks(stop))
    assert blocks["automatic dynamic"] == SAID
    choices = blocks["choices"]
    assert "dynamic tokens 1" not in choices and "mark_dynamic" not in choices
    assert ("dynamic        not available: torch's automatic dynamic shapes makes tokens 1 dynamic in the new "
            "entry itself") in choices
    assert not [c for c in stop.choices if c.kind is DecisionKind.DYNAMIC and c.available]
    assert SAID in run.output_of("why").output                  # `why` says it too
    # what the engine counted matches torch's own count, and the new entry served 16, 17 and 32
    assert [e.compile_id for e in entries(run)] == ["0/0", "0/1"] and results[-1] == ("graphs", 2)
    assert {e.compile_id: e.hits for e in entries(run)} == {"0/0": 1, "0/1": 3}
    # after the compile the new entry was read back: its TENSOR_MATCH really has the dimension dynamic
    (record,) = run.session.recompiles.records()
    (check,) = record.outcome.auto_dynamic
    assert (check.name, check.dim, check.compile_id, check.sizes, check.dynamic) == \
        ("L['tokens']", 1, "0/1", (2, None), True)


@pytest.mark.parametrize("mode", ["config off", "dynamic=False", "mark_static"])
def test_nothing_new_is_said_when_torch_keeps_the_dimension_static(mode):
    run, results = run_program(mode, ("c",))
    assert len(run.stops) == 3 and results[-1] == ("graphs", 4)  # every new length compiled again
    assert len(entries(run)) == 4
    for stop in run.stops:
        assert stop.recompile.auto_dynamic == ()
        blocks = dict(fmt.stop_blocks(stop))
        assert "automatic dynamic" not in blocks and "automatic dynamic" not in blocks["choices"]
        assert "dynamic tokens 1   mark that dimension dynamic and recompile" in blocks["choices"]


@needs_record
def test_the_report_names_the_dimension_torch_made_dynamic():
    result = run_report(str(PROGRAM))
    assert result.status == 0
    text = result.text()
    assert ("entry 0/1 serves any size at L['tokens'] dim 1 (torch's automatic dynamic, after sizes 8 then 16)"
            in text)
    data = json.loads(json.dumps(result.summary_json()))
    (frame,) = [f for f in data["frames"] if f["name"] == "pooled"]
    assert [e["dynamic"] for e in frame["entries"]] == [
        [], [{"source": "L['tokens']", "dims": [1], "automatic": {"1": [8, 16]}}]]
    assert [e["hits"] for e in frame["entries"]] == [1, 3]
    full = result.text(full=True)
    assert f"automatic dynamic: {SAID}" in full
    assert "compiled 0/1 (automatic dynamic read back: its TENSOR_MATCH on L['tokens'] has size=[2, None]" in full
    (frame,) = [f for f in json.loads(json.dumps(result.json()))["frames"] if f["name"] == "pooled"]
    (rec,) = frame["recompiles"]
    assert rec["analysis"]["automatic_dynamic"] == [{"source": "L['tokens']", "dim": 1, "seen": [8, 16],
                                                    "already": False}]


def test_without_torch_s_size_record_nothing_is_said_and_dynamic_is_offered(monkeypatch):
    """A torch without the record: the feature is listed as disabled, the stop offers ``dynamic`` as before."""
    monkeypatch.setitem(compat.FEATURES, "automatic dynamic",
                        "automatic dynamic disabled: AttributeError: torch._dynamo.pgo has no _CODE_STATE")
    assert any(m.startswith("automatic dynamic disabled") for m in compat.missing_features())
    run, _ = run_program("", ("c",))
    stop = run.stops[0]
    assert stop.recompile.auto_dynamic == ()
    assert "dynamic tokens 1   mark that dimension dynamic and recompile" in dict(fmt.stop_blocks(stop))["choices"]


def test_the_report_of_a_run_with_automatic_dynamic_off_names_no_dynamic_dimension():
    proc = python(["-m", "dynadbg", "report", str(PROGRAM), "config off"],
                  timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "torch compiled graphs: 4" in proc.stdout
    assert "4 cache entries, 3 recompiles" in proc.stdout
    assert "serves any size" not in proc.stdout and "automatic dynamic" not in proc.stdout


@needs_record
def test_a_call_run_eagerly_at_the_stop_is_not_said_to_make_an_entry_dynamic():
    """``eager`` at the stop: no compile, so ``why`` afterwards says nothing of a new dynamic entry; the next
    length stops again (torch's record saw 8 and then 17 at the next compile)."""
    run, results = run_program("", ("eager", "why", "c", "c", "c"))
    assert results[:4] == [4.0, 8.0, 8.5, 16.0]
    first = run.session.recompiles.records()[0]
    assert first.decision is DecisionKind.EAGER and first.auto_dynamic   # predicted, then not taken
    assert "automatic dynamic" not in fmt.recompile.record_text(first)
    assert len(run.stops) == 2                                           # 17 misses again, then 32 hits

