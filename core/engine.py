"""The typed engine methods of `Session` (`dynadbg.core.protocol.Engine`), run on the program's worker thread.

`EngineMethods` is a base class of `Session`: the stop, control, breakpoints, frames and history. The other
`Engine` methods live in groups composed in `_compose` (`engine_values`, `engine_code`, `engine_queries`,
`engine_decisions`, `engine_edits`), named here with `engine_base.delegate`.

Each public method is wrapped by `engine_method`: called on the
worker thread it runs directly; called from another thread while the program is paused, it is queued to the worker
and the caller blocks until it is done; while the program runs it returns ``EngineError(kind=ErrorKind.NOT_PAUSED)``
unless it is marked ``anytime``. Inside, a method refuses with `refuse` (an `EngineError` value comes back, and
nothing has changed). Control methods set the session's pending `Resumed`, which ends the pause loop after the
call returns.
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from . import compat
from .disasm import code_view
from .engine_base import delegate, engine_method, refuse
from .engine_decisions import Decisions
from .engine_queries import CompileQueries
from .engine_edits import Edits
from .engine_code import CodeQueries
from .engine_values import Values
from .model import (
    BREAK_ON_KINDS,
    BreakpointView,
    EngineError,
    ErrorKind,
    FrameView,
    HistoryInfo,
    HistoryMark,
    HistoryView,
    GeneratedInfo,
    ResumeAction,
    Resumed,
    Stop,
    StopKind,
)
from . import history as _history
from .state import Breakpoint, Mode, PauseContext
from .values import NULL_SLOT

if TYPE_CHECKING:
    from .guard_edits import GuardEditor
    from .patches import PatchManager
    from .decisions import GuardDropper
    from .recompile import RecompileLog
    from .stack import FrameState


class EngineMethods:
    """The `Engine` methods of `Session` (see `dynadbg.core.protocol.Engine` for each one's contract)."""

    # provided by Session
    ctx: PauseContext | None
    mode: Mode
    count: int
    until_index: int
    break_on: set[str]
    breakpoints: dict[int, dict[int, Breakpoint]]
    capture: Any
    guard_costs: Any
    recompiles: "RecompileLog"
    stop_seq: int
    _quitting: bool
    _resumed: Resumed | None
    _quiet: set[int]
    _user_vars: dict[str, Any]
    verbose: bool
    generated: dict[int, CodeType]
    history: "_history.History"
    history_cursor: "_history.HistoryCursor"
    compile_hooks: list[Callable[[Any], None]]

    if TYPE_CHECKING:  # Session's own methods; declared for the checker only, so nothing here shadows them
        def _on_worker(self, call: Callable[[], Any], anytime: bool) -> Any: ...  # noqa: D102 - Session's
        def generated_info(self, code: CodeType) -> GeneratedInfo | None: ...  # noqa: D102
        def add_breakpoint(self, code: CodeType, index: int, condition: str | None) -> Breakpoint: ...  # noqa: D102
        def clear_breakpoint(self, code: CodeType, index: int) -> Breakpoint | None: ...  # noqa: D102
        def message(self, text: str) -> None: ...  # noqa: D102
        @property
        def patch_manager(self) -> "PatchManager": ...  # noqa: D102
        @property
        def guard_editor(self) -> "GuardEditor": ...  # noqa: D102
        @property
        def guard_dropper(self) -> "GuardDropper": ...  # noqa: D102

    _decisions: Decisions
    _compile_queries: CompileQueries
    _edits: Edits
    _code_queries: CodeQueries
    _values: Values

    def _compose(self) -> None:
        """Make the method groups this facade names with `delegate` (once, from `Session.__init__`)."""
        self._decisions = Decisions(self)
        self._compile_queries = CompileQueries(self, self._decisions)
        self._edits = Edits(self)
        self._code_queries = CodeQueries(self)
        self._values = Values(self)

    # ==========================================================================================================
    # helpers (worker thread)
    # ==========================================================================================================

    def _paused(self) -> PauseContext:
        ctx = self.ctx
        if ctx is None:
            refuse("the program is not paused", ErrorKind.NOT_PAUSED)
        return ctx

    def _need_frame(self) -> "FrameState":
        ctx = self._paused()
        st = ctx.frame
        if st is None or st.frame is None:
            refuse(f"no frame at a {ctx.kind.value} stop", ErrorKind.NOT_HERE)
        return st

    def _current_code(self) -> CodeType | None:
        ctx = self._paused()
        if ctx.frame is not None:
            return ctx.frame.frame.f_code
        if ctx.compile_event is not None:
            return ctx.compile_event.code
        return None

    def _original(self) -> CodeType | None:
        ctx = self._paused()
        if ctx.miss_event is not None:
            return ctx.miss_event.code
        if ctx.compile_event is not None:
            return ctx.compile_event.original
        code = self._current_code()
        info = self.generated_info(code) if code is not None else None
        return info.original if info else None

    def _selected_view(self) -> FrameView | None:
        stop = self._paused().stop
        return stop.selected_frame if stop is not None else None

    def eval_namespace(self, ctx: PauseContext | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """(globals, locals) of the selected frame, with ``__stack__`` (the value stack, bottom first); at a
        recompile stop the inputs of the call that missed. Refuses where there is no frame."""
        ctx = ctx or self._paused()
        fallback = ctx.extra.get("fallback")
        if ctx.frame is None and fallback is not None:
            # a graph break that runs its frame eagerly: the frame has not started, evaluate over its inputs
            return {"__builtins__": builtins}, {**self._user_vars, **fallback.f_locals, "__stack__": []}
        if ctx.frame is None and ctx.miss_event is not None:
            # a recompile stop has no frame yet: evaluate over the inputs of the call that missed; the frame has
            # not started, so its value stack is empty
            return {"__builtins__": builtins}, {**self._user_vars, **ctx.miss_event.f_locals, "__stack__": []}
        st = ctx.frame
        if st is None or st.frame is None:
            refuse(f"no frame at a {ctx.kind.value} stop", ErrorKind.NOT_HERE)
        frame = st.frame
        ns = dict(frame.f_locals)
        current = st is ctx.frames[-1]
        stack = st.exact_stack() if current and not ctx.post_mortem else None
        if stack is None:
            if ctx.post_mortem or st.depth <= 0:
                stack = []
            else:
                stack = st.tracked_stack() if current else st.safe_stack()
        if ctx.kind is StopKind.RETURN and current:
            # at a return stop the interpreter has popped the value already: it is the whole stack now
            stack = [ctx.return_value]
        ns["__stack__"] = [NULL_SLOT if v is compat.NULL_STACK_VALUE else v for v in stack]
        # the user's own variables (`!tmp = 42`) stay visible at later stops; the frame's names win
        return frame.f_globals, {**self._user_vars, **ns}

    def _rebuild_stop(self) -> None:
        """Rebuild the frozen snapshot after a change to the paused program (a local set, code edited)."""
        from .snapshot import build_stop

        ctx = self._paused()
        if ctx.stop is not None:
            ctx.stop = build_stop(self, ctx, ctx.stop.message)

    def _refresh_stop(self, **changes: Any) -> None:
        ctx = self._paused()
        if ctx.stop is not None:
            ctx.stop = replace(ctx.stop, **changes)

    def _refresh_breakpoints(self) -> None:
        # the stop snapshot is immutable: rebuild it so front ends see the new gutter
        ctx = self._paused()
        if ctx.stop is None or not ctx.stop.frames:
            return
        frames = []
        for fv in ctx.stop.frames:
            code_bps = self.breakpoints.get(fv.code.key, {})
            frames.append(replace(fv, breakpoints=tuple(sorted(code_bps))))
        ctx.stop = replace(ctx.stop, frames=tuple(frames))

    def _resume(self, action: ResumeAction, mode: Mode, count: int = 1) -> Resumed:
        ctx = self._paused()
        self.mode, self.count = mode, count
        default = ctx.kind is StopKind.RECOMPILE and ctx.decision is None
        if default:
            ctx.decision = "recompile"
        result = Resumed(action, left_history=self._leave_history(), default_recompile=default)
        self._resumed = result
        return result

    def _select_target(self) -> None:
        # stepping commands work on the selected frame (after u/d), like pdb
        ctx = self._paused()
        if ctx.frames and ctx.selected != len(ctx.frames) - 1:
            ctx.frames = ctx.frames[: ctx.selected + 1]

    # ==========================================================================================================
    # the stop
    # ==========================================================================================================

    @engine_method()
    def current_stop(self) -> Stop | EngineError:
        stop = self._paused().stop
        if stop is None:
            refuse("the stop is still being built", ErrorKind.NOT_PAUSED)
        shown = self._history_shown(stop)
        return shown.stop if shown is not None else stop

    # ==========================================================================================================
    # history (stepping back: dynadbg.core.history)
    # ==========================================================================================================

    def _history_shown(self, present: Stop) -> HistoryView | None:
        """The recorded entry `back` shows now, or None at the present."""
        cursor = self.history_cursor
        mark = cursor.mark(present.seq)
        if mark is None:
            return None
        entry = self.history.entry(mark.position)
        return HistoryView(mark, _history.history_stop(entry, mark), entry)

    def _leave_history(self) -> bool:
        """Back to the present before the program goes on; True when history was shown."""
        cursor = self.history_cursor
        if cursor.position is None:
            return False
        cursor.position = None
        return True

    def _present_stop(self) -> Stop:
        stop = self._paused().stop
        if stop is None:
            refuse("the stop is still being built", ErrorKind.NOT_PAUSED)
        return stop

    def _history_view(self, present: Stop) -> HistoryView:
        shown = self._history_shown(present)
        if shown is not None:
            return shown
        n = self.history_cursor.present_number(present.seq)
        return HistoryView(HistoryMark(n, len(self.history), n), present, None)

    @engine_method()
    def back(self, count: int = 1) -> HistoryView | EngineError:
        present = self._present_stop()
        try:
            self.history_cursor.back(count, present.seq)
        except _history.HistoryError as exc:
            refuse(str(exc))
        return self._history_view(present)

    @engine_method()
    def forward(self, count: int = 1) -> HistoryView | EngineError:
        present = self._present_stop()
        try:
            self.history_cursor.forward(count, present.seq)
        except _history.HistoryError as exc:
            refuse(str(exc))
        return self._history_view(present)

    @engine_method()
    def present(self) -> Stop | EngineError:
        self._leave_history()
        return self._present_stop()

    @engine_method(anytime=True)
    def history_position(self) -> HistoryMark | None:
        ctx = self.ctx
        if ctx is None or ctx.stop is None:
            return None
        return self.history_cursor.mark(ctx.stop.seq)

    @engine_method(anytime=True)
    def history_info(self, recent: int = 10) -> HistoryInfo:
        return self.history.info(self.history_position(), max(0, recent))

    @engine_method(anytime=True)
    def set_history_bounds(self, limit: int | None = None, max_bytes: int | None = None,
                           every: bool | None = None) -> HistoryInfo | EngineError:
        if self.history_cursor.position is not None:
            refuse("history is shown: `forward` to the present before changing its bounds")
        try:
            self.history.set_bounds(limit, max_bytes, every)
        except _history.HistoryError as exc:
            refuse(str(exc))
        return self.history.info(None, 0)

    def _same_code_as_shown(self, st: "FrameState", what: str) -> None:
        """Refuse `what` (an index into the code shown) when the recorded stop shown is in another code object
        than the live frame: the index would mean another instruction there."""
        present = self._paused().stop
        shown = self._history_shown(present) if present is not None else None
        fv = shown.stop.selected_frame if shown is not None else None
        if fv is not None and fv.code.key != id(st.frame.f_code):
            refuse(f"{what}: the index is of the recorded stop's code ({fv.code.name}), not the live frame's "
                   f"({st.frame.f_code.co_name}); `present` first")

    def _live_only(self, what: str) -> None:
        """Refuse `what` while a recorded stop is shown: it reads the live frame, not the recorded one."""
        mark = self.history_cursor.position
        if mark is not None:
            refuse(f"{what} reads the live frame; history {mark} of {len(self.history)} is a recorded stop "
                   f"(`forward` to the present first)", ErrorKind.NOT_HERE)

    # ==========================================================================================================
    # control
    # ==========================================================================================================

    @engine_method()
    def set_step(self, count: int = 1) -> Resumed | EngineError:
        if count < 1:
            refuse("count must be at least 1")
        return self._resume(ResumeAction.STEP, Mode.STEP, count)

    @engine_method()
    def set_next(self, count: int = 1) -> Resumed | EngineError:
        if count < 1:
            refuse("count must be at least 1")
        if self._paused().frame is None:
            return self._resume(ResumeAction.NEXT, Mode.STEP, 1)
        self._select_target()
        return self._resume(ResumeAction.NEXT, Mode.NEXT, count)

    @engine_method()
    def set_return(self) -> Resumed | EngineError:
        self._need_frame()
        self._select_target()
        return self._resume(ResumeAction.RETURN, Mode.RETURN)

    @engine_method()
    def set_continue(self) -> Resumed | EngineError:
        return self._resume(ResumeAction.CONTINUE, Mode.CONTINUE)

    @engine_method()
    def set_until(self, index: int | None = None) -> Resumed | EngineError:
        st = self._need_frame()
        if index is not None:
            self._same_code_as_shown(st, "until IDX")
        idx = st.index + 1 if index is None else index
        n = len(st.table.instructions)
        if not 0 <= idx < n:
            refuse(f"index {idx} is outside 0..{n - 1}")
        if index is not None and idx <= st.index:
            # it would stop at the next instruction (every later one is "IDX or later"), as pdb refuses it
            refuse(f"index {idx} is not ahead of the current instruction ({st.index}): `until` runs forward "
                   f"(`b {idx}` then `c` stops there if the code comes back to it)")
        self._select_target()
        self.until_index = idx
        return self._resume(ResumeAction.UNTIL, Mode.UNTIL)

    @engine_method(anytime=True)
    def detach(self) -> Resumed | EngineError:
        self.breakpoints.clear()
        self.break_on.clear()
        if self.ctx is None:
            return Resumed(ResumeAction.DETACH)
        return self._resume(ResumeAction.DETACH, Mode.CONTINUE)

    def _quit_here(self) -> Resumed:
        """``q`` on the worker thread: end the program when the pause loop returns."""
        self._quitting = True
        result = Resumed(ResumeAction.QUIT, quit=True)
        self._resumed = result
        return result

    # ==========================================================================================================
    # breakpoints
    # ==========================================================================================================

    @engine_method()
    def set_break(self, index: int, condition: str | None = None) -> BreakpointView | EngineError:
        self._live_only("setting a breakpoint")
        if condition:
            try:
                compile(condition, "<condition>", "eval")
            except SyntaxError as exc:
                refuse(f"condition does not compile: {exc.msg}")
        code = self._current_code()
        if code is None:
            refuse("no code object here to set a breakpoint in", ErrorKind.NOT_HERE)
        n = len(code_view(code).instructions)
        if not 0 <= index < n:
            refuse(f"index {index} is outside 0..{n - 1}")
        bp = self.add_breakpoint(code, index, condition or None)
        self._refresh_breakpoints()
        return bp.view()

    @engine_method()
    def clear_break(self, index: int | None = None) -> tuple[BreakpointView, ...] | EngineError:
        self._live_only("clearing a breakpoint")
        code = self._current_code()
        if code is None:
            refuse("no code object here", ErrorKind.NOT_HERE)
        if index is None:
            cleared = self.breakpoints.pop(id(code), {})
            self._refresh_breakpoints()
            return tuple(bp.view() for bp in sorted(cleared.values(), key=lambda b: b.number))
        bp = self.clear_breakpoint(code, index)
        if bp is None:
            refuse(f"no breakpoint at index {index}")
        self._refresh_breakpoints()
        return (bp.view(),)

    @engine_method(anytime=True)
    def list_breakpoints(self) -> tuple[BreakpointView, ...]:
        rows = [bp for bps in list(self.breakpoints.values()) for bp in list(bps.values())]
        rows.sort(key=lambda b: b.number)
        return tuple(bp.view() for bp in rows)

    @engine_method(anytime=True)
    def set_break_on(self, kind: str | None = None, on: bool = True) -> frozenset[str] | EngineError:
        if kind is not None:
            if kind not in BREAK_ON_KINDS:
                refuse(f"unknown stop kind {kind!r} (known: {', '.join(BREAK_ON_KINDS)})")
            (self.break_on.add if on else self.break_on.discard)(kind)
            self._quiet.clear()
        return frozenset(self.break_on)

    # ==========================================================================================================
    # frames
    # ==========================================================================================================

    @engine_method()
    def select_frame(self, index: int) -> Stop | EngineError:
        ctx = self._paused()
        self._live_only("selecting a frame")
        if not ctx.frames:
            refuse(f"no frame at a {ctx.kind.value} stop", ErrorKind.NOT_HERE)
        if not 0 <= index < len(ctx.frames):
            refuse(f"frame {index} is outside 0..{len(ctx.frames) - 1}")
        ctx.selected = index
        self._refresh_stop(selected=index, watches=self.watch_values(ctx))
        assert ctx.stop is not None
        if getattr(getattr(self, "listener", None), "wants_teaching", False):
            # `Stop.teaching` is the selected frame's (roles, provenance): rebuilt for the frame selected now
            from .snapshot import stop_teaching

            ctx.stop = replace(ctx.stop, teaching=stop_teaching(self, ctx, ctx.stop))
        return ctx.stop

    @engine_method()
    def up(self, count: int = 1) -> Stop | EngineError:
        ctx = self._paused()
        if count < 1:
            refuse("count must be at least 1")
        if ctx.selected <= 0:
            refuse("already at the outermost generated frame")
        return self.select_frame(max(0, ctx.selected - count))

    @engine_method()
    def down(self, count: int = 1) -> Stop | EngineError:
        ctx = self._paused()
        if count < 1:
            refuse("count must be at least 1")
        if ctx.selected >= len(ctx.frames) - 1:
            refuse("already at the innermost frame")
        return self.select_frame(min(len(ctx.frames) - 1, ctx.selected + count))

    # ==========================================================================================================
    # values of the selected frame
    # ==========================================================================================================

    add_watch = delegate('_values', Values.add_watch)
    evaluate = delegate('_values', Values.evaluate)
    exec_statement = delegate('_values', Values.exec_statement)
    global_values = delegate('_values', Values.global_values)
    remove_watch = delegate('_values', Values.remove_watch)
    set_local = delegate('_values', Values.set_local)
    set_verbose = delegate('_values', Values.set_verbose)
    watch_values = delegate('_values', Values.watch_values)
    watches = delegate('_values', Values.watches)







    # ==========================================================================================================
    # watches
    # ==========================================================================================================





    # ==========================================================================================================
    # recompile decision
    # ==========================================================================================================

    decide = delegate("_decisions", Decisions.decide)
    preview_drop = delegate("_decisions", Decisions.preview_drop)












    # ==========================================================================================================
    # queries
    # ==========================================================================================================

    # -- teaching: roles, explanations, provenance of the selected frame's code ----------------------------------

    explain = delegate("_code_queries", CodeQueries.explain)
    listing = delegate("_code_queries", CodeQueries.listing)
    original_code = delegate("_code_queries", CodeQueries.original_code)
    roles = delegate("_code_queries", CodeQueries.roles)
    source = delegate("_code_queries", CodeQueries.source)
    stack_provenance = delegate("_code_queries", CodeQueries.stack_provenance)









    compiles = delegate("_compile_queries", CompileQueries.compiles)
    entries = delegate("_compile_queries", CompileQueries.entries)
    graphs = delegate("_compile_queries", CompileQueries.graphs)
    guard_diffs = delegate("_compile_queries", CompileQueries.guard_diffs)
    guard_trees = delegate("_compile_queries", CompileQueries.guard_trees)
    guard_trees_now = delegate("_compile_queries", CompileQueries.guard_trees_now)
    recompile_records = delegate("_compile_queries", CompileQueries.recompile_records)
    what_if = delegate("_compile_queries", CompileQueries.what_if)













    # ==========================================================================================================
    # instruction edits and patches
    # ==========================================================================================================

    add_guard = delegate("_edits", Edits.add_guard)
    apply_edit = delegate("_edits", Edits.apply_edit)
    drop_guard = delegate("_edits", Edits.drop_guard)
    export_guard_filter = delegate("_edits", Edits.export_guard_filter)
    guard_edits = delegate("_edits", Edits.guard_edits)
    load_patches = delegate("_edits", Edits.load_patches)
    patch_diff = delegate("_edits", Edits.patch_diff)
    patches = delegate("_edits", Edits.patches)
    preview_edit = delegate("_edits", Edits.preview_edit)
    save_patches = delegate("_edits", Edits.save_patches)
    undo_guard_edit = delegate("_edits", Edits.undo_guard_edit)
    undo_patch = delegate("_edits", Edits.undo_patch)
