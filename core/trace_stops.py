"""Trace stops: pausing the program inside Dynamo's symbolic tracing, and stepping it (worker thread).

`TraceStops` owns the session's `trace.TraceRecorder` and is its listener. It stops

* at the first user instruction of each frame Dynamo starts tracing (``--break-on trace``; the prologue of a
  code object and of a resume function is not the user's code),
* at each graph break, at the breaking instruction with its operands (``trace-break``),
* at a tracing error that ends the attempt, post-mortem with the translator still alive (``trace-error``:
  ``fullgraph=True`` at a graph break, a frame Dynamo gives up on),
* whenever Dynamo traces a line with a trace breakpoint (``tb FILE:LINE [if EXPR]``, any inline depth),
* and where a stepping command asked: ``s`` (the next traced instruction, into inlined calls), ``n`` (the next
  one at this depth or shallower: over an inlined call), ``r`` (out of the inlined function), ``until LINE``.

The replay after a restart (the re-trace up to the instruction that restarted it) has no stops unless
``trace replay on``. A trace stop pauses on the program's worker thread inside the compile: it holds torch's
compile lock, so another thread of the program that compiles waits for it; every command of the stop runs on
that same thread (the lock is re-entrant there), and the ones that would run or compile the user's code (``p``,
``!``, edits, recompile decisions) are refused at a trace stop (`dynadbg.core.trace_commands`).

Recorded steps can be browsed read-only with `back`/`forward` (`TraceStops.back`): those of the compile being
traced, every attempt, in order.
"""

from __future__ import annotations

import builtins
import dis
import enum
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from . import compat, trace_read
from .disasm import code_view
from .model import StopKind
from .state import PauseContext
from .trace import PROLOGUE_OPNAMES, Attempt, TraceRecorder
from .trace_model import (
    FakeTensorView,
    TraceAction,
    TraceBreak,
    TraceBreakpointView,
    TraceError,
    TraceExplanation,
    TraceGuard,
    TraceMark,
    TraceNode,
    TraceRewind,
    TraceSettings,
    TraceStopReason,
    TraceStopView,
)

if TYPE_CHECKING:
    from .protocol import Host

#: `--break-on` kinds that make trace stops
TRACE_KINDS = ("trace", "trace-break", "trace-error")
_TRACE_KIND_SET = frozenset(TRACE_KINDS)
#: Dynamo's attempt limit minus this margin: `rewind` is refused beyond it
REWIND_MARGIN = 10


class TraceError_(Exception):  # noqa: N801 - the trace stops' own usage error, not `trace_model.TraceError`
    """A trace request that cannot be done here; the message is for the user."""


class Mode(enum.Enum):
    STEP = "step"
    NEXT = "next"
    RETURN = "return"
    UNTIL = "until"
    CONTINUE = "continue"
    REWIND = "rewind"


@dataclass
class _Breakpoint:
    number: int
    filename: str
    line: int
    condition: str | None
    code: Any = None
    hits: int = 0

    def view(self) -> TraceBreakpointView:
        return TraceBreakpointView(self.number, self.filename, self.line, self.condition, self.hits)

    def matches(self, filename: str) -> bool:
        want = self.filename
        if os.path.isabs(want):
            return os.path.abspath(filename) == want
        return filename == want or filename.endswith(os.sep + want) or os.path.basename(filename) == want


@dataclass
class _Live:
    """The trace stop the program is paused at."""

    attempt: Attempt
    ordinal: int
    tx: Any
    reason: TraceStopReason
    brk: TraceBreak | None = None
    error: TraceError | None = None
    view: TraceStopView | None = None


class TraceStops:
    """The session's trace service: the recorder, the trace stops and their stepping state.

    Args:
        host: the session (`protocol.Host`: messages, quitting).
        pause: blocks the worker at a stop until a resuming command (the session's pause loop).
        on_worker: whether the calling thread is the program's worker (stops pause only there).
        break_on: the session's active stop kinds (read live).
        stop_seq: the session's stop counter (a stop elsewhere ends trace stepping).
    """

    def __init__(self, host: "Host", *, pause: Callable[[PauseContext, str], None], on_worker: Callable[[], bool],
                 break_on: set[str], stop_seq: Callable[[], int]) -> None:
        self.host = host
        self._pause = pause
        self._on_worker = on_worker
        self.break_on = break_on
        self._stop_seq = stop_seq
        self.recorder = TraceRecorder()
        self.recorder.listener = self
        self.breakpoints: list[_Breakpoint] = []
        self._bp_numbers = 0
        self.replay = False
        self.mode: Mode | None = None
        self.count = 0
        self.target_depth = 0
        self.target_code: Any = None
        self.until_line = 0
        self.rewind_to: tuple[str, int, int] | None = None    # (compile id, attempt, ordinal)
        self._rewind_pending: str | None = None
        self._seq = -1
        self.live: _Live | None = None
        #: the recorded step shown (`back`), an index into `_recorded()`; None at the live stop
        self.cursor: int | None = None
        self._prev_locals: dict[tuple[str, int], dict[str, int]] = {}

    # ---------------------------------------------------------------------------------------------------------
    # install
    # ---------------------------------------------------------------------------------------------------------

    def install(self) -> "TraceStops":
        self.recorder.install()
        if not self.recorder.available:
            self.host.message("trace stops disabled: "
                              + ("; ".join(self.recorder.disabled) or "this torch lacks Dynamo's trace hooks"))
        else:
            for msg in self.recorder.disabled:
                self.host.message(msg)
        self.host.teardown_hooks.append(self.uninstall)
        return self

    def uninstall(self) -> None:
        self.recorder.uninstall()

    @property
    def available(self) -> bool:
        return self.recorder.available

    # ---------------------------------------------------------------------------------------------------------
    # TraceListener (compiling thread)
    # ---------------------------------------------------------------------------------------------------------

    def _armed(self, kind: str) -> bool:
        return kind in self.break_on

    def wants_steps(self) -> bool:
        if self.mode is not None:
            if self._stop_seq() == self._seq:
                return True
            self.mode = None  # the program stopped elsewhere since (a run-time stop): that ends trace stepping
        return bool(self.breakpoints) or "trace" in self.break_on

    def wants_full(self) -> bool:
        return "trace-break" in self.break_on or "trace-error" in self.break_on

    def _can_pause(self) -> bool:
        return self._on_worker() and not self.host.quitting

    def on_step(self, attempt: Attempt, ordinal: int, tx: Any) -> None:
        if not self._can_pause():
            return
        self._check_divergence(attempt, ordinal)
        fi, ip, line, _n, _g = attempt.steps[ordinal]
        frame = attempt.frames[fi]
        first_user = (frame.depth == 0 and not attempt.start_seen
                      and self._first_user_instruction(attempt, tx, frame, ip))
        if first_user:
            attempt.start_seen = True
        reason = self._stepping_reason(attempt, ordinal)
        if attempt.replay(ordinal) and not self.replay and attempt.replay_skippable \
                and reason is not TraceStopReason.REWIND:
            return
        if reason is None and self.breakpoints and line is not None:
            reason = self._breakpoint_hit(attempt, ordinal, tx, frame, line)
        if reason is None and first_user and "trace" in self.break_on and (attempt.number == 0 or self.replay):
            reason = TraceStopReason.START
        if reason is not None:
            self._stop(_Live(attempt, ordinal, tx, reason))

    def on_break(self, attempt: Attempt, brk: TraceBreak, tx: Any) -> None:
        if not self._can_pause() or not (self._armed("trace-break") or self._stepping()):
            return
        self._stop(_Live(attempt, max(0, len(attempt.steps) - 1), tx, TraceStopReason.GRAPH_BREAK, brk=brk))

    def on_error(self, attempt: Attempt, error: TraceError, tx: Any) -> None:
        if not self._can_pause() or not (self._armed("trace-error") or self._stepping()):
            return
        self._stop(_Live(attempt, max(0, len(attempt.steps) - 1), tx, TraceStopReason.ERROR, error=error))

    def on_attempt_end(self, attempt: Attempt) -> None:
        for key in [k for k in self._prev_locals if k[0] == attempt.compile_id]:
            del self._prev_locals[key]

    def _stepping(self) -> bool:
        return self.mode is not None and self.mode is not Mode.CONTINUE and self._stop_seq() == self._seq

    # ---------------------------------------------------------------------------------------------------------
    # the stop policy
    # ---------------------------------------------------------------------------------------------------------

    @staticmethod
    def _check_divergence(attempt: Attempt, ordinal: int) -> None:
        """End the replay early when the re-trace no longer follows the previous attempt step for step."""
        prev = attempt.prev
        if attempt.replay_until is None or prev is None or ordinal >= attempt.replay_until:
            return
        if ordinal >= len(prev.steps) or not prev.frames:
            return
        pfi, pip, _l, _n, _g = prev.steps[ordinal]
        fi, ip, _l2, _n2, _g2 = attempt.steps[ordinal]
        if prev.frames[pfi].code is not attempt.frames[fi].code or pip != ip:
            attempt.replay_until = ordinal

    def _stepping_reason(self, attempt: Attempt, ordinal: int) -> TraceStopReason | None:
        mode = self.mode
        if mode is None or mode is Mode.CONTINUE:
            return None
        if mode is Mode.REWIND:
            target = self.rewind_to
            if target is not None and target[0] == attempt.compile_id and target[1] == attempt.number \
                    and ordinal >= target[2]:
                self.rewind_to = None
                return TraceStopReason.REWIND
            return None
        if attempt.replay(ordinal) and not self.replay and attempt.replay_skippable:
            return None
        fi, _ip, line, _n, _g = attempt.steps[ordinal]
        frame = attempt.frames[fi]
        depth = frame.depth
        if mode is Mode.STEP:
            self.count -= 1
            return TraceStopReason.STEP if self.count <= 0 else None
        if mode is Mode.NEXT:
            if depth <= self.target_depth:
                self.count -= 1
                return TraceStopReason.NEXT if self.count <= 0 else None
            return None
        if mode is Mode.RETURN:
            return TraceStopReason.RETURN if depth < self.target_depth else None
        if mode is Mode.UNTIL:
            if depth < self.target_depth:
                return TraceStopReason.UNTIL
            if depth == self.target_depth and frame.code is self.target_code and line is not None \
                    and line >= self.until_line:
                return TraceStopReason.UNTIL
        return None

    def _breakpoint_hit(self, attempt: Attempt, ordinal: int, tx: Any, frame: Any, line: int) -> TraceStopReason | None:
        fields = compat.translator_fields(tx)
        if fields.get("lineno") == line and ordinal > 0 and attempt.steps[ordinal - 1][0] == attempt.steps[ordinal][0]:
            return None  # not the start of the line: a breakpoint stops once per time Dynamo enters the line
        filename = frame.code.co_filename
        for bp in self.breakpoints:
            if bp.line != line or not bp.matches(filename):
                continue
            if bp.condition and not self._condition(bp, attempt, ordinal, tx):
                continue
            bp.hits += 1
            return TraceStopReason.BREAKPOINT
        return None

    def _condition(self, bp: _Breakpoint, attempt: Attempt, ordinal: int, tx: Any) -> bool:
        step = attempt.step(ordinal)
        ns: dict[str, Any] = {"depth": step.depth, "attempt": step.attempt, "opname": step.opname, "line": step.line,
                              "compile_id": step.compile_id, "code_name": step.code_name}
        # the symbolic locals that are constants Dynamo already knows, as their values; nothing else is exposed
        # (a fake tensor or a tracker touched by the expression could change the compile)
        loc = compat.translator_fields(tx).get("symbolic_locals") or {}
        for name, vt in loc.items():
            summary = trace_read.value_summary(vt)
            if summary.kind.value == "constant":
                ns.setdefault(name, vars(vt).get("value"))
            elif summary.kind.value == "tensor":
                ns.setdefault(name, _ShapeOnly(summary.shape, summary.dtype, summary.device))
        try:
            with compat.dynamo_off():
                return bool(eval(bp.code, {"__builtins__": _SAFE_BUILTINS}, ns))  # noqa: S307 - the user's own
        except Exception as exc:  # noqa: BLE001 - like pdb: an error in the condition stops
            self.host.message(f"trace breakpoint {bp.number}: condition raised {type(exc).__name__}: {exc}; "
                              "stopping")
            return True

    @staticmethod
    def _first_user_instruction(attempt: Attempt, tx: Any, frame: Any, ip: int) -> bool:
        ins = frame.instructions[ip]
        if ins.opname in PROLOGUE_OPNAMES or compat.resume_prologue(tx):
            return False
        if ins.opname == "POP_TOP" and ip > 0 and frame.instructions[ip - 1].opname == "RETURN_GENERATOR":
            return False
        return True

    def _stop(self, live: _Live) -> None:
        self.mode = None
        self.cursor = None
        self.live = live
        try:
            live.view = self.build_view(live)
            kind = {TraceStopReason.GRAPH_BREAK: StopKind.TRACE_BREAK,
                    TraceStopReason.ERROR: StopKind.TRACE_ERROR}.get(live.reason, StopKind.TRACE)
            ctx = PauseContext(kind, [], 0)
            ctx.extra["trace"] = live.view
            from .format.trace import trace_stop_message

            self._pause(ctx, trace_stop_message(live.view))
        finally:
            self.live = None
            self.cursor = None
            self._seq = self._stop_seq()
            self.recorder.refresh()  # the commands of the stop may have armed or disarmed trace stops
        reason, self._rewind_pending = self._rewind_pending, None
        if reason is not None:
            # a restart raised from the step being traced: Dynamo's attempt loop traces the frame again
            exc = compat.make_restart(reason)
            exc.dynadbg_rewind = True  # type: ignore[attr-defined]  # the step hook lets it through
            exc.dynadbg_at = live.ordinal  # type: ignore[attr-defined]  # the re-trace repeats up to here
            raise exc

    # ---------------------------------------------------------------------------------------------------------
    # views
    # ---------------------------------------------------------------------------------------------------------

    def build_view(self, live: _Live) -> TraceStopView:
        att, ordinal, tx = live.attempt, live.ordinal, live.tx
        if live.brk is not None and live.brk.step is not None:
            ordinal = live.brk.step.ordinal
        step = att.step(ordinal)
        detail = att.details.get(ordinal)
        frame = att.frames[att.steps[ordinal][0]]
        stack = detail.stack if detail is not None else None
        locals_ = detail.locals if detail is not None else None
        changed: tuple[str, ...] = ()
        refs = att.live_refs
        if detail is not None and refs is not None and refs[0] == ordinal:
            key = (att.compile_id, id(frame.code))
            now = {name: id(vt) for name, vt in refs[2].items()}
            before = self._prev_locals.get(key)
            if before is not None:
                changed = tuple(name for name in now if before.get(name) != now[name])
            self._prev_locals[key] = now
        output = compat.output_graph_of(tx)
        prev = att.details.get(ordinal - 1) if ordinal > 0 else None
        nodes: tuple[TraceNode, ...] = ()
        guards: tuple[TraceGuard, ...] = ()
        shape: tuple[str, ...] = ()
        nodes_total, guards_total = step.nodes, step.guards
        if output is not None:
            try:
                nodes, nodes_total = trace_read.graph_nodes(output, set(prev.new_nodes) if prev is not None else set())
                guards, guards_total = trace_read.guards_list(output, len(prev.new_guards) if prev is not None else 0)
                shape = tuple(compat.shape_guards_text(output))
            except Exception:  # noqa: BLE001 - an unreadable graph shows counts only
                nodes, guards = (), ()
        brk = live.brk or self._latest_break(att)
        return TraceStopView(
            reason=live.reason, step=step, chain=att.chain(ordinal), stack=stack, locals=locals_, changed=changed,
            code=self._code_view(frame.code), user_index=self._user_index(frame.code, step.user_offset),
            source_line=trace_read.source_line(step.filename, step.line), nodes=nodes, guards=guards,
            shape_guards=shape, nodes_total=nodes_total, guards_total=guards_total, brk=brk, error=live.error,
            attempts=tuple(a.view() for a in self.recorder.attempts_of(att.compile_id)), holds_compile_lock=True,
            live=True, mark=None, record="full" if detail is not None else "light", replay_on=self.replay)

    def _latest_break(self, att: Attempt) -> TraceBreak | None:
        for a in reversed(self.recorder.attempts_of(att.compile_id)):
            if a.number <= att.number and a.breaks:
                return a.breaks[-1]
        return None

    @staticmethod
    def _code_view(code: Any) -> Any:
        try:
            return code_view(code, generated=False)
        except Exception:  # noqa: BLE001
            return None

    @staticmethod
    def _user_index(code: Any, offset: int | None) -> int | None:
        if offset is None:
            return None
        try:
            for i, ins in enumerate(dis.get_instructions(code)):
                if ins.offset == offset:
                    return i
        except Exception:  # noqa: BLE001
            return None
        return None

    def _recorded(self) -> list[tuple[Attempt, int]]:
        """Every kept step of the compile being traced, attempt by attempt, up to the live one."""
        live = self._need_live()
        out: list[tuple[Attempt, int]] = []
        for att in self.recorder.attempts_of(live.attempt.compile_id):
            n = len(att.steps)
            if att is live.attempt:
                n = (live.view.step.ordinal + 1) if live.view is not None else live.ordinal + 1
            out.extend((att, i) for i in range(min(n, len(att.steps))))
            if att is live.attempt:
                break
        return out

    def _recorded_view(self, index: int) -> TraceStopView:
        steps = self._recorded()
        att, ordinal = steps[index]
        live = self._need_live()
        step = att.step(ordinal)
        detail = att.details.get(ordinal)
        prev = att.details.get(ordinal - 1) if ordinal > 0 else None
        frame = att.frames[att.steps[ordinal][0]]
        nodes: tuple[TraceNode, ...] = ()
        output = compat.output_graph_of(live.tx)
        if att is live.attempt and output is not None:
            try:
                all_nodes, _total = trace_read.graph_nodes(output, set(prev.new_nodes) if prev is not None else set())
                nodes = all_nodes[: step.nodes]
            except Exception:  # noqa: BLE001
                nodes = ()
        guards = tuple(prev.new_guards) if prev is not None else ()
        return TraceStopView(
            reason=live.reason, step=step, chain=att.chain(ordinal), stack=detail.stack if detail else None,
            locals=detail.locals if detail else None, changed=(), code=self._code_view(frame.code),
            user_index=self._user_index(frame.code, step.user_offset),
            source_line=trace_read.source_line(step.filename, step.line), nodes=nodes, guards=guards,
            shape_guards=(), nodes_total=step.nodes, guards_total=step.guards, brk=None, error=None,
            attempts=live.view.attempts if live.view is not None else (), holds_compile_lock=True, live=False,
            mark=TraceMark(index + 1, len(steps)), record="full" if detail is not None else "light",
            replay_on=self.replay)

    # ---------------------------------------------------------------------------------------------------------
    # requests (worker thread, at a trace stop) — the engine methods of `trace_engine` call these
    # ---------------------------------------------------------------------------------------------------------

    def _need_live(self) -> _Live:
        live = self.live
        if live is None:
            raise TraceError_("not at a trace stop (`--break-on trace`, `tb FILE:LINE`)")
        return live

    def view(self) -> TraceStopView:
        """The view shown now: the live stop's, or the recorded step `back` shows."""
        live = self._need_live()
        if self.cursor is not None:
            return self._recorded_view(self.cursor)
        assert live.view is not None
        return live.view

    def resume(self, mode: Mode, count: int = 1, line: int | None = None) -> bool:
        """Set the stepping mode for when the program goes on; whether a recorded step was shown (the trace goes
        on from the present)."""
        live = self._need_live()
        left_history = self.cursor is not None
        self.cursor = None
        if mode in (Mode.STEP, Mode.NEXT) and count < 1:
            raise TraceError_("count must be at least 1")
        view = live.view
        assert view is not None
        step = view.step
        self.count = count
        self.target_depth = step.depth
        frame = live.attempt.frames[live.attempt.steps[step.ordinal][0]] if live.attempt.steps else None
        self.target_code = frame.code if frame is not None else None
        if mode is Mode.UNTIL:
            if line is None:
                line = (step.line or 0) + 1
            self.until_line = line
        self.mode = mode
        return left_history

    def rewind(self, count: int) -> TraceRewind:
        """`rewind N`: re-trace the frame from its start and stop N instructions before this one."""
        live = self._need_live()
        if count < 1:
            raise TraceError_("rewind: count must be at least 1")
        if live.reason in (TraceStopReason.GRAPH_BREAK, TraceStopReason.ERROR):
            raise TraceError_("rewind works at a trace step, not at a graph break or error stop (Dynamo has already "
                              "unwound the instruction)")
        att = live.attempt
        if att.number >= compat.TRACE_ATTEMPT_LIMIT - REWIND_MARGIN:
            raise TraceError_(f"rewind refused: this compile is at attempt {att.number}, near Dynamo's limit of "
                              f"{compat.TRACE_ATTEMPT_LIMIT} (past it Dynamo gives up on the frame)")
        target = live.ordinal - count
        if target < 0:
            raise TraceError_(f"rewind: only {live.ordinal} instructions were traced before this one in this attempt")
        self.cursor = None
        self.rewind_to = (att.compile_id, att.number + 1, target)
        self.mode = Mode.REWIND
        self._rewind_pending = f"dynadbg rewind {count}"
        live.attempt.rewound = True
        return TraceRewind(att.code.co_name, att.number + 1, count)

    def back(self, count: int) -> TraceStopView:
        live = self._need_live()
        steps = self._recorded()
        here = self.cursor if self.cursor is not None else self._live_index(steps, live)
        target = here - count
        if count < 1:
            raise TraceError_("back: count must be at least 1")
        if target < 0:
            raise TraceError_(f"back: only {here} recorded step(s) before this one")
        self.cursor = target
        return self._recorded_view(target)

    def forward(self, count: int) -> TraceStopView:
        live = self._need_live()
        if count < 1:
            raise TraceError_("forward: count must be at least 1")
        if self.cursor is None:
            raise TraceError_("already at the present (the live trace stop)")
        steps = self._recorded()
        present = self._live_index(steps, live)
        target = self.cursor + count
        if target >= present:
            self.cursor = None
            return self.view()
        self.cursor = target
        return self._recorded_view(target)

    def present(self) -> TraceStopView:
        self._need_live()
        self.cursor = None
        return self.view()

    @staticmethod
    def _live_index(steps: list[tuple[Attempt, int]], live: _Live) -> int:
        ordinal = live.view.step.ordinal if live.view is not None else live.ordinal
        for i in range(len(steps) - 1, -1, -1):
            if steps[i][0] is live.attempt and steps[i][1] == ordinal:
                return i
        return len(steps) - 1

    def fake(self, name: str) -> FakeTensorView:
        """The fake value of a symbolic local or stack slot (``stack[i]``, ``TOS``) at the live stop."""
        live = self._need_live()
        if self.cursor is not None:
            raise TraceError_("fake reads the live translator; `present` first (a recorded step keeps summaries only)")
        view = live.view
        assert view is not None
        refs = getattr(live.attempt, "live_refs", None)
        if refs is None or refs[0] != view.step.ordinal:
            raise TraceError_("the trackers of this step are not kept (it was recorded light)")
        _ordinal, stack, loc = refs
        locals_ = tuple(loc.items())
        key = name.strip()
        if key in ("TOS", "tos"):
            key = f"stack[{len(stack) - 1}]"
        if key.startswith("stack[") and key.endswith("]"):
            try:
                i = int(key[6:-1])
            except ValueError:
                raise TraceError_(f"fake: {name!r}: the slot must be an integer") from None
            if not -len(stack) <= i < len(stack):
                raise TraceError_(f"fake: the symbolic stack has {len(stack)} slots")
            return trace_read.fake_detail(key, stack[i])
        for local, vt in locals_:
            if local == key:
                return trace_read.fake_detail(key, vt)
        names = ", ".join(n for n, _vt in locals_) or "none"
        raise TraceError_(f"fake: {name!r} is not a symbolic local of {view.step.code_name} (locals: {names}; or "
                          "stack[i], TOS)")

    def explain(self) -> TraceExplanation:
        view = self.view()
        step = view.step
        stack = view.stack or ()
        action = action_of(step.opname)
        pops = _user_pops(self, view)
        if pops is None:
            pops = _pops(step.opname, _arg_of(self, view))
        operands = tuple(stack[-pops:]) if pops and len(stack) >= pops else tuple(stack[-pops:] if pops else ())
        callee = None
        if action is TraceAction.CALL and step.opname in ("CALL", "PRECALL", "CALL_FUNCTION_EX"):
            arg = _arg_of(self, view) or 0
            n = arg + 2
            if len(stack) >= n:
                lower, upper = stack[-n], stack[-n + 1]
                callee = lower if lower.kind.value != "null" else upper
        live = self.live
        fullgraph = compat.fullgraph_of(live.tx) if live is not None else False
        return TraceExplanation(step, action, operands, callee, step.depth, fullgraph)

    # ---------------------------------------------------------------------------------------------------------
    # breakpoints and settings (any thread)
    # ---------------------------------------------------------------------------------------------------------

    def add_breakpoint(self, filename: str, line: int, condition: str | None) -> TraceBreakpointView:
        code = None
        if condition:
            try:
                code = compile(condition, "<trace condition>", "eval")
            except SyntaxError as exc:
                raise TraceError_(f"condition does not compile: {exc.msg}") from None
        if line < 1:
            raise TraceError_(f"line must be 1 or more, not {line}")
        self._bp_numbers += 1
        bp = _Breakpoint(self._bp_numbers, filename, line, condition, code)
        self.breakpoints.append(bp)
        self.recorder.refresh()
        return bp.view()

    def clear_breakpoints(self, number: int | None = None) -> tuple[TraceBreakpointView, ...]:
        if number is None:
            cleared, self.breakpoints = self.breakpoints, []
            self.recorder.refresh()
            return tuple(bp.view() for bp in cleared)
        for bp in self.breakpoints:
            if bp.number == number:
                self.breakpoints.remove(bp)
                self.recorder.refresh()
                return (bp.view(),)
        raise TraceError_(f"no trace breakpoint {number}")

    def detach(self) -> None:
        """`detach`: no more trace stops (breakpoints cleared, stepping off); recording goes on, light."""
        self.breakpoints = []
        self.mode = None
        self.recorder.full = False  # (refreshes the recorder's level)

    def settings(self, record: str | None = None, replay: bool | None = None, limit: int | None = None,
                 max_bytes: int | None = None) -> TraceSettings:
        if record is not None:
            if record not in ("light", "full"):
                raise TraceError_(f"trace record: 'light' or 'full', not {record!r}")
            self.recorder.full = record == "full"
        if replay is not None:
            self.replay = replay
        if limit is not None or max_bytes is not None:
            if (limit is not None and limit < 0) or (max_bytes is not None and max_bytes < 0):
                raise TraceError_("trace bounds must be 0 or more")
            self.recorder.set_bounds(limit, max_bytes)
        rec = self.recorder
        armed = tuple(k for k in TRACE_KINDS if k in self.break_on)
        full = rec.full or bool(armed) or bool(self.breakpoints)
        return TraceSettings(rec.available, ("full" if full else "light") if rec.available else "off", rec.full,
                             self.replay, rec.limit, rec.max_bytes, rec.total_steps, rec.nbytes, rec.evicted_steps,
                             tuple(bp.view() for bp in self.breakpoints), armed, tuple(rec.disabled))


class _ShapeOnly:
    """A tensor local in a trace breakpoint's condition: its fake value's metadata as text, nothing to compute
    on (``x.shape``, ``x.ndim``, ``x.dtype``)."""

    __slots__ = ("shape", "dtype", "device", "ndim")

    def __init__(self, shape: tuple[str, ...] | None, dtype: str | None, device: str | None) -> None:
        self.shape = tuple(int(s) if s.isdigit() else s for s in shape) if shape is not None else None
        self.ndim = len(shape) if shape is not None else None
        self.dtype = dtype
        self.device = device

    def __repr__(self) -> str:
        return f"<fake tensor shape={self.shape} dtype={self.dtype}>"


_SAFE_BUILTINS = {name: getattr(builtins, name)
                  for name in ("len", "min", "max", "abs", "int", "str", "bool", "isinstance", "tuple", "any", "all")}


# --------------------------------------------------------------------------------------------------------------
# explain: what Dynamo does with an opname (data; the sentences are in format.trace)
# --------------------------------------------------------------------------------------------------------------

_ACTIONS: tuple[tuple[str, TraceAction], ...] = (
    ("LOAD_FAST", TraceAction.LOAD_LOCAL), ("LOAD_DEREF", TraceAction.LOAD_LOCAL),
    ("LOAD_CLOSURE", TraceAction.LOAD_LOCAL), ("STORE_FAST", TraceAction.STORE_LOCAL),
    ("STORE_DEREF", TraceAction.STORE_LOCAL), ("DELETE_FAST", TraceAction.STORE_LOCAL),
    ("LOAD_GLOBAL", TraceAction.LOAD_GLOBAL), ("LOAD_NAME", TraceAction.LOAD_GLOBAL),
    ("LOAD_CONST", TraceAction.LOAD_CONST), ("RETURN_CONST", TraceAction.RETURN),
    ("LOAD_ATTR", TraceAction.LOAD_ATTR), ("LOAD_METHOD", TraceAction.LOAD_ATTR),
    ("LOAD_SUPER_ATTR", TraceAction.LOAD_ATTR), ("STORE_ATTR", TraceAction.STORE_ATTR),
    ("PRECALL", TraceAction.CALL), ("CALL", TraceAction.CALL), ("KW_NAMES", TraceAction.CALL),
    ("BINARY_OP", TraceAction.BINARY), ("COMPARE_OP", TraceAction.COMPARE), ("IS_OP", TraceAction.COMPARE),
    ("CONTAINS_OP", TraceAction.COMPARE), ("UNARY_", TraceAction.UNARY), ("TO_BOOL", TraceAction.UNARY),
    ("BINARY_SUBSCR", TraceAction.SUBSCRIPT), ("BINARY_SLICE", TraceAction.SUBSCRIPT),
    ("STORE_SUBSCR", TraceAction.SUBSCRIPT), ("BUILD_", TraceAction.BUILD), ("LIST_", TraceAction.BUILD),
    ("DICT_", TraceAction.BUILD), ("UNPACK_", TraceAction.UNPACK), ("POP_JUMP", TraceAction.BRANCH),
    ("JUMP_IF", TraceAction.BRANCH), ("JUMP", TraceAction.JUMP), ("GET_ITER", TraceAction.ITER),
    ("FOR_ITER", TraceAction.ITER), ("END_FOR", TraceAction.ITER), ("RETURN_VALUE", TraceAction.RETURN),
    ("YIELD_VALUE", TraceAction.YIELD), ("RETURN_GENERATOR", TraceAction.YIELD), ("SEND", TraceAction.YIELD),
    ("POP_TOP", TraceAction.STACK), ("PUSH_NULL", TraceAction.STACK), ("COPY", TraceAction.STACK),
    ("SWAP", TraceAction.STACK), ("NOP", TraceAction.STACK), ("RESUME", TraceAction.PROLOGUE),
    ("COPY_FREE_VARS", TraceAction.PROLOGUE), ("MAKE_CELL", TraceAction.PROLOGUE),
    ("MAKE_FUNCTION", TraceAction.BUILD), ("BEFORE_WITH", TraceAction.CONTEXT), ("SETUP_", TraceAction.CONTEXT),
    ("WITH_", TraceAction.CONTEXT), ("POP_EXCEPT", TraceAction.CONTEXT), ("PUSH_EXC_INFO", TraceAction.CONTEXT),
)


def action_of(opname: str) -> TraceAction:
    """The kind of symbolic work Dynamo does for `opname` (first matching prefix of `_ACTIONS`)."""
    for prefix, action in _ACTIONS:
        if opname == prefix or (prefix.endswith("_") and opname.startswith(prefix)) or opname.startswith(prefix):
            return action
    return TraceAction.OTHER


def _arg_of(stops: TraceStops, view: TraceStopView) -> int | None:
    live = stops.live
    if live is None:
        return None
    att = live.attempt
    try:
        fi, ip, *_rest = att.steps[view.step.ordinal]
        arg: int | None = att.frames[fi].instructions[ip].arg  # Dynamo's `Instruction.arg`
        return arg
    except Exception:  # noqa: BLE001
        return None


def _user_pops(stops: TraceStops, view: TraceStopView) -> int | None:
    """The slots the user's own instruction pops on this Python (`flow.pops_pushes`, the model the run-time
    stack views use), when Dynamo's instruction is the user's (not a rewrite or an added one)."""
    live = stops.live
    if live is None or view.user_index is None or view.step.rewrite.value != "same":
        return None
    from . import flow

    try:
        fi = live.attempt.steps[view.step.ordinal][0]
        ops = flow.ops_of(live.attempt.frames[fi].code)
        return flow.pops_pushes(ops[view.user_index])[0]
    except Exception:  # noqa: BLE001 - the table below then
        return None


def _pops(opname: str, arg: int | None) -> int:
    """How many value-stack slots the instruction consumes (what `explain` lists as its operands)."""
    a = arg or 0
    if opname in ("CALL", "PRECALL"):
        return a + 2
    if opname == "CALL_FUNCTION_EX":
        return 3 + (a & 1)
    if opname in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return a
    if opname == "BUILD_MAP":
        return 2 * a
    if opname == "BUILD_CONST_KEY_MAP":
        return a + 1
    if opname in ("BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SUBSCR", "STORE_ATTR", "LIST_APPEND",
                  "LIST_EXTEND", "DICT_UPDATE", "DICT_MERGE"):
        return 2
    if opname in ("STORE_SUBSCR", "BINARY_SLICE"):
        return 3
    if opname.startswith(("LOAD_CONST", "LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLOSURE", "PUSH_NULL",
                          "LOAD_NAME", "RESUME", "NOP", "MAKE_CELL", "COPY_FREE_VARS", "JUMP_FORWARD",
                          "JUMP_BACKWARD", "KW_NAMES", "RETURN_CONST")):
        return 0
    return 1


def with_reason(view: TraceStopView, reason: TraceStopReason) -> TraceStopView:
    return replace(view, reason=reason)
