"""The command language (line mode, the TUI console, ``debug(commands=...)``): a layer over the `Engine` methods.

A front end holds a `CommandLine` over its engine, as pdb sits on bdb: `CommandLine.execute` parses a line, calls
the typed methods of any `dynadbg.core.protocol.Engine` (the real `Session` or a test fake) and formats their
frozen results as plain text (`dynadbg.core.format`). Nothing is printed: a `CommandResult` comes back. An unknown
or malformed command returns an error and changes nothing. The engine knows nothing of this module.

Each verb is registered once, where its handler is written: ``@verb("s", "step", resumes=True, calls="set_step",
help=...)`` (`dynadbg.core.verbs`); the order of the handlers below is the order help lists the verbs, and the trace
stops' verbs (`dynadbg.core.trace_commands`) come after them. Which verbs work while the program runs is the
``anytime`` flag of the engine method a verb names (`calls`, or `bare` without an argument), read from the engine
(`verbs.runs_anytime`). `COMMANDS`, `BY_NAME`, `ALIASES`, `RESUMING`, `HISTORY_OK`, `AFTER_END` and `READ_ONLY`
are read off the registered rows (at the end of this module).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from . import format as fmt
from . import trace_commands
from .model import (
    BREAK_ON_KINDS,
    CommandResult,
    Decision,
    DecisionKind,
    EditError,
    EngineError,
    ErrorKind,
    EvalResult,
    Provenance,
    Resumed,
    SlotOrigin,
    Stop,
    StopKind,
)
from .verbs import CommandSpec as CommandSpec  # the row type, for importers of this module
from .verbs import Verbs, runs_anytime

if TYPE_CHECKING:
    from .protocol import Engine

_verbs = Verbs()
verb = _verbs.verb


class _Usage(Exception):
    """A malformed command: the message is the error line."""


def split(line: str) -> tuple[str, str] | None:
    """(verb, argument text) of a command line, aliases resolved; None for an empty line."""
    line = line.strip()
    if not line:
        return None
    if line.startswith("!"):
        return "!", line[1:].strip()
    name, _, arg = line.partition(" ")
    name = ALIASES.get(name, name)
    return name, arg.strip()


def spelled_out(line: str) -> str:
    """`line` with its verb written out as the word it abbreviates, as pdb's help writes ``s(tep)``: the verb's
    first alias that begins with it (``"s"`` → ``"step"``, ``"c"`` → ``"continue"``, ``"b 12"`` → ``"break 12"``);
    a verb that abbreviates none (``"until 12"``, ``"eager"``, ``"ll"``) and any unknown line stay as they are.
    Both spellings run the same; the TUI logs this one for a key, so the console reads as if it had been typed."""
    name, sep, arg = line.strip().partition(" ")
    spec = BY_NAME.get(ALIASES.get(name, name))
    if spec is None:
        return line
    word = next((a for a in (spec.name, *spec.aliases) if a.startswith(spec.name) and len(a) > len(spec.name)),
                spec.name)
    return word + sep + arg


#: what an empty line runs before any command was typed: the implicit step (pdb repeats the last command; at a
#: session's first prompt the step that brought the program there counts as that command, as in torch's debugger)
FIRST_REPEAT = "s"


def resolve_empty(line: str, last: str | None) -> tuple[str, str]:
    """pdb's empty-line rule, for every front end: (the line to run, the new last command). A blank `line` runs
    `last` again, or `FIRST_REPEAT` when no command ran yet in this session."""
    if line.strip():
        return line, line
    again = last or FIRST_REPEAT
    return again, again


def help_text() -> str:
    """One line per command, from `COMMANDS` (the same text the TUI's help screen shows)."""
    return "\n".join(c.help for c in COMMANDS)


class CommandLine:
    """The command language over one engine, for one front end (line mode, the TUI console, ``dynadbg.debug()``):
    what pdb is to bdb. It keeps what a command line remembers between commands; the engine keeps everything else.

    Attributes:
        engine: the `Engine` the commands run on.
        last: the last command line given to `resolve` (what an empty line repeats), None before any.
        list_next: (stop seq, selected frame, index after the last listing) of the last ``l``: where a bare ``l``
            goes on at the same stop and frame; None before any.
    """

    def __init__(self, engine: "Engine") -> None:
        self.engine = engine
        self.last: str | None = None
        self.list_next: tuple[int, int, int] | None = None

    def resolve(self, line: str) -> str:
        """pdb's empty-line rule (`resolve_empty`) with this command line's memory: a blank `line` is the last
        command again (`FIRST_REPEAT` before any); any other is remembered and comes back as it is."""
        line, self.last = resolve_empty(line, self.last)
        return line

    def execute(self, line: str) -> CommandResult:
        """Parse and run one command line (any thread; each engine method runs where it must). Never raises for
        bad input: the error comes back in `CommandResult.error`."""
        engine = self.engine
        parts = split(line)
        if parts is None:
            return CommandResult(error="empty command (h for help)")
        name, arg = parts
        spec = BY_NAME.get(name)
        if spec is None:
            return _python_line(engine, line.strip(), name)
        if not engine.paused and not runs_anytime(engine, spec.method(arg)):
            if engine.finished:
                return CommandResult(error="the program has finished")
            return CommandResult(error=f"the program is running; {name!r} needs a stop (Ctrl+C interrupts)")
        if engine.finished and not spec.after_end:
            return CommandResult(error="the program has finished")
        if not spec.takes_arg and arg.strip():
            return CommandResult(error=_no_argument(name))
        at_trace = trace_commands.at_trace_stop(engine, name, arg)  # inside Dynamo's tracing: the trace verbs
        if at_trace is not None:
            return at_trace
        if not spec.resumes and not spec.shows_history(arg):
            mark = _history_mark(engine)
            if mark is not None:
                return CommandResult(error=f"history {mark.position} of {mark.total} is a recorded stop, read-only: "
                                           f"{name!r} needs the live one (`present` returns to it)")
        try:
            if spec.stateful:
                return spec.handler(engine, arg, self)
            return spec.handler(engine, arg)
        except _Usage as exc:
            return CommandResult(error=str(exc))


def _no_argument(name: str) -> str:
    """The error for an argument given to verb `name`, which takes none (`CommandSpec.takes_arg`)."""
    more = {"ll": " (`l 5` lists around index 5)", "c": " (`until IDX` runs to an instruction)",
            "stack": " (`p EXPR` prints one value)"}.get(name, "")
    return f"`{name}` takes no argument{more}"


def _python_line(engine: "Engine", line: str, name: str) -> CommandResult:
    """A line that is no command: an expression is printed, a statement run (pdb's default), at a stop."""
    unknown = f"unknown command {name!r} (h for help)"
    try:
        compile(line, "<line>", "eval")
        is_expr = True
    except SyntaxError:
        try:
            compile(line, "<line>", "single")
        except SyntaxError:
            return CommandResult(error=unknown)
        is_expr = False
    if not engine.paused:
        return CommandResult(error=unknown)
    result = engine.evaluate(line) if is_expr else engine.exec_statement(line)
    if isinstance(result, EngineError):
        if is_expr and result.kind is ErrorKind.EVAL and result.raised == "NameError" and line.isidentifier():
            return CommandResult(error=f"{unknown}; as Python: {result.message}")
        return CommandResult(error=result.message)
    return _statement_output(engine, result)


def _statement_output(engine: "Engine", result: EvalResult) -> CommandResult:
    """What a statement printed, and the first time one changed a local of generated code, the line saying so."""
    text = result.text
    if result.first_local_change and result.changed_locals:
        from .format.notices import local_change_note

        stop = engine.current_stop()
        frame = stop.selected_frame if isinstance(stop, Stop) else None
        note = local_change_note(result.changed_locals, frame.code.name if frame is not None else "?")
        text = f"{text}\n{note}" if text else note
    return _ok(text, data=result)


# ==============================================================================================================
# helpers
# ==============================================================================================================


def _ok(text: str = "", data: Any = None) -> CommandResult:
    return CommandResult(output=text, data=data)


_T = TypeVar("_T")


def _check(value: _T | EngineError) -> _T:
    """`value`, or a usage error with an `EngineError`'s message."""
    if isinstance(value, EngineError):
        raise _Usage(value.message)
    return value


def _resumed(value: Resumed | EngineError) -> CommandResult:
    resumed: Resumed = _check(value)
    return CommandResult(output=fmt.resumed_text(resumed), resumed=True, quit=resumed.quit, data=resumed)


def _int(arg: str, default: int | None = None, what: str = "count") -> int:
    if not arg:
        if default is None:
            raise _Usage(f"missing {what}")
        return default
    try:
        return int(arg)
    except ValueError:
        raise _Usage(f"{what} must be an integer, not {arg!r}") from None


def _stop(engine: "Engine") -> Stop:
    return _check(engine.current_stop())


def _history_mark(engine: "Engine") -> Any:
    return engine.history_position()


def _marked(stop: Stop, text: str) -> str:
    """`text` under the history line when `stop` is a recorded one (`back`), so it is never read as live."""
    return f"{fmt.history_line(stop.history)}\n{text}" if stop.history is not None else text


# ==============================================================================================================
# the verbs, in the order help lists them
# ==============================================================================================================


@verb("s", "step", resumes=True, calls="set_step",
      help="s [N]: step N instructions (default 1), into generated callees such as resume functions.")
def _step(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.set_step(_int(arg, 1)))


@verb("n", "next", resumes=True, calls="set_next",
      help="n [N]: step N instructions in this frame, over calls (stops in the caller after a return).")
def _next(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.set_next(_int(arg, 1)))


@verb("r", "return", resumes=True, takes_arg=False, calls="set_return",
      help="r: run until this frame returns; stops with the return value before it leaves (at a return stop: until "
           "the generated caller returns).")
def _return(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.set_return())


@verb("c", "continue", "cont", resumes=True, takes_arg=False, calls="set_continue",
      help="c: continue until the next breakpoint or active stop.")
def _continue(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.set_continue())


@verb("until", "unt", resumes=True, calls="set_until",
      help="until IDX: continue until this frame reaches instruction index IDX or later (or returns).")
def _until(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.set_until(_int(arg, what="index") if arg else None))


@verb("b", "break", calls="set_break", bare="list_breakpoints", history="bare",
      help="b [IDX] [if EXPR]: set a breakpoint at instruction index IDX of this code object; no IDX lists them (with "
           "the markers set_trace() and bytecode_debugger.breakpoint() compiled in; `cl` clears those too).")
def _break(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        return _ok(fmt.breakpoints_text(engine.list_breakpoints()))
    idx_text, _, cond = arg.partition(" ")
    cond = cond.strip()
    if cond:
        if not cond.startswith("if "):
            raise _Usage("usage: b IDX [if EXPR]")
        cond = cond[3:].strip()
        try:
            compile(cond, "<condition>", "eval")
        except SyntaxError as exc:
            raise _Usage(f"condition does not compile: {exc.msg}") from None
    bp = _check(engine.set_break(_int(idx_text, what="index"), cond or None))
    return _ok(fmt.breakpoint_set_text(bp), data=bp)


@verb("cl", "clear", calls="clear_break",
      help="cl [IDX]: clear the breakpoint at index IDX of this code object (all of them without IDX).")
def _clear(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        cleared = _check(engine.clear_break(None))
        code = engine.listing()
        name = code.name if not isinstance(code, EngineError) else "this code"
        return _ok(f"cleared {len(cleared)} breakpoint(s) in {name}", data=cleared)
    idx = _int(arg, what="index")
    cleared = _check(engine.clear_break(idx))
    return _ok(f"cleared breakpoint {cleared[0].number} at index {idx}", data=cleared)


@verb("bt", "where", "w", takes_arg=False, calls="current_stop", history=True, read_only=True,
      help="bt: the generated frames on the call stack, outermost first (> marks the selected one).")
def _backtrace(engine: "Engine", arg: str) -> CommandResult:
    stop = _stop(engine)
    return _ok(_marked(stop, fmt.backtrace_text(stop, _selected_index(stop))), data=stop)


def _selected_index(stop: Stop) -> int:
    return stop.selected if 0 <= stop.selected < len(stop.frames) else len(stop.frames) - 1


@verb("u", "up", calls="up",
      help="u [N]: select the caller's frame (outer), N levels up.")
def _up(engine: "Engine", arg: str) -> CommandResult:
    return _move_frame(engine, _int(arg, 1), up=True)


@verb("d", "down", calls="down",
      help="d [N]: select the callee's frame (inner), N levels down.")
def _down(engine: "Engine", arg: str) -> CommandResult:
    return _move_frame(engine, _int(arg, 1), up=False)


def _move_frame(engine: "Engine", count: int, up: bool) -> CommandResult:
    """`u`/`d` by `count` levels; the backtrace, and a line when fewer levels were left (a newcomer's `u 2` with
    one frame above went one up, and nothing said so)."""
    before = _stop(engine)
    stop = _check(engine.up(count) if up else engine.down(count))
    selected = _selected_index(stop)
    text = fmt.backtrace_text(stop, selected)
    moved = abs(selected - _selected_index(before))
    if 0 < moved < count:
        end = "the outermost" if up else "the innermost"
        text += f"\n(went {moved} level{'s' if moved > 1 else ''} {'up' if up else 'down'}, not {count}: " \
                f"#{selected} is {end} generated frame)"
    return _ok(text, data=stop)


@verb("l", "list", calls="current_stop", history=True, stateful=True,
      help="l [FIRST[, LAST]]: 11 instructions around the current one; again: the next 11; `l .`: around the current "
           "one again; FIRST: from index FIRST; FIRST, LAST: that range (LAST < FIRST: a count).")
def _list(engine: "Engine", arg: str, line: "CommandLine") -> CommandResult:
    stop = _stop(engine)
    fv = stop.selected_frame
    if fv is None:
        raise _Usage("nothing to list here")
    n = len(fv.code.instructions)
    where = (stop.seq, stop.selected)
    last = line.list_next
    arg = arg.strip()
    if arg in ("", ".") and not (arg == "" and last is not None and last[:2] == where):
        first = max(0, (fv.index if fv.index >= 0 else 0) - 5)
        end = first + 11
    elif arg == "":
        assert last is not None
        first = last[2]
        end = first + 11
        if first >= n:
            raise _Usage(f"end of the listing ({n} instructions); `l .` lists around the current one")
    else:
        a, comma, b = arg.partition(",")
        first = _int(a.strip(), what="FIRST")
        if comma:
            last_idx = _int(b.strip(), what="LAST")
            end = (first + last_idx if last_idx < first else last_idx) + 1
        else:
            end = first + 11
        if not 0 <= first < n:
            raise _Usage(f"index {first} is outside 0..{n - 1}")
    end = min(end, n)
    line.list_next = (stop.seq, stop.selected, end)
    return _ok(_marked(stop, fmt.listing(fv.code, current=fv.index, breakpoints=fv.breakpoints, span=(first, end),
                                         roles=_teaching(engine, "roles"))))


@verb("ll", "longlist", takes_arg=False, calls="current_stop", history=True, read_only=True,
      help="ll: the whole listing of this code object, with each instruction's role in Dynamo's code (column) and a "
           "header above each region (prologue, graph call, side effects, graph break, ...).")
def _longlist(engine: "Engine", arg: str) -> CommandResult:
    fv = _stop(engine).selected_frame
    if fv is None:
        raise _Usage("nothing to list here")
    return _ok(fmt.listing(fv.code, current=fv.index, breakpoints=fv.breakpoints, roles=_teaching(engine, "roles")),
               data=fv.code)


def _teaching(engine: "Engine", method: str) -> Any:
    """A teaching view (`roles`, `stack_provenance`) that only adds to a listing or the stack: None when the
    engine cannot give it here, so the plain listing still prints."""
    value = getattr(engine, method)()
    return None if isinstance(value, EngineError) else value


@verb("src", takes_arg=False, calls="source", history=True, read_only=True,
      help="src: the source of this function, the current line marked.")
def _src(engine: "Engine", arg: str) -> CommandResult:
    filename, start, lines = _check(engine.source())
    fv = _stop(engine).selected_frame
    return _ok(fmt.source_text(filename, start, lines, fv.lineno if fv is not None else None))


@verb("orig", takes_arg=False, calls="original_code", history=True, read_only=True,
      help="orig: the original bytecode of the function this generated code came from.")
def _orig(engine: "Engine", arg: str) -> CommandResult:
    view = _check(engine.original_code())
    return _ok(fmt.listing(view), data=view)


@verb("stack", takes_arg=False, calls="current_stop", history=True, read_only=True,
      help="stack: the value stack of the selected frame, bottom first, TOS last; after each slot the instruction "
           "that pushed it (a graph output names its FX node, a resume argument what it carries).")
def _stack(engine: "Engine", arg: str) -> CommandResult:
    stop = _stop(engine)
    fv = stop.selected_frame
    if fv is None or fv.index < 0:
        raise _Usage("no value stack at this stop")
    prov = _teaching(engine, "stack_provenance")
    consumed: tuple[SlotOrigin, ...] = ()
    n = len(fv.stack)
    if (stop.kind is StopKind.EXCEPTION and isinstance(prov, Provenance) and fv is stop.frame
            and not (n == 1 and fv.stack[0].unknown) and len(prov.slots) > n):
        # the raising instruction popped its operands before it failed: the live slots are the ones below them
        prov, consumed = replace(prov, slots=prov.slots[:n]), prov.slots[n:]
    text = fmt.stack_text(fv, prov)
    if consumed:
        from .format.notices import consumed_operands_text

        text += "\n" + consumed_operands_text(consumed)
    return _ok(_marked(stop, text), data=prov)


@verb("explain", calls="explain", history=True, read_only=True,
      help="explain [IDX]: what instruction IDX (default: the current one) does on this Python, its stack effect with "
           "the live values at this stop, and its role in Dynamo's generated code.")
def _explain(engine: "Engine", arg: str) -> CommandResult:
    index = _int(arg, what="IDX") if arg.strip() else None
    ex = _check(engine.explain(index))
    return _ok(fmt.explanation_text(ex), data=ex)


@verb("locals", calls="current_stop", history=True, read_only=True,
      help="locals [NAME]: the selected frame's local variables (* marks values changed since the last stop); NAME: "
           "that local's whole value (a tensor's values, not only its summary).")
def _locals(engine: "Engine", arg: str) -> CommandResult:
    stop = _stop(engine)
    fv = stop.selected_frame
    if fv is None:
        raise _Usage("no locals at this stop")
    if arg:
        if arg not in {name for name, _v in fv.locals}:
            raise _Usage(f"{arg!r} is not a bound local here")
        if stop.history is not None:  # only its summary was recorded
            summary = dict(fv.locals)[arg]
            return _ok(_marked(stop, f"{arg} = {fmt.value_text(summary)}"), data=summary)
        result = _check(engine.evaluate(arg))
        return _ok(f"{arg} = {result.text}", data=result)
    return _ok(_marked(stop, fmt.locals_text(fv)))


@verb("globals", calls="global_values", read_only=True,
      help="globals [PATTERN]: the selected frame's globals whose name contains PATTERN (Dynamo's __compiled_fn_* and "
           "__resume_at_* included).")
def _globals(engine: "Engine", arg: str) -> CommandResult:
    rows = _check(engine.global_values(arg or None))
    return _ok(fmt.globals_text(rows, arg or None), data=rows)


@verb("p", "print", calls="evaluate",
      help="p EXPR: evaluate EXPR in the selected frame (locals, globals, and __stack__, the value stack, bottom "
           "first; a NULL slot is <NULL>, the returned value at a return stop). A line that is no command is run as "
           "Python, as in pdb: `2 + 2`, `x.shape`.")
def _print(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        raise _Usage("usage: p EXPR")
    result = engine.evaluate(arg)
    if isinstance(result, EngineError):
        return CommandResult(error=result.message)
    return _ok(result.text, data=result)


@verb("!", calls="exec_statement",
      help="!STMT: execute a statement in the selected frame; assigning a local changes it in the frame (as `set`), "
           "any other name stays defined for later commands (`!tmp = 42`, then `p tmp`).")
def _exec(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        raise _Usage("usage: !STMT")
    result = engine.exec_statement(arg)
    if isinstance(result, EngineError):
        return CommandResult(error=result.message)
    return _statement_output(engine, result)


@verb("set", calls="set_local",
      help="set NAME = EXPR: change a local of the selected frame for the rest of the run.")
def _set(engine: "Engine", arg: str) -> CommandResult:
    name, eq, expr = arg.partition("=")
    name, expr = name.strip(), expr.strip()
    if not eq or not name.isidentifier() or not expr:
        raise _Usage("usage: set NAME = EXPR")
    summary = engine.set_local(name, expr)
    if isinstance(summary, EngineError):
        return CommandResult(error=summary.message)
    return _ok(f"{name} = {summary.text}", data=summary)


@verb("watch", "display", calls="add_watch", bare="watches", history="bare",
      help="watch [EXPR]: evaluate EXPR in the selected frame at every stop (* marks a change); no EXPR lists the "
           "watches.")
def _watch(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        values = engine.watches()
        return _ok(fmt.watches_text(values) or "no watches", data=values)
    value = _check(engine.add_watch(arg))
    return _ok(f"watch {value.number}: {fmt.watch_line(value)}", data=value)


@verb("unwatch", "undisplay", calls="remove_watch",
      help="unwatch N: remove watch N.")
def _unwatch(engine: "Engine", arg: str) -> CommandResult:
    value = _check(engine.remove_watch(_int(arg, what="watch number")))
    return _ok(f"removed watch {value.number}: {value.expr}", data=value)


@verb("guards", calls="guard_trees", read_only=True,
      help="guards [fail]: the guard tree of this cache entry, each leaf checked on this call's inputs, then one line "
           "per guard type: what it checks, what change of input fails it.")
def _guards(engine: "Engine", arg: str) -> CommandResult:
    if arg not in ("", "fail"):
        raise _Usage("usage: guards [fail]")
    trees = _check(engine.guard_trees())
    if arg == "fail":
        return _ok(fmt.failing_guards_text(trees), data=list(trees))
    return _ok(fmt.guard_trees_text(trees, explain=True), data=trees[0])


@verb("whatif", takes_arg=False, calls="what_if", read_only=True,
      help="whatif: check this call's inputs against every cache entry of the code object: which would serve it.")
def _whatif(engine: "Engine", arg: str) -> CommandResult:
    trees = _check(engine.what_if())
    return _ok(fmt.whatif_text(trees), data=list(trees))


@verb("entries", takes_arg=False, calls="entries", history=True, read_only=True,
      help="entries: the cache entries of this code object, newest first, with hit counts and its recompiles.")
def _entries(engine: "Engine", arg: str) -> CommandResult:
    fr = _check(engine.entries())
    return _ok(fmt.entries_text(fr), data=fr)


@verb("compiles", takes_arg=False, calls="compiles", history=True, read_only=True, after_end=True,
      help="compiles: every code object Dynamo compiled so far: entries with hits, graph breaks, the recompile "
           "timeline.")
def _compiles(engine: "Engine", arg: str) -> CommandResult:
    data = engine.compiles()
    return _ok(fmt.compiles_text(data), data=data)


@verb("graph", calls="graphs", history=True, read_only=True,
      help="graph [NAME]: the FX graph(s) this cache entry calls (or the graph whose name contains NAME).")
def _graph(engine: "Engine", arg: str) -> CommandResult:
    graphs = _check(engine.graphs(arg or None))
    return _ok(fmt.graphs_text(graphs), data=list(graphs))


@verb("recompile", resumes=True, takes_arg=False, calls="decide",
      help="recompile: (recompile stop) let Dynamo compile a new cache entry for this call (the default).")
def _recompile(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.decide(Decision(DecisionKind.RECOMPILE)))


@verb("eager", resumes=True, takes_arg=False, calls="decide",
      help="eager: (recompile stop) run this call without compiling; later calls may still compile.")
def _eager(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.decide(Decision(DecisionKind.EAGER)))


@verb("skip", resumes=True, takes_arg=False, calls="decide",
      help="skip: (recompile stop) stop compiling this code object; existing entries still serve calls.")
def _skip(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.decide(Decision(DecisionKind.SKIP)))


@verb("drop", resumes=True, calls="decide",
      help="drop [ID...]: (recompile stop) drop guards from the entry compiled next, then recompile (default: every "
           "failing guard of the first entry listed; IDs as `g5` or `0/1:g5`).")
def _drop(engine: "Engine", arg: str) -> CommandResult:
    return _resumed(engine.decide(Decision(DecisionKind.DROP, tuple(arg.replace(",", " ").split()))))


@verb("dynamic", resumes=True, calls="decide",
      help="dynamic NAME DIM: (recompile stop) mark dimension DIM of input tensor NAME dynamic "
           "(torch._dynamo.mark_dynamic), then recompile.")
def _dynamic(engine: "Engine", arg: str) -> CommandResult:
    parts = arg.split()
    if len(parts) != 2:
        raise _Usage("usage: dynamic NAME DIM   (e.g. dynamic x 0)")
    name, dim_text = parts
    try:
        dim = int(dim_text)
    except ValueError:
        raise _Usage(f"DIM must be an integer, not {dim_text!r}") from None
    stop = _stop(engine)
    if stop.kind is not StopKind.RECOMPILE:
        raise _Usage("only at a recompile stop")
    return _resumed(engine.decide(Decision(DecisionKind.DYNAMIC, name=name, dim=dim)))


@verb("why", calls="recompile_records", history=True, read_only=True,
      help="why [COMPILE_ID] [--all]: why this code object recompiled: every failing guard of every entry (guards "
           "that repeat on sibling sources as one group; --all lists each), guard diffs, recompile limit (at a "
           "recompile stop: this one).")
def _why(engine: "Engine", arg: str) -> CommandResult:
    words = arg.split()
    full = "--all" in words
    arg = " ".join(w for w in words if w != "--all")
    records = _check(engine.recompile_records(arg or None))
    stop = _stop(engine)
    if stop.kind is StopKind.RECOMPILE and not arg:
        return _ok(fmt.record_text(records[0], full=full), data=records[0])
    if not records:
        orig = engine.original_code()
        name = orig.name if not isinstance(orig, EngineError) else "this code"
        return _ok(f"{name} has not recompiled in this run", data=())
    return _ok("\n\n".join(fmt.record_text(r, full=full) for r in records), data=records)


@verb("diff", calls="guard_diffs", history=True, read_only=True,
      help="diff [OLD NEW]: guard differences between this code object's cache entries (consecutive ones, or OLD to "
           "NEW).")
def _diff(engine: "Engine", arg: str) -> CommandResult:
    parts = arg.split()
    if len(parts) not in (0, 2):
        raise _Usage("usage: diff [OLD_COMPILE_ID NEW_COMPILE_ID]")
    diffs = _check(engine.guard_diffs(*parts) if parts else engine.guard_diffs())
    if not diffs:
        return _ok("fewer than two cache entries: nothing to compare", data=())
    return _ok(fmt.diffs_text(diffs, max_per_pair=200), data=diffs)


def _edit_op(engine: "Engine", kind: str, arg: str) -> CommandResult:
    """``edit``, ``insert`` and ``delete``: parse the op, install it, say what it did."""
    from .edits import parse_edit

    op = parse_edit(kind, arg)
    if isinstance(op, EditError):
        return CommandResult(error=str(op))
    outcome = _check(engine.apply_edit(op))
    if outcome.error is not None:
        hint = ""
        if kind == "insert" and outcome.error.kind.startswith("stack") and len(op.instrs) == 1:
            hint = f"  (to insert several instructions at once: insert {op.index} {op.instrs[0].text}; ...)"
        return CommandResult(error=str(outcome.error) + hint, data=outcome)
    return _ok(fmt.edit_outcome_text(outcome), data=outcome)


@verb("edit", calls="apply_edit",
      help="edit IDX OPNAME [ARG]: replace instruction IDX of this generated code (compile stop: this call; else from "
           "the next call).")
def _edit(engine: "Engine", arg: str) -> CommandResult:
    return _edit_op(engine, "edit", arg)


@verb("insert", calls="apply_edit",
      help="insert IDX OPNAME [ARG][; OPNAME [ARG]...]: insert instructions before IDX (jumps to IDX reach the first).")
def _insert(engine: "Engine", arg: str) -> CommandResult:
    return _edit_op(engine, "insert", arg)


@verb("delete", calls="apply_edit",
      help="delete IDX: remove instruction IDX of this generated code.")
def _delete(engine: "Engine", arg: str) -> CommandResult:
    return _edit_op(engine, "delete", arg)


_PATCH_USAGE = "usage: patch show|list|save FILE|load FILE|undo [all]"


@verb("patch", calls="patch_diff",
      help="patch show|list|save FILE|load FILE|undo [all]: the instruction edits of this code: diff, files, undo.")
def _patch(engine: "Engine", arg: str) -> CommandResult:
    try:
        words = shlex.split(arg)
    except ValueError as exc:
        return CommandResult(error=f"{_PATCH_USAGE} ({exc})")
    sub, rest = (words[0], words[1:]) if words else ("show", [])
    if sub == "show" and not rest:
        found = engine.patch_diff()
        if isinstance(found, EditError):
            return CommandResult(error=str(found))
        diff = _check(found)
        return _ok(fmt.format_diff(diff), data=diff)
    if sub == "list" and not rest:
        views = engine.patches()
        return _ok(fmt.patches_text(views), data=list(views))
    if sub == "save" and len(rest) == 1:
        count = _check(engine.save_patches(rest[0]))
        if isinstance(count, EditError):
            return CommandResult(error=str(count))
        return _ok(f"saved {count} patch(es) to {rest[0]}", data=count)
    if sub == "load" and len(rest) == 1:
        outcome = _check(engine.load_patches(rest[0]))
        if outcome.error is not None:
            return CommandResult(error=str(outcome.error), data=outcome)
        return _ok(fmt.edit_outcome_text(outcome), data=outcome)
    if sub == "undo" and rest in ([], ["all"]):
        outcome = _check(engine.undo_patch(everything=bool(rest)))
        if outcome.error is not None:
            return CommandResult(error=str(outcome.error), data=outcome)
        return _ok(outcome.message, data=outcome)
    return CommandResult(error=_PATCH_USAGE)


@verb("guard", calls="add_guard", bare="guard_edits",
      help="guard add SOURCE [TYPE]|SOURCE == VALUE|EXPR, drop ID, export, undo [N|all]: edit this entry's guards "
           "(SOURCE as torch writes it, e.g. L['x'].dtype: a real leaf guard on a copy of the entry; EXPR over L and "
           "G: an expression guard; ID from `guards`); no argument lists the edits.")
def _guard(engine: "Engine", arg: str) -> CommandResult:
    sub, _, rest = arg.strip().partition(" ")
    if not sub:
        views = engine.guard_edits()
        return _ok("\n".join(fmt.guard_edit_line(v) for v in views) or "no guard edits", data=list(views))
    if sub == "export" and not rest.strip():
        text = engine.export_guard_filter()
        return _ok(text, data=text)
    if sub in ("add", "drop", "undo"):
        call = {"add": engine.add_guard, "drop": engine.drop_guard, "undo": engine.undo_guard_edit}[sub]
        outcome = _check(call(rest))
        if outcome.error is not None:
            return CommandResult(error=outcome.error.message, data=outcome)
        text = outcome.message + (f"\n{fmt.warning_line(outcome.warning)}" if outcome.warning else "")
        return _ok(text, data=outcome)
    return CommandResult(error="usage: guard add SOURCE [TYPE] | guard add SOURCE == VALUE | guard add EXPR | "
                               "guard drop ID | guard export | guard undo [N|all]")


@verb("v", "verbose", calls="set_verbose", history=True,
      help="v: verbose mode on/off: print every generated instruction before it runs (flushed: the last line before a "
           "crash names the culprit).")
def _verbose(engine: "Engine", arg: str) -> CommandResult:
    if arg not in ("", "on", "off"):
        raise _Usage("usage: v [on|off]")
    on = engine.set_verbose(None if not arg else arg == "on")
    return _ok("verbose mode on: every generated instruction is printed before it runs" if on
               else "verbose mode off")


@verb("break-on", calls="set_break_on", history=True,
      help="break-on [KIND on|off]: show or switch a stop kind (compile, entry, recompile, graph-break, exception, "
           "reentry: the next call of a code object you stepped in; trace, trace-break, trace-error inside Dynamo's "
           "tracing).")
def _break_on(engine: "Engine", arg: str) -> CommandResult:
    if not arg:
        active = _check(engine.set_break_on())
        return _ok("active stops: " + (", ".join(k for k in BREAK_ON_KINDS if k in active) or "none"))
    try:
        kind, state = shlex.split(arg)
    except ValueError:
        raise _Usage("usage: break-on KIND on|off") from None
    if kind not in BREAK_ON_KINDS:
        raise _Usage(f"unknown stop kind {kind!r} (known: {', '.join(BREAK_ON_KINDS)})")
    if state not in ("on", "off"):
        raise _Usage("usage: break-on KIND on|off")
    _check(engine.set_break_on(kind, state == "on"))
    return _ok(f"break on {kind}: {state}")


@verb("detach", resumes=True, takes_arg=False, calls="detach",
      help="detach: clear breakpoints and every stop kind, then run the program to its end.")
def _detach(engine: "Engine", arg: str) -> CommandResult:
    running = not engine.paused
    result = _resumed(engine.detach())
    # detached while the program runs: nothing resumes, so the command says it took effect
    return replace(result, output="detached") if running else result


@verb("back", "bk", calls="back", history=True,
      help="back [N]: show the stop N stops before the one shown (default 1), from the recorded history: its "
           "instruction, value stack and locals, read-only (`stack`, `locals`, `bt`, `l` show it too); any step or "
           "continue first returns to the present.")
def _back(engine: "Engine", arg: str) -> CommandResult:
    count = _int(arg, 1)
    if count < 1:
        raise _Usage(f"back: count must be at least 1, not {count}")
    view = _check(engine.back(count))
    return _ok(fmt.history_view_text(view, _teaching(engine, "roles")), data=view)


@verb("forward", "fwd", calls="forward", history=True,
      help="forward [N]: N recorded stops toward the present (default 1); reaching it leaves the history.")
def _forward(engine: "Engine", arg: str) -> CommandResult:
    count = _int(arg, 1)
    if count < 1:
        raise _Usage(f"forward: count must be at least 1, not {count}")
    view = _check(engine.forward(count))
    return _ok(fmt.history_view_text(view, _teaching(engine, "roles")), data=view)


@verb("present", calls="present", history=True,
      help="present: leave the history and show the live stop again.")
def _present(engine: "Engine", arg: str) -> CommandResult:
    if arg:
        raise _Usage("usage: present")
    was = _history_mark(engine)
    stop = _check(engine.present())
    head = "back to the present" if was is not None else "already at the present"
    return _ok(f"{head}\n{fmt.stop_text(stop)}", data=stop)


@verb("history", calls="set_history_bounds", bare="history_info", history=True,
      help="history [limit N | memory KB | every on|off]: the recorded stops (newest last, > marks the one shown), "
           "how many are kept and their memory; `history limit N` keeps at most N stops (0: off), `history memory KB` "
           "at most KB kibibytes; `history every on` also records each instruction `s N`, `n N`, `until` and `r` run "
           "through (a summary per instruction: slower stepping).")
def _history(engine: "Engine", arg: str) -> CommandResult:
    words = arg.split()
    if not words:
        info = engine.history_info()
        return _ok(fmt.history_info_text(info), data=info)
    if len(words) == 2 and words[0] == "every":
        if words[1] not in ("on", "off"):
            raise _Usage("usage: history every on|off")
        info = _check(engine.set_history_bounds(every=words[1] == "on"))
        return _ok(fmt.history_info_text(info), data=info)
    if len(words) != 2 or words[0] not in ("limit", "memory"):
        raise _Usage("usage: history [limit N | memory KB | every on|off]")
    n = _int(words[1], what=words[0])
    if n < 0:
        raise _Usage(f"history {words[0]} must be 0 or more, not {n}")
    info = _check(engine.set_history_bounds(limit=n) if words[0] == "limit"
                  else engine.set_history_bounds(max_bytes=n * 1024))
    return _ok(fmt.history_info_text(info), data=info)


@verb("h", "help", "?", calls=None, history=True, read_only=True, after_end=True,
      help="h [CMD]: help on every command, or on one.")
def _help(engine: "Engine", arg: str) -> CommandResult:
    if arg:
        spec = BY_NAME.get(ALIASES.get(arg, arg))
        if spec is None:
            raise _Usage(f"no help for {arg!r}")
        return _ok(spec.help)
    return _ok(help_text())


@verb("q", "quit", "exit", resumes=True, takes_arg=False, calls="quit", after_end=True,
      help="q: end the program and restore every hook the debugger installed.")
def _quit(engine: "Engine", arg: str) -> CommandResult:
    engine.quit()
    return CommandResult(output="quit", quit=True)


# ==============================================================================================================
# the tables, read off the registered verbs
# ==============================================================================================================

#: Every verb, in the order help lists them: these, then the trace stops' (Dynamo's own tracing).
COMMANDS: tuple[CommandSpec, ...] = tuple(_verbs.specs) + tuple(trace_commands.VERBS.specs)

BY_NAME: dict[str, CommandSpec] = {c.name: c for c in COMMANDS}
#: alias -> verb
ALIASES: dict[str, str] = {a: c.name for c in COMMANDS for a in c.aliases}
#: Every spelling (verbs and aliases) of a verb that lets the program go on.
RESUMING: frozenset[str] = frozenset(
    [c.name for c in COMMANDS if c.resumes] + [a for c in COMMANDS if c.resumes for a in c.aliases])
#: Verbs that work while a recorded stop is shown (`back`), with or without an argument (``b`` and ``watch``
#: only without one: `CommandSpec.history`). Resuming verbs go back to the present first; every other verb is
#: refused there (it would read or change the live frame).
HISTORY_OK: frozenset[str] = frozenset(c.name for c in COMMANDS if c.history)
#: Verbs that still work once the program has finished: help, the compile summary, and `q` (the front end leaves).
AFTER_END: frozenset[str] = frozenset(c.name for c in COMMANDS if c.after_end)
#: Verbs that only read: they change neither the program, the selected frame, breakpoints, watches, the code nor
#: what the next command shows, so running one again answers the same (`dynadbg learn` reads the text of a key's
#: answer, such as ``X`` for ``explain``, this way).
READ_ONLY: frozenset[str] = frozenset(c.name for c in COMMANDS if c.read_only)
assert len(BY_NAME) == len(COMMANDS), "one row per verb"
