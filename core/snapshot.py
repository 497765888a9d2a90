"""Building the frozen `Stop` snapshot of a pause (worker thread only)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from . import compat, facts
from .disasm import code_view
from .model import (
    BreakContext,
    EagerFallback,
    FrameView,
    HandedOver,
    RecompileChoice,
    ResumePoint,
    Role,
    Stop,
    StopKind,
    StopTeaching,
    TracedBreak,
    ValueSummary,
)
from .values import UNKNOWN, summarize

if TYPE_CHECKING:
    from .roles import CodegenFacts
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
    before = state.before[index] if 0 <= index < len(state.before) else None
    return None if before is None else len(before)


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
    below_call = not post_mortem and not current
    from_flow = False
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
            if st.depth_from_flow:
                from_flow = True  # the frame was not traced: its depth comes from the code's flow
        elif st.depth >= 0:
            stack = tuple(value(v) for v in st.safe_stack())
        else:
            stack = _untraced_stack(st, current=current)
            from_flow = not (len(stack) == 1 and stack[0].unknown)
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
        shown = value(loc[name])
        pairs.append((name, shown))
        if passing:
            continue
        old = st.last_ids.get(name)
        if (old is not None and old != shown.identity) or (old is None and st.snapshots > 0):
            changed.append(name)  # rebound, or bound since the previous stop
        st.last_ids[name] = shown.identity
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
        below_call=below_call,
        depth_from_flow=from_flow,
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


def break_context(session: Any, frames: "list[FrameState]") -> BreakContext | None:
    """Why the resume function running in the innermost of `frames` runs (`Stop.graph_break`), or None when that
    frame runs no resume function: the graph break the capture recorded for it, where it continues the original
    function, and its arguments as the frame holds them now (``___stack*``: the original frame's value stack at
    the break; the rest: its locals carried over). Reads the capture's records and the frame; changes nothing."""
    if not frames:
        return None
    frame = frames[-1].frame
    code = frame.f_code
    info = session.generated_info(code)
    capture = session.capture
    if info is None or capture is None:
        # generated code the capture did not record: a resume function by its name, with nothing known of it
        return BreakContext(code.co_name, known=False) if facts.is_resume_name(code.co_name) else None
    if not info.is_resume:
        return None
    resume_code = info.original
    resumes = None
    origin = capture.resume_origin_of(resume_code)
    if origin is not None:
        orig, offset = origin
        ins = None
        if offset is not None:
            ins = next((i for i in code_view(orig, generated=False).instructions if i.offset == offset), None)
        resumes = ResumePoint(orig.co_name, orig.co_filename, orig.co_firstlineno, offset,
                              ins.opname if ins is not None else None, ins.argrepr if ins is not None else None,
                              ins.lineno if ins is not None else None)
    caller = session.generated_info(frames[-2].frame.f_code) if len(frames) >= 2 else None
    found = capture.break_behind(resume_code, caller)
    brk, break_cid, break_frame = found if found is not None else (None, None, None)
    stack_names, carried_names, bookkeeping = facts.resume_arguments(code)
    loc = frame_locals(frame)
    try:
        from .recompile import resume_stack_args

        meaning = {arg.name: arg for arg in resume_stack_args(resume_code)[0]}
    except Exception:  # noqa: BLE001 - a naming aid only
        meaning = {}
    return BreakContext(
        resume_code.co_name, str(info.compile_id), resumes=resumes, brk=brk, break_compile_id=break_cid,
        break_frame=break_frame,
        stack=tuple(HandedOver(n, value(loc[n]), meaning.get(n)) for n in stack_names if n in loc),
        carried=tuple(HandedOver(n, value(loc[n])) for n in carried_names if n in loc),
        bookkeeping=bookkeeping, globals=capture.resume_globals_of(resume_code),
        traced=_traced_break(session, break_cid, brk))


def _traced_break(session: Any, compile_id: str | None, brk: Any) -> TracedBreak | None:
    """Where the trace recorder holds the graph break `brk` of compile `compile_id`: the break on the same user
    line, else the compile's last break; None when the compile's trace was not recorded (or evicted)."""
    stops = getattr(session, "trace_stops", None)
    if compile_id is None or stops is None:
        return None
    try:
        view = stops.recorder.compile_view(compile_id)
    except Exception:  # noqa: BLE001 - a pointer into the trace only
        return None
    if view is None or not view.breaks:
        return None
    return _break_on_line(view, getattr(brk, "lineno", None))


def _break_on_line(view: Any, line: int | None) -> TracedBreak | None:
    """The graph break of the compile `view` (`TraceCompileView`) on user line `line`, else its last break."""
    found = next((b for b in reversed(view.breaks) if b.step is not None and b.line == line), None)
    found = found or next((b for b in reversed(view.breaks) if b.step is not None), None)
    if found is None or found.step is None:
        return None
    step = found.step
    return TracedBreak(found.compile_id, found.attempt, step.ordinal, step.opname, step.line, step.depth)


def build_stop(session: Any, ctx: "PauseContext", message: str) -> Stop:
    """The frozen `Stop` of the pause `ctx`: its frames (stack, locals), and what its kind carries (the
    recompile record the session analysed at the miss, the graph break behind a resume function, the
    exception). Reads the program's state and the session's records; writes no engine state (but the
    frames' marks of changed locals, which are per-stop by definition)."""
    frames: list[FrameView] = []
    for i, st in enumerate(ctx.frames):
        frames.append(frame_view(session, st, current=(i == len(ctx.frames) - 1), post_mortem=ctx.post_mortem))
    compile_id = entry_index = entry_count = None
    choices: tuple[RecompileChoice, ...] = ()
    hints: tuple[str, ...] = ()
    record = None
    return_value = value(ctx.return_value) if ctx.kind is StopKind.RETURN else None
    if return_value is not None and ctx.frames and frames:
        # the interpreter has popped the returned value already: it is what the frame's stack holds now
        frames[len(ctx.frames) - 1] = replace(frames[len(ctx.frames) - 1], stack=(return_value,), stack_exact=True)
    exception = f"{type(ctx.exception).__name__}: {ctx.exception}" if ctx.exception is not None else None
    exception_lines: tuple[str, ...] = ()
    if ctx.frames:
        compile_id, entry_index, entry_count = entry_position(session, ctx.frames[-1].frame.f_code)
    if ctx.kind is StopKind.COMPILE and ctx.compile_event is not None:
        compiled = ctx.compile_event
        compile_id = str(compiled.compile_id)
        view = code_view(compiled.code, generated=True, compile_id=compile_id, is_resume=bool(compiled.is_resume))
        frames.append(FrameView(code=view, index=-1, lineno=None, stack=(), stack_exact=False, locals=()))
    if ctx.kind is StopKind.RECOMPILE and ctx.miss_event is not None:
        ev = ctx.miss_event
        entry_count = len(ev.entries)
        record = ctx.extra.get("recompile")
        view = code_view(ev.code, generated=False, is_resume=bool(record is not None and record.is_resume))
        inputs = tuple((k, value(v)) for k, v in ev.f_locals.items())
        frames.append(FrameView(code=view, index=-1, lineno=None, stack=(), stack_exact=False, locals=inputs))
        if record is not None:
            from .decisions import config_hints, recompile_choices

            choices = recompile_choices(record)
            hints = tuple(config_hints(record))
    eager_fallback = None
    fallback = ctx.extra.get("fallback")
    if ctx.kind is StopKind.GRAPH_BREAK and not ctx.frames and fallback is not None:
        # a graph break no resume function follows: the frame runs eagerly (nothing generated runs for it)
        code = fallback.code
        frames.append(FrameView(code=code_view(code, generated=False), index=-1, lineno=None, stack=(),
                                stack_exact=False, locals=tuple((k, value(v)) for k, v in fallback.f_locals.items())))
        origin = fallback.resume_of
        eager_fallback = EagerFallback(
            code.co_name, code.co_filename, code.co_firstlineno, fallback.skip_reason, tuple(fallback.breaks),
            (origin.co_name, origin.co_filename, origin.co_firstlineno) if origin is not None else None)
    graph_break = break_context(session, ctx.frames) if ctx.frames and not ctx.post_mortem else None
    trace = ctx.extra.get("trace")  # a trace stop's view (`trace_stops`): built where the compile paused
    if trace is not None:
        compile_id = trace.step.compile_id
    if ctx.kind is StopKind.EXCEPTION and ctx.exception is not None:
        import traceback

        exception_lines = tuple("".join(traceback.format_exception_only(ctx.exception)).strip().splitlines())
    stop = Stop(
        kind=ctx.kind,
        message=message,
        frames=tuple(frames),
        compile_id=compile_id,
        entry_index=entry_index,
        entry_count=entry_count,
        return_value=return_value,
        exception=exception,
        exception_lines=exception_lines,
        recompile=record,
        graph_break=graph_break,
        eager_fallback=eager_fallback,
        seq=session.stop_seq,
        selected=ctx.selected if ctx.frames else -1,
        choices=choices,
        hints=hints,
        watches=session.watch_values(ctx),
        marker=ctx.extra.get("marker"),
        reentry=bool(ctx.extra.get("reentry")),
        trace=trace,
    )
    if getattr(getattr(session, "listener", None), "wants_teaching", False):
        stop = replace(stop, teaching=stop_teaching(session, ctx, stop))
    return stop


def stop_teaching(session: Any, ctx: "PauseContext", stop: Stop) -> StopTeaching | None:
    """The roles and the value stack's provenance of `stop`'s selected frame (what `Engine.roles()` and
    `Engine.stack_provenance()` answer there), so a front end needs no further round trip to show the stop.

    Roles are cached per code object (`roles.code_roles`); provenance is computed for the stop's instruction.
    A failure costs the teaching data, never the stop (None, or None in the failing field).
    """
    from . import provenance as _provenance
    from . import roles as _roles

    fv = stop.selected_frame
    if fv is None or not fv.code.generated:
        return None
    if ctx.frames and 0 <= stop.selected < len(ctx.frames):
        code = ctx.frames[stop.selected].frame.f_code
    elif ctx.compile_event is not None:
        code = ctx.compile_event.code
    else:
        return None
    try:
        facts = codegen_facts(getattr(session, "capture", None), code)
    except Exception:  # noqa: BLE001 - the capture-based roles are lost, the code's shape still tells
        facts = None
    try:
        roles = _roles.code_roles(code, facts)
    except Exception:  # noqa: BLE001 - no role gutter rather than no stop
        return None
    provenance = None
    if fv.index >= 0 and fv.stack and not (len(fv.stack) == 1 and fv.stack[0].unknown):
        try:
            provenance = _provenance.provenance(code, fv.index, facts=facts, roles=roles)
        except Exception:  # noqa: BLE001 - values without their origins
            provenance = None
    return StopTeaching(roles, provenance, _traced_breaks(session, code, fv, roles))


def _traced_breaks(session: Any, code: Any, fv: Any, roles: Any) -> tuple[tuple[int, TracedBreak], ...]:
    """`StopTeaching.traced_breaks`: each graph-break region of the generated `code` linked to the break that
    Dynamo's recorded trace of its compile holds on the region's user line (the instructions Dynamo emits for a
    break carry the breaking instruction's line)."""
    regions = [r for r in roles.regions if r.role is Role.GRAPH_BREAK]
    stops = getattr(session, "trace_stops", None)
    if not regions or stops is None:
        return ()
    try:
        info = session.generated_info(code)
        view = stops.recorder.compile_view(str(info.compile_id)) if info is not None else None
    except Exception:  # noqa: BLE001 - a pointer into the trace only
        return ()
    if view is None or not view.breaks:
        return ()
    instructions = fv.code.instructions
    out: list[tuple[int, TracedBreak]] = []
    for region in regions:
        lines = [instructions[k].lineno for k in range(region.start, region.end + 1)
                 if k < len(instructions) and instructions[k].lineno is not None]
        traced = _break_on_line(view, lines[-1] if lines else None)
        if traced is not None:
            out.extend((k, traced) for k in range(region.start, region.end + 1))
    return tuple(out)


#: id(code) → (code, capture version, facts): `codegen_facts`' cache (the code is kept so its id stays its own).
_facts_cache: "dict[int, tuple[Any, Any, CodegenFacts]]" = {}


def codegen_facts(capture: Any, code: Any) -> "CodegenFacts | None":
    """`roles.facts_from_capture(capture, code)`, cached while the capture has recorded nothing new
    (`Capture.version`): building it reads every compiled frame (about 60 ms on a 300-layer model), which a step
    must not pay. None without a capture. Raises what `facts_from_capture` raises."""
    from . import roles as _roles

    if capture is None:
        return None
    version = capture.version
    hit = _facts_cache.get(id(code))
    if hit is not None and hit[0] is code and hit[1] == version:
        return hit[2]
    facts = _roles.facts_from_capture(capture, code)
    if len(_facts_cache) > 256:
        _facts_cache.clear()
    _facts_cache[id(code)] = (code, version, facts)
    return facts
