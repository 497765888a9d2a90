"""Roles, explanations and provenance for a ~2,000-instruction generated code object: cost of the first stop
and of every stop after it, side by side with the budget (a figure, not a timed test).

Workload: a model of LAYERS linear layers with a graph break in the middle (``print``), compiled with the
eager backend under a `Capture`; the generated code of its first half (every parameter loaded through an
attribute chain, the graph call, the stack and locals rebuilt for the resume function) is the code object
measured. Printed:

* first stop: flow analysis + capture facts + roles of every instruction + one explanation and one provenance
  (all caches cold);
* each later stop (median and p95 over STOPS random instructions): `explain` (opcode, stack effect with live
  values, role sentence) + `provenance` with the executed path from the entry (the worst case: the path is
  replayed) + the role and region lookup;
* the TUI's share: the section headers of the bytecode pane (once per code object) and, per stop, the Explain
  pane's text and the stack pane's provenance lines;
* the ratio of the later-stop p95 (engine + TUI text) to the 10 ms budget (DESIGN.md: ≤ 10 ms after the first
  stop).

Usage: python benchmarks/bench_teach.py [--layers 280] [--stops 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from dynadbg.core import compat, explain, flow, provenance, roles
from dynadbg.core.capture import Capture
from dynadbg.core.model import ValueSummary


class Net(torch.nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.first = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(layers // 2))
        self.second = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(layers - layers // 2))

    def forward(self, x):
        for layer in self.first:
            x = layer(x) + x
        print("graph break")
        for layer in self.second:
            x = layer(x) + x
        return x


def _clear_caches() -> None:
    roles._cache.clear()
    roles._flow_cache.clear()
    provenance._exprs_cache.clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=280)
    ap.add_argument("--stops", type=int, default=300)
    args = ap.parse_args()
    compat.load()
    torch.manual_seed(0)
    net = Net(args.layers)
    cap = Capture().install()
    try:
        torch.compile(net, backend="eager")(torch.ones(2, 4))
    finally:
        cap.uninstall()
    codes = [comp.entry.code for rec in cap._frames.values() for comp in rec.compiles if comp.entry is not None]
    code = max(codes, key=lambda c: len(flow.ops_of(c)))
    n = len(flow.ops_of(code))
    frames = cap.frames()

    # first stop, cold
    _clear_caches()
    t0 = time.perf_counter()
    facts = roles.facts_from_capture(cap, code, frames)
    t_facts = time.perf_counter() - t0
    cr = roles.code_roles(code, facts)
    explain.explain(code, 0, facts=facts)
    provenance.provenance(code, 0, path=[0], facts=facts)
    t_first = time.perf_counter() - t0

    # later stops while stepping: every instruction in order, provenance along the executed path
    straight = not any(op.target is not None for op in flow.ops_of(code))
    steps = []
    path: list[int] = []
    for i in range(n):
        path.append(i)
        depth = len(provenance.provenance(code, i, generated=False).slots)
        live = tuple(ValueSummary("Tensor", f"Tensor[2, 4] float32 cpu #{k}") for k in range(depth))
        t = time.perf_counter()
        explain.explain(code, i, live, facts=facts, path=path if straight else None)
        provenance.provenance(code, i, path=path if straight else None, facts=facts)
        roles.code_roles(code, facts).region_at(i)
        steps.append(time.perf_counter() - t)
    # `explain IDX` / cursor moves to arbitrary instructions (static flow, no path)
    rng = random.Random(0)
    jumps = []
    for _ in range(args.stops):
        i = rng.randrange(n)
        t = time.perf_counter()
        explain.explain(code, i, None, facts=facts)
        provenance.provenance(code, i, facts=facts)
        roles.code_roles(code, facts).region_at(i)
        jumps.append(time.perf_counter() - t)

    def stats(xs: list[float]) -> tuple[float, float]:
        xs = sorted(xs)
        return statistics.median(xs) * 1e3, xs[int(0.95 * (len(xs) - 1))] * 1e3

    med, p95 = stats(steps)
    jmed, jp95 = stats(jumps)
    budget = 10.0
    print(f"code object: {code.co_name}, {n} instructions, {len(cr.regions)} regions, "
          f"{sum(1 for r in cr.roles if r.source == 'capture')} roles from the capture, path replay: {straight}")
    print(f"first stop (cold: capture facts {t_facts * 1e3:.1f} ms, flow, roles, explain, provenance): "
          f"{t_first * 1e3:.1f} ms")
    print(f"each stop while stepping (explain with live values + provenance over the executed path + role "
          f"lookup): median {med:.2f} ms, p95 {p95:.2f} ms")
    print(f"explain/provenance at an arbitrary instruction (static flow): median {jmed:.2f} ms, p95 {jp95:.2f} ms")
    # the TUI's presentation of the same answers: section headers once per code object, then per stop the
    # Explain pane's text and the stack pane's provenance lines (Rich objects built on the UI thread)
    from dynadbg.tui.explain_view import explanation_lines
    from dynadbg.tui.role_sections import sections
    from dynadbg.tui.stack_view import origin_text

    t = time.perf_counter()
    secs = sections(cr)
    t_sections = time.perf_counter() - t
    shows = []
    for _ in range(args.stops):
        i = rng.randrange(n)
        ex = explain.explain(code, i, None, facts=facts)
        prov = provenance.provenance(code, i, facts=facts)
        t = time.perf_counter()
        explanation_lines(ex, live=False)
        [origin_text(s) for s in prov.slots]
        shows.append(time.perf_counter() - t)
    smed, sp95 = stats(shows)
    print(f"TUI: section headers for the code object ({len(secs)} sections): {t_sections * 1e3:.2f} ms once; "
          f"Explain pane + provenance lines per stop: median {smed:.3f} ms, p95 {sp95:.3f} ms")
    worst = max(p95, jp95) + sp95
    print(f"later-stop p95 (engine + TUI text) / 10 ms budget: {worst / budget:.2f}x  "
          f"({'within' if worst <= budget else 'OVER'} budget)")

if __name__ == "__main__":
    main()
