"""The session's stepping: the trace handler the tracing back end calls (`protocol.TraceHandler`), the stops it
makes at instructions, returns and exceptions, and the arming of tracing after each stop for the mode chosen.

`Stepping` is composed into `Session` (its `host`, typed by `StepHost`); the back end calls it on the
program's worker thread, once per traced event: the hot path."""

from __future__ import annotations

import sys
import threading
from types import CodeType, FrameType
from typing import Any, Callable, Protocol

from . import compat
from . import format as fmt
from .engine_hooks import DynamoHooks
from .history import History, SummaryCache
from .model import MarkerView, Stop, StopKind
from .runner import QuitProgram
from .stack import FrameState, code_index
from .state import Breakpoint, Mode, PauseContext


class StepHost(Protocol):
    """The session state the stepping reads and writes (`Session` provides each; all on the worker thread)."""

    mode: Mode
    count: int
    target: FrameType | None
    until_index: int
    break_on: set[str]
    breakpoints: dict[int, dict[int, Breakpoint]]
    generated: dict[int, CodeType]
    entered: set[int]
    states: dict[FrameType, FrameState]
    backend: Any
    history: History
    verbose: bool
    check_depth: bool
    on_traced: Callable[[FrameType, FrameState], None] | None
    depth_mismatches: list[tuple[str, int, int, int] | tuple[str, int, int, int, bool]]
    traced_instructions: int
    _hooks: DynamoHooks
    _interrupt: bool
    _quitting: bool
    _suspended: bool
    _last_exc_id: int
    _worker_ident: int | None
    _resume_parent: FrameType | None
    _returns_reported: set[int]
    _stepped_in: set[int]
    _step_message: str
    _passing_seq: int
    _passing_cache: SummaryCache

    def _pause(self, ctx: PauseContext, message: str) -> None: ...  # noqa: D102
    def _message(self, text: str) -> None: ...  # noqa: D102
    def is_resume(self, code: CodeType) -> bool: ...  # noqa: D102


class Stepping:
    """The session's trace handler (`protocol.TraceHandler`), its stops and the arming after each (`host`)."""

    def __init__(self, host: StepHost) -> None:
        self.host = host

    def wants(self, code: CodeType) -> int:
        """How much a new frame of `code` needs: 0 nothing, 1 its call-level events (3.11: its return, reported
        once per run, and an exception raised in it), 2 instruction events too."""
        host = self.host
        key = id(code)
        if key not in host.generated or host._suspended:
            return 0
        if host._interrupt or host.mode is Mode.STEP or key in host.breakpoints or host.verbose:
            return 2
        if host._resume_parent is not None:
            return 2
        if "entry" in host.break_on and key not in host.entered:
            return 2
        if "graph-break" in host.break_on and host.is_resume(code):
            return 2
        if "reentry" in host.break_on and key in host._stepped_in:
            return 2
        if "exception" in host.break_on and host.mode is not Mode.CONTINUE:
            return 2
        if key not in host._returns_reported and not getattr(host.backend, "returns_untraced", True):
            return 1
        return 0

    def wants_frame(self, code: CodeType) -> bool:
        return self.wants(code) > 0

    def wants_instructions(self, code: CodeType) -> bool:
        return self.wants(code) > 1

    def is_generated(self, code: CodeType) -> bool:
        return id(code) in self.host.generated

    def on_untraced_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
        """A live exception in a generated frame nothing traces (continue mode, 3.12+ RAISE): stop at the raising
        instruction with the frame's value stack, read at the depth the code's flow gives there less the
        operands the instruction consumed (as a stepped exception stop shows it)."""
        host = self.host
        if ("exception" not in host.break_on or host._quitting or host._suspended or isinstance(exc, QuitProgram)
                or id(exc) == host._last_exc_id or threading.get_ident() != host._worker_ident):
            return
        code = frame.f_code
        st = host.states.get(frame)
        if st is None:
            from .snapshot import _static_depth

            st = FrameState(frame, code_index(code))
            st.index = st.table.index_of_offset.get(offset, -1)
            with compat.dynamo_off():  # inside the compiled call: the flow analysis is no code for Dynamo
                depth = _static_depth(code, st.index) if st.index >= 0 else None
            st.depth = -1 if depth is None else depth
            st.depth_from_flow = depth is not None
            host.states[frame] = st  # stepping on from the stop traces it from this depth
        st.pending_exception_offset = offset
        host._last_exc_id = id(exc)
        ctx = PauseContext(StopKind.EXCEPTION, self.frames_for(frame), -1, exception=exc)
        host._pause(ctx, f"{type(exc).__name__} raised in generated code")

    def on_untraced_return(self, frame: FrameType, value: Any) -> bool:
        """The return of an untraced generated frame (3.12+ PY_RETURN): its line, once per run; no more events
        for it this run."""
        self.host._hooks.note_return(frame, value)
        return False

    def on_call(self, frame: FrameType) -> None:
        st = self.state(frame)
        if not self.wants_instructions(frame.f_code):
            st.depth = -1  # watched for its return only: no instruction is followed, the depth is unknown

    def state(self, frame: FrameType) -> FrameState:
        host = self.host
        st = host.states.get(frame)
        if st is None:
            st = FrameState(frame, code_index(frame.f_code))
            try:
                st.inputs = dict(frame.f_locals)
            except Exception:  # noqa: BLE001
                st.inputs = {}
            host.states[frame] = st
        return st

    def on_instruction(self, frame: FrameType, offset: int) -> None:
        host = self.host
        if host._quitting:
            raise QuitProgram()
        host.traced_instructions += 1
        st = self.state(frame)
        first = st.index < 0
        rebased = st.pending_exception_offset is not None
        st.advance(offset)
        if host.check_depth and st.depth >= 0:
            live = self.expected_depth(st)
            if live is not None and live != st.depth:
                host.depth_mismatches.append((frame.f_code.co_name, st.index, st.depth, live, rebased))
                st.depth = live
        if host.on_traced is not None:
            host.on_traced(frame, st)
        code = frame.f_code
        if host.verbose:
            self.print_running(code, st)
        kind: StopKind | None = None
        message = ""
        if host._interrupt:
            host._interrupt = False
            kind, message = StopKind.INTERRUPT, "interrupted"
        if first and host._resume_parent is not None and frame.f_back is host._resume_parent:
            # set_trace() from eager code: the values the program computed so far live here, not in the caller
            host._resume_parent = None
            kind, message = StopKind.STEP, "dynadbg.set_trace(): in the resume function, after the call"
        key = id(code)
        bp = host.breakpoints.get(key, {}).get(st.index)
        extra: dict[str, Any] = {}
        if kind is None and bp is not None and bp.enabled and self.condition_true(bp, frame):
            bp.hits += 1
            kind, message = StopKind.BREAKPOINT, f"breakpoint {bp.number} at index {st.index}"
            if bp.marker:
                from .format.notices import marker_message

                with compat.dynamo_off():  # the role tagging runs dis: keep it out of Dynamo
                    marker = self.marker_view(code, st.index)
                extra["marker"] = marker
                message = marker_message(marker)
        passive: StopKind | None = None
        if first:
            if "graph-break" in host.break_on and host.is_resume(code):
                passive = StopKind.GRAPH_BREAK
            elif "entry" in host.break_on and key not in host.entered:
                passive = StopKind.ENTRY
            elif "reentry" in host.break_on and key in host._stepped_in:
                passive = StopKind.ENTRY
                extra["reentry"] = True
            host._stepped_in.discard(key)  # only the next call of a code object stepped in stops again
            host.entered.add(key)
        mode = host.mode
        stepped = False
        if mode is Mode.STEP:
            host.count -= 1
            stepped = host.count <= 0
        elif mode is Mode.NEXT and frame is host.target:
            host.count -= 1
            stepped = host.count <= 0
        elif mode is Mode.UNTIL and frame is host.target and st.index >= host.until_index:
            stepped = True
        if kind is None:
            # `r` and `n` run to a point in this frame: a first entry into another code object is not one
            if passive is not None and (stepped or mode is Mode.CONTINUE):
                kind = passive
            elif stepped:
                kind = StopKind.STEP
        if kind is None:
            if host.history.every and mode is not Mode.CONTINUE and (mode is Mode.STEP or frame is host.target):
                self.record_passing(st, mode)
            return
        if kind is StopKind.ENTRY:
            if extra.get("reentry"):
                from .format.notices import REENTRY_MESSAGE

                message = REENTRY_MESSAGE
            else:
                message = "entering generated code"
        elif kind is StopKind.GRAPH_BREAK:
            message = "entering a resume function after a graph break"
        elif kind is StopKind.STEP and not message:
            message = {Mode.UNTIL: f"reached index {st.index}", Mode.NEXT: "next"}.get(mode, "step")
            if host._step_message:
                message, host._step_message = host._step_message, ""
        if kind is not StopKind.ENTRY:
            extra.pop("reentry", None)
        if kind is not StopKind.BREAKPOINT:
            extra.pop("marker", None)
        host._pause(PauseContext(kind, self.frames_for(frame), -1, extra=extra), message)

    @staticmethod
    def marker_view(code: CodeType, index: int) -> MarkerView:
        """Where `code`'s calls of compiled graphs lie relative to the marker at `index` (`roles.code_roles`)."""
        try:
            from .roles import code_roles

            calls = tuple(sorted(g.call_index for g in code_roles(code).graph_calls))
        except Exception:  # noqa: BLE001 - code the role tagging cannot follow: say nothing about the graph
            calls = ()
        ran = None if not calls else any(i < index for i in calls)
        return MarkerView(index, calls, ran)

    def record_passing(self, st: FrameState, mode: Mode) -> None:
        """History of an instruction a stepping command runs through (`history_every`): the frame's value stack
        and locals summarised as at a stop, without touching what the next stop marks as changed."""
        host = self.host
        if not host.history.enabled:
            return
        from .snapshot import frame_view

        host._passing_seq -= 1
        try:
            with compat.dynamo_off():
                fv = frame_view(self.host, st, current=True, passing=True, summary=host._passing_cache.summary)
        except Exception:  # noqa: BLE001 - a failing repr costs this entry, never the program
            return
        finally:
            host._passing_cache.turn()
        host.history.record(Stop(StopKind.STEP, f"ran through (`{mode.value}`), no stop", (fv,),
                                 seq=host._passing_seq, selected=0))

    @staticmethod
    def print_running(code: CodeType, st: FrameState) -> None:
        """Verbose mode: the instruction about to run, flushed (the last line before a crash names it)."""
        if not 0 <= st.index < len(st.table.instructions):
            return
        ins = st.table.instructions[st.index]
        arg = fmt.arg_text(ins)
        arg = f" {arg}" if arg else ""
        out = sys.stdout
        try:
            out.write(f"running {code.co_name} [{st.index}] {ins.opname}{arg}\n")
            out.flush()
        except Exception:  # noqa: BLE001 - a closed stdout must not stop the program
            pass

    @staticmethod
    def expected_depth(st: FrameState) -> int | None:
        exact = st.exact_stack()
        if exact is not None:
            return len(exact)
        if 0 <= st.index < len(st.table.instructions):
            return {"RETURN_VALUE": 1, "RETURN_CONST": 0}.get(st.table.instructions[st.index].opname)
        return None

    def on_return(self, frame: FrameType, value: Any) -> None:
        host = self.host
        st = host.states.get(frame)
        if frame is host._resume_parent and not host._quitting:
            # set_trace() was the last graph break of this frame: no resume function ran, stop at its return
            host._resume_parent = None
            ctx = PauseContext(StopKind.RETURN, self.frames_for(frame), -1, return_value=value)
            host._pause(ctx, f"dynadbg.set_trace(): {frame.f_code.co_name} is returning")
        if host.mode is Mode.RETURN and frame is host.target and not host._quitting:
            ctx = PauseContext(StopKind.RETURN, self.frames_for(frame), -1, return_value=value)
            host._pause(ctx, f"{frame.f_code.co_name} is returning")
        host._hooks.note_return(frame, value)  # after the return stop, if any: the frame is leaving now
        if frame is host.target and host.mode in (Mode.NEXT, Mode.UNTIL, Mode.RETURN):
            # the frame we were stepping in is done: stop at the next generated instruction, in the caller if any
            host.mode, host.count, host.target = Mode.STEP, 1, None
        if host.mode is Mode.STEP:
            caller = frame.f_back
            while caller is not None and id(caller.f_code) not in host.generated:
                caller = caller.f_back
            if caller is not None and caller not in host.states:
                self.trace_running(caller)
        host.states.pop(frame, None)
        if st is not None:
            st.frame = None  # type: ignore[assignment]  # drop the frame reference
        self.update_arming()

    def on_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
        host = self.host
        st = self.state(frame)
        if st.index < 0 or st.depth < 0:
            # not followed instruction by instruction (watched for its return only): where it raised, and the
            # depth there from the code's flow
            st.index = st.table.index_of_offset.get(offset, -1)
            from .snapshot import _static_depth

            with compat.dynamo_off():
                depth = _static_depth(frame.f_code, st.index) if st.index >= 0 else None
            st.depth = -1 if depth is None else depth
            st.depth_from_flow = depth is not None
        st.pending_exception_offset = offset
        if "exception" in host.break_on and id(exc) != host._last_exc_id and not isinstance(exc, QuitProgram):
            host._last_exc_id = id(exc)
            ctx = PauseContext(StopKind.EXCEPTION, self.frames_for(frame), -1, exception=exc)
            host._pause(ctx, f"{type(exc).__name__} raised in generated code")

    def frames_for(self, frame: FrameType) -> list[FrameState]:
        """FrameStates of the generated frames on the stack from the outermost to `frame`."""
        host = self.host
        chain: list[FrameState] = []
        f: FrameType | None = frame
        while f is not None:
            if id(f.f_code) in host.generated or host._hooks.adopt_frame_code(f.f_code):
                st = host.states.get(f)
                if st is None:
                    st = FrameState(f, code_index(f.f_code))
                    st.index = st.table.index_of_offset.get(f.f_lasti, -1)
                    st.depth = -1  # not traced: depth unknown
                elif st.depth < 0 and st.pending_exception_offset is None:
                    # watched for its return only (3.11): no instruction was followed, it is where it is now
                    st.index = st.table.index_of_offset.get(f.f_lasti, -1)
                chain.append(st)
            f = f.f_back
        chain.reverse()
        return chain

    def trace_running(self, frame: FrameType) -> None:
        host = self.host
        st = host.states.get(frame)
        if st is None:
            st = FrameState(frame, code_index(frame.f_code))
            st.index = st.table.index_of_offset.get(frame.f_lasti, -1)
            st.depth = -1
            host.states[frame] = st
        host.backend.trace_existing(frame)

    def condition_true(self, bp: Breakpoint, frame: FrameType) -> bool:
        if not bp.condition:
            return True
        try:
            return bool(eval(bp.condition, frame.f_globals, dict(frame.f_locals)))  # noqa: S307 - user's own expression
        except Exception as exc:  # noqa: BLE001 - like pdb: an error in the condition stops
            self.host._message(f"breakpoint {bp.number}: condition raised {type(exc).__name__}: {exc}; stopping")
            return True

    def apply_mode(self, ctx: PauseContext) -> None:
        """After a stop: make sure the frames the new mode needs are traced, and nothing else."""
        host = self.host
        cur = ctx.frame
        frame = cur.frame if cur is not None and not ctx.post_mortem else None
        if host.mode is Mode.RETURN and ctx.kind is StopKind.RETURN and cur is ctx.frames[-1]:
            # `r` at a return stop: this frame is leaving; run to the return of its generated caller (pdb)
            caller = ctx.frames[-2] if len(ctx.frames) > 1 else None
            frame = caller.frame if caller is not None else None
            if frame is None:
                host.mode = Mode.CONTINUE
        if host.mode in (Mode.NEXT, Mode.UNTIL, Mode.RETURN) and frame is not None:
            host.target = frame
        if host.mode in (Mode.STEP, Mode.NEXT, Mode.UNTIL) and cur is not None and not ctx.post_mortem:
            live = cur.frame
            if live is not None and id(live.f_code) in host.generated:
                host._stepped_in.add(id(live.f_code))  # its next call stops at its entry (``reentry``)
        host.backend.new_run()
        if not ctx.post_mortem:
            # breakpoints set in frames that are already running (u; b IDX): trace those frames from here on
            for st in ctx.frames[:-1]:
                live = st.frame
                if live is not None and id(live.f_code) in host.breakpoints and not host.backend.is_traced(live):
                    self.trace_running(live)
        if host.verbose and cur is not None and not ctx.post_mortem and cur is ctx.frames[-1]:
            self.print_running(cur.frame.f_code, cur)  # the instruction of the stop runs next
        if (host.mode is not Mode.CONTINUE or host.verbose) and frame is not None and not host.backend.is_traced(frame):
            self.trace_running(frame)
        self.update_arming()

    def update_arming(self) -> None:
        host = self.host
        backend = host.backend
        if backend is None:
            return
        if host.mode is not Mode.CONTINUE or host._interrupt or host.verbose:
            if host.states:
                backend.arm()
            return
        # continue: keep local tracing only where a breakpoint may still be hit, and (3.11) the return of a
        # frame whose line this run has not printed yet
        for frame in list(host.states):
            if id(frame.f_code) in host.breakpoints or frame is host._resume_parent:
                continue
            if not backend.returns_untraced and id(frame.f_code) not in host._returns_reported and frame.f_trace:
                backend.return_only(frame)
                host.states[frame].depth = -1  # no instruction is followed from here on
                continue
            backend.untrace(frame)
            del host.states[frame]
        if not host.states:
            backend.disarm()
