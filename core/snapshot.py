"""Building the frozen `Stop` snapshot of a pause (worker thread only)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from . import compat
from .disasm import code_view
from .model import FrameView, Stop, StopKind, ValueSummary
from .values import UNKNOWN, summarize

if TYPE_CHECKING:
    from .stack import FrameState
    from .state import PauseContext


def value(obj: Any) -> ValueSummary:
    """Summary of `obj`, recognising torch's NULL stack sentinel."""
    from .values import NULL

    if obj is compat.NULL_STACK_VALUE:
        return NULL
    return summarize(obj)


_value = value


def frame_locals(frame: Any) -> dict[str, Any]:
    try:
        return dict(frame.f_locals)
    except Exception:  # noqa: BLE001
        return {}


def _static_depth(code: Any, index: int) -> int | None:
    """The value-stack depth before instruction `index` of `code`, from the code's flow (`flow.analyse`); None
    where no analysed path reaches it or two paths meet there with different depths."""
    from . import flow

    try:
        state = flow.analyse(code)
    except Exception:  # noqa: BLE001 - code the analysis cannot follow: depth unknown
        return None
    if not 0 <= index < len(state.before) or state.before[index] is None:
        return None
    return len(state.before[index])


def _untraced_stack(st: "FrameState", *, current: bool) -> tuple[ValueSummary, ...]:
    """The stack of a frame the debugger did not trace from its start (a caller that was running when a callee
    stopped): read at the depth the code's flow gives at its instruction, the pending call's operands excluded
    (as `FrameState.safe_stack`). ``(UNKNOWN,)`` when the flow gives no depth there."""
    depth = _static_depth(st.frame.f_code, st.index)
    if depth is None:
        return (UNKNOWN,)
    saved = st.depth
    st.depth = depth
    try:
        return tuple(value(v) for v in (st.tracked_stack() if current else st.safe_stack()))
    finally:
        st.depth = saved


def frame_view(session: Any, st: "FrameState", *, current: bool, post_mortem: bool = False,
               passing: bool = False, summary: Callable[[Any], ValueSummary] | None = None) -> FrameView:
    """The `FrameView` of a traced frame. `passing`: an instruction the program runs through without stopping
    (history of ``s N``): the frame's changed-local marks and depth checks are left as they are. `summary`: what
    summarises each value (default `value`; the history passes its cache)."""
    value = summary or _value
    frame = st.frame
    code = frame.f_code
    view = session.code_view(code)
    stack: tuple[ValueSummary, ...] = ()
    exact = False
    note = ""
    if not post_mortem and not current:
        note = "below the pending call, whose operands are consumed"
    if not post_mortem:
        live = st.exact_stack() if current else None
        if live is not None:
            exact = True
            if not passing:
                if st.depth >= 0 and st.depth != len(live) and st.pending_exception_offset is None:
                    session.depth_mismatches.append((code.co_name, st.index, st.depth, len(live)))
                st.depth = len(live)
            stack = tuple(value(v) for v in live)
        elif st.depth >= 0 and current:
            stack = tuple(value(v) for v in st.tracked_stack())
        elif st.depth >= 0:
            stack = tuple(value(v) for v in st.safe_stack())
        else:
            stack = _untraced_stack(st, current=current)
            if not (len(stack) == 1 and stack[0].unknown):
                note = (f"{note}; " if note else "") + "depth from the code's flow: not traced from its start"
    else:
        stack = (UNKNOWN,)  # the frame has unwound: its value stack is gone
    names = code.co_varnames + code.co_cellvars + code.co_freevars
    loc = frame_locals(frame)
    pairs = []
    changed = []
    seen: set[str] = set()
    for name in names:
        if name in seen or name not in loc:
            continue
        seen.add(name)
        summary = value(loc[name])
        pairs.append((name, summary))
        if passing:
            continue
        old = st.last_ids.get(name)
        if (old is not None and old != summary.identity) or (old is None and st.snapshots > 0):
            changed.append(name)  # rebound, or bound since the previous stop
        st.last_ids[name] = summary.identity
    if not passing:
        st.snapshots += 1
    index = st.index
    lineno = view.instructions[index].lineno if 0 <= index < len(view.instructions) else None
    return FrameView(
        code=view,
        index=index,
        lineno=lineno,
        stack=stack,
        stack_exact=exact,
        stack_note=note,
        locals=tuple(pairs),
        breakpoints=tuple(sorted(session.breakpoints.get(id(code), {}))),
        changed=tuple(changed),
    )


def entry_position(session: Any, code: Any) -> tuple[str | None, int | None, int | None]:
    """(compile id, 1-based index among the original's cache entries (newest first), entry count)."""
    info = session.generated_info(code)
    cid = info.compile_id if info else session.compile_ids.get(id(code))
    if info is None:
        return cid, None, None
    try:
        entries = compat.cache_entries(info.original)
    except Exception:  # noqa: BLE001
        return cid, None, None
    for i, e in enumerate(entries):
        if e.code is code:
            return cid, i + 1, len(entries)
    return cid, None, len(entries)


def build_stop(session: Any, ctx: "PauseContext", message: str) -> Stop:
    frames: list[FrameView] = []
    for i, st in enumerate(ctx.frames):
        frames.append(frame_view(session, st, current=(i == len(ctx.frames) - 1), post_mortem=ctx.post_mortem))
    compile_id = entry_index = entry_count = None
    detail: list[tuple[str, str]] = []
    choices: tuple = ()
    hints: tuple[str, ...] = ()
    return_value = value(ctx.return_value) if ctx.kind is StopKind.RETURN else None
    if return_value is not None and ctx.frames and frames:
        # the interpreter has popped the returned value already: it is what the frame's stack holds now
        frames[len(ctx.frames) - 1] = replace(frames[len(ctx.frames) - 1], stack=(return_value,), stack_exact=True)
    exception = f"{type(ctx.exception).__name__}: {ctx.exception}" if ctx.exception is not None else None
    if ctx.frames:
        compile_id, entry_index, entry_count = entry_position(session, ctx.frames[-1].frame.f_code)
    if ctx.kind is StopKind.COMPILE and ctx.compile_event is not None:
        ev = ctx.compile_event
        compile_id = str(ev.compile_id)
        view = code_view(ev.code, generated=True, compile_id=compile_id)
        frames.append(FrameView(code=view, index=-1, lineno=None, stack=(), stack_exact=False, locals=()))
    if ctx.kind is StopKind.RECOMPILE and ctx.miss_event is not None:
        ev = ctx.miss_event
        entry_count = len(ev.entries)
        view = code_view(ev.code, generated=False)
        inputs = tuple((k, value(v)) for k, v in ev.f_locals.items())
        frames.append(FrameView(code=view, index=-1, lineno=None, stack=(), stack_exact=False, locals=inputs))
        from .decisions import config_hints, recompile_choices
        from .format.recompile import stop_detail

        detail.extend(stop_detail(session, ctx))
        record = ctx.extra.get("recompile")
        if record is not None:
            choices = recompile_choices(record)
            hints = tuple(config_hints(record))
    resume_entry = (ctx.kind is StopKind.ENTRY and ctx.frames
                    and ctx.frames[-1].frame.f_code.co_name.startswith("torch_dynamo_resume_in_"))
    if (ctx.kind is StopKind.GRAPH_BREAK or resume_entry) and ctx.frames:
        # at a resume function's entry too: why it runs (the graph break) is the first thing a user asks there
        from .capture import graph_break_detail

        detail.append(("graph break", graph_break_detail(session, ctx.frames)))
    trace = ctx.extra.get("trace")  # a trace stop's view (`trace_stops`): built where the compile paused
    if trace is not None:
        compile_id = trace.step.compile_id
    if ctx.kind is StopKind.EXCEPTION and ctx.exception is not None:
        import traceback

        detail.append(("exception", "".join(traceback.format_exception_only(ctx.exception)).strip()))
    return Stop(
        kind=ctx.kind,
        message=message,
        frames=tuple(frames),
        compile_id=compile_id,
        entry_index=entry_index,
        entry_count=entry_count,
        return_value=return_value,
        exception=exception,
        detail=tuple(detail),
        seq=session.stop_seq,
        selected=ctx.selected if ctx.frames else -1,
        choices=choices,
        hints=hints,
        watches=session.watch_values(ctx),
        trace=trace,
    )
