"""The pytest plugin, as a user meets it: a child pytest runs the sample suite in tests/plugin/sample with the
plugin loaded through its installed ``pytest11`` entry point."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from forkrun import python

SAMPLE = Path(__file__).resolve().parent / "sample"
pytestmark = pytest.mark.slow


def run_pytest(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # pytest prints a failure's whole message again in its short summary when it thinks it runs on CI (the CI or
    # BUILD_NUMBER variable set): the child prints what a user's terminal shows, whoever runs this suite
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    env["PYTHONWARNINGS"] = "ignore"
    return python(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", *args],
                  cwd=SAMPLE, timeout=300, input=stdin, env=env)


def test_recompile_over_budget_fails_with_the_failing_guard(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    proc = run_pytest("--dynadbg-max-recompiles", "0", "--dynadbg-json", str(out),
                      "sample_recompile.py::test_int_argument_recompiles")
    text = proc.stdout
    assert proc.returncode == 1, text
    assert "1 failed" in text
    assert "1 recompile (limit 0)" in text
    assert "code object scale" in text
    assert "L['n'] == 2" in text                      # the failing guard's expression
    assert "line: return x * n + 1" in text            # its user line
    assert "expected 2, actual 3" in text              # expected and actual
    report = json.loads((out / "sample_recompile.py_test_int_argument_recompiles.json").read_text())
    assert report["schema"].startswith("dynadbg.report/")
    assert report["summary"]["recompiles"] == 1
    assert report["test"]["nodeid"] == "sample_recompile.py::test_int_argument_recompiles"
    assert [f["name"] for f in report["frames"]] == ["scale"]


def test_limit_one_passes(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    proc = run_pytest("--dynadbg-max-recompiles", "1", "--dynadbg-json", str(out), "sample_recompile.py")
    assert proc.returncode == 0, proc.stdout
    assert "3 passed" in proc.stdout
    names = sorted(p.name for p in out.iterdir())
    assert names == ["sample_recompile.py_test_graph_break.json", "sample_recompile.py_test_int_argument_recompiles.json",
                     "sample_recompile.py_test_steady.json"]


def test_graph_break_budget() -> None:
    proc = run_pytest("--dynadbg-max-graph-breaks", "0", "sample_recompile.py")
    text = proc.stdout
    assert proc.returncode == 1, text
    assert "1 failed, 2 passed" in text
    assert "1 graph break (limit 0)" in text
    assert "graph break in shout" in text
    assert 'line: print("half way")' in text
    assert "reason: " in text
    assert run_pytest("--dynadbg-max-graph-breaks", "1", "sample_recompile.py").returncode == 0


def test_nested_graph_break_counts_once_with_the_frames_that_saw_it() -> None:
    # one print in a helper two calls below the compiled function: torch logs it for 4 frames, it is 1 break
    assert run_pytest("--dynadbg-max-graph-breaks", "1", "sample_nested.py").returncode == 0
    proc = run_pytest("--dynadbg-max-graph-breaks", "0", "sample_nested.py")
    text = proc.stdout
    assert proc.returncode == 1, text
    assert "1 graph break (limit 0; torch counts 4)" in text
    assert text.count('line: print("warning: once")') == 1
    assert "seen by 4 frames" in text and "outer, middle, inner, warn_once" in text
    # the budget on torch's count, when asked
    proc = run_pytest("--dynadbg-max-graph-breaks", "1", "--dynadbg-graph-break-count", "torch", "sample_nested.py")
    assert proc.returncode == 1, proc.stdout
    assert "4 graph breaks as torch counts them (limit 1; 1 distinct)" in proc.stdout


def test_marker_sets_the_budget_per_test() -> None:
    proc = run_pytest("sample_marker.py")
    text = proc.stdout
    assert proc.returncode == 1, text
    assert "1 failed, 1 passed" in text
    assert "FAILED sample_marker.py::test_marker_budget_zero" in text
    assert "L['k'] == 1" in text and "expected 1, actual 5" in text


def test_reset_only_when_asked() -> None:
    # without a reset the second test recompiles what the first compiled, and that counts against it
    proc = run_pytest("--dynadbg-max-recompiles", "0", "sample_reset.py")
    assert proc.returncode == 1, proc.stdout
    assert "FAILED sample_reset.py::test_second_value" in proc.stdout
    assert "L['k'] == 1" in proc.stdout and "expected 1, actual 2" in proc.stdout
    proc = run_pytest("--dynadbg-max-recompiles", "0", "--dynadbg-reset", "sample_reset.py")
    assert proc.returncode == 0, proc.stdout
    assert "2 passed" in proc.stdout


def test_inactive_without_options() -> None:
    proc = run_pytest("sample_recompile.py")
    assert proc.returncode == 0, proc.stdout
    assert "3 passed" in proc.stdout
    assert "dynadbg" not in proc.stdout


def test_bad_marker_argument_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = sample_*.py\n")
    (tmp_path / "sample_bad.py").write_text(
        "import pytest\n\n@pytest.mark.dynadbg(max_recompile=0)\ndef test_x():\n    pass\n")
    proc = python(["-m", "pytest", "-q", "-p", "no:cacheprovider", "sample_bad.py"], cwd=tmp_path, timeout=300)
    assert proc.returncode != 0
    assert "unknown argument(s) max_recompile" in proc.stdout + proc.stderr


def test_break_on_recompile_stops_in_line_mode() -> None:
    proc = run_pytest("-s", "--dynadbg-break-on-recompile", "sample_recompile.py::test_int_argument_recompiles",
                      stdin="guards fail\nc\n")
    text = proc.stdout
    assert proc.returncode == 0, text
    assert "scale is about to recompile" in text
    assert "(dynadbg) " in text
    assert "expected 2, actual 3" in text
