"""`dynadbg diff`: two reports of one program before and after a change that adds a recompile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynadbg.cli import main

PROGRAM = Path(__file__).resolve().parent / "program.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    import torch

    from dynadbg.core.report import run_report

    out = tmp_path_factory.mktemp("reports")
    paths = []
    for version in ("before", "after"):
        torch._dynamo.reset()
        result = run_report(str(PROGRAM), [version])
        assert result.status == 0
        path = out / f"{version}.json"
        path.write_text(json.dumps(result.json()))
        paths.append(path)
    return paths[0], paths[1]


def test_new_recompile_is_named_and_fails_under_fail_on(reports, capsys) -> None:
    before, after = reports
    status = main(["diff", "--fail-on", "recompiles", str(before), str(after)])
    out, err = capsys.readouterr()
    assert status == 1
    assert "B is worse on recompiles" in err
    assert "scale (program.py)" in out
    assert "recompiles: 0 → 1" in out
    assert "cache entries: 1 → 2" in out
    assert "new recompile reason: n == 2" in out
    assert "L['n'] == 2" in out and "expected 2, actual 5" in out


def test_other_measures_and_the_reverse_direction_pass(reports, capsys) -> None:
    before, after = reports
    assert main(["diff", "--fail-on", "graph-breaks", str(before), str(after)]) == 0
    assert main(["diff", "--fail-on", "recompiles,guards", str(after), str(before)]) == 0
    out = capsys.readouterr().out
    assert "recompile reason gone: n == 2" in out


def test_json_output(reports, capsys) -> None:
    before, after = reports
    assert main(["diff", "--json", str(before), str(after)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["recompiles"] == {"a": 0, "b": 1, "delta": 1}
    assert "recompiles" in data["worse"]
    (row,) = [r for r in data["code_objects"] if r["changed"]]
    assert row["name"] == "scale" and row["entries"] == [1, 2]
    assert row["failing_guards_b"][0]["source"] == "L['n']"
    assert data["totals"]["guards"]["b"] > data["totals"]["guards"]["a"]


def test_bad_input_is_one_line_and_exit_2(tmp_path, reports, capsys) -> None:
    not_report = tmp_path / "x.json"
    not_report.write_text('{"hello": 1}')
    assert main(["diff", str(not_report), str(reports[0])]) == 2
    err = capsys.readouterr().err
    assert "is not a dynadbg report" in err and err.count("\n") == 1
    assert main(["diff", str(tmp_path / "missing.json"), str(reports[0])]) == 2
    assert main(["diff", "--fail-on", "speed", str(reports[0]), str(reports[1])]) == 2


def _frame(name: str, *, breaks: tuple[str, ...] = (), entries: int = 1) -> dict:
    return {"name": name, "filename": "/src/train.py", "firstlineno": 1, "is_resume": False,
            "entries": [{"compile_id": f"0/{i}", "guard_tree": None,
                         "guard_cost": {"guards": 5, "eval_us": 2.0, "eval_iterations": 1,
                                        "by_source": {"L['x']": {"guards": 5, "tensors": 1}}}}
                        for i in range(entries)],
            "graph_breaks": [{"compile_id": "0/0", "reason": r, "short_reason": r, "filename": "/src/train.py",
                              "lineno": 7, "user_line": "print(x)", "duplicate": False, "resume_functions": []}
                             for r in breaks],
            "recompiles": []}


def _report(*frames: dict) -> dict:
    return {"schema": "dynadbg.report/2", "frames": list(frames)}


def test_code_objects_new_and_gone_and_graph_breaks(tmp_path, capsys) -> None:
    a = _report(_frame("forward"), _frame("old_helper"))
    b = _report(_frame("forward", breaks=("Failed to trace builtin operator",)), _frame("new_helper"))
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert main(["diff", "--fail-on", "graph-breaks", str(pa), str(pb)]) == 1
    out = capsys.readouterr().out
    assert "old_helper (train.py)  [compiled only in A]" in out
    assert "new_helper (train.py)  [compiled only in B]" in out
    assert "new graph break at train.py:7: Failed to trace builtin operator" in out
    assert "graph breaks: 0 → 1" in out
    assert main(["diff", "--fail-on", "recompiles,guards", str(pa), str(pb)]) == 0
