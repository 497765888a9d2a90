"""Per-call cost of a dynadbg.toolkit copy against Dynamo's own entry, measured side by side in one run.

One compiled function (a global ``nn.Linear`` read by the compiled code, eager backend) is called N times per
round in four configurations, rounds interleaved: Dynamo's own entry; a ``front`` copy (a precompile entry with
the same guards plus the toolkit's epilogue hit counter); a ``replace`` copy (a real cache entry, the original
invalidated); the same function re-bound to another ``nn.Linear`` (``toolkit.rebind``). Prints the median
µs/call of each and the ratio to Dynamo's entry, and the time `rebind` itself took (copy, transport, validate,
install). The copies' extra per-call work is the epilogue counter (a Python call torch makes after the guards
passed); no target is set in DESIGN.md, the figures go to the README.

Usage: python benchmarks/bench_toolkit.py [--calls 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dynadbg import toolkit

lin_a = torch.nn.Linear(16, 16)
lin_b = torch.nn.Linear(16, 16)


def head(x):
    return lin_a(x).relu()


def per_call_us(fn, x, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(x)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    x = torch.randn(4, 16)
    toolkit.stop_recording_call_sites()
    results: dict[str, list[float]] = {"dynamo": [], "front copy": [], "replace copy": [], "rebound": []}
    rebind_s: list[float] = []
    with torch.no_grad():
        for _ in range(args.rounds):
            for name in results:
                torch._dynamo.reset()
                cf = torch.compile(head, backend="eager")
                cf(x)
                if name == "front copy":
                    toolkit.entries(cf)[0].copy().install("front")
                elif name == "replace copy":
                    toolkit.entries(cf)[0].copy().install("replace")
                elif name == "rebound":
                    t0 = time.perf_counter()
                    toolkit.rebind(cf, {"lin_a": lin_b})
                    rebind_s.append(time.perf_counter() - t0)
                cf(x)
                per_call_us(cf, x, 50)
                results[name].append(per_call_us(cf, x, args.calls))
                toolkit.remove_all()
    base = statistics.median(results["dynamo"])
    print(f"torch {torch.__version__}, {args.rounds} rounds x {args.calls} calls (median µs/call)")
    for name, values in results.items():
        med = statistics.median(values)
        print(f"  {name:<13} {med:7.2f} µs/call  {med / base:5.3f}x Dynamo's entry")
    print(f"  rebind itself: {statistics.median(rebind_s) * 1e3:.1f} ms (median)")


if __name__ == "__main__":
    main()
