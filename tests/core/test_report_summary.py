"""`dynadbg report` as a user reads it: by default a summary (per frame: entries, hits, guards, recompiles with
torch's first reason, distinct graph breaks with their user line), `--full` and `--frame N` for the detail,
`--json` unchanged and `--json --summary` for the summary's data, lines that fit, progress on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dynadbg.core.format.report import ELIDED, fit, fit_long
from forkrun import python

PROGRAM = str(Path(__file__).resolve().parent / "programs" / "report_mix.py")
pytestmark = pytest.mark.slow


def flat(text: str) -> str:
    """`text` with every run of whitespace one space (a wrapped line read as one)."""
    return " ".join(text.split())


def report(*args: str) -> subprocess.CompletedProcess[str]:
    return python(["-m", "dynadbg", "report", *args], timeout=300)


@pytest.fixture(scope="module")
def summary() -> subprocess.CompletedProcess[str]:
    return report(PROGRAM)


def test_default_report_is_a_short_summary(summary) -> None:
    assert summary.returncode == 0, summary.stderr
    out = summary.stdout
    lines = out.splitlines()
    assert lines[0] == "warning: once" and "done" in lines  # the program's own output first, unchanged
    head = next(ln for ln in lines if ln.startswith("dynadbg report: "))
    # one break for the user, four for torch; one recompile
    assert "1 graph break (torch counts 4)" in head and "1 recompile" in head
    assert re.search(r"recompile (\d+)/1: \1/0: n == 2 # return x \* n \+ 1", flat(out))  # torch's first reason
    assert "report_mix.py:8 (seen by 4 frames): print(\"warning: once\")" in flat(out)
    assert flat(out).count("the same break as under [1]") == 3       # the other frames point at it, once each
    look = flat(out.split("look at first:")[1])
    assert re.search(r"1\. \[(\d+)\] scale recompiled once \(\d+/1; every failing guard: dynadbg report --frame \1\); "
                     r"torch's first reason: \d+/0: n == 2", look)
    assert "2. graph break at tests/core/programs/report_mix.py:8 `print(\"warning: once\")`, taken by 4 frames: " in look
    assert "Failed to trace builtin operator" in look
    assert "3." not in look  # 7 guards an entry: not worth a line
    assert "original bytecode:" not in out and "guards:" not in out  # the detail is --full's
    assert len(lines) <= 45
    assert max(len(ln) for ln in lines) <= 120


def test_full_and_one_frame_give_the_detail() -> None:
    full = report("--full", PROGRAM)
    assert full.returncode == 0, full.stderr
    assert "original bytecode:" in full.stdout and "  guards:" in full.stdout and "transformed bytecode:" in full.stdout
    assert re.search(r"\[\d+/1\] recompiling scale, triggered by the following guard failure\(s\):", full.stdout)
    assert full.stdout.rstrip().splitlines()[-1].startswith("summary: ")
    frames = json.loads(report("--json", PROGRAM).stdout)["frames"]
    number = 1 + next(f["index"] for f in frames if f["name"] == "scale")
    one = report("--frame", str(number), PROGRAM)
    assert one.returncode == 0, one.stderr
    assert f"[{number}] frame scale" in one.stdout and "original bytecode:" in one.stdout
    assert "frame outer" not in one.stdout and re.search(r"\[\d+/1\] recompiling scale", one.stdout)
    bad = report("--frame", "99", PROGRAM)
    assert bad.returncode == 2 and "no frame 99: this report has frames 1.." in bad.stderr


def test_json_is_the_whole_report_and_json_summary_the_summary() -> None:
    whole = json.loads(report("--json", PROGRAM).stdout)
    assert whole["schema"] == "dynadbg.report/3"
    assert whole["summary"]["graph_breaks"] == 4                     # torch's count, as before
    assert all("original" in f and "entries" in f for f in whole["frames"])
    short = json.loads(report("--json", "--summary", PROGRAM).stdout)
    assert short["schema"] == "dynadbg.report-summary/1"
    assert short["totals"]["graph_breaks"] == 1 and short["totals"]["torch_graph_breaks"] == 4
    (brk,) = short["graph_breaks"]
    assert brk["frames"] == ["outer", "middle", "inner", "warn_once"] and brk["torch_count"] == 4
    assert brk["lineno"] == 8 and brk["user_line"].strip() == 'print("warning: once")'
    scale = next(f for f in short["frames"] if f["name"] == "scale")
    (rec,) = scale["recompiles"]
    assert rec["compile_id"].endswith("/1") and rec["failing_guards"] == 1 and "n == 2" in rec["reason"]
    assert short["look_at"][0] == {"kind": "recompile", "frame": scale["number"], "graph_break": None,
                                   "compile_id": rec["compile_id"]}
    assert short["look_at"][1]["kind"] == "graph break" and short["look_at"][1]["graph_break"] == 0
    bad = report("--summary", PROGRAM)
    assert bad.returncode == 2 and "--summary goes with --json" in bad.stderr


def test_width_wraps_and_marks_what_is_cut() -> None:
    proc = report("--width", "60", PROGRAM)
    lines = proc.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 60
    assert any(ln.endswith(ELIDED) for ln in lines) or any(ln.startswith("        ") for ln in lines)
    assert "n == 2" in flat(proc.stdout)


def test_fit_wraps_then_marks_the_cut() -> None:
    line = "    reason: " + "word " * 100
    parts = fit(line, 40)
    assert len(parts) == 3 and all(len(p) <= 40 for p in parts)
    assert parts[0].startswith("    reason:") and parts[1].startswith("        ")
    assert parts[-1].endswith(ELIDED)
    assert fit("short", 40) == ["short"]
    long = "x" * 6166
    cut = fit_long(long, 1000)
    assert cut.startswith("x" * 1000) and "[+5,166 characters; the JSON report has the whole line]" in cut


def test_progress_on_stderr_only_when_it_is_a_terminal(summary) -> None:
    assert "dynadbg: compiled" not in summary.stderr            # a pipe: no progress lines
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "dynadbg", "report", PROGRAM], stdout=subprocess.PIPE,
                            stderr=slave, text=True)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate(timeout=300)
    os.close(master)
    text = seen.decode(errors="replace")
    assert "dynadbg: compiled 0/0 outer (1 compile so far)" in text
    assert "dynadbg: cache miss in scale: recompiling" in text
    assert proc.returncode == 0
