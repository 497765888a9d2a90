"""The corpus tests' shared fixture `report_runs` (see report_runs.py); `fork_servers` is tests/conftest.py's."""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from forkrun import ForkServers
from report_runs import ReportRun, run_report_driver


@pytest.fixture(scope="session")
def report_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                fork_servers: ForkServers):
    """case -> Future[ReportRun] for every case a selected test reads through this fixture, all started the first
    time a test needs one, as many at a time as there are CPUs."""
    selected: list[str] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "report_runs" in getattr(item, "fixturenames", ()):
            case = callspec.params.get("case")
            if case is not None and case not in selected:
                selected.append(case)
    out_dir = tmp_path_factory.mktemp("case_reports")
    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
    futures: dict[str, Future[ReportRun]] = {case: pool.submit(run_report_driver, case, out_dir, fork_servers)
                                            for case in selected}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)
