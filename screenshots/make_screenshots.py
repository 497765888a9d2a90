"""Make the README's screenshots from the real app: one command, ``python screenshots/make_screenshots.py``.

It runs the bundled demo (``app/demos/mlp.py``, `dynadbg.demos.demo_path`: a small MLP with a graph break and a
recompile) under the real engine (`dynadbg.core.session.Session`) in `DebuggerApp`, headless at 120x40, drives
it with keys like a user, waits for each stop (polling the app's state, with a timeout), and writes next to this
file:

* ``main-mid-step.svg``: the entry stop of ``forward`` after ``s`` three times: listing, value stack, locals,
  guards, source;
* ``history.svg``: then ``[`` twice: the stop two steps back, read-only, marked ``HISTORY 2/4`` (``]`` twice
  returns to the present);
* ``guard-tree-expanded.svg``: the guard tree opened on ``L['scale']`` and its ``EQUALS_MATCH`` leaf;
* ``help.svg``: the help screen (``?``), every action of the registry;
* ``teach-roles-explain.svg``: ``until`` the CALL of the FX graph (the cursor on it, ``t``), the Explain pane open
  (``X``): the role gutter and section headers, what the CALL does with the live values it pops;
* ``teach-provenance.svg``: ``until`` the graph-break CALL (``.item()`` run eagerly): the stack pane naming the
  instruction that pushed each slot, the Explain pane on the break;
* ``recompile.svg``: the recompile stop of the ``scale=2`` call (``c`` until it comes): the Recompile view;
* ``edit-dialog.svg``: after ``R`` (recompile), the edit dialog on ``LOAD_FAST scale`` of the new code with
  ``LOAD_CONST 3`` typed, previewed by the engine;
* ``diff.svg``: that edit applied (Enter), then the Diff view (``6``).

The program is ended with ``q``. Torch's own log lines (the graph-break warning, with a timestamp and a process
id) are silenced so the console pane shows the program and the debugger; object addresses and the
``__compiled_fn_*`` names still change from run to run. Needs torch (CPU is fine; the demo uses CUDA when there
is one). Options: ``--out DIR`` to write elsewhere, ``--size 120x40`` for another terminal size, ``--timeout``
seconds to wait for any one stop.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: Names of the screenshots, in the order they are taken.
SHOTS = ("main-mid-step", "history", "guard-tree-expanded", "help", "teach-roles-explain", "teach-provenance",
         "recompile", "edit-dialog", "diff")


class Driver:
    """Drives the app through `pilot` and saves screenshots into `out`.

    Every wait polls the app's own state (phase, stop kind, what a pane shows) with a deadline, so a run never
    depends on how long torch takes to compile, and a stop that never comes fails with a message instead of a
    hang.
    """

    def __init__(self, pilot: Any, out: Path, timeout: float) -> None:
        self.pilot = pilot
        self.app = pilot.app
        self.out = out
        self.timeout = timeout
        self.written: list[Path] = []

    async def settle(self) -> None:
        """Let the app's workers and engine calls finish and every message they posted be handled."""
        for _ in range(3):
            await self.app.workers.wait_for_complete()
            deadline = time.monotonic() + self.timeout
            while self.app.engine_busy and time.monotonic() < deadline:
                await self.pilot.pause(0.01)
            await self.pilot.pause()

    async def until(self, condition: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        """Wait until `condition()` holds (checked every 50 ms); `TimeoutError` naming `what` after the deadline."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            await self.pilot.pause(0.05)
        await self.settle()

    async def stop(self, kind: Any, what: str) -> None:
        """Wait for the program to be stopped at a stop of `kind` (after any key that resumed it)."""
        app = self.app
        await self.until(lambda: app.phase == "stopped" and not app.awaiting_resume
                         and app.last_stop is not None and app.last_stop.kind is kind, what)

    async def press_and_stop(self, key: str, kind: Any, what: str) -> None:
        """Press `key` (which resumes the program) and wait for the next stop, of `kind`."""
        seen = self.app.stops_seen
        await self.pilot.press(key)
        await self.until(lambda: self.app.stops_seen > seen, what)
        await self.stop(kind, what)

    async def shoot(self, name: str) -> None:
        """Save the screen as ``<out>/<name>.svg`` (after the footer's settle delay)."""
        await self.pilot.pause(0.35)
        await self.settle()
        target = self.out / f"{name}.svg"
        target.write_text(self.app.export_screenshot(title=f"dynadbg — {name}"), encoding="utf-8")
        self.written.append(target)  # printed after the app closed (a print now would land in its console)


async def drive(driver: Driver) -> None:
    """The whole session: entry stop, three steps, guards, help, the recompile stop, an edit, the diff, quit."""
    from textual.widgets import Input

    from dynadbg.core.model import GuardNodeView, LeafGuardView, StopKind
    from dynadbg.tui.edit_dialog import EditDialog
    from dynadbg.tui.help_screen import HelpScreen

    app, pilot = driver.app, driver.pilot
    screen = app.main_screen
    await driver.until(lambda: screen.is_mounted and bool(screen.query("#command")), "the main screen")
    screen.console.input.cursor_blink = False

    # 1. the entry stop of forward, then three steps
    await driver.stop(StopKind.ENTRY, "the entry stop of forward")
    for _ in range(3):
        await driver.press_and_stop("s", StopKind.STEP, "a step")
    await driver.until(lambda: not screen.guards_loading and screen.guard_tree.guards is not None, "the guard tree")
    await driver.shoot("main-mid-step")

    # 1b. two stops back in the recorded history, then forward to the present again
    status = screen.query_one("#status")
    await pilot.press("left_square_bracket", "left_square_bracket")
    await driver.until(lambda: status.stop is not None and status.stop.history is not None
                       and status.stop.history.position == 2, "history 2")
    await driver.shoot("history")
    await pilot.press("right_square_bracket", "right_square_bracket")
    await driver.until(lambda: status.stop is not None and status.stop.history is None, "the present")

    # 2. the guard tree opened on L['scale'] and its leaf guard's details
    tree = screen.guard_tree
    node = next(n for n in tree.root.children if isinstance(n.data, GuardNodeView) and n.data.source == "L['scale']")
    node.expand()
    await driver.until(lambda: bool(node.children), "the L['scale'] guards")
    leaf = next(n for n in node.children if isinstance(n.data, LeafGuardView))
    leaf.expand()
    await driver.until(lambda: bool(leaf.children), "the leaf guard's details")
    tree.focus()
    tree.move_cursor(leaf)
    await driver.shoot("guard-tree-expanded")

    # 3. the help screen
    screen.bytecode.focus()
    await pilot.press("question_mark")
    await driver.until(lambda: isinstance(app.screen, HelpScreen), "the help screen")
    await driver.shoot("help")
    await pilot.press("escape")
    await driver.until(lambda: app.screen is screen, "the main screen")

    # 3b. teaching: until the graph's CALL with the Explain pane open, then until the graph-break CALL
    from dynadbg.core.model import Role

    await driver.until(lambda: screen.bytecode.roles is not None, "the roles of forward's code")
    roles = screen.bytecode.roles
    code = screen.bytecode.code
    screen.bytecode.focus()
    screen.bytecode.action_cursor_to(roles.graph_calls[0].call_index)
    await driver.press_and_stop("t", StopKind.STEP, "the CALL of the FX graph")
    await pilot.press("X")
    call = roles.graph_calls[0].call_index
    await driver.until(lambda: str(screen.query_one("#explain").border_subtitle).endswith(f"instruction {call}"),
                       "the Explain pane on the CALL")
    await driver.shoot("teach-roles-explain")
    brk = next(r.index for r in roles.roles if r.role is Role.GRAPH_BREAK and code.instructions[r.index].opname
               in ("CALL", "CALL_FUNCTION_EX"))
    screen.bytecode.action_cursor_to(brk)
    await driver.press_and_stop("t", StopKind.STEP, "the graph-break CALL")
    await driver.until(lambda: "←" in screen.query_one("#stack").text, "the stack's provenance")
    await driver.until(lambda: str(screen.query_one("#explain").border_subtitle).endswith(f"instruction {brk}"),
                       "the Explain pane on the break")
    await driver.shoot("teach-provenance")
    await pilot.press("X")

    # 4. continue until the recompile stop of the scale=2 call (the resume function's entry stop comes first)
    while app.last_stop.kind is not StopKind.RECOMPILE:
        seen = app.stops_seen
        await pilot.press("c")
        await driver.until(lambda: app.stops_seen > seen, "the next stop")
        await driver.until(lambda: app.phase == "stopped" and not app.awaiting_resume, "a stop")
    await driver.until(lambda: screen.recompile_view.record is not None, "the recompile record (why)")
    await driver.shoot("recompile")

    # 5. R recompiles; at the entry of the new code, edit LOAD_FAST scale into LOAD_CONST 3
    await driver.press_and_stop("R", StopKind.ENTRY, "the entry stop of the recompiled forward")
    code = screen.bytecode.code
    row = next(i.index for i in code.instructions if i.opname == "LOAD_FAST" and i.argrepr == "scale")
    screen.bytecode.focus()
    screen.bytecode.action_cursor_to(row)
    await pilot.press("e")
    await driver.until(lambda: isinstance(app.screen, EditDialog), "the edit dialog")
    dialog = app.screen
    dialog.query_one(Input).cursor_blink = False
    await pilot.press("ctrl+u", *"LOAD_CONST 3")
    await driver.until(lambda: dialog.previewed == f"{row} LOAD_CONST 3", "the edit preview")
    await driver.shoot("edit-dialog")

    # 6. Enter applies it; 6 shows the Diff view
    await pilot.press("enter")
    await driver.until(lambda: app.screen is screen, "the edit to be installed")
    await pilot.press("6")
    await driver.until(lambda: "LOAD_CONST 3" in screen.diff_view.text, "the Diff view")
    await driver.shoot("diff")

    # the end: q ends the program and leaves
    await pilot.press("q")


def quiet_torch() -> None:
    """torch's graph-break warning carries a timestamp and a pid; NumPy's absence is not the program's business."""
    os.environ.setdefault("TORCH_LOGS", "-dynamo")
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")


def run_driven(app: Any, drive_app: Callable[[Driver], Awaitable[None]], out: Path, size: tuple[int, int],
               timeout: float) -> list[BaseException]:
    """Run `app` headless at `size` with `drive_app` taking the screenshots into `out`; print each file written.
    Returns the error the driver hit, if any (the program is then told to quit and the app exits)."""
    errors: list[BaseException] = []
    written: list[Path] = []

    async def auto_pilot(pilot: Any) -> None:
        driver = Driver(pilot, out, timeout)
        driver.written = written
        try:
            await drive_app(driver)
        except BaseException as exc:  # noqa: BLE001 - reported after the app closed
            errors.append(exc)
            app.session.quit()
            app.exit(1)

    app.run(headless=True, size=size, auto_pilot=auto_pilot)
    for path in written:
        print(path)
    return errors


def finish(app: Any, errors: list[BaseException], script: str, *, must_end: bool = False) -> int:
    """The script's exit status: 1 with a message when the driver failed (or, with `must_end`, the program did
    not end)."""
    result = app.session.wait(timeout=10)
    if errors:
        print(f"{script}: {type(errors[0]).__name__}: {errors[0]}", file=sys.stderr)
        return 1
    if must_end and result is None:
        print(f"{script}: the program did not end", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    from dynadbg.core.session import Session
    from dynadbg.demos import demo_path
    from dynadbg.tui.app import DebuggerApp

    parser = argparse.ArgumentParser(description="Make the TUI screenshots (SVG) from the real demo.")
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to (default: screenshots/)")
    parser.add_argument("--size", default="120x40", help="terminal size, COLUMNSxROWS (default 120x40)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for any one stop")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    quiet_torch()
    path = demo_path(None)
    app = DebuggerApp(lambda listener: Session(listener), lambda session: session.start_script(path, []))
    errors = run_driven(app, drive, args.out, (width, height), args.timeout)
    return finish(app, errors, "make_screenshots", must_end=True)


if __name__ == "__main__":
    raise SystemExit(main())
