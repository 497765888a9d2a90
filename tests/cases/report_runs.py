"""The report runs of the corpus, shared: `test_cases_report` and `test_cases_recompile` read the same
``report_driver.py`` output (JSON, full text, summary) for each case, so each case's program runs under ``report``
once per test session, not once per module (a run is a fresh process: torch's import and a first compile
cost seconds each; forked from a server that has imported torch, see forkrun.py). The fixture `report_runs`
(conftest.py) starts them; `report_run` waits for one."""

from __future__ import annotations

import json
import os
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from corpus import case_path, file_stem
from forkrun import ForkServers

REPORT_DRIVER = Path(__file__).resolve().parent / "report_driver.py"
REPORT_TIMEOUT_S = 300
#: what report_driver.py has imported when its program starts, imported once by its fork server
REPORT_PRELOAD = ["torch", "torch._dynamo", "dynadbg.core.report"]


@dataclass(frozen=True)
class ReportRun:
    """One case's program under ``report`` (report_driver.py): its exit status and output, the JSON report, the
    full text (``report --full``) and the summary (plain ``report``)."""

    returncode: int
    stdout: str
    stderr: str
    report: dict | None
    text: str
    summary: str


def driver_env() -> dict[str, str]:
    """The drivers' environment: this one without TORCH_LOGS (a user's logging must not change what torch prints
    into the compared output)."""
    env = dict(os.environ)
    env.pop("TORCH_LOGS", None)
    return env


def run_report_driver(case: str, out_dir: Path, servers: ForkServers) -> ReportRun:
    stem = file_stem(case)
    out_json, out_text = out_dir / f"{stem}.json", out_dir / f"{stem}.txt"
    proc = servers.run(REPORT_PRELOAD, driver_env(), [str(REPORT_DRIVER), str(out_json), str(out_text),
                                                      str(case_path(case))],
                       cwd=str(out_dir), timeout=REPORT_TIMEOUT_S)
    summary = Path(f"{out_text}.summary")
    return ReportRun(proc.returncode, proc.stdout, proc.stderr,
                     json.loads(out_json.read_text()) if out_json.exists() else None,
                     out_text.read_text() if out_text.exists() else "",
                     summary.read_text() if summary.exists() else "")


def report_run(report_runs: dict[str, Future[ReportRun]], case: str) -> ReportRun:
    """`case`'s report run, once it has ended; fails the test when the driver wrote no report."""
    result = report_runs[case].result(timeout=2 * REPORT_TIMEOUT_S + 60)
    assert result.report is not None, f"no report written:\n{result.stderr[-3000:]}"
    return result
