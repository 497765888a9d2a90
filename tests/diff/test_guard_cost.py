"""Guard cost in `report`: count, torch's guard-eval latency, counts by source, and the cuts that apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynadbg.core import compat
from dynadbg.core.guard_cost import AMBIENT, GLOBALS, GuardCostLog, source_group

PROGRAM = Path(__file__).resolve().parent / "module_program.py"


@pytest.mark.parametrize(("source", "group"), [
    ("L['self']._modules['enc']._modules['0']._parameters['weight']", "L['self']._modules['enc']"),
    ("list(dict.keys(L['self']._modules['enc']._modules))[0]", "L['self']._modules['enc']"),
    ("L['self'].scale", "L['self']"),
    ("L['x']", "L['x']"),
    ("G['SCALE']", GLOBALS),
    ("G['net']._modules['body']._parameters['bias']", "G['net']._modules['body']"),
    ("L", AMBIENT),
])
def test_source_groups(source: str, group: str) -> None:
    assert source_group(source) == group


@pytest.mark.slow
def test_report_gives_count_latency_groups_and_cuts() -> None:
    from dynadbg.core.report import run_report

    result = run_report(str(PROGRAM))
    data = result.json()
    (frame,) = [f for f in data["frames"] if f["name"] == "forward" and not f["is_resume"]]
    (entry,) = frame["entries"]
    cost = entry["guard_cost"]
    assert cost["guards"] == entry["guard_tree"]["leaf_count"] > 50
    assert cost["eval_us"] is not None and cost["eval_us"] > 0 and cost["eval_iterations"] == 1
    groups = cost["by_source"]
    assert list(groups)[0] == "L['self']._modules['enc']"          # the largest group first
    assert groups["L['self']._modules['enc']"]["tensors"] == 8     # 4 Linear layers: weight + bias each
    assert groups["L['self']._modules['head']"]["tensors"] == 2
    assert groups[GLOBALS]["guards"] >= 1 and groups["L['x']"]["tensors"] == 1
    assert sum(g["guards"] for g in groups.values()) == cost["guards"]
    assert data["summary"]["guards"] == cost["guards"]
    cuts = {a["cut"] for a in data["guard_cost_advice"]}
    assert {"skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_eval_unsafe"} <= cuts
    text = result.text(full=True)
    assert f"guard cost: {cost['guards']} guards" in text
    assert "to cut it: torch.compile(m, options={\"guard_filter_fn\": torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe})" in text


@pytest.mark.slow
def test_missing_profiler_disables_only_the_latency(monkeypatch) -> None:
    from dynadbg.core.report import report_json
    from dynadbg.core.recorder import Recorder

    monkeypatch.setattr(compat, "GUARD_PROFILER_TARGET", ("torch._dynamo.guards", "no_such_profiler"))
    log = GuardCostLog().install()
    assert log.disabled and "guard cost disabled" in log.disabled
    log.uninstall()
    import torch

    with Recorder() as rec:
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
    result = rec.result()
    assert any("guard cost disabled" in d for d in result.disabled)
    (entry,) = result.json()["frames"][0]["entries"]
    assert entry["guard_cost"]["eval_us"] is None and entry["guard_cost"]["guards"] > 0
    assert report_json(result.frames)["summary"]["guard_eval_us"] is None
