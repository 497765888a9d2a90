"""Faults found on real programs, each on a small program of its kind in tests/programs: what the recompile
analysis must say (run in-process under a `Session` with the recompile stop on; each stop answered
``recompile``, so the program behaves as without the debugger)."""

from __future__ import annotations

import json
from pathlib import Path


from dynadbg.core.decisions import recompile_choices
from dynadbg.core.format.recompile import failing_text, inputs_text, limit_text, outcome_text, record_text
from dynadbg.core.recompile import failure_kind
from dynadbg.core.report import record_json

from helpers import drive

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def _records(name: str, commands=("whatif", "guards fail", "recompile") * 8):
    run = drive(lambda s: s.start_script(str(PROGRAMS / name), []), list(commands), break_on=("recompile",),
                timeout=300)
    assert run.result is not None and run.result.status == 0, run.result and run.result.traceback
    return run, run.session.recompiles.records()


def _failing(record, guard_type):
    return [leaf for v in record.entries for leaf in v.failing if leaf.guard_type == guard_type]


def test_dict_length_guard_is_an_input_guard_with_expected_and_actual():
    run, records = _records("dict_length_guard.py")
    assert len(records) == 2                              # str keys, then Enum keys
    for record in records:
        (leaf,) = _failing(record, "DICT_LENGTH")
        assert leaf.source == "L['d']" and failure_kind(leaf) == "input"
        assert (leaf.expected, leaf.actual) == ("len 1", "len 2")
        assert record.entries[0].torch_leaf == leaf.id    # the guard torch's `len(d) != 1` is about
        assert not record.non_input                       # not "a torch check not about the inputs"
        assert "d: len 1 → len 2" in inputs_text(record)
    whatif = [r.output for c, r in run.outputs if c == "whatif"]
    assert all("DICT_LENGTH" in text and "CHECK_VERBOSE" not in text for text in whatif)


def test_backend_mismatch_rejects_the_entry_everywhere_with_both_backends():
    run, records = _records("backend_mismatch.py")
    (record,) = records
    (verdict,) = record.entries
    assert not verdict.passed
    (leaf,) = _failing(record, "BACKEND_MATCH")
    assert verdict.torch_reason.startswith("0/0: BACKEND_MATCH failure: torch.compile detected different backend")
    assert leaf.expected.count("_TorchCompileWrapper") == 1 and leaf.actual.count("_TorchCompileWrapper") == 1
    assert leaf.expected != leaf.actual                  # two backends, named apart by their ids
    (non_input,) = record.non_input
    assert non_input.kind == "backend" and "another backend callable" in non_input.text
    whatif = run.output_of("whatif").output
    assert "PASS" not in whatif and "entry 0/0: FAIL" in whatif and "BACKEND_MATCH" in whatif
    assert "all guards pass" not in run.output_of("guards fail").output
    data = record_json(record)
    assert any(g["guard_type"] == "BACKEND_MATCH" for e in data["entries_checked"] for g in e["failing"])
    assert "BACKEND_MATCH" in record_text(record)


def test_expected_values_are_the_compile_time_values_never_question_marks():
    run, records = _records("expected_values.py")
    by_name = {}
    for r in records:
        by_name.setdefault(r.frame_name.rsplit(".", 1)[-1], []).append(r)
    (meta,) = _failing(by_name["double"][0], "LAMBDA_GUARD")
    assert (meta.expected, meta.actual) == ("metadata {'scale': 1.0}", "metadata {'scale': 3.0}")
    (marking,) = _failing(by_name["<lambda>"][0], "DIMENSION_DYNAMIC_MARKING_GUARD")
    assert (marking.expected, marking.actual) == ("no dynamic marking", "marked: dynamic_indices={0}")
    (ident,) = _failing(by_name["use_act"][0], "ID_MATCH")
    assert "___check_obj_id" not in ident.expected and ident.expected.startswith("the object with id ")
    assert ident.expected.endswith("at compile time (builtin_function_or_method)")
    assert "sigmoid" in ident.actual
    (summary,) = _failing(by_name["use_summary"][0], "DICT_LENGTH")
    assert (summary.expected, summary.actual) == ("empty (len 0)", "len 1")
    # the symbolic guard on an int used in range(): both sides read, the actual value from the frame's inputs
    (symbolic,) = [leaf for leaf in by_name["window"][1].entries[0].failing if leaf.epilogue]
    assert symbolic.code == ("L['start'] == 5",) and (symbolic.expected, symbolic.actual) == ("5", "6")
    for record in records:
        text = failing_text(record) + inputs_text(record)
        assert "expected ?" not in text and "actual ?" not in text and "→ ?" not in text
        changed = inputs_text(record).split("\n")
        if changed[0].startswith("changed since"):
            names = [line.split(":")[0].strip() for line in changed[1:] if line.startswith("    ")]
            assert len(names) == len(set(names))          # one "changed since" line per input


def test_per_compile_recompile_limit_is_the_one_reported():
    run, records = _records("recompile_limit.py")
    # five calls, each a new int: two misses compile or hit the limit, the last two run eagerly after it
    assert [r.limit.limit for r in records] == [2, 2, 2, 2]
    hit = records[1]
    assert hit.limit.exceeds == "recompile_limit" and hit.limit_hit
    assert hit.limit.limit_source == "torch.compile(recompile_limit=2)"
    assert "exceeds torch.compile(recompile_limit=2)" in limit_text(hit.limit)
    assert hit.limit.raises is None
    # the misses served eagerly after the limit are in the timeline too (torch answers them without Python)
    assert [(r.decision, r.compile_id) for r in records[2:]] == [("eager", None), ("eager", None)]
    assert all("recompile limit was hit earlier" in outcome_text(r) for r in records[2:])
    assert len(run.stops) == 2                            # and they are not recompile stops
    # at the LIMIT HIT stop, going on is not offered as a compile: torch runs the call eagerly
    go_on = recompile_choices(hit)[0]
    assert "will not compile" in go_on.summary and "eagerly" in go_on.summary
    assert "compile a new entry" not in go_on.summary
    assert "compile a new entry" in recompile_choices(records[0])[0].summary
    assert "ok: 5 calls right" in "".join(run.messages) or run.result.status == 0


def test_fail_on_recompile_limit_hit_says_torch_raises():
    _run, records = _records("recompile_limit_raises.py")
    last = records[-1]
    assert last.limit_hit and last.limit.raises == "fail_on_recompile_limit_hit=True"
    assert "RAISES FailOnRecompileLimitHit" in limit_text(last.limit) and "eagerly" not in limit_text(last.limit)
    assert record_json(last)["limit"]["raises"] == "fail_on_recompile_limit_hit=True"
    go_on = recompile_choices(last)[0]
    assert "RAISES FailOnRecompileLimitHit" in go_on.summary and "eagerly" not in go_on.summary


def test_aliased_inputs_are_named():
    _run, records = _records("aliasing.py")
    (record,) = records
    (leaf,) = _failing(record, "NO_TENSOR_ALIASING")
    assert record.entries[0].torch_reason == '0/0: Duplicate tensors found: ["a", "c"]'
    assert leaf.expected == "distinct: L['a'], L['b'], L['c']"
    assert leaf.actual == "same storage: L['a'] is L['c']"
    assert json.dumps(record_json(record))                 # serialisable


def test_meta_device_input_is_an_input_guard():
    _run, records = _records("meta_device.py")
    (record,) = records
    (leaf,) = _failing(record, "TENSOR_MATCH")
    assert failure_kind(leaf) == "input" and not record.non_input
    assert leaf.reason == "tensor 'L['x']' device mismatch. expected cpu, actual meta"
    assert record.entries[0].torch_leaf == leaf.id
    assert leaf.actual.endswith("device=meta")


def test_exception_stop_stack_holds_only_live_slots():
    """A call in generated code raises: its operands (the callable, its argument) are consumed and no result
    was pushed, so neither they nor stale slots above them are on the stack the stop shows or `__stack__`."""
    run = drive(lambda s: s.start_script(str(PROGRAMS / "exception_in_compiled.py"), []),
                ["s 100000", "stack", "p len(__stack__)", "p [type(v).__name__ for v in __stack__]", "c"],
                break_on=("entry", "exception"), timeout=300)
    assert run.result is not None and run.result.status == 0
    stop = next(s for s in run.stops if s.kind.value == "exception")
    frame = stop.frame
    assert frame.code.instructions[frame.index].opname.startswith("CALL")
    types = [v.type_name for v in frame.stack]
    assert "function" not in types and "Tensor" not in " ".join(types)   # check() and its tensor: consumed
    assert run.output_of("p len(__stack__)").output.strip() == str(len(frame.stack))
    shown = run.output_of("stack").output
    assert f"value stack: {len(frame.stack)} slot" in shown and "FrameState" not in shown


def test_dict_length_found_when_torch_reports_another_guard_first(tmp_path):
    script = tmp_path / "two_changes.py"
    script.write_text(
        "import torch\n"
        "def f(x, n, zd):\n"
        "    y = x * n\n"
        "    for v in zd.values():\n"
        "        y = y + v\n"
        "    return y\n"
        "cf = torch.compile(f, backend='eager')\n"
        "t = torch.ones(2)\n"
        "cf(t, 1, {'a': t})\n"
        "cf(t, 2, {'a': t, 'b': t})\n")
    run = drive(lambda s: s.start_script(str(script), []), ["recompile"], break_on=("recompile",), timeout=300)
    assert run.result.status == 0
    (record,) = run.session.recompiles.records()
    failing = {(leaf.guard_type, leaf.source): leaf for leaf in record.entries[0].failing}
    # torch names the int first (check_verbose stops there); the dict's length change is still listed
    assert record.entries[0].torch_reason.startswith("0/0: n == 1")
    assert ("EQUALS_MATCH", "L['n']") in failing
    length = failing[("DICT_LENGTH", "L['zd']")]
    assert (length.expected, length.actual) == ("len 1", "len 2") and "checked on its own" in length.reason
