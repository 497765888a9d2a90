"""What recording Dynamo's tracing costs, as ratios of compile time, measured side by side in one run.

Two workloads, compiled from scratch (``torch._dynamo.reset()``) with the eager backend so that Dynamo's tracing is
most of the compile: a 100-layer MLP (``Linear`` + ``ReLU`` blocks) and a transformer block
(``nn.TransformerEncoderLayer``). Each compile runs under a real `Session` (the path a user takes), in three
modes, interleaved round by round: ``off`` (the trace service not installed), ``light`` (what is always on: opcode,
line, depth, node and guard counts per traced instruction) and ``full`` (``trace record full``: stack and locals
summaries, new nodes and guards per instruction; what trace stops arm). No trace stop pauses.

Printed per workload: instructions traced, the median CPU seconds of one compile in each mode, and the cost of
recording two ways:

* the whole compile against ``off`` (what a user pays): the median ratio and the ratio of the fastest runs (the
  least disturbed by the machine's other work), over ``--rounds`` rounds whose mode order is shuffled each round
  (a compile of the transformer block takes ~0.13 s, so one round's ratio moves by several per cent on a shared
  machine: 15 rounds or more);
* the time spent inside the step hook itself (its own time, without the Dynamo step it wraps) as a share of the
  ``off`` compile time, from runs of their own with timers around the hook (``bare``: the same timers around
  Dynamo's step with no recorder, taken off as the lower bound). This one overstates: the timers (four
  ``time.thread_time`` calls per traced instruction, each a system call) sit around an extra Python frame in the
  recording modes, and the bare run only partly takes them off. On 2026-12-04 (load 0.5) the transformer block's
  hook share read 5.4-7.7 % (light) while its whole compiles measured light at 0.98x off. The whole-compile runs
  carry no timers (an earlier version of this benchmark timed them with the hook's timers on, which added those
  timers to the light and full ratios: 1.14x and 1.26x for the same code).

Each compile starts after a ``gc.collect()``: without it, a full recording's garbage (a young-generation collection
every few hundred traced instructions) was partly collected inside the next round's compile, whichever mode that was,
and the modes' order decided who paid for it. The collections a compile's own recording causes stay in its time.

Each compile's time also counts freeing what it left: the recording is evicted and a collection runs (over what
the compile made only: what existed before is frozen, ``gc.freeze``). Without this, what the recording keeps until
it is evicted (Dynamo's instruction lists; until 2026-12-05 the whole output graph, by mistake) was freed inside the
``off`` compile only. Even so the ``light`` compile measures a few per cent *faster* than ``off`` here: a bare
Python wrapper around Dynamo's step, recording nothing, measured the same (0.955x off, 12 rounds), an effect of the
interpreter, not of the recording. So read ``full`` against ``light`` as well: that difference is the full
recording's own cost.

Targets (DESIGN.md): light ≤ 2 %, full ≤ 10 % of compile time, read from the whole-compile ratios.

``--opcodes`` prints instead what does not move with the machine's load: the interpreter instructions the full
recording (`TraceRecorder._full_record` and what it calls) executes per traced instruction, counted with
``sys.settrace`` opcode events over one compile of each workload (an event per instruction, so the counts compare
with each other, not with ``dis`` listings). On 2026-12-05 the transformer block's was 336 before that day's cuts and
267 after (~20 ns an event inside a compile: 267 of them are the 12-13 % that full recording costs there; about 200
would bring it under 10 %); the MLP's 383 and 366.

Usage: python benchmarks/bench_trace.py [--rounds 15] [--layers 100] [--width 32] [--only mlp|transformer] [--opcodes]
"""

from __future__ import annotations

import argparse
import gc
import queue
import random
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


#: the recorder's own step-hook maker (the timed one wraps it for the hook-share runs only)
_UNTIMED_MAKE_STEP = trace_mod.TraceRecorder._make_step  # noqa: SLF001


def compile_once(mode: str, build: Callable[[], tuple[torch.nn.Module, torch.Tensor]]) -> tuple[float, float, int]:
    """(CPU seconds of the first compiled call, seconds inside the step hook, instructions traced). Modes: ``off``,
    ``light``, ``full`` (no timers), ``bare`` (timers around Dynamo's own step, no recorder), ``light timed`` and
    ``full timed`` (timers around the recorder's step hook)."""
    if mode == "bare":
        with _BareWrapper():
            return compile_once("off", build)
    if mode.endswith(" timed"):
        trace_mod.TraceRecorder._make_step = _timed_step_maker(_UNTIMED_MAKE_STEP)  # type: ignore[method-assign]
        try:
            return compile_once(mode.split()[0], build)
        finally:
            trace_mod.TraceRecorder._make_step = _UNTIMED_MAKE_STEP  # type: ignore[method-assign]
    torch._dynamo.reset()
    model, x = build()
    listener = _Quiet()
    session = Session(listener, break_on=(), trace=mode != "off", history_limit=0)
    out: dict[str, Any] = {}

    def program() -> None:
        if mode == "full":
            session.trace_settings(record="full")
        compiled = torch.compile(model, backend="eager")
        gc.collect()  # each compile starts from the same heap: the previous one's garbage is not collected inside it
        gc.freeze()  # what exists now is not looked at by the collection after the compile (only what it made)
        _HOOK[0] = 0.0
        t0 = time.thread_time()  # the compiling thread's own CPU time: every hook runs on it
        compiled(x)
        out["cpu"] = time.thread_time() - t0
        out["hook"] = _HOOK[0]
        stops = session.trace_stops
        out["steps"] = stops.recorder.total_steps + stops.recorder.evicted_steps if stops is not None else 0
        # what the compile left to free, freed now and counted: the recording holds Dynamo's instruction lists
        # (an inlined call's is a fresh copy) until it is evicted, which without it the compile's end frees, and
        # Dynamo's own cyclic garbage waits for a collection in every mode
        t1 = time.thread_time()
        if stops is not None:
            stops.recorder.set_bounds(limit=0, max_bytes=0)
        gc.collect()
        out["cpu"] += time.thread_time() - t1
        gc.unfreeze()

    session.start_callable(program)
    result = listener.done.get(timeout=1800)
    session.wait(timeout=60)
    if result.status != 0:
        raise RuntimeError(f"benchmark program failed: {result.exception}")
    return out["cpu"], out["hook"], out["steps"]


def count_opcodes(build: Callable[[], tuple[torch.nn.Module, torch.Tensor]]) -> tuple[int, int, dict[str, int]]:
    """(traced instructions, interpreter instructions executed inside the full record, those per function) of one
    compile with ``trace record full``."""
    import collections
    import sys

    counts: collections.Counter[str] = collections.Counter()
    calls = [0]

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            counts[frame.f_code.co_name] += 1
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return local

    original = trace_mod.TraceRecorder._full_record  # noqa: SLF001

    def counted(self: Any, *args: Any) -> None:
        calls[0] += 1
        sys.settrace(tracer)
        try:
            original(self, *args)
        finally:
            sys.settrace(None)

    compile_once("full", build)  # warm-up: imports and first-time caches are not counted
    trace_mod.TraceRecorder._full_record = counted  # type: ignore[method-assign]
    try:
        compile_once("full", build)
    finally:
        trace_mod.TraceRecorder._full_record = original  # type: ignore[method-assign]
    return calls[0], sum(counts.values()), dict(counts.most_common(8))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--layers", type=int, default=100)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--only", choices=("mlp", "transformer"), help="measure one workload (more rounds in the "
                        "same time: the transformer block's 0.14 s compiles need more of them on a shared machine)")
    parser.add_argument("--opcodes", action="store_true", help="count the full recording's interpreter "
                        "instructions per traced instruction instead of timing (independent of the machine's load)")
    args = parser.parse_args()
    workloads = {f"MLP, {args.layers} layers": lambda: mlp(args.layers, args.width),
                 "transformer block": lambda: transformer(args.width)}
    if args.only:
        workloads = {k: v for k, v in workloads.items() if k.lower().startswith(args.only)}
    if args.opcodes:
        print(f"torch {torch.__version__}; interpreter instructions executed by the full recording per traced "
              "instruction (sys.settrace opcode events, one compile after a warm-up)")
        for name, build in workloads.items():
            steps, total, top = count_opcodes(build)
            parts = ", ".join(f"{fn} {n / max(steps, 1):.0f}" for fn, n in top.items())
            print(f"{name:<20} {steps:>6} traced  {total / max(steps, 1):6.0f} per traced instruction  ({parts})")
        return
    modes = ("off", "light", "full", "bare", "light timed", "full timed")
    print(f"torch {torch.__version__}; eager backend; {args.rounds} rounds per mode, in a shuffled order each round, "
          "after a warm-up")
    header = (f"{'workload':<20} {'instr':>6} {'off s':>7} {'light s':>8} {'full s':>7} {'light/off':>15} "
              f"{'full/off':>23} {'full/light':>10} {'light hook':>15} {'full hook':>15}")
    print(header)
    for name, build in workloads.items():
        for mode in modes:  # warm-up (imports, caches), discarded
            compile_once(mode, build)
        cpu: dict[str, list[float]] = {m: [] for m in modes}
        hook: dict[str, list[float]] = {m: [] for m in modes}
        steps = 0
        rng = random.Random(0)
        for _ in range(args.rounds):
            for mode in rng.sample(modes, len(modes)):
                c, h, n = compile_once(mode, build)
                cpu[mode].append(c)
                hook[mode].append(h)
                steps = max(steps, n)
        med = {m: statistics.median(cpu[m]) for m in modes}
        best = {m: min(cpu[m]) for m in modes}

        def ratio(m: str) -> str:  # median ratio (ratio of the fastest runs) [median of the rounds' own ratios]
            paired = statistics.median(c / o for c, o in zip(cpu[m], cpu["off"]))
            return f"{med[m] / med['off']:.3f}x ({best[m] / best['off']:.3f}) [{paired:.3f}]"

        share = {m: statistics.median(hook[m]) / med["off"] for m in modes}

        def span(m: str) -> str:  # lower bound (timers and the wrapper call taken off) .. upper bound
            timed = f"{m} timed"
            return f"{100 * max(0.0, share[timed] - share['bare']):.2f}-{100 * share[timed]:.2f}%"

        own = statistics.median(f / li for f, li in zip(cpu["full"], cpu["light"]))
        print(f"{name:<20} {steps:>6} {med['off']:>7.3f} {med['light']:>8.3f} {med['full']:>7.3f} "
              f"{ratio('light'):>23} {ratio('full'):>23} {own:>9.3f}x {span('light'):>15} {span('full'):>15}")
    print("light/off, full/off: CPU time of a whole compile against off: the median ratio (in brackets the ratio of "
          "the fastest runs; in square brackets the median of each round's own ratio: the\n  modes of a round run "
          "next to each other, so a slow stretch of the machine moves both).\n"
          "full/light: the median of each round's full / light (the full recording's own cost).\n"
          "hook: the step hook's own CPU time (recording, without Dynamo's step inside it) as a share of the off "
          "compile time,\n  from (the same measured on a bare timed wrapper taken off: timers and one call) to "
          "(timers included); it overstates (see the module docstring).\nTargets: light <= 2%, full <= 10%, read "
          "from the whole-compile ratios.")


if __name__ == "__main__":
    main()
