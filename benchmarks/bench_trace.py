"""What recording Dynamo's tracing costs, as ratios of compile time, measured side by side in one run.

Two workloads, compiled from scratch (``torch._dynamo.reset()``) with the eager backend so that Dynamo's tracing is
most of the compile: a 100-layer MLP (``Linear`` + ``ReLU`` blocks) and a transformer block
(``nn.TransformerEncoderLayer``). Each compile runs under a real `Session` (the path a user takes), in three
modes, interleaved round by round: ``off`` (the trace service not installed), ``light`` (what is always on: opcode,
line, depth, node and guard counts per traced instruction) and ``full`` (``trace record full``: stack and locals
summaries, new nodes and guards per instruction; what trace stops arm). No trace stop pauses.

Printed per workload: instructions traced, the median CPU seconds of one compile in each mode, and two ratios —
the whole-compile ratio against ``off`` (noisy on a shared machine) and the time spent inside the step hook itself
(its own time, without the Dynamo step it wraps) as a share of the ``off`` compile time, which is the steadier
figure. Targets (DESIGN.md): light ≤ 2 %, full ≤ 10 % of compile time.

Usage: python benchmarks/bench_trace.py [--rounds 5] [--layers 100] [--width 32]
"""

from __future__ import annotations

import argparse
import queue
import statistics
import time
from typing import Any, Callable

import torch

from dynadbg.core import trace as trace_mod
from dynadbg.core.session import Session


class _Quiet:
    def __init__(self) -> None:
        self.done: "queue.Queue[Any]" = queue.Queue()

    def on_stop(self, stop: Any) -> None:  # no stop kind is armed
        pass

    def on_running(self, message: str) -> None:
        pass

    def on_message(self, text: str) -> None:
        pass

    def on_resumed(self, result: Any) -> None:
        pass

    def on_exit(self, result: Any) -> None:
        self.done.put(result)


def mlp(layers: int, width: int) -> tuple[torch.nn.Module, torch.Tensor]:
    blocks: list[torch.nn.Module] = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*blocks), torch.randn(8, width)


def transformer(width: int) -> tuple[torch.nn.Module, torch.Tensor]:
    layer = torch.nn.TransformerEncoderLayer(d_model=width, nhead=4, dim_feedforward=4 * width, batch_first=True)
    return layer.eval(), torch.randn(2, 16, width)


#: the step hook's own time (seconds), summed while a compile runs
_HOOK = [0.0]


def _timed_step_maker(original: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap the recorder's step hook so its own time (not the Dynamo step inside it, nor the steps of inlined
    calls that step runs) is added to `_HOOK`."""

    def make(self: Any, orig: Callable[[Any], bool]) -> Callable[[Any], bool]:
        children: list[float] = []  # per nesting level: time spent in Dynamo's step at that level

        def timed_orig(tx: Any) -> bool:
            t0 = time.thread_time()
            try:
                return orig(tx)
            finally:
                children[-1] += time.thread_time() - t0

        step = original(self, timed_orig)

        def outer(tx: Any) -> bool:
            t0 = time.thread_time()
            children.append(0.0)
            try:
                return step(tx)
            finally:
                inside = children.pop()
                _HOOK[0] += (time.thread_time() - t0) - inside

        return outer

    return make


class _BareWrapper:
    """In the ``off`` run: the same timed wrapper around Dynamo's own step, with no recorder inside. Its own time is
    what the timers and one Python call cost per traced instruction (the lower bound subtracts it)."""

    def __enter__(self) -> "_BareWrapper":
        from torch._dynamo.symbolic_convert import InstructionTranslatorBase

        self.owner = InstructionTranslatorBase
        self.orig = InstructionTranslatorBase.__dict__["step"]
        InstructionTranslatorBase.step = _timed_step_maker(lambda _self, orig: orig)(None, self.orig)
        return self

    def __exit__(self, *exc: object) -> None:
        self.owner.step = self.orig


def compile_once(mode: str, build: Callable[[], tuple[torch.nn.Module, torch.Tensor]]) -> tuple[float, float, int]:
    """(CPU seconds of the first compiled call, seconds inside the step hook, instructions traced)."""
    if mode == "bare":
        with _BareWrapper():
            return compile_once("off", build)
    torch._dynamo.reset()
    model, x = build()
    listener = _Quiet()
    session = Session(listener, break_on=(), trace=mode != "off", history_limit=0)
    out: dict[str, Any] = {}

    def program() -> None:
        if mode == "full":
            session.trace_settings(record="full")
        compiled = torch.compile(model, backend="eager")
        _HOOK[0] = 0.0
        t0 = time.process_time()
        compiled(x)
        out["cpu"] = time.process_time() - t0
        out["hook"] = _HOOK[0]
        stops = session.trace_stops
        out["steps"] = stops.recorder.total_steps + stops.recorder.evicted_steps if stops is not None else 0

    session.start_callable(program)
    result = listener.done.get(timeout=1800)
    session.wait(timeout=60)
    if result.status != 0:
        raise RuntimeError(f"benchmark program failed: {result.exception}")
    return out["cpu"], out["hook"], out["steps"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--layers", type=int, default=100)
    parser.add_argument("--width", type=int, default=32)
    args = parser.parse_args()
    trace_mod.TraceRecorder._make_step = _timed_step_maker(trace_mod.TraceRecorder._make_step)  # noqa: SLF001
    workloads = {f"MLP, {args.layers} layers": lambda: mlp(args.layers, args.width),
                 "transformer block": lambda: transformer(args.width)}
    modes = ("off", "bare", "light", "full")
    print(f"torch {torch.__version__}; eager backend; {args.rounds} rounds per mode, interleaved, after a warm-up")
    header = (f"{'workload':<20} {'instr':>6} {'off s':>7} {'light s':>8} {'full s':>7} {'light/off':>10} "
              f"{'full/off':>9} {'light hook':>15} {'full hook':>15}")
    print(header)
    for name, build in workloads.items():
        for mode in modes:  # warm-up (imports, caches), discarded
            compile_once(mode, build)
        cpu: dict[str, list[float]] = {m: [] for m in modes}
        hook: dict[str, list[float]] = {m: [] for m in modes}
        steps = 0
        for _ in range(args.rounds):
            for mode in modes:
                c, h, n = compile_once(mode, build)
                cpu[mode].append(c)
                hook[mode].append(h)
                steps = max(steps, n)
        med = {m: statistics.median(cpu[m]) for m in modes}
        share = {m: statistics.median(hook[m]) / med["off"] for m in modes}

        def span(m: str) -> str:  # lower bound (timers and the wrapper call taken off) .. upper bound
            return f"{100 * max(0.0, share[m] - share['bare']):.2f}-{100 * share[m]:.2f}%"

        print(f"{name:<20} {steps:>6} {med['off']:>7.3f} {med['light']:>8.3f} {med['full']:>7.3f} "
              f"{med['light'] / med['off']:>9.3f}x {med['full'] / med['off']:>8.3f}x {span('light'):>15} "
              f"{span('full'):>15}")
    print("light/off, full/off: median CPU time of a whole compile against off (noisy on a shared machine).\n"
          "hook: the step hook's own CPU time (recording, without Dynamo's step inside it) as a share of the off "
          "compile time,\n  from (the same measured on a bare timed wrapper taken off: timers and one call) to "
          "(timers included). Targets: light <= 2%, full <= 10%.")


if __name__ == "__main__":
    main()
