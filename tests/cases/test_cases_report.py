"""`report` on the real programs of the corpora (tests/programs, and ../shared/cases when present; see corpus.py): every recompile reason and graph break torch 2.13 logged
(the case's ``.expected.md``) must be in the report, the resume functions must be named after the breaks, and
the program's own output and exit status must be unchanged.

Each case runs in its own subprocess (`report_driver.py`, started by conftest.py's `report_runs`, which
test_cases_recompile shares) so torch state does not leak between cases.
Compared on the stable parts only: compile ids, guard expressions (object ids masked), reason heads, file
basenames and line numbers — never uuids, generated global names or absolute paths.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corpus import CASES, SHARED_DIR, case_path, expected_path
from report_runs import ReportRun, report_run

CASES_DIR = SHARED_DIR          # the shared corpus (cases named there by the tests of one shared case)


def _recorded_on_this_stack() -> bool:
    import importlib.metadata

    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False
    return sys.version_info[:2] == (3, 11) and torch_version.startswith("2.13")


RECORDED_ON_THIS_STACK = _recorded_on_this_stack()

pytestmark = [
    pytest.mark.slow,
]


# ------------------------------------------------------------------------------------------------------------
# .expected.md
# ------------------------------------------------------------------------------------------------------------


@dataclass
class Expected:
    exit_code: int | None = None
    recompiles_logged: int | None = None
    graph_breaks_logged: int | None = None
    #: (compile id, function name, [reason, ...]) per "Recompiling function" item
    recompiles: list[tuple[str, str, list[str]]] = field(default_factory=list)
    #: (compile id, file basename, line, duplicate, reason head)
    graph_breaks: list[tuple[str, str, int, bool, str]] = field(default_factory=list)
    stdout: str | None = None


_RECOMPILE = re.compile(r"^- `\[(?P<cid>[^\]]+)\]` Recompiling function (?P<name>\S+)")
_REASON = re.compile(r"^\s+- `(?P<text>.*)`\s*$")
_BREAK = re.compile(
    r"^- `\[(?P<cid>[^\]]+)\]` at `(?P<path>[^`]+):(?P<line>\d+)`(?P<dup> \(user stack suppressed: duplicate\))?: "
    r"(?P<reason>.*)$"
)


def parse_expected(path: Path) -> Expected:
    exp = Expected()
    section = None
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := re.match(r"^- exit code (\d+)", line):
            exp.exit_code = int(m.group(1))
        if m := re.match(r"^- recompiles logged: (\d+); graph breaks logged: (\d+)", line):
            exp.recompiles_logged, exp.graph_breaks_logged = int(m.group(1)), int(m.group(2))
        if line.startswith("**"):
            section = line.strip("*: ").split("**")[0].strip()
        elif section == "Recompile reasons" and (m := _RECOMPILE.match(line)):
            exp.recompiles.append((m.group("cid"), m.group("name"), []))
        elif section == "Recompile reasons" and (m := _REASON.match(line)) and exp.recompiles:
            exp.recompiles[-1][2].append(m.group("text"))
        elif section == "Graph breaks" and (m := _BREAK.match(line)):
            exp.graph_breaks.append(
                (m.group("cid"), os.path.basename(m.group("path")), int(m.group("line")), bool(m.group("dup")),
                 m.group("reason").strip())
            )
        elif section == "Program stdout" and line.startswith("```") and exp.stdout is None:
            j = i + 1
            body = []
            while j < len(lines) and not lines[j].startswith("```"):
                body.append(lines[j])
                j += 1
            exp.stdout = "\n".join(body) + "\n" if body else ""
            i = j
        i += 1
    return exp


def guard_expression(reason: str) -> str:
    """The stable part of one recompile reason: ``"0/0: a == 0.01"`` (location comment dropped, ids masked)."""
    first = reason.splitlines()[0] if reason else ""
    expr = re.split(r"\s{2,}#", first, maxsplit=1)[0].strip()
    # object ids: decimal (also inside names such as ___check_metadata_<id>_c0/0) and hex (id=0x7f...)
    return re.sub(r"(?<!\d)\d{8,}(?!\d)", "<id>", re.sub(r"\b0x[0-9a-f]{6,}\b", "<id>", expr))


def mask_floats(text: str) -> str:
    """Program output with decimals masked (some cases print timings, right-aligned: a slower run's wider number
    takes a padding space, so the padding goes with the number)."""
    return re.sub(r" *\d+\.\d+", " <float>", text)


def reason_head(reason: str) -> str:
    head = re.split(r"\n\s*Explanation:", reason, maxsplit=1)[0]
    return " ".join(head.split())


# ------------------------------------------------------------------------------------------------------------
# running the cases (in parallel, once per session)
# ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def run(report_runs, case) -> ReportRun:
    return report_run(report_runs, case)


# ------------------------------------------------------------------------------------------------------------
# tests
# ------------------------------------------------------------------------------------------------------------


def _frames_by_compile_id(report: dict) -> dict[str, dict]:
    return {e["compile_id"]: f for f in report["frames"] for e in f["entries"]} | {
        r["compile_id"]: f for f in report["frames"] for r in f["recompiles"]
    }


@pytest.mark.parametrize("case", CASES)
def test_program_output_and_status_unchanged(run, case):
    exp = parse_expected(expected_path(case))
    assert run.returncode == (exp.exit_code if exp.exit_code is not None else 0), run.stderr[-3000:]
    if exp.stdout is not None and RECORDED_ON_THIS_STACK:
        # the .expected.md stdout was recorded on Python 3.11 + torch 2.13 (guard counts differ on others;
        # test_cases_stepping compares with a plain run of the same stack instead)
        assert mask_floats(run.stdout) == mask_floats(exp.stdout)
    assert run.report["exit_status"] == run.returncode
    assert run.report["frames"], "the report lists no compiled frame"
    assert run.text.rstrip().splitlines()[-1].startswith("summary: ")


@pytest.mark.parametrize("case", CASES)
def test_recompile_reasons(run, case):
    exp = parse_expected(expected_path(case))
    report = run.report
    recompiles = [(f, r) for f in report["frames"] for r in f["recompiles"]]
    if exp.recompiles_logged is not None:
        assert len(recompiles) == exp.recompiles_logged
    assert report["summary"]["recompiles"] == len(recompiles)
    for compile_id, name, reasons in exp.recompiles:
        found = [(f, r) for f, r in recompiles if r["compile_id"] == compile_id]
        assert len(found) == 1, f"recompile [{compile_id}] missing"
        frame, rec = found[0]
        assert frame["name"] == name
        assert frame["is_resume"] == name.startswith("torch_dynamo_resume_in_")
        assert [guard_expression(r) for r in rec["reasons"]] == [guard_expression(r) for r in reasons]
        # the new compile produced the entry with that id, unless the recompile limit stopped it
        limit_hit = bool((rec.get("analysis") or {}).get("limit_hit"))
        assert compile_id in {e["compile_id"] for e in frame["entries"]} or frame["skipped"] or limit_hit
        # the text report shows the same reasons
        assert f"[{compile_id}] recompiling {name}" in run.text
        for r in reasons:
            assert guard_expression(r).split("<id>")[0] in run.text


@pytest.mark.parametrize("case", CASES)
def test_summary_names_every_recompile_and_break(run, case):
    """The default text report is the summary: every recompile with torch's first reason, every distinct graph
    break with its user line, in a few lines per frame."""
    report, summary = run.report, run.summary
    assert summary.startswith("dynadbg report: ")
    for frame in report["frames"]:
        for rec in frame["recompiles"]:
            assert f"recompile {rec['compile_id']}: " in summary
            if rec["reasons"]:
                first = rec["reasons"][0].splitlines()[0]
                expr = " ".join(guard_expression(first).split("<id>")[0].split())[:60]
                assert expr in " ".join(summary.split())
        for brk in frame["graph_breaks"]:
            if brk["filename"]:
                assert f"{os.path.basename(brk['filename'])}:{brk['lineno']}" in summary
    distinct = {(b["filename"], b["lineno"], b["short_reason"]) for f in report["frames"] for b in f["graph_breaks"]}
    assert f"{len(distinct)} graph break" in summary.splitlines()[0]
    # a few lines a frame, one a recompile, three a distinct break: never the detail's hundreds
    n_recompiles = sum(len(f["recompiles"]) for f in report["frames"])
    assert len(summary.splitlines()) <= 16 + 6 * len(report["frames"]) + n_recompiles + 3 * len(distinct)
    assert "bytecode:" not in summary and "guards:" not in summary  # the detail is --full's


@pytest.mark.parametrize("case", CASES)
def test_graph_breaks_and_resume_functions(run, case):
    exp = parse_expected(expected_path(case))
    report = run.report
    breaks = [(f, b) for f in report["frames"] for b in f["graph_breaks"]]
    if exp.graph_breaks_logged is not None:
        assert len(breaks) == exp.graph_breaks_logged
    got = sorted(
        (b["compile_id"], os.path.basename(b["filename"] or ""), b["lineno"], b["duplicate"], b["short_reason"])
        for _, b in breaks
    )
    assert got == sorted(exp.graph_breaks)

    by_index = {f["index"]: f for f in report["frames"]}
    for frame, brk in breaks:
        assert brk["user_line"], brk
        assert brk["short_reason"] == reason_head(brk["reason"])
        if "Skipping the function" in brk["reason"]:
            continue  # Dynamo gave up on the frame: no resume function
        own_lines = {i["lineno"] for i in frame["original"] or () if i["lineno"] is not None}
        if brk["filename"] != frame["filename"] or brk["lineno"] not in own_lines:
            # the break is in a function the frame inlined (its user line is the callee's): Dynamo breaks the
            # frame at the call, and resumes after it only when code follows the call (a helper's print in
            # `return helper(x)` leaves nothing to resume; torch's optimizer wrapper resumes at its own line)
            continue
        # the frame that broke calls a resume function named after the break's line, in the same function
        origin = frame["resume_origin"].split(" (")[0] if frame["is_resume"] else frame["name"]
        expected_name = f"torch_dynamo_resume_in_{origin}_at_{brk['lineno']}"
        # the lines of the function's own source (a resume function's source is its origin's: "f (demo.py:10)")
        first = int(frame["resume_origin"].rsplit(":", 1)[1].rstrip(")")) if frame["is_resume"] else frame["firstlineno"]
        lines = range(first, first + len((frame["source"] or "").splitlines()))
        inlined = brk["filename"] == frame["filename"] and frame["source"] and brk["lineno"] not in lines
        if inlined:
            # the break is inside a call this frame inlined: the resume function continues this frame after the
            # line of that call (torch names it after the frame being compiled, not after the innermost line)
            expected_name = None
        entry = next(e for e in frame["entries"] if e["compile_id"] == brk["compile_id"])
        if inlined and not entry["resume_functions"]:
            # `return helper(...)` with the break inside helper: the generated code returns the eager call's result,
            # with no resume function; the trace of that compile (recorded independently) says so too
            traced = [b for c in report["trace"] if c["compile_id"] == brk["compile_id"] for b in c["breaks"]]
            assert traced and traced[-1]["returns"] and traced[-1]["resume_function"] is None, traced
            continue
        assert entry["resume_functions"], f"[{brk['compile_id']}] references no resume function"
        assert brk["resume_functions"] == [r["global"] for r in entry["resume_functions"]]
        linked = [by_index[r["frame"]] for r in entry["resume_functions"] if r["frame"] is not None]
        assert linked, "no resume function of this break was called (so none was compiled or skipped)"
        for target in linked:
            if expected_name is None:
                prefix = f"torch_dynamo_resume_in_{origin}_at_"
                assert target["is_resume"] and target["name"].startswith(prefix), target["name"]
                assert int(target["name"][len(prefix):]) in lines
                continue
            assert target["is_resume"] and target["name"] == expected_name
            assert target["resume_origin"].startswith(f"{origin} (")
            assert target["entries"] or target["skipped"]


@pytest.mark.parametrize("case", CASES)
def test_every_entry_is_complete(run, case):
    report = run.report
    source = case_path(case).read_text()
    # a program whose backend is a callable names it in a comment: "# backend name: compiler_fn"
    backends = set(re.findall(r"backend=[\"'](\w+)[\"']", source) + re.findall(r"# backend name: (\w+)", source)) \
        or {"inductor"}
    for frame in report["frames"]:
        assert frame["original"], frame["name"]
        assert frame["source"], frame["name"]
        graphs = {g["name"] for g in frame["graphs"]}
        for entry in frame["entries"]:
            assert entry["backend"] in backends
            assert entry["code"] and entry["code"][0]["opname"] in {"RESUME", "COPY_FREE_VARS", "MAKE_CELL"}
            assert entry["guards"], f"{frame['name']} {entry['compile_id']}: no guard text"
            assert entry["hits"] >= 1  # the call that compiled it ran it
            assert set(entry["graphs"]) <= graphs
    assert report["summary"]["entries"] == sum(len(f["entries"]) for f in report["frames"])
