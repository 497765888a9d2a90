"""The typed engine methods of trace stops (`dynadbg.core.trace_stops`): a base class of `Session`.

Every method follows `engine.engine_method`: called from any thread, run on the program's worker thread while it
is paused; the ones marked "any time" also while it runs. Each returns a frozen `dynadbg.core.trace_model`
value, a `model.Resumed`, or an `model.EngineError` (`ErrorKind.NOT_HERE` away from a trace stop, `ErrorKind.USAGE`
for bad arguments, `ErrorKind.UNAVAILABLE` when this torch lacks the trace hooks).

At a trace stop the program is paused inside Dynamo's compile (torch's compile lock held on that thread):
`trace_view` gives everything the stop shows in one call (for a front end's Trace view); the control methods
(`trace_step`, `trace_next`, `trace_return`, `trace_continue`, `trace_until`, `trace_rewind`) let Dynamo go on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .engine_base import anytime, engine_method, refuse
from .model import EngineError, ErrorKind, ResumeAction, Resumed
from .trace_model import (
    FakeTensorView,
    TraceBreakpointView,
    TraceCompileView,
    TraceExplanation,
    TraceSettings,
    TraceStep,
    TraceStopView,
)
from .trace_stops import Mode, TraceError_

if TYPE_CHECKING:
    from .engine import EngineMethods as _RunTimeMethods
    from .trace_stops import TraceStops
else:
    _RunTimeMethods = object

_T = TypeVar("_T")


class TraceMethods(_RunTimeMethods):
    """The trace-stop methods of `Session` (see each one's docstring; `dynadbg.core.protocol.Engine` lists them)."""

    _resumed: Resumed | None
    trace_stops: "TraceStops | None"

    def _on_worker(self, call: Any, anytime: bool) -> Any: ...  # noqa: D102 - Session's

    def _trace(self) -> "TraceStops":
        stops: "TraceStops | None" = getattr(self, "trace_stops", None)
        if stops is None:
            refuse("the trace service is not installed (the program has not started)", ErrorKind.UNAVAILABLE)
        if not stops.available:
            refuse("trace stops are disabled on this torch: " + ("; ".join(stops.recorder.disabled) or "no hooks"),
                   ErrorKind.UNAVAILABLE)
        return stops

    def _at_trace(self) -> "TraceStops":
        stops = self._trace()
        if stops.live is None:
            refuse("not at a trace stop (`--break-on trace`, `trace-break`, `trace-error`, or `tb FILE:LINE`)",
                   ErrorKind.NOT_HERE)
        return stops

    def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        try:
            return fn(*args)
        except TraceError_ as exc:
            refuse(str(exc))

    # -- the stop ---------------------------------------------------------------------------------------------

    @engine_method()
    def trace_view(self) -> TraceStopView | EngineError:
        """Everything the trace stop shows: the step, the inlining chain, the symbolic stack and locals, the
        graph and guards so far (the last instruction's additions marked), the break or error, the attempts; a
        recorded step while `trace_back` shows one (``view.live`` False, ``view.mark`` set)."""
        return self._call(self._at_trace().view)

    @engine_method()
    def trace_fake(self, name: str) -> FakeTensorView | EngineError:
        """The fake value of symbolic local `name` (or ``stack[i]``, ``TOS``) at the live trace stop: sizes with
        their hints, strides, dtype, device (no data)."""
        return self._call(self._at_trace().fake, name)

    @engine_method()
    def trace_explain(self) -> TraceExplanation | EngineError:
        """What Dynamo does with the instruction shown, symbolically (its action and the operands it consumes)."""
        return self._call(self._at_trace().explain)

    # -- control ----------------------------------------------------------------------------------------------

    def _go(self, action: ResumeAction, mode: Mode, count: int = 1, line: int | None = None) -> Resumed:
        left_history = self._call(self._at_trace().resume, mode, count, line)
        result = Resumed(action, left_history=left_history)
        self._resumed = result
        return result

    @engine_method()
    def trace_step(self, count: int = 1) -> Resumed | EngineError:
        """Let Dynamo trace `count` instructions, into inlined calls; stop before the next one."""
        return self._go(ResumeAction.TRACE_STEP, Mode.STEP, count)

    @engine_method()
    def trace_next(self, count: int = 1) -> Resumed | EngineError:
        """Let Dynamo trace until `count` instructions at this inline depth or shallower (over inlined calls)."""
        return self._go(ResumeAction.TRACE_NEXT, Mode.NEXT, count)

    @engine_method()
    def trace_return(self) -> Resumed | EngineError:
        """Let Dynamo trace until the inlined function of this step returns to its caller (at depth 0: to the end
        of the frame's trace; graph breaks and errors still stop)."""
        return self._go(ResumeAction.TRACE_RETURN, Mode.RETURN)

    @engine_method()
    def trace_continue(self) -> Resumed | EngineError:
        """Let Dynamo trace on to the next trace stop (or the program's next stop)."""
        return self._go(ResumeAction.TRACE_CONTINUE, Mode.CONTINUE)

    @engine_method()
    def trace_until(self, line: int | None = None) -> Resumed | EngineError:
        """Let Dynamo trace until it reaches `line` or later in this frame (default: the next line), or the frame
        returns."""
        return self._go(ResumeAction.TRACE_UNTIL, Mode.UNTIL, 1, line)

    @engine_method()
    def trace_rewind(self, count: int) -> Resumed | EngineError:
        """Experimental: re-trace the frame from its start (a restart, counted as an attempt by Dynamo) and stop
        `count` instructions before this one. Refused at a break or error stop and near Dynamo's attempt limit."""
        rewind = self._call(self._at_trace().rewind, count)
        result = Resumed(ResumeAction.TRACE_REWIND, rewind=rewind)
        self._resumed = result
        return result

    # -- recorded steps ---------------------------------------------------------------------------------------

    @engine_method()
    def trace_back(self, count: int = 1) -> TraceStopView | EngineError:
        """Show the recorded step `count` steps before the one shown (read-only; every attempt of this compile)."""
        return self._call(self._at_trace().back, count)

    @engine_method()
    def trace_forward(self, count: int = 1) -> TraceStopView | EngineError:
        """Move `count` recorded steps toward the live trace stop; reaching it shows it again."""
        return self._call(self._at_trace().forward, count)

    @engine_method()
    def trace_present(self) -> TraceStopView | EngineError:
        """Leave the recorded steps: the live trace stop."""
        return self._call(self._at_trace().present)

    # -- any time ---------------------------------------------------------------------------------------------

    @engine_method(anytime=True)
    def trace_break(self, filename: str, line: int, condition: str | None = None) -> TraceBreakpointView | EngineError:
        """A trace breakpoint: stop whenever Dynamo starts tracing `line` of a file whose path ends with
        `filename`, at any inline depth (`condition`: over the symbolic locals' constants and ``depth``,
        ``attempt``, ``opname``, ``line``). Any time."""
        return self._call(self._trace().add_breakpoint, filename, line, condition)

    @engine_method(anytime=True)
    def trace_clear(self, number: int | None = None) -> tuple[TraceBreakpointView, ...] | EngineError:
        """Clear trace breakpoint `number` (None: all); the cleared ones. Any time."""
        return self._call(self._trace().clear_breakpoints, number)

    @engine_method(anytime=True)
    def trace_settings(self, record: str | None = None, replay: bool | None = None, limit: int | None = None,
                       max_bytes: int | None = None) -> TraceSettings | EngineError:
        """Read or change how traces are recorded (``record="full"|"light"``), whether the replay after a restart
        stops (`replay`), and the bounds of the recorded steps. Any time."""
        stops: "TraceStops | None" = getattr(self, "trace_stops", None)
        if stops is None:
            refuse("the trace service is not installed (the program has not started)", ErrorKind.UNAVAILABLE)
        return self._call(stops.settings, record, replay, limit, max_bytes)

    @engine_method(anytime=True)
    def trace_compiles(self) -> tuple[TraceCompileView, ...] | EngineError:
        """The recorded trace of every compile so far: attempts, restarts, breaks, cuts, steps. Any time."""
        stops: "TraceStops | None" = getattr(self, "trace_stops", None)
        if stops is None:
            return ()
        return stops.recorder.compile_views()

    @engine_method()
    def trace_steps(self, compile_id: str | None = None,
                    attempt: int | None = None) -> tuple[TraceStep, ...] | EngineError:
        """The kept steps of one attempt (default: the newest attempt of `compile_id`). With no `compile_id`: the
        compile of this trace stop; at a run-time stop after a graph break, the compile and attempt that traced
        the break (`BreakContext.traced`); at another run-time stop, the compile of the selected frame's code;
        else the newest compile."""
        stops = self._trace()
        rec = stops.recorder
        if compile_id is None:
            live = stops.live
            if live is not None:
                compile_id = live.attempt.compile_id
            else:
                compile_id, default_attempt = self._running_trace(rec.compiles)
                attempt = default_attempt if attempt is None else attempt
                if compile_id is None and rec.compiles:
                    compile_id = list(rec.compiles)[-1]
                elif compile_id is None:
                    return ()
        attempts = rec.attempts_of(compile_id)
        if not attempts:
            refuse(f"no recorded trace of compile {compile_id} (known: {', '.join(rec.compiles) or 'none'})")
        chosen = attempts[-1] if attempt is None else next((a for a in attempts if a.number == attempt), None)
        if chosen is None:
            refuse(f"compile {compile_id} has no attempt {attempt}")
        return tuple(chosen.step(i) for i in range(len(chosen.steps)))

    def _running_trace(self, recorded: Any) -> tuple[str | None, int | None]:
        """The recorded compile (and attempt) a run-time stop is about: the traced graph break behind a resume
        function, else the selected frame's compile; (None, None) when neither was recorded."""
        ctx = getattr(self, "ctx", None)
        stop = getattr(ctx, "stop", None)
        if stop is None:
            return None, None
        traced = stop.graph_break.traced if stop.graph_break is not None else None
        if traced is not None and traced.compile_id in recorded:
            return traced.compile_id, traced.attempt
        frame = stop.selected_frame
        cid = frame.code.compile_id if frame is not None else None
        return (cid, None) if cid is not None and cid in recorded else (None, None)

    # -- the run-time control methods, at a trace stop ----------------------------------------------------------
    # A front end that knows nothing of trace stops (the TUI's keys) calls these: at a trace stop they mean the
    # trace-time step, next, return and continue.

    def _at_trace_stop(self) -> bool:
        stops: "TraceStops | None" = getattr(self, "trace_stops", None)
        return stops is not None and stops.live is not None

    def set_step(self, count: int = 1) -> Resumed | EngineError:
        if self._at_trace_stop():
            return self.trace_step(count)
        return super().set_step(count)

    def set_next(self, count: int = 1) -> Resumed | EngineError:
        if self._at_trace_stop():
            return self.trace_next(count)
        return super().set_next(count)

    def set_return(self) -> Resumed | EngineError:
        if self._at_trace_stop():
            return self.trace_return()
        return super().set_return()

    def set_continue(self) -> Resumed | EngineError:
        if self._at_trace_stop():
            return self.trace_continue()
        return super().set_continue()

    def set_until(self, index: int | None = None) -> Resumed | EngineError:
        if self._at_trace_stop():
            if index is None:
                return self.trace_until(None)
            return EngineError("at a trace stop `until` takes a source LINE (`until LINE`), not an instruction index",
                               ErrorKind.USAGE)
        return super().set_until(index)

    def source(self, whole_file: bool = False) -> tuple[str, int, tuple[str, ...]] | EngineError:
        """At a trace stop: the source of the step shown, the inlined callee's at depth > 0 (`whole_file`: its
        whole file, else its function from its first line); elsewhere `Engine.source`."""
        if not self._at_trace_stop():
            return super().source(whole_file)
        return self._trace_source(whole_file)

    @engine_method()
    def _trace_source(self, whole_file: bool) -> tuple[str, int, tuple[str, ...]] | EngineError:
        import inspect
        import linecache

        step = self._call(self._at_trace().view).step
        lines = [line.rstrip("\n") for line in linecache.getlines(step.filename)]
        if not lines:
            refuse(f"{step.filename} cannot be read", ErrorKind.NOT_HERE)
        if whole_file:
            return step.filename, 1, tuple(lines)
        start = max(1, step.firstlineno)
        block = inspect.getblock([line + "\n" for line in lines[start - 1:]])
        return step.filename, start, tuple(line.rstrip("\n") for line in block)

    @anytime  # as the `engine_method` it extends: detach works while the program runs
    def detach(self) -> Resumed | EngineError:
        """`detach` also ends trace stops: trace breakpoints are cleared and stepping stops."""
        stops: "TraceStops | None" = getattr(self, "trace_stops", None)
        if stops is not None:
            stops.detach()
        return super().detach()
