"""The dynadbg pytest plugin: a recompile and graph-break budget per test, with the full analysis on failure.

Installed with dynadbg (``pytest11`` entry point ``dynadbg``) and inactive unless asked: a run with none of the
options below and no ``dynadbg`` marker imports neither torch nor the engine and changes nothing.

    pytest --dynadbg-max-recompiles 0 --dynadbg-max-graph-breaks 0    # a budget for every test
    pytest --dynadbg-json artifacts/                                   # every test's report, report --json schema

    @pytest.mark.dynadbg(max_recompiles=0, max_graph_breaks=1)         # a budget for one test (wins over options)
    def test_model(): ...

A test over its budget fails; the failure text holds, for each recompile, the code object, every failing guard
of every cache entry with its user line, expected and actual value (the analysis ``why`` shows), and each graph
break with its reason and user line. Only the test's call phase is recorded (not fixtures).

Other options: ``--dynadbg-break-on-recompile`` stops at each recompile in line mode (the ``dynadbg.debug()``
prompt; needs ``-s`` so the prompt can read the terminal); ``--dynadbg-reset`` calls ``torch._dynamo.reset()``
before each recorded test (never done unless asked: a reset changes what the suite measures).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

_LIMIT_KEYS = ("max_recompiles", "max_graph_breaks")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dynadbg", "dynadbg: recompile and graph-break budgets for torch.compile")
    group.addoption("--dynadbg-max-recompiles", type=int, default=None, metavar="N",
                    help="fail a test that recompiles more than N times (cache misses of code with entries)")
    group.addoption("--dynadbg-max-graph-breaks", type=int, default=None, metavar="N",
                    help="fail a test whose compiles graph-break more than N times")
    group.addoption("--dynadbg-json", default=None, metavar="DIR",
                    help="write each recorded test's report (the `dynadbg report --json` schema) to DIR")
    group.addoption("--dynadbg-break-on-recompile", action="store_true", default=False,
                    help="stop at each recompile in line mode (run pytest with -s)")
    group.addoption("--dynadbg-reset", action="store_true", default=False,
                    help="reset Dynamo (torch._dynamo.reset()) before each recorded test")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "dynadbg(max_recompiles=None, max_graph_breaks=None): a recompile / graph-break budget for this test "
        "(dynadbg plugin)",
    )
    for name in ("--dynadbg-max-recompiles", "--dynadbg-max-graph-breaks"):
        value = config.getoption(name)
        if value is not None and value < 0:
            raise pytest.UsageError(f"{name} must be 0 or more, not {value}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every dynadbg marker before any test runs (a bad one is a usage error, not a test failure)."""
    for item in items:
        if item.get_closest_marker("dynadbg") is not None:
            _limits(item)


def _limits(item: pytest.Item) -> dict[str, int | None]:
    """The test's budget: the marker's values, else the command line's."""
    config = item.config
    limits: dict[str, int | None] = {
        "max_recompiles": config.getoption("--dynadbg-max-recompiles"),
        "max_graph_breaks": config.getoption("--dynadbg-max-graph-breaks"),
    }
    for mark in reversed(list(item.iter_markers("dynadbg"))):  # the closest marker wins
        if mark.args:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.dynadbg takes keyword arguments only "
                                    f"({', '.join(_LIMIT_KEYS)})")
        unknown = set(mark.kwargs) - set(_LIMIT_KEYS)
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.dynadbg: unknown argument(s) "
                                    f"{', '.join(sorted(unknown))} (choose from {', '.join(_LIMIT_KEYS)})")
        for key, value in mark.kwargs.items():
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.dynadbg({key}={value!r}): "
                                        "a count of 0 or more, or None")
            limits[key] = value
    return limits


def _active(item: pytest.Item, limits: dict[str, int | None]) -> bool:
    config = item.config
    return (any(v is not None for v in limits.values()) or config.getoption("--dynadbg-json") is not None
            or config.getoption("--dynadbg-break-on-recompile"))


def _json_path(directory: str, nodeid: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:180] or "test"
    return os.path.join(directory, name + ".json")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):  # noqa: ANN201 - a pytest hook wrapper
    limits = _limits(item)
    if not _active(item, limits):
        return (yield)
    config = item.config
    from dynadbg.core.recorder import Recorder

    if config.getoption("--dynadbg-reset"):
        import torch

        torch.compiler.reset()
    json_dir = config.getoption("--dynadbg-json")
    writing = json_dir is not None
    recorder = Recorder(count_hits=writing, guard_cost=writing, graphs=writing)
    debugging = _debugger(item) if config.getoption("--dynadbg-break-on-recompile") else None
    recorder.install()
    failed = True
    try:
        if debugging is not None:
            with debugging:
                result = yield
        else:
            result = yield
        failed = False
    finally:
        recorder.uninstall()
        if json_dir is not None:
            _write_json(recorder, json_dir, item, failed)
    message = check_budget(recorder, limits, item.nodeid)
    if message:
        pytest.fail(message, pytrace=False)
    return result


def _debugger(item: pytest.Item) -> Any:
    """``dynadbg.debug(break_on={"recompile"})`` when pytest does not capture the terminal (``-s``), else None
    with a warning: the prompt would read a captured stdin."""
    if item.config.getoption("capture") != "no":
        item.warn(pytest.PytestWarning("--dynadbg-break-on-recompile needs pytest -s (the prompt reads the "
                                       "terminal); recording without stopping"))
        return None
    from dynadbg.api import debug

    return debug(break_on={"recompile"})


def _write_json(recorder: Any, directory: str, item: pytest.Item, failed: bool) -> None:
    os.makedirs(directory, exist_ok=True)
    data = recorder.result().json()
    data["test"] = {"nodeid": item.nodeid, "raised": failed}
    with open(_json_path(directory, item.nodeid), "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)


def check_budget(recorder: Any, limits: dict[str, int | None], nodeid: str = "") -> str | None:
    """The failure text when the recorded region is over a limit, else None.

    Args:
        recorder: a `dynadbg.core.recorder.Recorder` that recorded the region.
        limits: ``{"max_recompiles": N | None, "max_graph_breaks": N | None}``.
    """
    max_rec, max_breaks = limits.get("max_recompiles"), limits.get("max_graph_breaks")
    recompiles = recorder.recompile_count() if max_rec is not None else 0
    frames = recorder.frames(guards=False) if max_breaks is not None else []
    breaks = sum(len(f.graph_breaks) for f in frames)
    over_rec = max_rec is not None and recompiles > max_rec
    over_breaks = max_breaks is not None and breaks > max_breaks
    if not (over_rec or over_breaks):
        return None
    from dynadbg.core.format import record_text

    head = []
    if over_rec:
        head.append(f"{recompiles} recompile{'s' if recompiles != 1 else ''} (limit {max_rec})")
    if over_breaks:
        head.append(f"{breaks} graph break{'s' if breaks != 1 else ''} (limit {max_breaks})")
    lines = [f"dynadbg: {nodeid or 'test'} is over its torch.compile budget: {', '.join(head)}"]
    if over_rec:
        for record in recorder.misses():
            lines += ["", f"recompile #{record.seq} of code object {record.frame_name} "
                          f"({record.filename}:{record.firstlineno})"]
            lines += ["  " + ln for ln in record_text(record).splitlines()]
    if over_breaks:
        for frame in frames:
            for brk in frame.graph_breaks:
                where = f"{brk.filename}:{brk.lineno}" if brk.filename else "(location unknown)"
                lines += ["", f"graph break in {frame.name} [{brk.compile_id}] at {where}"]
                if brk.user_line:
                    lines.append(f"  line: {brk.user_line}")
                lines.append(f"  reason: {brk.summary}")
    return "\n".join(lines)
