"""One step on the REAL engine, keypress to repaint, in a big model's generated code; beside a bare Textual app.

Run: ``python benchmarks/bench_tui_real.py [--layers 300] [--steps 100] [--profile]``. It compiles a model of
`--layers` ``nn.Linear`` layers with ``backend="eager"`` (300 layers: about 3,800 generated instructions: Dynamo
loads every parameter for the graph call), opens the TUI headless on the real `Session`, and presses ``s``
`--steps` times at the entry of the generated code. Each step is timed from the key event entering the app (as a
terminal's would, through the driver) to the end of the first screen update whose status line shows the next
instruction. The same harness then times a bare Textual app (one `Static` updated by a key binding), so the
figures print side by side with their ratio, in one run.

Where the time goes, per step (p50 / p95):

* engine: keypress → `Listener.on_stop` called on the program's thread (the key's dispatch, the engine call
  crossing to the worker thread, one instruction, building the `Stop` snapshot);
* UI: `on_stop` → the repaint (the message crossing back, the panes taking the new stop, the render);
* CPU: the process's CPU time per step (both threads; less sensitive to other load on the machine).

The engine's own share is then measured with no TUI at all (`Session.set_step` → `Listener.on_stop` on the same
program). ``--profile`` adds a cProfile of the UI thread over the steps (top functions by cumulative time).

Target (DESIGN.md): p95 ≤ 50 ms end to end. Figures are wall-clock on this machine; compare them as ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import queue
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tui import DEEP_PROGRAM, DisplayWatch, pct, summary  # noqa: E402
from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.widgets import Static  # noqa: E402

SIZE = (120, 40)

PROGRAM = DEEP_PROGRAM


class Bare(App[None]):
    """The floor: a key binding that changes one line of text."""

    BINDINGS = [("s", "step", "Step")]

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static("instr 0", id="status")

    def action_step(self) -> None:
        self.count += 1
        self.query_one("#status", Static).update(f"instr {self.count}")


async def bench_bare(steps: int) -> list[float]:
    app = Bare()
    times = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        watch = DisplayWatch(app)
        for _ in range(steps):
            want = app.count + 1
            t0 = time.perf_counter()
            app._driver.send_message(events.Key("s", "s"))  # noqa: SLF001 - what a terminal key does
            t1 = await watch.until(lambda: app.count == want)  # noqa: B023
            times.append(t1 - t0)
            await pilot.pause()
    return times


async def bench_real(script: Path, steps: int, profile: bool) -> dict[str, object]:
    from dynadbg.core.session import Session
    from dynadbg.tui.app import DebuggerApp
    from dynadbg.tui.status_line import StatusLine

    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(str(script), []))
    stop_times: dict[int, float] = {}
    totals, engine, ui, cpu = [], [], [], []
    ui_profile = cProfile.Profile() if profile else None
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 600
        while app.phase != "stopped" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        if app.phase != "stopped":
            raise SystemExit(f"the program never stopped (phase {app.phase})")
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        bridge = app.bridge
        original_on_stop = bridge.on_stop

        def on_stop(stop) -> None:  # noqa: ANN001 - runs on the program's thread
            stop_times[stop.seq] = time.perf_counter()
            original_on_stop(stop)

        bridge.on_stop = on_stop  # type: ignore[method-assign]
        watch = DisplayWatch(app)
        status = app.main_screen.query_one(StatusLine)
        bytecode = app.main_screen.bytecode
        code = bytecode.code
        first_index = app.last_stop.frame.index
        if ui_profile is not None:
            ui_profile.enable()
        for _ in range(steps):
            stop = app.last_stop
            seq = stop.seq
            c0 = time.process_time()
            t0 = time.perf_counter()
            app._driver.send_message(events.Key("s", "s"))  # noqa: SLF001 - what a terminal key does
            t1 = await watch.until(
                lambda: app.last_stop is not None and app.last_stop.seq > seq  # noqa: B023
                and status.stop is app.last_stop and bytecode.current == app.last_stop.frame.index
                and not app.awaiting_resume,
                timeout=30,
            )
            new = app.last_stop.seq
            cpu.append(time.process_time() - c0)
            totals.append(t1 - t0)
            if new in stop_times:
                engine.append(stop_times[new] - t0)
                ui.append(t1 - stop_times[new])
            await pilot.pause()
        if ui_profile is not None:
            ui_profile.disable()
        last_index = app.last_stop.frame.index
        await pilot.press("q")
        await pilot.pause(0.3)
    return {"totals": totals, "engine": engine, "ui": ui, "cpu": cpu, "instructions": len(code.instructions) if code else 0,
            "first": first_index, "last": last_index, "ui_profile": ui_profile}


def bench_engine_alone(script: Path, steps: int) -> list[float]:
    """`Session.set_step()` → `Listener.on_stop`, with no TUI: the engine's own share of a step."""
    from dynadbg.core.session import Session

    stops: queue.Queue[object] = queue.Queue()
    stopped_at: list[float] = []

    class Listener:
        def on_stop(self, stop: object) -> None:
            stopped_at.append(time.perf_counter())
            stops.put(stop)

        def on_running(self, message: str) -> None:
            pass

        def on_message(self, text: str) -> None:
            pass

        def on_exit(self, result: object) -> None:
            stops.put(None)

        def on_resumed(self, result: object) -> None:
            pass

    session = Session(Listener())
    session.start_script(str(script), [])
    times = []
    if stops.get(timeout=600) is not None:
        for _ in range(steps):
            t0 = time.perf_counter()
            session.set_step()
            if stops.get(timeout=60) is None:
                break
            times.append(stopped_at[-1] - t0)
    session.quit()
    session.wait(timeout=10)
    return times


def _top(profile: cProfile.Profile, title: str, count: int = 18) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(count)
    return f"--- {title} ---\n" + "\n".join(out.getvalue().splitlines()[4:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=300)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "deep.py"
        script.write_text(PROGRAM.format(layers=args.layers))
        real = asyncio.run(bench_real(script, args.steps, args.profile))
        alone = bench_engine_alone(script, args.steps)
    bare = asyncio.run(bench_bare(args.steps))
    totals = real["totals"]
    print(f"real engine, {args.layers}-layer nn.Linear model (backend eager), {real['instructions']:,} generated "
          f"instructions, {len(totals)} steps (index {real['first']} → {real['last']}):")
    print("  " + summary("keypress → status line shows the next instruction", totals))
    print("  " + summary("  engine (keypress → on_stop)                    ", real["engine"]))
    print("  " + summary("  UI (on_stop → repaint)                         ", real["ui"]))
    print("  " + summary("  CPU time of the process (both threads)         ", real["cpu"]))
    print("  " + summary("engine alone, no TUI (set_step → on_stop)        ", alone))
    print("  " + summary("bare Textual app keypress → repaint (same harness)", bare))
    p95_real, p95_bare = pct(totals, 0.95), pct(bare, 0.95)
    print(f"  ratio real / bare: p50 {statistics.median(totals) / statistics.median(bare):.1f}x, "
          f"p95 {p95_real / p95_bare:.1f}x   (target: real p95 <= 50 ms; now {p95_real * 1000:.1f} ms)")
    if real["ui_profile"] is not None:
        print(_top(real["ui_profile"], "UI thread, all steps"))


if __name__ == "__main__":
    main()
