"""A fake engine for TUI tests, snapshots, benchmarks and screenshots: canned data behind the typed engine API.

`FakeEngine` implements `dynadbg.core.protocol.Engine` by replaying a `fake_scenarios.Scenario` (stops, a guard
tree, an original listing, FX graphs, cache entries, a recompile record): control methods and decisions return
`Resumed`, then ``on_running("running")`` and the next ``on_stop`` (or ``on_exit``) follow; methods that need a
stop return ``EngineError(kind="not paused")`` while the program runs; everything else answers from the scenario.
What can be computed is computed by the engine's own pure functions on the scenario's real code object and data
(roles, explanations, provenance: `core.roles`, `core.explain`, `core.provenance`; edit previews, patches and
diffs: `core.edits`; drop previews: `core.decisions`), so the fake cannot drift from the engine there; the
scenarios' stops, guard trees and records are canned (`fake_scenarios`) or recorded from a real run
(`record_fake`). Front ends run the real command language over it (`dynadbg.core.commands.CommandLine`), so the fake holds no
parsing, and ``tests/app/test_engine_contract.py`` runs the same assertions on it and on the real engine.

Listener calls are made synchronously on the calling thread (the app's engine-call thread), which keeps tests
and snapshots deterministic: once the app's workers are done and its queue drained, the screen is settled.
`calls` records every engine method called (``"set_step(1)"``, ``"decide(eager)"``, ``"apply_edit(edit 8 NOP)"``).

The scenarios come from `fake_scenarios`; `fake_app` builds a `DebuggerApp` on this engine.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from fake_scenarios import Scenario, forward_scenario, watch_values

from dynadbg.core.compat import strip_local_scope
from dynadbg.core import explain as _explain
from dynadbg.core import provenance as _provenance
from dynadbg.core import roles as _roles
from dynadbg.core.edits import build_patched, diff_code
from dynadbg.core.edits import preview_edit as _preview_edit
from dynadbg.core.history import History, HistoryCursor, HistoryError, history_stop
from dynadbg.core.model import (BREAK_ON_KINDS, BreakpointView, CodeRoles, CodeView, CompilesData, Decision,
                                DecisionKind, DropCandidate, DropPreview, DynamicDim, EditError, EditOp, EditOutcome, EditPreview, EngineError,
                                EvalResult, Explanation, FrameView, GuardRef, HistoryInfo, HistoryMark, HistoryView,
                                PermanentFix, Provenance, Resumed, Stop, StopKind, StopTeaching,
                                ValueSummary, WatchValue)
from dynadbg.core.runner import ExitResult

#: Engine methods that only read (left out of `FakeEngine.sent`).
_QUERIES = frozenset({"guard_trees", "original_code", "graphs", "entries", "recompile_records", "patch_diff",
                      "preview_edit", "preview_drop", "guard_diffs", "what_if", "evaluate", "roles", "explain",
                      "stack_provenance", "source"})


def _recorded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, logging each call in `FakeEngine.calls` (``"name(arg, ...)"``, ops and decisions as command text)."""

    @functools.wraps(fn)
    def method(self: FakeEngine, *args: Any, **kwargs: Any) -> Any:
        shown = [a.text if isinstance(a, EditOp) else a.command if isinstance(a, Decision) else a for a in args]
        shown += [f"{k}={v}" for k, v in kwargs.items()]
        self.calls.append(f"{name}({', '.join(map(str, shown))})")
        return fn(self, *args, **kwargs)

    return method


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
        self.interrupted = self.quit_called = 0
        self.patch_ops: list[EditOp] = []
        self.verbose = False
        self._pos = -1
        self._stop: Stop | None = None
        self._finished = threading.Event()
        self._result: ExitResult | None = None
        self._breakpoints: dict[int, BreakpointView] = {}
        self._watches: list[tuple[int, str]] = []
        self._watch_memory: dict[int, tuple[int, str | None, str | None]] = {}
        self._lock = threading.RLock()
        #: the real recorder over the scenario's stops, so `back`/`forward` behave as on the real engine
        self.history = History()
        self.history_cursor = HistoryCursor(self.history)

    @property
    def sent(self) -> list[str]:
        """`calls` without the queries that change nothing (what the user's keys asked for)."""
        return [c for c in self.calls if c.split("(", 1)[0] not in _QUERIES]

    @property
    def previews(self) -> list[str]:
        """Every edit previewed (`EditOp.text`), in order."""
        return [c[len("preview_edit("):-1] for c in self.calls if c.startswith("preview_edit(")]

    # The program -------------------------------------------------------------------------------------------------

    def start_script(self, path: str, argv: list[str] | None = None) -> None:
        self.start_callable(None)

    def start_callable(self, fn: Callable[..., Any] | None, *args: Any, **kwargs: Any) -> None:
        """Start the fake program: start messages, its prints, ``running``, then the first stop (or the exit)."""
        for line in self.scenario.start_messages:
            self.listener.on_message(line)
        for line in self.scenario.prints:
            print(line)
        self.listener.on_running("running")
        self._advance(1)

    paused = property(lambda self: self._stop is not None)
    finished = property(lambda self: self._finished.is_set())

    def _advance(self, count: int, kind: StopKind | None = None) -> None:
        with self._lock:
            self._pos += count
            if self._pos >= len(self.scenario.stops):
                self._finish(self.scenario.exit)
                return
            stop = self.scenario.stops[self._pos]
            if kind is not None:
                name = stop.frame.code.name if stop.frame else "?"
                stop = replace(stop, kind=kind, message=f"interrupted in {name}")
            self._stop = replace(stop, selected=len(stop.frames) - 1)
            self._refresh()
            self.history_cursor.position = None
            self.history.record(self._stop)
        self.listener.on_stop(self._stop)

    def _refresh(self) -> None:
        """The paused stop after a change (breakpoint marks, selection, watches), as the engine rebuilds it."""
        stop = self._stop
        if stop is None:
            return
        frames = tuple(replace(f, breakpoints=tuple(sorted(b.index for b in self._breakpoints.values()
                                                           if b.code_key == f.code.key))) for f in stop.frames)
        stop = replace(stop, frames=frames)
        self._stop = replace(stop, watches=watch_values(self._watches, stop, self._watch_memory), teaching=None)
        if getattr(self.listener, "wants_teaching", False):
            # as the real engine's `snapshot.stop_teaching`: what `roles()` and `stack_provenance()` answer here
            frame = self._stop.selected_frame
            if frame is not None and frame.code.generated:
                roles, provenance = self.roles(), self.stack_provenance()
                self._stop = replace(self._stop, teaching=StopTeaching(
                    roles if isinstance(roles, CodeRoles) else None,
                    provenance if isinstance(provenance, Provenance) else None))

    def _finish(self, result: ExitResult) -> None:
        if self._finished.is_set():
            return
        self._stop, self._result = None, result
        if not self.scenario.stops and not result.quit and result.traceback is None:
            self.listener.on_message("no frame was compiled by torch.compile in this run")
        self._finished.set()
        self.listener.on_exit(result)

    def _paused_frame(self, none_here: str) -> FrameView | EngineError:
        """The paused stop's selected frame, or the error the engine gives (`none_here`: at a stop with no frame)."""
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        frame = stop.selected_frame
        return frame if frame is not None else EngineError(none_here, "not here")

    def _paused(self) -> Stop | EngineError:
        if self._finished.is_set():
            return EngineError("the program has finished", "not paused")
        return self._stop or EngineError("the program is running; this needs a stop (Ctrl+C interrupts)",
                                         "not paused")

    def interrupt(self) -> None:
        """Stop a running (held) program at the next stop, as an interrupt stop."""
        self.interrupted += 1
        with self._lock:
            running = self._stop is None and not self._finished.is_set() and self._pos >= 0
        if running:
            self._advance(1, kind=StopKind.INTERRUPT)

    def quit(self) -> None:
        self.quit_called += 1
        self._finish(ExitResult(0, quit=True))

    def wait(self, timeout: float | None = None) -> ExitResult | None:
        self._finished.wait(timeout)
        return self._result

    def submit(self, fn: Callable[[], Any], answer: Callable[[Any], None]) -> bool:
        return False  # no worker thread: the client makes every call on its own thread

    def current_stop(self) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        shown = self._shown(stop)
        return shown.stop if shown is not None else stop

    # History (the real `dynadbg.core.history` recorder over the scenario's stops) --------------------------------

    def _shown(self, present: Stop) -> HistoryView | None:
        mark = self.history_cursor.mark(present.seq)
        if mark is None:
            return None
        entry = self.history.entry(mark.position)
        return HistoryView(mark, history_stop(entry, mark), entry)

    def _move(self, how: str, count: int) -> HistoryView | EngineError:
        present = self._paused()
        if isinstance(present, EngineError):
            return present
        try:
            getattr(self.history_cursor, how)(count, present.seq)
        except HistoryError as exc:
            return EngineError(str(exc))
        shown = self._shown(present)
        if shown is not None:
            return shown
        n = self.history_cursor.present_number(present.seq)
        return HistoryView(HistoryMark(n, len(self.history), n), present, None)

    def back(self, count: int = 1) -> HistoryView | EngineError:
        return self._move("back", count)

    def forward(self, count: int = 1) -> HistoryView | EngineError:
        return self._move("forward", count)

    def present(self) -> Stop | EngineError:
        self.history_cursor.position = None
        return self._paused()

    def history_position(self) -> HistoryMark | None:
        stop = self._stop
        return self.history_cursor.mark(stop.seq) if stop is not None else None

    def history_info(self, recent: int = 10) -> HistoryInfo:
        return self.history.info(self.history_position(), max(0, recent))

    def set_history_bounds(self, limit: int | None = None, max_bytes: int | None = None,
                           every: bool | None = None) -> HistoryInfo | EngineError:
        if self.history_cursor.position is not None:
            return EngineError("history is shown: `forward` to the present before changing its bounds")
        try:
            self.history.set_bounds(limit, max_bytes, every)
        except HistoryError as exc:
            return EngineError(str(exc))
        return self.history.info(None, 0)

    # Control -----------------------------------------------------------------------------------------------------

    def _resume(self, action: str, count: int = 1, **data: Any) -> Resumed | EngineError:
        """Go on `count` stops (the scenario's next ones); `data`: the `Resumed` fields of a decision."""
        stop = self._paused()
        if isinstance(stop, EngineError) or count < 1:
            return stop if isinstance(stop, EngineError) else EngineError("count must be at least 1")
        held = self._pos in self.scenario.run_after
        left_history = self.history_cursor.position is not None
        self.history_cursor.position = None
        self._stop = None
        resumed = Resumed(action, left_history=left_history, **data)
        notify = getattr(self.listener, "on_resumed", None)
        if notify is not None:  # as the real engine: the answer is shown before the program goes on
            notify(resumed)
        self.listener.on_running("running")
        if not held:
            self._advance(count)
        return resumed

    # control: the protocol's signatures; each goes on to the scenario's next stop (`count` stops on for the
    # counted ones; `until` does not run to an index: the scenario says where the program stops next)
    def set_step(self, count: int = 1) -> Resumed | EngineError:
        return self._resume("step", count)

    def set_next(self, count: int = 1) -> Resumed | EngineError:
        return self._resume("next", count)

    def set_return(self) -> Resumed | EngineError:
        return self._resume("return", 1)

    def set_continue(self) -> Resumed | EngineError:
        return self._resume("continue", 1)

    def set_until(self, index: int | None = None) -> Resumed | EngineError:
        """The real engine's checks (a frame; an index inside its code), then the scenario's next stop."""
        frame = self._paused_frame("no frame selected")
        if isinstance(frame, EngineError):
            return frame
        idx = frame.index + 1 if index is None else index
        n = len(frame.code.instructions)
        if not 0 <= idx < n:
            return EngineError(f"index {idx} is outside 0..{n - 1}", "usage")
        return self._resume("until", 1)

    def detach(self) -> Resumed | EngineError:
        """As the engine: no breakpoint and no stop kind left, so the program runs to its end."""
        self._breakpoints.clear()
        self.break_on = frozenset()
        return self._resume("detach", len(self.scenario.stops) + 1)

    def decide(self, decision: Decision) -> Resumed | EngineError:
        """At a recompile stop: the scenario's choice of that kind (its permanent code and warnings), then resume."""
        stop = self._paused()
        if isinstance(stop, EngineError) or stop.kind is not StopKind.RECOMPILE:
            return stop if isinstance(stop, EngineError) else EngineError("only at a recompile stop", "not here")
        choice = next((c for c in stop.choices if c.kind is decision.kind and c.available), None)
        if choice is None:
            return EngineError(f"{decision.kind.value} is not available here", "rejected")
        permanent, dims = choice.permanent, ()
        if decision.kind is DecisionKind.DYNAMIC:
            refused = self._dynamic_refused(stop, decision.name or "", decision.dim or 0)
            if refused is not None:
                return refused
            value = dict(stop.frame.locals if stop.frame else ())[decision.name or ""]
            assert value.shape is not None
            dims = (DynamicDim(decision.name or "", decision.dim or 0, value.shape[decision.dim or 0]),)
            permanent = PermanentFix(DecisionKind.DYNAMIC, "model", dims=dims)
        if decision.kind is not DecisionKind.DROP:
            return self._resume(decision.kind.value, permanent=permanent, dynamic=dims)
        # drop: the guards asked for (or the default), through the engine's `drop_spec` as `preview_drop` checks them
        preview = self.preview_drop(decision.guard_ids or None)
        if isinstance(preview, EngineError) or preview.error is not None:
            return preview if isinstance(preview, EngineError) else EngineError(preview.error, "rejected")
        from dynadbg.core.decisions import drop_spec

        record = self.scenario.recompile_record
        assert record is not None
        first = record.entries[0]
        by_id = {leaf.id: leaf for leaf in first.failing}
        dropped = tuple(drop_spec(by_id[i], first.compile_id).ref for i in preview.selected)
        return self._resume("drop", permanent=preview.permanent if decision.guard_ids else permanent,
                            warnings=preview.warnings, dropped=dropped, plan=choice.plan, groups=record.groups)

    @staticmethod
    def _dynamic_refused(stop: Stop, name: str, dim: int) -> EngineError | None:
        """The engine's checks of ``dynamic NAME DIM`` (`engine_decisions.Decisions._decide_dynamic`): a tensor
        input, a dimension it has, a failing guard that checks it."""
        value = dict(stop.frame.locals if stop.frame else ()).get(name)
        if value is None:
            return EngineError(f"no input named {name!r}")
        if value.shape is None:
            return EngineError(f"{name} is a {value.type_name}, not a tensor")
        ndim = len(value.shape)
        if not -ndim <= dim < ndim:
            return EngineError(f"{name} has {ndim} dimension(s): DIM must be in {-ndim}..{ndim - 1}")
        record = stop.recompile
        failing = {strip_local_scope(leaf.source) for v in (record.entries if record else ())
                   for leaf in v.failing if leaf.source and leaf.source.startswith("L[")}
        if failing and not any(src == name or src.startswith((name + ".", name + "[")) for src in failing):
            return EngineError(f"no failing guard checks {name} (failing: {', '.join(sorted(failing))}); marking "
                               f"it dynamic would not avoid this recompile", "rejected")
        return None

    def preview_drop(self, guard_ids: tuple[str, ...] | None = None) -> DropPreview | EngineError:
        """At a recompile stop: the engine's own pure functions on the scenario's record (`decisions.held_back`,
        `default_drop_leaves`, `drop_spec`, `filter_fix`): the rows, the default, the selection's warnings."""
        from dynadbg.core.decisions import config_hints, default_drop_leaves, drop_spec, filter_fix, held_back
        from dynadbg.core.facts import callable_name

        stop = self._paused()
        if isinstance(stop, EngineError) or stop.kind is not StopKind.RECOMPILE:
            return stop if isinstance(stop, EngineError) else EngineError("only at a recompile stop", "not here")
        record = self.scenario.recompile_record
        if record is None or not record.entries:
            return EngineError("no cache entry was analysed at this stop", "not here")
        first = record.entries[0]
        held = {h.guard.leaf_id: h.reason for h in held_back(record)}
        default = tuple(leaf.id for leaf in default_drop_leaves(record))
        candidates = tuple(DropCandidate(GuardRef.of(leaf, first.compile_id), held.get(leaf.id))
                           for leaf in first.failing if leaf.id in held or leaf.id in default)
        ids = default if guard_ids is None else tuple(guard_ids)
        listed = {c.guard.leaf_id for c in candidates}
        groups = tuple(g for g in record.groups if g.compile_id == first.compile_id and set(g.leaf_ids) <= listed)
        if not ids:
            return DropPreview(candidates, default, ids, groups=groups)
        by_id = {leaf.id: leaf for leaf in first.failing}
        missing = [i for i in ids if i not in by_id]
        if missing:
            return DropPreview(candidates, default, ids, error=f"{first.compile_id} has no guard {missing[0]}",
                               groups=groups)
        specs = [drop_spec(by_id[i], first.compile_id) for i in ids]
        # the permanent code as the engine writes it: the default's is the stop's drop choice (its filter checked
        # on the compile's entries); another selection's names the same call site (the fake checks no filter)
        choice = next((c for c in stop.choices if c.kind is DecisionKind.DROP), None)
        if choice is not None and ids == default:
            fix, plan = choice.permanent, choice.plan
        else:
            site = record.advice.call_site if record.advice is not None else None
            fix = replace(filter_fix(specs, callable_name(record.frame_name), config_hints(record)), call_site=site)
            plan = None
        return DropPreview(candidates, default, ids, tuple(s.warning for s in specs if s.warning is not None),
                           fix, plan, groups=groups)

    # Breakpoints, frames, values ---------------------------------------------------------------------------------

    def _code(self) -> CodeView | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        frame = stop.selected_frame
        return frame.code if frame is not None else EngineError("no frame at this stop", "not here")

    def set_break(self, index: int, condition: str | None = None) -> BreakpointView | EngineError:
        if self.history_cursor.position is not None:
            return EngineError("setting a breakpoint reads the live frame; a recorded stop is shown", "not here")
        code = self._code()
        if isinstance(code, EngineError) or not 0 <= index < len(code.instructions):
            return code if isinstance(code, EngineError) else EngineError(
                f"index {index} is outside 0..{len(code.instructions) - 1}")
        number = max((b.number for b in self._breakpoints.values()), default=0) + 1
        view = BreakpointView(number, code.key, code.name, index, code.instructions[index].opname, condition)
        self._breakpoints[index] = view
        self._refresh()
        return view

    def clear_break(self, index: int | None = None) -> tuple[BreakpointView, ...] | EngineError:
        code = self._code()
        chosen = [i for i in self._breakpoints if index is None or i == index]
        if isinstance(code, EngineError) or (index is not None and not chosen):
            return code if isinstance(code, EngineError) else EngineError(f"no breakpoint at index {index}")
        cleared = tuple(self._breakpoints.pop(i) for i in chosen)
        self._refresh()
        return cleared

    def list_breakpoints(self) -> tuple[BreakpointView, ...]:
        return tuple(sorted(self._breakpoints.values(), key=lambda b: b.number))

    def set_break_on(self, kind: str | None = None, on: bool = True) -> frozenset[str] | EngineError:
        if kind is not None:
            if kind not in BREAK_ON_KINDS:
                return EngineError(f"unknown stop kind {kind!r} (known: {', '.join(BREAK_ON_KINDS)})", "usage")
            self.break_on = self.break_on | {kind} if on else self.break_on - {kind}
        return self.break_on

    def select_frame(self, index: int) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, EngineError) or not 0 <= index < len(stop.frames):
            return stop if isinstance(stop, EngineError) else EngineError(
                f"frame {index} is outside 0..{len(stop.frames) - 1}")
        self._stop = replace(stop, selected=index)
        self._refresh()
        return self._stop

    def up(self, count: int = 1) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, Stop) and stop.selected <= 0:
            return EngineError("already at the outermost generated frame")
        return self.select_frame(max(0, stop.selected - count)) if isinstance(stop, Stop) else stop

    def down(self, count: int = 1) -> Stop | EngineError:
        stop = self._paused()
        if isinstance(stop, Stop) and stop.selected >= len(stop.frames) - 1:
            return EngineError("already at the innermost frame")
        return self.select_frame(stop.selected + count) if isinstance(stop, Stop) else stop

    def evaluate(self, expr: str) -> EvalResult | EngineError:
        """A local of the selected frame, by name (the fake evaluates nothing else)."""
        if self.history_cursor.position is not None:
            return EngineError("p reads the live frame; a recorded stop is shown (`forward` to the present first)",
                               "not here")
        code = self._code()
        value = None if isinstance(code, EngineError) else dict(self._stop.selected_frame.locals).get(expr.strip())
        if value is None:
            return code if isinstance(code, EngineError) else EngineError(
                f"NameError: name {expr.strip()!r} is not defined", "eval", "NameError")
        return EvalResult(value.text, value)

    # Watches -----------------------------------------------------------------------------------------------------

    def add_watch(self, expr: str) -> WatchValue | EngineError:
        try:
            compile(expr.strip() or "(", "<watch>", "eval")
        except SyntaxError as exc:
            return EngineError("usage: watch EXPR" if not expr.strip() else f"syntax error: {exc.msg}")
        number = max((n for n, _ in self._watches), default=0) + 1
        self._watches.append((number, expr.strip()))
        self._refresh()
        return next((w for w in self.watches() if w.number == number))

    def remove_watch(self, number: int) -> WatchValue | EngineError:
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

    def _answer(self, value: Any, missing: str = "") -> Any:
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        return value if value is not None else EngineError(missing, "not here")

    def listing(self) -> CodeView | EngineError:
        return self._code()

    def original_code(self) -> CodeView | EngineError:
        return self._answer(self.scenario.original, "the original code of this frame is not known")

    def graphs(self, name: str | None = None) -> Any:
        return self._answer(self.scenario.graphs or None, "no FX graph was captured for this code object")

    def entries(self) -> Any:
        return self._answer(self.scenario.compiled, "no compiled code object here")

    def guard_trees(self) -> Any:
        if self.scenario.guard_delay:
            threading.Event().wait(self.scenario.guard_delay)
        return self._answer((self.scenario.guard_tree,) if self.scenario.guard_tree is not None else ())

    what_if = guard_trees

    def recompile_records(self, compile_id: str | None = None) -> Any:
        stop, record = self._paused(), self.scenario.recompile_record
        live = not isinstance(stop, EngineError) and stop.kind is StopKind.RECOMPILE and record is not None
        return self._answer((record,) if live else ())

    def guard_diffs(self, old: str | None = None, new: str | None = None) -> Any:
        record = self.scenario.recompile_record
        return self._answer(record.diffs if record is not None else ())

    def compiles(self) -> CompilesData:
        frame = self.scenario.compiled
        return CompilesData((frame,) if frame is not None else ())

    # Teaching and edits: the engine's own functions (`core.roles`, `core.explain`, `core.provenance`,
    # `core.edits`) on the scenario's real code object -----------------------------------------------------------

    def _teach_frame(self) -> tuple[Any, FrameView] | EngineError:
        """(the real code object, the selected frame) for roles, explain and provenance, or the engine's error."""
        stop = self._paused()
        if isinstance(stop, EngineError):
            return stop
        frame = stop.selected_frame
        if frame is None or not frame.code.generated or self.scenario.code is None:
            return EngineError("no generated code here", "not here")
        if not self.scenario.teach:  # a scenario without teaching data: the panes show values only
            return EngineError("no roles for this code object in the fake", "not here")
        return self.scenario.code, frame

    def _code_roles(self, code: Any, frame: FrameView) -> CodeRoles:
        # keyed like the listing the stops show (the fake's listings have fixed keys, not the code's id)
        return replace(_roles.code_roles(code, self.scenario.facts), key=frame.code.key)

    def roles(self) -> CodeRoles | EngineError:
        target = self._teach_frame()
        return target if isinstance(target, EngineError) else self._code_roles(*target)

    def explain(self, index: int | None = None) -> Explanation | EngineError:
        """As the engine: the live values only for the instruction the frame is stopped at."""
        target = self._teach_frame()
        if isinstance(target, EngineError):
            return target
        code, frame = target
        index = frame.index if index is None else index
        n = len(frame.code.instructions)
        if not 0 <= index < n:
            return EngineError(f"index {index} is outside 0..{n - 1}", "usage")
        live = frame.stack if index == frame.index else None
        return _explain.explain(code, index, live, facts=self.scenario.facts)

    def stack_provenance(self) -> Provenance | EngineError:
        target = self._teach_frame()
        if isinstance(target, EngineError):
            return target
        code, frame = target
        if frame.index < 0:
            return EngineError("no value stack at this stop", "not here")
        return _provenance.provenance(code, frame.index, facts=self.scenario.facts,
                                      roles=_roles.code_roles(code, self.scenario.facts))

    def _base(self) -> Any:
        """Dynamo's code the stop shows (the scenario's real code object), or the engine's error."""
        code = self._code()
        if isinstance(code, EngineError):
            return code
        return self.scenario.code if self.scenario.code is not None else EngineError(
            "no generated code here", "not here")

    def _preview(self, op: EditOp) -> EditPreview | EngineError:
        base = self._base()
        return base if isinstance(base, EngineError) else _preview_edit(base, self.patch_ops, op)

    preview_edit = _preview

    def apply_edit(self, op: EditOp) -> EditOutcome | EngineError:
        preview = self._preview(op)
        if isinstance(preview, EngineError) or preview.error is not None:
            return preview if isinstance(preview, EngineError) else EditOutcome(preview.error)
        self.patch_ops.append(op)
        return EditOutcome(None, "installed: runs from the next call of forward (compile 0/0)", preview.diff)

    def patch_diff(self) -> Any:
        base = self._base()
        if isinstance(base, EngineError):
            return base
        new = build_patched(base, self.patch_ops)
        return new if isinstance(new, EditError) else diff_code(base, new)

    def undo_patch(self, everything: bool = False) -> EditOutcome | EngineError:
        if not self.patch_ops:
            return EditOutcome(EditError("not here", "forward has no edits to undo"))
        self.patch_ops.clear()
        base = self._base()  # as the real engine answers an undo here: Dynamo's code against itself
        return EditOutcome(None, "Dynamo's code restored for forward",
                           None if isinstance(base, EngineError) else diff_code(base, base))

    # The source file, read as the engine reads it.
    def source(self, whole_file: bool = False) -> tuple[str, int, tuple[str, ...]] | EngineError:
        """The stop's source file (the fake listings point at a real file): whole, or from the function's line."""
        frame = self._paused_frame("no source here")
        if isinstance(frame, EngineError):
            return frame
        try:
            lines = tuple(Path(frame.code.filename).read_text(encoding="utf-8").splitlines())
        except OSError:
            return EngineError(f"{frame.code.filename} cannot be read", "not here")
        start = 1 if whole_file else frame.code.firstlineno
        return frame.code.filename, start, lines[start - 1:]

    # not faked (no fast TUI test needs them): an error value of the type the real engine answers with
    def exec_statement(self, stmt: str) -> EvalResult | EngineError:
        return _NOT_FAKED

    def global_values(self, pattern: str | None = None) -> tuple[tuple[str, ValueSummary], ...] | EngineError:
        return _NOT_FAKED

    def set_verbose(self, on: bool | None = None) -> bool:
        """The switch only (the fake runs no instruction to print)."""
        self.verbose = not self.verbose if on is None else on
        return self.verbose

    def set_local(self, name: str, expr: str) -> ValueSummary | EngineError:
        return _NOT_FAKED

    def save_patches(self, path: str) -> int | EditError | EngineError:
        return _NOT_FAKED

    def load_patches(self, path: str) -> EditOutcome | EngineError:
        return _NOT_FAKED

    def add_guard(self, expr: str) -> EditOutcome | EngineError:
        return _NOT_FAKED_EDIT

    def drop_guard(self, leaf_id: str) -> EditOutcome | EngineError:
        return _NOT_FAKED_EDIT

    def undo_guard_edit(self, which: str = "") -> EditOutcome | EngineError:
        return _NOT_FAKED_EDIT

    patches = guard_edits = lambda self: ()
    export_guard_filter = lambda self: ""  # noqa: E731


_NOT_FAKED = EngineError("not in the fake engine", "internal")
_NOT_FAKED_EDIT = EditOutcome(EditError("unsupported", "not in the fake engine"))

#: The methods `FakeEngine.calls` records.
RECORDED = ("set_step", "set_next", "set_return", "set_continue", "set_until", "detach", "decide", "set_break",
            "clear_break", "select_frame", "evaluate", "add_watch", "remove_watch", "original_code", "graphs",
            "entries", "guard_trees", "recompile_records", "preview_edit", "apply_edit", "patch_diff", "undo_patch")
for _name in RECORDED:
    setattr(FakeEngine, _name, _recorded(_name, getattr(FakeEngine, _name)))


def _copy_anytime_flags() -> None:
    """The real engine's ``anytime`` flags on the fake's methods of the same name: the command language reads them
    (`dynadbg.core.verbs.runs_anytime`) to know which verbs work while the program runs, so the fake keeps no
    policy of its own."""
    from dynadbg.core.session import Session

    for name in dir(Session):
        flag = getattr(getattr(Session, name, None), "anytime", None)
        mine = FakeEngine.__dict__.get(name)
        if flag is not None and callable(mine):
            mine.anytime = flag


_copy_anytime_flags()
