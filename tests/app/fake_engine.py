"""A fake engine for TUI tests, snapshots, benchmarks and screenshots: canned data behind the typed engine API.

`FakeEngine` implements `dynadbg.core.protocol.Engine` by replaying a `fake_scenarios.Scenario` (stops, a guard
tree, an original listing, FX graphs, cache entries, a recompile record): control methods and decisions return
`Resumed`, then ``on_running("running")`` and the next ``on_stop`` (or ``on_exit``) follow; methods that need a
stop return ``EngineError(kind="not paused")`` while the program runs; everything else answers from the scenario.
Its command language is the real one (`dynadbg.core.commands.execute` over these methods), so the fake holds no
parsing, and `tests/app/test_engine_contract.py` runs the same assertions on it and on the real engine.

Listener calls are made synchronously on the calling thread (the app's engine-call thread), which keeps tests
and snapshots deterministic: once the app's workers are done and its queue drained, the screen is settled.

`calls` records every engine method called (``"set_step(1)"``, ``"decide(eager)"``, ``"apply_edit(edit 8 NOP)"``),
so tests can assert what the TUI asked for. Helpers: `make_app` (a `DebuggerApp` on a fake engine), `settle` (wait
for a settled screen), `no_cursor_blink` (an autouse fixture to import into TUI test modules). The scenario
builders are re-exported from `fake_scenarios`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from fake_scenarios import *  # noqa: F403 - the scenario builders, re-exported for the test modules
from fake_scenarios import (
    Scenario,
    analyze_rows,
    diff_rows,
    edit_rows,
    forward_scenario,
    listing_rows,
)

from dynadbg.core import commands
from dynadbg.core.model import (
    BreakpointView,
    CodeView,
    CommandResult,
    CompilesData,
    Decision,
    DecisionKind,
    EditError,
    EditOp,
    EditOutcome,
    EditPreview,
    EngineError,
    EvalResult,
    FrameRecompiles,
    GuardEditOutcome,
    Resumed,
    Stop,
    StopKind,
    WatchValue,
)
from dynadbg.core.runner import ExitResult

#: Engine methods that only read (left out of `FakeEngine.sent`).
_QUERIES = frozenset({"guard_trees", "original_code", "graphs", "entries", "recompile_records", "patch_diff",
                      "preview_edit", "guard_diffs", "what_if", "evaluate"})
_NOT_PAUSED = EngineError("the program is running; this needs a stop (Ctrl+C interrupts)", "not paused")
_FINISHED = EngineError("the program has finished", "not paused")


class FakeEngine:
    """Replays a `Scenario` through a listener, behind `dynadbg.core.protocol.Engine` (see the module docstring).

    Attributes:
        calls: every engine method called, in order (``"set_step(1)"``).
        interrupted / quit_called: how often `interrupt` / `quit` were called.
        patch_ops: the instruction edits installed so far (on the scenario's listing).
    """

    def __init__(self, listener: Any, scenario: Scenario | None = None, *, break_on: Iterable[str] = ()) -> None:
        self.listener = listener
        self.scenario = scenario if scenario is not None else forward_scenario()
        self.break_on = frozenset(break_on)
        self.calls: list[str] = []
        self.interrupted = 0
        self.quit_called = 0
        self.patch_ops: list[EditOp] = []
        self._pos = -1
        self._stop: Stop | None = None
        self._finished = threading.Event()
        self._result: ExitResult | None = None
        self._breakpoints: dict[int, BreakpointView] = {}
        self._watches: list[tuple[int, str]] = []
        self._watch_seen: dict[int, tuple[int | None, str | None]] = {}
        self._watch_before: dict[int, str | None] = {}
        self._lock = threading.RLock()

    @property
    def sent(self) -> list[str]:
        """`calls` without the queries that change nothing (what the user's keys and commands asked for)."""
        return [c for c in self.calls if c.split("(", 1)[0] not in _QUERIES]

    @property
    def previews(self) -> list[str]:
        """Every edit previewed (`EditOp.text`), in order."""
        return [c[len("preview_edit("):-1] for c in self.calls if c.startswith("preview_edit(")]

    def _log(self, name: str, *args: object) -> None:
        self.calls.append(f"{name}({', '.join(str(a) for a in args)})")

    # The program -------------------------------------------------------------------------------------------------

    def start_script(self, path: str, argv: list[str] | None = None) -> None:
        """Start the fake program (the path is ignored)."""
        self.start_callable(None)

    def start_callable(self, fn: Callable[..., Any] | None, *args: Any, **kwargs: Any) -> None:
        """Start the fake program: start messages, its prints, ``running``, then the first stop (or the exit)."""
        for line in self.scenario.start_messages:
            self.listener.on_message(line)
        for line in self.scenario.prints:
            print(line)
        self.listener.on_running("running")
        self._advance(1)

    @property
    def paused(self) -> bool:
        return self._stop is not None

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def _advance(self, count: int, kind: StopKind | None = None) -> None:
        with self._lock:
            self._pos += count
            if self._pos >= len(self.scenario.stops):
                self._finish(self.scenario.exit)
                return
            stop = self.scenario.stops[self._pos]
            frame = stop.frame
            if frame is not None:
                marks = tuple(sorted(b.index for b in self._breakpoints.values() if b.code_key == frame.code.key))
                stop = replace(stop, frames=stop.frames[:-1] + (replace(frame, breakpoints=marks),))
            if kind is not None:
                stop = replace(stop, kind=kind, message=f"interrupted in {frame.code.name if frame else '?'}")
            self._stop = replace(stop, selected=len(stop.frames) - 1 if stop.frames else -1,
                                 watches=self._evaluate_watches(stop, stop.frame))
        self.listener.on_stop(self._stop)

    def _finish(self, result: ExitResult) -> None:
        if self._finished.is_set():
            return
        self._stop = None
        self._result = result
        if not self.scenario.stops and not result.quit and result.traceback is None:
            self.listener.on_message("no frame was compiled by torch.compile in this run")
        self._finished.set()
        self.listener.on_exit(result)

    def _paused(self) -> Stop | EngineError:
        if self._finished.is_set():
            return _FINISHED
        return self._stop if self._stop is not None else _NOT_PAUSED

    def interrupt(self) -> None:
        """Stop a running (held) program at the next stop, as an interrupt stop."""
        self.interrupted += 1
        with self._lock:
            running = self._stop is None and not self._finished.is_set() and self._pos >= 0
        if running:
            self._advance(1, kind=StopKind.INTERRUPT)

    def quit(self) -> None:
        """End the program (``ExitResult(0, quit=True)``)."""
        self.quit_called += 1
        self._finish(ExitResult(0, quit=True))

    def wait(self, timeout: float | None = None) -> ExitResult | None:
        """The exit result once the program ended (None on timeout)."""
        self._finished.wait(timeout)
        return self._result

    def current_stop(self) -> Stop | EngineError:
        return self._paused()

    # Control -----------------------------------------------------------------------------------------------------

    def _resume(self, action: str, count: int = 1, *, message: str = "", decision: Any = None) -> Resumed | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        if count < 1:
            return EngineError("count must be at least 1")
        held = self._pos in self.scenario.run_after
        self._stop = None
        self.listener.on_running("running")
        if not held:
            self._advance(count)
        if decision is not None:
            return Resumed(action, message, decision.permanent, decision.warnings)
        return Resumed(action, message)

    def set_step(self, count: int = 1) -> Resumed | EngineError:
        self._log("set_step", count)
        return self._resume("step", count)

    def set_next(self, count: int = 1) -> Resumed | EngineError:
        self._log("set_next", count)
        return self._resume("next", count)

    def set_return(self) -> Resumed | EngineError:
        self._log("set_return")
        return self._resume("return")

    def set_continue(self) -> Resumed | EngineError:
        self._log("set_continue")
        return self._resume("continue")

    def set_until(self, index: int | None = None) -> Resumed | EngineError:
        self._log("set_until", index)
        return self._resume("until")

    def detach(self) -> Resumed | EngineError:
        self._log("detach")
        self._breakpoints.clear()
        return self._resume("detach")

    def decide(self, decision: Decision) -> Resumed | EngineError:
        """At a recompile stop: the scenario's choice of that kind (its permanent code and warnings), then resume."""
        self._log("decide", decision.command)
        stop = self._paused()
        if isinstance(stop, EngineError) or stop.kind is not StopKind.RECOMPILE:
            return stop if isinstance(stop, EngineError) else EngineError("only at a recompile stop", "not here")
        choice = next((c for c in stop.choices if c.kind is decision.kind and c.available), None)
        if choice is None:
            return EngineError(f"{decision.kind.value} is not available here", "rejected")
        if decision.kind is DecisionKind.DYNAMIC:
            inputs = dict(stop.frame.locals) if stop.frame is not None else {}
            value = inputs.get(decision.name or "")
            if value is None or value.shape is None:
                return EngineError(f"no tensor input named {decision.name!r} (inputs: {', '.join(inputs)})")
            choice = replace(choice, permanent=f"torch._dynamo.mark_dynamic({decision.name}, {decision.dim})")
        return self._resume(decision.kind.value, message=decision.command, decision=choice)

    # Breakpoints, frames, values ---------------------------------------------------------------------------------

    def _code(self) -> CodeView | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        frame = stop.selected_frame
        return frame.code if frame is not None else EngineError("no frame at this stop", "not here")

    def set_break(self, index: int, condition: str | None = None) -> BreakpointView | EngineError:
        self._log("set_break", index)
        code = self._code()
        if isinstance(code, EngineError):
            return code
        if not 0 <= index < len(code.instructions):
            return EngineError(f"index {index} is outside 0..{len(code.instructions) - 1}")
        number = max((b.number for b in self._breakpoints.values()), default=0) + 1
        view = BreakpointView(number, code.key, code.name, index, code.instructions[index].opname, condition)
        self._breakpoints[index] = view
        self._refresh()
        return view

    def clear_break(self, index: int | None = None) -> tuple[BreakpointView, ...] | EngineError:
        self._log("clear_break", index)
        code = self._code()
        if isinstance(code, EngineError):
            return code
        chosen = [i for i in self._breakpoints if index is None or i == index]
        if index is not None and not chosen:
            return EngineError(f"no breakpoint at index {index}")
        cleared = tuple(self._breakpoints.pop(i) for i in chosen)
        self._refresh()
        return cleared

    def list_breakpoints(self) -> tuple[BreakpointView, ...]:
        return tuple(sorted(self._breakpoints.values(), key=lambda b: b.number))

    def set_break_on(self, kind: str | None = None, on: bool = True) -> frozenset[str] | EngineError:
        if kind is not None:
            self.break_on = self.break_on | {kind} if on else self.break_on - {kind}
        return self.break_on

    def _refresh(self) -> None:
        """The paused stop after a change (breakpoint marks, watches), as the engine rebuilds it."""
        stop = self._stop
        if stop is None or not stop.frames:
            return
        frames = tuple(replace(f, breakpoints=tuple(sorted(b.index for b in self._breakpoints.values()
                                                           if b.code_key == f.code.key))) for f in stop.frames)
        stop = replace(stop, frames=frames)
        self._stop = replace(stop, watches=self._evaluate_watches(stop, stop.selected_frame))

    def select_frame(self, index: int) -> Stop | EngineError:
        self._log("select_frame", index)
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        if not 0 <= index < len(stop.frames):
            return EngineError(f"frame {index} is outside 0..{len(stop.frames) - 1}")
        self._stop = replace(stop, selected=index)
        self._refresh()
        return self._stop

    def up(self, count: int = 1) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError) or stop.selected <= 0:
            return stop if isinstance(stop, EngineError) else EngineError("already at the outermost generated frame")
        return self.select_frame(max(0, stop.selected - count))

    def down(self, count: int = 1) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError) or stop.selected >= len(stop.frames) - 1:
            return stop if isinstance(stop, EngineError) else EngineError("already at the innermost frame")
        return self.select_frame(stop.selected + count)

    def evaluate(self, expr: str) -> EvalResult | EngineError:
        """A local's summary by name (the fake evaluates nothing else)."""
        self._log("evaluate", expr)
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        frame = stop.selected_frame
        value = dict(frame.locals).get(expr.strip()) if frame is not None else None
        if value is None:
            return EngineError(f"NameError: name {expr.strip()!r} is not defined", "eval")
        return EvalResult(value.text, value)

    def exec_statement(self, stmt: str) -> EvalResult | EngineError:
        return EngineError("statements are not run by the fake engine", "internal")

    def set_local(self, name: str, expr: str) -> Any:
        return EngineError("locals are not changed by the fake engine", "internal")

    # Watches -----------------------------------------------------------------------------------------------------

    def _evaluate_watches(self, stop: Stop, frame: Any) -> tuple[WatchValue, ...]:
        """Each watch at `stop`: a local's summary by name, else a NameError; `changed` against the last stop."""
        out = []
        for number, expr in self._watches:
            if frame is None:
                out.append(WatchValue(number, expr, evaluated=False))
                continue
            value = dict(frame.locals).get(expr)
            error = None if value is not None else f"NameError: name {expr!r} is not defined"
            key = value.text if value is not None else error
            seq, last = self._watch_seen.get(number, (None, None))
            if seq != stop.seq:
                self._watch_before[number] = last
            before = self._watch_before.get(number)
            self._watch_seen[number] = (stop.seq, key)
            out.append(WatchValue(number, expr, value.text if value else "", value, error,
                                  before is not None and before != key))
        return tuple(out)

    def add_watch(self, expr: str) -> WatchValue | EngineError:
        self._log("add_watch", expr)
        if not expr.strip():
            return EngineError("usage: watch EXPR")
        number = max((n for n, _ in self._watches), default=0) + 1
        self._watches.append((number, expr.strip()))
        self._refresh()
        found = [w for w in (self._stop.watches if self._stop else ()) if w.number == number]
        return found[0] if found else WatchValue(number, expr.strip(), evaluated=False)

    def remove_watch(self, number: int) -> WatchValue | EngineError:
        self._log("remove_watch", number)
        found = next((w for w in self.watches() if w.number == number), None)
        if found is None:
            return EngineError(f"no watch {number}")
        self._watches = [(n, e) for n, e in self._watches if n != number]
        self._refresh()
        return found

    def watches(self) -> tuple[WatchValue, ...]:
        if self._stop is not None:
            return self._stop.watches
        return tuple(WatchValue(n, e, evaluated=False) for n, e in self._watches)

    # Queries -----------------------------------------------------------------------------------------------------

    def _answer(self, name: str, value: Any, missing: str) -> Any:
        self._log(name)
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        return value if value is not None else EngineError(missing, "not here")

    def listing(self) -> CodeView | EngineError:
        return self._code()

    def original_code(self) -> CodeView | EngineError:
        return self._answer("original_code", self.scenario.original, "the original code of this frame is not known")

    def source(self) -> Any:
        return EngineError("the fake engine has no source", "not here")

    def graphs(self, name: str | None = None) -> Any:
        return self._answer("graphs", self.scenario.graphs or None, "no FX graph was captured for this code object")

    def entries(self) -> FrameRecompiles | EngineError:
        c = self.scenario.compiled
        frame = None if c is None else FrameRecompiles(**{f: getattr(c, f) for f in c.__dataclass_fields__})
        return self._answer("entries", frame, "no compiled code object here")

    def guard_trees(self) -> Any:
        if self.scenario.guard_delay:
            threading.Event().wait(self.scenario.guard_delay)
        tree = self.scenario.guard_tree
        return self._answer("guard_trees", (tree,) if tree is not None else (), "")

    def what_if(self) -> Any:
        return self.guard_trees()

    def recompile_records(self, compile_id: str | None = None) -> Any:
        stop = self._paused()
        record = self.scenario.recompile_record
        live = not isinstance(stop, EngineError) and stop.kind is StopKind.RECOMPILE and record is not None
        return self._answer("recompile_records", (record,) if live else (), "")

    def guard_diffs(self, old: str | None = None, new: str | None = None) -> Any:
        record = self.scenario.recompile_record
        return self._answer("guard_diffs", record.diffs if record is not None else (), "")

    def compiles(self) -> CompilesData:
        c = self.scenario.compiled
        return CompilesData((FrameRecompiles(**{f: getattr(c, f) for f in c.__dataclass_fields__}),) if c else ())

    # Instruction edits (the scenario's listing, simulated straight-line) ----------------------------------------

    def _rows(self, ops: Sequence[EditOp]) -> Any:
        code = self.scenario.stops[0].frame.code if self.scenario.stops and self.scenario.stops[0].frame else None
        rows: Any = listing_rows(code, self.scenario.ops) if code is not None else []
        base = rows
        for op in ops:
            rows = edit_rows(rows, op) if not isinstance(rows, EditError) else rows
        return base, rows, code.name if code is not None else "forward"

    def preview_edit(self, op: EditOp) -> EditPreview | EngineError:
        self._log("preview_edit", op.text)
        code = self._code()
        if isinstance(code, EngineError):
            return code
        base, rows, name = self._rows([*self.patch_ops, op])
        if isinstance(rows, EditError):
            return EditPreview(op, rows)
        analysis = analyze_rows(rows, self.scenario.stacksize)
        return EditPreview(op, analysis.problems[0] if analysis.problems else None, analysis,
                           diff_rows(name, base, rows))

    def apply_edit(self, op: EditOp) -> EditOutcome | EngineError:
        self._log("apply_edit", op.text)
        preview = self.preview_edit(op)
        self.calls.pop()
        if isinstance(preview, EngineError) or preview.error is not None:
            return preview if isinstance(preview, EngineError) else EditOutcome(preview.error)
        self.patch_ops.append(op)
        return EditOutcome(None, "installed: runs from the next call of forward (compile 0/0)", preview.diff)

    def patch_diff(self) -> Any:
        self._log("patch_diff")
        code = self._code()
        if isinstance(code, EngineError):
            return code
        base, rows, name = self._rows(self.patch_ops)
        return diff_rows(name, base, rows)

    def patches(self) -> tuple[Any, ...]:
        return ()

    def undo_patch(self, everything: bool = False) -> EditOutcome | EngineError:
        self._log("undo_patch", everything)
        if not self.patch_ops:
            return EditOutcome(EditError("not here", "forward has no edits to undo"))
        self.patch_ops.clear()
        return EditOutcome(None, "Dynamo's code restored for forward")

    def save_patches(self, path: str) -> Any:
        return EngineError("patch files are not written by the fake engine", "internal")

    load_patches = save_patches

    def add_guard(self, expr: str) -> GuardEditOutcome:
        return GuardEditOutcome("guard edits are not made by the fake engine")

    drop_guard = undo_guard_edit = add_guard

    def guard_edits(self) -> tuple[Any, ...]:
        return ()

    def export_guard_filter(self) -> str:
        return ""

    # The command language: the real parser over these methods ---------------------------------------------------

    def execute(self, line: str) -> CommandResult:
        """Run one command line with `dynadbg.core.commands.execute` on this fake."""
        self.calls.append(f"execute({line})")
        return commands.execute(self, line)


try:  # the benchmark and the screenshot script use this module without pytest
    import pytest
except ImportError:  # pragma: no cover
    pass
else:

    @pytest.fixture(autouse=True)
    def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
        """A blinking input cursor makes screenshots flaky: keep it on (import this into a TUI test module)."""
        from textual.widgets import Input

        monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


async def settle(pilot: Any) -> None:
    """Wait until the app's workers finished and every message they posted was handled (a settled screen)."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def make_app(scenario: Scenario | None = None, *, keymap: dict[str, str] | None = None,
             keymap_warnings: Sequence[str] = ()) -> Any:
    """A `DebuggerApp` on a `FakeEngine` replaying `scenario` (default: `forward_scenario()`), started on mount.

    The engine is ``app.session``.
    """
    from dynadbg.tui.app import DebuggerApp

    chosen = scenario if scenario is not None else forward_scenario()
    return DebuggerApp(lambda listener: FakeEngine(listener, chosen), lambda session: session.start_callable(None),
                       keymap=keymap, keymap_warnings=tuple(keymap_warnings))


#: The old name, for scripts written before the typed API.
FakeSession = FakeEngine
