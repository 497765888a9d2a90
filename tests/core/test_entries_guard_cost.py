"""The Entries data carries each live entry's guard cost: count, torch's guard-eval latency, groups by source."""

from __future__ import annotations

import torch

from helpers import drive
from programs import simple


def test_entries_name_guard_count_latency_and_sources():
    torch._dynamo.reset()
    run = drive(lambda s: s.start_callable(simple.run_graph_break, [], ((3.0, 2),)), ["entries"],
                break_on=("entry",))
    res = run.output_of("entries")
    assert res.error is None, res.error
    assert "guard cost of 0/0:" in res.output
    assert "guards" in res.output and "µs for one evaluation timed by torch right after compiling" in res.output


def test_entries_method_returns_typed_guard_costs():
    torch._dynamo.reset()
    run = drive(lambda s: s.start_callable(simple.run_graph_break, [], ((3.0, 2),)), ["entries"],
                break_on=("entry",))
    fr = run.output_of("entries").data
    costs = fr.guard_costs
    assert costs and costs[0].compile_id == fr.entries[0].compile_id
    assert costs[0].guards and costs[0].guards > 0
    assert costs[0].eval_us is not None and costs[0].eval_us > 0   # torch's own figure, taken at compile time
    assert sum(g for _, g, _ in costs[0].by_source) == costs[0].guards
