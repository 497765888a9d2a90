"""Recompile insight on the real programs of the corpora (tests/programs, and ../shared/cases when present): every recompile reason torch 2.13 logged (the case's
``.expected.md``) must be found both by ``report`` (its per-recompile analysis) and by the recompile stop, compared
on compile id and guard expression (torch prints ``self.counter == 0`` where the tree keeps
``L['self'].counter``; object ids are masked). Case 002 also runs in ``--plain`` with ``--break-on recompile``:
each stop names the failing guard and the entry's compile id, and ``eager`` / ``drop`` do what they say.

Each run is its own process (torch state must not leak between cases; forked from a server that has imported
torch, see forkrun.py), started together the first time a test needs one; the report runs are
test_cases_report's (conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from corpus import case_path, expected_path, file_stem
from forkrun import ForkServers
from report_runs import driver_env, report_run
from test_cases_report import CASES, CASES_DIR, RECORDED_ON_THIS_STACK, guard_expression, mask_floats, parse_expected
from forkrun import python

HERE = Path(__file__).resolve().parent
STOP_DRIVER = HERE / "recompile_driver.py"
TIMEOUT_S = 300
CASE_002 = "002_module_int_counter_attr.py"
#: what recompile_driver.py has imported when its program starts, imported once by its fork server
STOP_PRELOAD = ["torch", "torch._dynamo", "dynadbg.core.commands", "dynadbg.core.listeners", "dynadbg.core.session",
                "dynadbg.core.report", "dynadbg.core.format"]

pytestmark = [
    pytest.mark.slow,
]


@dataclass
class Runs:
    report: dict | None
    report_text: str
    report_stderr: str
    stops: dict | None
    stops_stdout: str
    stops_stderr: str
    stops_returncode: int


@dataclass
class StopRun:
    stops: dict | None
    stdout: str
    stderr: str
    returncode: int


def _run_stops(name: str, out_dir: Path, servers: ForkServers) -> StopRun:
    stops_json = out_dir / f"{file_stem(name)}.stops.json"
    stops = servers.run(STOP_PRELOAD, driver_env(), [str(STOP_DRIVER), str(stops_json), str(case_path(name))],
                        cwd=str(out_dir), timeout=TIMEOUT_S)
    return StopRun(json.loads(stops_json.read_text()) if stops_json.exists() else None, stops.stdout,
                   stops.stderr, stops.returncode)


@pytest.fixture(scope="module")
def case_runs(request, tmp_path_factory, fork_servers):
    selected = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec is not None and "case" in callspec.params:
            if callspec.params["case"] not in selected:
                selected.append(callspec.params["case"])
    out_dir = tmp_path_factory.mktemp("case_recompiles")
    pool = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) // 2))
    futures: dict[str, Future] = {name: pool.submit(_run_stops, name, out_dir, fork_servers)
                                   for name in selected}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture
def runs(report_runs, case_runs, case) -> Runs:
    """`case` under ``report`` (the run test_cases_report reads too) and under ``--break-on recompile``."""
    report = report_run(report_runs, case)
    stops = case_runs[case].result(timeout=2 * TIMEOUT_S + 60)
    assert stops.stops is not None, f"no stops written:\n{stops.stderr[-3000:]}"
    return Runs(report=report.report, report_text=report.text, report_stderr=report.stderr, stops=stops.stops,
                stops_stdout=stops.stdout, stops_stderr=stops.stderr, stops_returncode=stops.returncode)


def _expression(reason: str) -> str:
    return guard_expression(reason)


def _old_id(reason: str) -> str:
    return reason.split(":", 1)[0]


# ------------------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_report_analysis_finds_every_recompile_reason(runs, case):
    exp = parse_expected(expected_path(case))
    report = runs.report
    recompiles = {(f["name"], r["compile_id"]): r for f in report["frames"] for r in f["recompiles"]}
    for compile_id, name, reasons in exp.recompiles:
        rec = recompiles.get((name, compile_id))
        assert rec is not None, f"[{compile_id}] {name} missing"
        analysis = rec["analysis"]
        assert analysis is not None, f"[{compile_id}]: the miss that led to it was not analysed"
        assert analysis["compile_id"] == compile_id and analysis["error"] is None
        checked = {e["compile_id"]: e for e in analysis["entries_checked"]}
        assert len(checked) == len(reasons)
        for reason in reasons:
            entry = checked[_old_id(reason)]
            assert _expression(entry["torch_reason"]) == _expression(reason)
            assert entry["failing"], f"{reason}: no failing guard listed"
            # every failing guard is listed, and the one torch names is marked
            if not entry["invalidated"]:
                assert sum(g["torch_reports"] for g in entry["failing"]) == 1, entry["failing"]
        # the text report shows each entry's torch reason with the full failing-guard list
        for reason in reasons:
            head = _expression(reason).split("<id>")[0]
            assert f"torch reports: {head}" in runs.report_text, head
    assert report["summary"]["misses"] == len(report["recompile_timeline"])
    for row in report["recompile_timeline"]:
        assert row["failing_guards"] >= len(row["torch_reasons"])


@pytest.mark.parametrize("case", CASES)
def test_report_guard_diffs_and_hits(runs, case):
    for frame in runs.report["frames"]:
        live = [e for e in frame["entries"] if not e["invalidated"]]
        # consecutive live entries (a program whose objects are freed at its end leaves every entry invalidated)
        assert len(frame["guard_diffs"]) == max(len(live) - 1, 0)
        for entry in frame["entries"]:
            assert entry["hits"] >= 1


# ------------------------------------------------------------------------------------------------------------
# the recompile stop
# ------------------------------------------------------------------------------------------------------------


def _torch_lines(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*torch reports: (.*)$", text, re.M)]


@pytest.mark.parametrize("case", CASES)
def test_recompile_stop_finds_every_recompile_reason(runs, case):
    exp = parse_expected(expected_path(case))
    stops = runs.stops["stops"]
    by_id: dict[str, list[dict]] = {}
    for stop in stops:
        by_id.setdefault(stop["record"]["compile_id"], []).append(stop)
    counted = [s for s in stops if (s["record"]["limit"] or {}).get("is_recompile", True)]
    if exp.recompiles_logged is not None:
        assert len(counted) == exp.recompiles_logged
    for compile_id, name, reasons in exp.recompiles:
        assert compile_id in by_id, f"no recompile stop before [{compile_id}]"
        (stop,) = by_id[compile_id]
        failing = stop["detail"]["failing guards"]
        assert f"next compile: {compile_id}" in failing
        assert stop["entry_count"] == len(reasons)
        assert sorted(_expression(t) for t in _torch_lines(failing)) == sorted(_expression(r) for r in reasons)
        for reason in reasons:
            assert f"{_old_id(reason)}: " in failing
    # answering `recompile` changes nothing: the program behaves as without the debugger
    assert runs.stops_returncode == (exp.exit_code if exp.exit_code is not None else 0), runs.stops_stderr[-3000:]
    if exp.stdout is not None and RECORDED_ON_THIS_STACK:  # recorded on 3.11 + torch 2.13 (guard counts differ)
        expected_lines = mask_floats(exp.stdout).splitlines()
        assert [ln for ln in mask_floats(runs.stops_stdout).splitlines() if ln in expected_lines] == expected_lines


# ------------------------------------------------------------------------------------------------------------
# case 002 in --plain
# ------------------------------------------------------------------------------------------------------------


def _plain(commands: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return python(["-m", "dynadbg", "run", "--plain", "--break-on", "recompile", "-c", commands,
                   str(CASES_DIR / CASE_002)], timeout=TIMEOUT_S, cwd=str(tmp_path), env=driver_env())


@pytest.mark.skipif(not (CASES_DIR / CASE_002).exists(), reason="case 002 missing")
def test_002_plain_stops_before_each_recompile_with_the_failing_guard(tmp_path):
    proc = _plain("c; c; c; c; c; c", tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    blocks = out.split("--- ")[1:]
    stops = [b for b in blocks if "is about to recompile" in b]
    assert len(stops) == 6
    for n, block in enumerate(stops[:5], start=1):     # forward of WarmupScaled: 0/1 .. 0/5
        assert f"next compile: 0/{n}" in block
        for old in range(n):
            assert f"0/{old}: 1 failing guard" in block
            assert f"L['self'].counter == {old}" in block
            assert f"torch reports: 0/{old}: self.counter == {old}" in block
    assert "next compile: 1/1" in stops[5] and "self._modules['inner'].counter == 0" in stops[5]
    assert "ok: 6 calls, counter = 6" in out


@pytest.mark.skipif(not (CASES_DIR / CASE_002).exists(), reason="case 002 missing")
def test_002_plain_eager_keeps_one_entry(tmp_path):
    proc = _plain("eager; eager; eager; eager; entries; eager; c", tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert 'torch.compiler.set_stance("eager_on_recompile")' in out
    assert "forward (" in out and "): 1 cache entry" in out
    assert out.count("ran eagerly (not compiled)") >= 4
    assert "ok: 6 calls, counter = 6" in out                 # eager results are right


@pytest.mark.skipif(not (CASES_DIR / CASE_002).exists(), reason="case 002 missing")
def test_002_plain_drop_stops_recompiling_and_warns(tmp_path):
    proc = _plain("break-on entry on; drop; entries; c", tmp_path)
    out = proc.stdout
    assert out.count("is about to recompile") == 1            # no recompile after the drop
    assert "WARNING" in out and "RESULTS MAY BE WRONG" in out
    assert '"guard_filter_fn"' in out
    assert "drop: compiled 0/1 without 2 guard(s): EQUALS_MATCH L['self'].counter, CONSTANT_MATCH L['self'].counter" in out
    assert "): 2 cache entries" in out
    # the counter was baked into the new entry: the program's own check fails, as the warning said
    assert proc.returncode == 1 and "assert m.counter == 6" in proc.stdout + proc.stderr


# ------------------------------------------------------------------------------------------------------------
# the graph-break stop on a real program
# ------------------------------------------------------------------------------------------------------------

CASE_011 = "011_item_graph_break_resume_stack_guard.py"


@pytest.mark.skipif(not (CASES_DIR / CASE_011).exists(), reason="case 011 missing")
def test_011_graph_break_stop_shows_the_break_and_the_stack_passed(tmp_path):
    proc = python(["-m", "dynadbg", "run", "--plain", "--break-on", "graph-break", "-c", "c",
                   str(CASES_DIR / CASE_011)], timeout=TIMEOUT_S, cwd=str(tmp_path), env=driver_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = proc.stdout.split("--- ")[1]
    assert "resume function torch_dynamo_resume_in_box_extent_at_48 (compile 1/0) continues box_extent" in first
    assert "graph break in box_extent during compile 0/0, at" in first
    assert "48 | w = int(box[2] + box[0])" in first
    assert "Unsupported Tensor.item() call" in first
    # the .item() result Dynamo could not trace is handed to the resume function on the stack; 1/0 guards on it
    assert "stack passed to it" in first and "___stack0 = 10977" in first
    assert "locals carried over:\n    box = Tensor[4] int64 cpu" in first
