"""The command language at trace stops, over the typed methods of `dynadbg.core.trace_engine`.

`dynadbg.core.commands` lists the verbs registered here in `VERBS` (``tb``, ``trace``, ``fake``, ``rewind``) and asks
`at_trace_stop` first for every verb: at a trace stop the stepping and inspection verbs mean their trace-time
versions (``s`` / ``n`` / ``r`` / ``c`` / ``until LINE``, ``stack``, ``locals``, ``bt``, ``graph``, ``guards``,
``why``, ``explain``, ``l``/``ll``, ``src``, ``back``/``forward``/``present``), and the verbs that would run the
user's code, read a running frame or touch cache entries are refused there: the program is paused inside torch's
compile with its compile lock held, and running or compiling code from there is what the lock is for.

This module does not import `commands` (which imports it): its handlers return `model.CommandResult` directly.
"""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING, Any, Callable

from . import format as fmt
from .format import trace as tfmt
from .model import CommandResult, EngineError, Resumed, Stop, TracedBreak
from .verbs import Verbs

if TYPE_CHECKING:
    from .protocol import Engine

#: the trace stops' verbs, registered where their handlers are written; `commands` lists them after its own
VERBS = Verbs()

#: verbs with the same meaning at a trace stop as anywhere else
_PASS = frozenset({"q", "detach", "h", "break-on", "compiles", "history", "v", "tb", "trace", "fake", "rewind"})

_REFUSED = ("at a trace stop the program is paused inside torch.compile (on its thread, holding torch's compile "
            "lock): {verb!r} needs a running frame or would run your code; at a trace stop use stack, locals, fake "
            "NAME, graph, guards, bt, why, explain, or s/n/r/c to let Dynamo go on")


class _Usage(Exception):
    pass


def _check(value: Any) -> Any:
    if isinstance(value, EngineError):
        raise _Usage(value.message)
    return value


def _ok(text: str, data: Any = None) -> CommandResult:
    return CommandResult(output=text, data=data)


def _resumed(value: Resumed | EngineError) -> CommandResult:
    resumed: Resumed = _check(value)
    return CommandResult(output=fmt.resumed_text(resumed), resumed=True, quit=resumed.quit, data=resumed)


def _int(arg: str, default: int | None, what: str) -> int:
    if not arg.strip():
        if default is None:
            raise _Usage(f"missing {what}")
        return default
    try:
        return int(arg.strip())
    except ValueError:
        raise _Usage(f"{what} must be an integer, not {arg.strip()!r}") from None


def _engine_method(engine: "Engine", name: str) -> Callable[..., Any]:
    fn: Callable[..., Any] | None = getattr(engine, name, None)
    if fn is None:
        raise _Usage(f"{name}: this engine has no trace stops")
    return fn


def _guarded(handler: Callable[["Engine", str], CommandResult]) -> Callable[["Engine", str], CommandResult]:
    def run(engine: "Engine", arg: str) -> CommandResult:
        try:
            return handler(engine, arg)
        except _Usage as exc:
            return CommandResult(error=str(exc))

    return run


# --------------------------------------------------------------------------------------------------------------
# the verbs of VERBS (anywhere)
# --------------------------------------------------------------------------------------------------------------


@VERBS.verb("tb", calls="trace_break", bare="trace_settings",
            help="tb [FILE:LINE [if EXPR]] | tb clear [N]: a trace breakpoint: stop whenever Dynamo traces that line "
                 "(path suffix, any inline depth; no code edit), EXPR over the symbolic locals' constants and depth, "
                 "attempt, opname, line; no argument lists them.")
@_guarded
def _tb(engine: "Engine", arg: str) -> CommandResult:
    arg = arg.strip()
    if not arg:
        settings = _check(_engine_method(engine, "trace_settings")())
        lines = [tfmt.breakpoint_text(bp) for bp in settings.breakpoints]
        return _ok("\n".join(lines) or "no trace breakpoints", data=settings.breakpoints)
    if arg.split()[0] == "clear":
        rest = arg[len("clear"):].strip()
        cleared = _check(_engine_method(engine, "trace_clear")(_int(rest, None, "N") if rest else None))
        return _ok(f"cleared {len(cleared)} trace breakpoint(s)", data=cleared)
    where, _, cond = arg.partition(" ")
    cond = cond.strip()
    if cond:
        if not cond.startswith("if "):
            raise _Usage("usage: tb FILE:LINE [if EXPR]")
        cond = cond[3:].strip()
    filename, colon, line_text = where.rpartition(":")
    if not colon:
        filename, line_text = "", where
        stop = engine.current_stop()
        if isinstance(stop, Stop) and stop.trace is not None:
            filename = stop.trace.step.filename
        if not filename:
            raise _Usage("usage: tb FILE:LINE [if EXPR] (a bare LINE only at a trace stop: the traced frame's file)")
    line = _int(line_text, None, "LINE")
    bp = _check(_engine_method(engine, "trace_break")(filename, line, cond or None))
    return _ok(f"set {tfmt.breakpoint_text(bp)}", data=bp)


@VERBS.verb("trace", calls="trace_settings",
            help="trace [record full|light | replay on|off | limit N | memory KB | steps [COMPILE_ID [ATTEMPT]] | "
                 "COMPILE_ID]: the trace recorder: its settings and the recorded trace of each compile (attempts, "
                 "restarts, breaks); record full keeps stack and locals at every step; replay on also stops in the "
                 "re-trace after a restart; steps with no id: this trace stop's compile, after a graph break the "
                 "attempt that traced it, else the selected frame's compile.")
@_guarded
def _trace(engine: "Engine", arg: str) -> CommandResult:
    words = arg.split()
    settings = _engine_method(engine, "trace_settings")
    if not words:
        s = _check(settings())
        compiles = _check(_engine_method(engine, "trace_compiles")())
        return _ok(tfmt.settings_text(s) + "\n" + tfmt.compiles_text(compiles), data=compiles)
    sub = words[0]
    if sub == "record" and len(words) == 2 and words[1] in ("full", "light"):
        return _ok(tfmt.settings_text(_check(settings(record=words[1]))))
    if sub == "replay" and len(words) == 2 and words[1] in ("on", "off"):
        return _ok(tfmt.settings_text(_check(settings(replay=words[1] == "on"))))
    if sub in ("limit", "memory") and len(words) == 2:
        n = _int(words[1], None, sub)
        s = _check(settings(limit=n) if sub == "limit" else settings(max_bytes=n * 1024))
        return _ok(tfmt.settings_text(s))
    if sub == "steps" and len(words) <= 3:
        cid = words[1] if len(words) > 1 else None
        attempt = _int(words[2], None, "ATTEMPT") if len(words) > 2 else None
        steps = _check(_engine_method(engine, "trace_steps")(cid, attempt))
        return _ok(tfmt.steps_text(steps, _break_step(engine, steps)), data=steps)
    if len(words) == 1 and "/" in sub:
        compiles = _check(_engine_method(engine, "trace_compiles")())
        found = [c for c in compiles if c.compile_id == sub]
        if not found:
            raise _Usage(f"no recorded trace of compile {sub} (recorded: "
                         f"{', '.join(c.compile_id for c in compiles) or 'none'})")
        return _ok("\n".join(tfmt.compile_lines(found[0])), data=found[0])
    raise _Usage("usage: trace [record full|light | replay on|off | limit N | memory KB | steps [COMPILE_ID [ATTEMPT]] "
                 "| COMPILE_ID]")


def _break_step(engine: "Engine", steps: tuple[Any, ...]) -> int | None:
    """The ordinal of the graph break behind this run-time stop's resume function, when `steps` are the attempt
    that traced it (`trace steps` marks it with ``>``), else None."""
    stop = engine.current_stop()
    traced: TracedBreak | None = getattr(getattr(stop, "graph_break", None), "traced", None)
    if traced is None or not steps or (steps[0].compile_id, steps[0].attempt) != (traced.compile_id, traced.attempt):
        return None
    return traced.ordinal


@VERBS.verb("fake", calls="trace_fake",
            help="fake NAME: (trace stop) the fake value of a symbolic local or stack slot (stack[i], TOS): sizes "
                 "with their hints, strides, dtype, device.")
@_guarded
def _fake(engine: "Engine", arg: str) -> CommandResult:
    if not arg.strip():
        raise _Usage("usage: fake NAME (a symbolic local, stack[i] or TOS)")
    view = _check(_engine_method(engine, "trace_fake")(arg.strip()))
    return _ok(tfmt.fake_text(view), data=view)


@VERBS.verb("rewind", resumes=True, calls="trace_rewind",
            help="rewind N: (trace stop, experimental) make Dynamo trace the frame again from its start and stop N "
                 "instructions before this one (a restart: counted as an attempt; refused near Dynamo's attempt "
                 "limit).")
@_guarded
def _rewind(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(_engine_method(engine, "trace_rewind")(_int(arg, None, "N")))


# --------------------------------------------------------------------------------------------------------------
# the usual verbs, at a trace stop
# --------------------------------------------------------------------------------------------------------------


def _view(engine: "Engine") -> Any:
    return _check(_engine_method(engine, "trace_view")())


def _src(engine: "Engine", arg: str) -> CommandResult:
    view = _view(engine)
    step = view.step
    first = step.firstlineno
    lines = []
    n = first
    while True:
        text = linecache.getline(step.filename, n)
        if not text or (n > first and text.strip() and not text[0].isspace() and not text.lstrip().startswith("#")
                        and n > (step.line or first)):
            break
        mark = "▶" if n == step.line else " "
        lines.append(f"{mark}{n:>5} | {text.rstrip()}")
        n += 1
        if n - first > 200:
            break
    return _ok(f"{step.code_name} ({step.filename}:{first}):\n" + "\n".join(lines))


_AT_TRACE: dict[str, Callable[["Engine", str], CommandResult]] = {
    "s": lambda e, a: _resumed(_engine_method(e, "trace_step")(_int(a, 1, "count"))),
    "n": lambda e, a: _resumed(_engine_method(e, "trace_next")(_int(a, 1, "count"))),
    "r": lambda e, a: _resumed(_engine_method(e, "trace_return")()),
    "c": lambda e, a: _resumed(_engine_method(e, "trace_continue")()),
    "until": lambda e, a: _resumed(_engine_method(e, "trace_until")(_int(a, None, "LINE") if a.strip() else None)),
    "stack": lambda e, a: _ok(tfmt.stack_text(_view(e))),
    "locals": lambda e, a: (_fake(e, a) if a.strip() else _ok(tfmt.locals_text(_view(e)))),
    "bt": lambda e, a: _ok(tfmt.bt_text(_view(e))),
    "graph": lambda e, a: _ok(tfmt.graph_text(_view(e))),
    "guards": lambda e, a: _ok(tfmt.guards_text(_view(e))),
    "why": lambda e, a: _ok(tfmt.why_text(_view(e))),
    "explain": lambda e, a: _ok(tfmt.explain_text(_check(_engine_method(e, "trace_explain")()))),
    "l": lambda e, a: _ok(tfmt.listing_text(_view(e), around=5)),
    "ll": lambda e, a: _ok(tfmt.listing_text(_view(e), around=None)),
    "src": _src,
    "back": lambda e, a: _shown(_engine_method(e, "trace_back")(_int(a, 1, "count"))),
    "forward": lambda e, a: _shown(_engine_method(e, "trace_forward")(_int(a, 1, "count"))),
    "present": lambda e, a: _shown(_engine_method(e, "trace_present")()),
    "u": lambda e, a: CommandResult(error="at a trace stop there are no frames to select: `bt` shows the inlining "
                                          "chain Dynamo is tracing"),
    "d": lambda e, a: CommandResult(error="at a trace stop there are no frames to select: `bt` shows the inlining "
                                          "chain Dynamo is tracing"),
}


#: The trace-stop verbs that read no argument (`_AT_TRACE`: the rest read a count, a line or an expression)
_BARE_AT_TRACE = frozenset({"r", "c", "stack", "bt", "graph", "guards", "why", "explain", "l", "ll", "src",
                            "present"})


def _shown(value: Any) -> CommandResult:
    view = _check(value)
    stop_like = tfmt.status_line(view)
    text = "\n".join(part for part in (stop_like, tfmt.listing_text(view), tfmt.stack_text(view)) if part)
    return _ok(text, data=view)


def at_trace_stop(engine: "Engine", name: str, arg: str) -> CommandResult | None:
    """The result of verb `name` when `engine` is paused at a trace stop, or None (not at one, or a verb that means
    the same everywhere: `commands` runs it as usual)."""
    if name in _PASS or getattr(engine, "trace_view", None) is None or not engine.paused:
        return None
    stop = engine.current_stop()
    if not isinstance(stop, Stop) or stop.trace is None:
        return None
    handler = _AT_TRACE.get(name)
    if handler is not None and name in _BARE_AT_TRACE and arg.strip():
        # these verbs read an argument at a run-time stop (`why 0/1`, `l 5`); here it would be ignored
        return CommandResult(error=f"at a trace stop `{name}` takes no argument: it shows the trace stop in front "
                                   f"of you")
    if handler is None:
        if name == "watch" and not arg.strip():
            return None
        return CommandResult(error=_REFUSED.format(verb=name))
    try:
        return handler(engine, arg)
    except _Usage as exc:
        return CommandResult(error=str(exc))
