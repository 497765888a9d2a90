"""The command language shared by the TUI console and `--plain` (DESIGN.md), run on the worker thread.

Like `pdb.Pdb`, each command is a ``do_*`` method whose docstring is its help; unlike pdb, nothing is printed:
each returns a `CommandResult` (output text, an error line, whether the program resumed). An unknown or
malformed command returns an error and changes nothing.
"""

from __future__ import annotations

import linecache
import shlex
from typing import TYPE_CHECKING, Any, Callable

from . import compat
from . import format as fmt
from .cmd_edit import EditCommands
from .cmd_recompile import RecompileCommands
from .model import BREAK_ON_KINDS, CommandResult, GuardTree, StopKind

if TYPE_CHECKING:
    from .session import PauseContext, Session

ALIASES = {
    "step": "s", "next": "n", "return": "r", "continue": "c", "cont": "c", "break": "b", "clear": "cl",
    "where": "bt", "w": "bt", "up": "u", "down": "d", "list": "l", "longlist": "ll", "print": "p",
    "quit": "q", "exit": "q", "help": "h", "?": "h", "unt": "until",
}

#: Commands that may run while the program is running (they touch no frame and no torch state).
RUNNING_OK = {"h", "break-on", "compiles"}


def ok(text: str = "", data: Any = None) -> CommandResult:
    return CommandResult(output=text, data=data)


def err(text: str) -> CommandResult:
    return CommandResult(error=text)


def resumed(text: str = "") -> CommandResult:
    return CommandResult(output=text, resumed=True)


class CommandSet(RecompileCommands, EditCommands):
    """Parses and runs command lines against a `Session`'s current stop."""

    def __init__(self, session: "Session") -> None:
        self.s = session

    # -- dispatch --------------------------------------------------------------------------------------------
    def split(self, line: str) -> tuple[str, str] | None:
        line = line.strip()
        if not line:
            return None
        if line.startswith("!"):
            return "!", line[1:].strip()
        name, _, arg = line.partition(" ")
        name = ALIASES.get(name, name)
        return name, arg.strip()

    def handler(self, name: str) -> Callable[[str], CommandResult] | None:
        if name == "!":
            return self.do_exec
        return getattr(self, "do_" + name.replace("-", "_"), None)

    def dispatch(self, line: str) -> CommandResult:
        """Run one line while the program is paused (worker thread)."""
        parts = self.split(line)
        if parts is None:
            return err("empty command (h for help)")
        name, arg = parts
        fn = self.handler(name)
        if fn is None:
            return err(f"unknown command {name!r} (h for help)")
        if self.s.ctx is None and name not in RUNNING_OK and name not in ("q", "detach"):
            return err("the program is not paused")
        try:
            return fn(arg)
        except _Usage as exc:
            return err(str(exc))

    def dispatch_running(self, line: str) -> CommandResult:
        """Run one line while the program runs (any thread): only commands that touch no frame."""
        parts = self.split(line)
        if parts is None:
            return err("empty command (h for help)")
        name, arg = parts
        if self.s.finished:
            if name in ("h", "compiles"):
                return self.handler(name)(arg)  # type: ignore[misc]
            return err("the program has finished")
        if name == "q":
            self.s.quit()
            return CommandResult(output="quit", quit=True)
        if name not in RUNNING_OK:
            if self.handler(name) is None:
                return err(f"unknown command {name!r} (h for help)")
            return err(f"the program is running; {name!r} needs a stop (Ctrl+C interrupts)")
        try:
            return self.handler(name)(arg)  # type: ignore[misc]
        except _Usage as exc:
            return err(str(exc))

    # -- helpers ---------------------------------------------------------------------------------------------
    @property
    def ctx(self) -> "PauseContext":
        assert self.s.ctx is not None
        return self.s.ctx

    def current_code(self) -> Any:
        ctx = self.ctx
        if ctx.frame is not None:
            return ctx.frame.frame.f_code
        if ctx.compile_event is not None:
            return ctx.compile_event.code
        return None

    def frame_view(self):  # noqa: ANN201
        stop = self.ctx.stop
        if stop is None or not stop.frames:
            return None
        sel = self.ctx.selected if self.ctx.frames else len(stop.frames) - 1
        return stop.frames[sel]

    def need_frame(self):  # noqa: ANN201
        if self.ctx.frame is None or self.ctx.frame.frame is None:
            raise _Usage(f"no frame at a {self.ctx.kind.value} stop")
        return self.ctx.frame

    @staticmethod
    def int_arg(arg: str, default: int | None = None, what: str = "count") -> int:
        if not arg:
            if default is None:
                raise _Usage(f"missing {what}")
            return default
        try:
            value = int(arg)
        except ValueError:
            raise _Usage(f"{what} must be an integer, not {arg!r}") from None
        return value

    def eval_namespace(self) -> tuple[dict[str, Any], dict[str, Any]]:
        if self.ctx.frame is None and self.ctx.miss_event is not None:
            # a recompile stop has no frame yet: evaluate over the inputs of the call that missed
            import builtins

            return {"__builtins__": builtins}, dict(self.ctx.miss_event.f_locals)
        st = self.need_frame()
        frame = st.frame
        ns = dict(frame.f_locals)
        current = st is self.ctx.frames[-1]
        stack = st.exact_stack() if current and not self.ctx.post_mortem else None
        if stack is None:
            if self.ctx.post_mortem or st.depth <= 0:
                stack = []
            else:
                stack = st.tracked_stack() if current else st.safe_stack()
        ns["__stack__"] = [None if v is compat.NULL_STACK_VALUE else v for v in stack]
        return frame.f_globals, ns

    # -- resuming ----------------------------------------------------------------------------------------------
    def _resume(self, mode: Any, count: int = 1) -> CommandResult:
        s = self.s
        s.mode, s.count = mode, count
        if self.ctx.kind is StopKind.RECOMPILE and self.ctx.decision is None:
            self.ctx.decision = "recompile"
        return resumed()

    def do_s(self, arg: str) -> CommandResult:
        """s [N]: step N instructions (default 1), into generated callees such as resume functions."""
        from .session import Mode

        n = self.int_arg(arg, 1)
        if n < 1:
            raise _Usage("count must be at least 1")
        return self._resume(Mode.STEP, n)

    def do_n(self, arg: str) -> CommandResult:
        """n [N]: step N instructions in this frame, over calls (stops in the caller after a return)."""
        from .session import Mode

        n = self.int_arg(arg, 1)
        if n < 1:
            raise _Usage("count must be at least 1")
        if self.ctx.frame is None:
            return self._resume(Mode.STEP, 1)
        self._select_target()
        return self._resume(Mode.NEXT, n)

    def _select_target(self) -> None:
        # stepping commands work on the selected frame (after u/d), like pdb
        ctx = self.ctx
        if ctx.frames and ctx.selected != len(ctx.frames) - 1:
            ctx.frames = ctx.frames[: ctx.selected + 1]

    def do_r(self, arg: str) -> CommandResult:
        """r: run until this frame returns; stops with the return value before it leaves."""
        from .session import Mode

        self.need_frame()
        self._select_target()
        return self._resume(Mode.RETURN)

    def do_c(self, arg: str) -> CommandResult:
        """c: continue until the next breakpoint or active stop."""
        from .session import Mode

        return self._resume(Mode.CONTINUE)

    def do_until(self, arg: str) -> CommandResult:
        """until IDX: continue until this frame reaches instruction index IDX or later (or returns)."""
        from .session import Mode

        st = self.need_frame()
        idx = self.int_arg(arg, st.index + 1, "index")
        if not 0 <= idx < len(st.table.instructions):
            raise _Usage(f"index {idx} is outside 0..{len(st.table.instructions) - 1}")
        self._select_target()
        self.s.until_index = idx
        return self._resume(Mode.UNTIL)

    def do_detach(self, arg: str) -> CommandResult:
        """detach: clear breakpoints and every stop kind, then run the program to its end."""
        from .session import Mode

        self.s.breakpoints.clear()
        self.s.break_on.clear()
        if self.s.ctx is None:
            return ok("detached")
        return self._resume(Mode.CONTINUE)

    def do_q(self, arg: str) -> CommandResult:
        """q: end the program and restore every hook the debugger installed."""
        self.s._quitting = True
        return CommandResult(output="quit", quit=True)

    # -- recompile-stop choices ------------------------------------------------------------------------------
    def _choice(self, decision: str) -> CommandResult:
        from .session import Mode

        if self.ctx.kind is not StopKind.RECOMPILE:
            raise _Usage("only at a recompile stop")
        self.ctx.decision = decision
        self.s.mode = Mode.CONTINUE
        return resumed(decision + self._choice_note(decision))

    def do_recompile(self, arg: str) -> CommandResult:
        """recompile: (recompile stop) let Dynamo compile a new cache entry for this call (the default)."""
        return self._choice("recompile")

    def do_eager(self, arg: str) -> CommandResult:
        """eager: (recompile stop) run this call without compiling; later calls may still compile."""
        return self._choice("eager")

    def do_skip(self, arg: str) -> CommandResult:
        """skip: (recompile stop) stop compiling this code object; existing entries still serve calls."""
        return self._choice("skip")

    # -- breakpoints ---------------------------------------------------------------------------------------------
    def do_b(self, arg: str) -> CommandResult:
        """b [IDX] [if EXPR]: set a breakpoint at instruction index IDX of this code object; no IDX lists them."""
        if not arg:
            return ok(self._breakpoint_list())
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
        idx = self.int_arg(idx_text, what="index")
        code = self.current_code()
        if code is None:
            raise _Usage("no code object here to set a breakpoint in")
        n = len(self.s.code_view(code).instructions)
        if not 0 <= idx < n:
            raise _Usage(f"index {idx} is outside 0..{n - 1}")
        bp = self.s.add_breakpoint(code, idx, cond or None)
        ins = self.s.code_view(code).instructions[idx]
        self._refresh_breakpoints()
        return ok(f"breakpoint {bp.number} at {code.co_name} index {idx} ({ins.opname})" + (f" if {cond}" if cond else ""))

    def do_cl(self, arg: str) -> CommandResult:
        """cl [IDX]: clear the breakpoint at index IDX of this code object (all of them without IDX)."""
        code = self.current_code()
        if code is None:
            raise _Usage("no code object here")
        if not arg:
            n = len(self.s.breakpoints.pop(id(code), {}))
            self._refresh_breakpoints()
            return ok(f"cleared {n} breakpoint(s) in {code.co_name}")
        idx = self.int_arg(arg, what="index")
        bp = self.s.clear_breakpoint(code, idx)
        if bp is None:
            raise _Usage(f"no breakpoint at index {idx}")
        self._refresh_breakpoints()
        return ok(f"cleared breakpoint {bp.number} at index {idx}")

    def _refresh_breakpoints(self) -> None:
        # the stop snapshot is immutable: rebuild it so front ends see the new gutter
        from dataclasses import replace

        ctx = self.ctx
        if ctx.stop is None or not ctx.stop.frames:
            return
        frames = []
        for fv in ctx.stop.frames:
            code_bps = self.s.breakpoints.get(fv.code.key, {})
            frames.append(replace(fv, breakpoints=tuple(sorted(code_bps))))
        ctx.stop = replace(ctx.stop, frames=tuple(frames))

    def _breakpoint_list(self) -> str:
        rows = [bp for bps in self.s.breakpoints.values() for bp in bps.values()]
        if not rows:
            return "no breakpoints"
        rows.sort(key=lambda b: b.number)
        return "\n".join(
            f"{bp.number:>3}  {bp.code.co_name} index {bp.index}  hits {bp.hits}" + (f"  if {bp.condition}" if bp.condition else "")
            for bp in rows
        )

    # -- frames ------------------------------------------------------------------------------------------------
    def do_bt(self, arg: str) -> CommandResult:
        """bt: the generated frames on the call stack, outermost first (> marks the selected one)."""
        stop = self.ctx.stop
        assert stop is not None
        return ok(fmt.backtrace_text(stop, self.ctx.selected))

    def do_u(self, arg: str) -> CommandResult:
        """u: select the caller's frame (outer)."""
        if self.ctx.selected <= 0:
            raise _Usage("already at the outermost generated frame")
        self.ctx.selected -= 1
        return self.do_bt("")

    def do_d(self, arg: str) -> CommandResult:
        """d: select the callee's frame (inner)."""
        if self.ctx.selected >= len(self.ctx.frames) - 1:
            raise _Usage("already at the innermost frame")
        self.ctx.selected += 1
        return self.do_bt("")

    # -- listings ----------------------------------------------------------------------------------------------
    def do_l(self, arg: str) -> CommandResult:
        """l: the instructions around the current one."""
        fv = self.frame_view()
        if fv is None:
            raise _Usage("nothing to list here")
        return ok(fmt.listing(fv.code, current=fv.index, breakpoints=fv.breakpoints, around=5 if fv.index >= 0 else None))

    def do_ll(self, arg: str) -> CommandResult:
        """ll: the whole listing of this code object."""
        fv = self.frame_view()
        if fv is None:
            raise _Usage("nothing to list here")
        return ok(fmt.listing(fv.code, current=fv.index, breakpoints=fv.breakpoints), data=fv.code)

    def _original_code(self) -> Any:
        ctx = self.ctx
        if ctx.miss_event is not None:
            return ctx.miss_event.code
        if ctx.compile_event is not None:
            return ctx.compile_event.original
        code = self.current_code()
        info = self.s.generated_info(code) if code is not None else None
        return info[0] if info else None

    def do_orig(self, arg: str) -> CommandResult:
        """orig: the original bytecode of the function this generated code came from."""
        from .disasm import code_view

        orig = self._original_code()
        if orig is None:
            raise _Usage("the original code of this frame is not known")
        view = code_view(orig, generated=False)
        return ok(fmt.listing(view), data=view)

    def do_src(self, arg: str) -> CommandResult:
        """src: the source of this function, the current line marked."""
        orig = self._original_code()
        fv = self.frame_view()
        code = orig or (self.current_code())
        if code is None:
            raise _Usage("no source here")
        import inspect

        try:
            lines, start = inspect.getsourcelines(code)
        except (OSError, TypeError):
            lines = [linecache.getline(code.co_filename, code.co_firstlineno)]
            start = code.co_firstlineno
            if not lines[0]:
                raise _Usage(f"source of {code.co_name} is not available") from None
        current = fv.lineno if fv is not None else None
        out = [f"{code.co_filename}:{start}"]
        for i, text in enumerate(lines):
            no = start + i
            out.append(f"{'▶' if no == current else ' '}{no:>5}  {text.rstrip()}")
        return ok("\n".join(out))

    # -- inspection --------------------------------------------------------------------------------------------
    def do_stack(self, arg: str) -> CommandResult:
        """stack: the value stack of the selected frame, bottom first, TOS last."""
        fv = self.frame_view()
        if fv is None or fv.index < 0:
            raise _Usage("no value stack at this stop")
        return ok(fmt.stack_text(fv))

    def do_locals(self, arg: str) -> CommandResult:
        """locals: the selected frame's local variables (* marks values changed since the last stop)."""
        fv = self.frame_view()
        if fv is None:
            raise _Usage("no locals at this stop")
        return ok(fmt.locals_text(fv))

    def do_p(self, arg: str) -> CommandResult:
        """p EXPR: evaluate EXPR in the selected frame (locals, globals, and __stack__, the value stack)."""
        if not arg:
            raise _Usage("usage: p EXPR")
        g, ns = self.eval_namespace()
        try:
            code = compile(arg, "<p>", "eval")
        except SyntaxError as exc:
            raise _Usage(f"syntax error: {exc.msg}") from None
        try:
            value = eval(code, g, ns)  # noqa: S307 - the user's own expression in their own program
        except Exception as exc:  # noqa: BLE001
            return err(f"{type(exc).__name__}: {exc}")
        from .values import cut

        try:
            text = repr(value)
        except Exception as exc:  # noqa: BLE001
            text = f"<repr failed: {exc}>"
        return ok(cut(text, 2000))

    def do_exec(self, arg: str) -> CommandResult:
        """!STMT: execute a statement in the selected frame (use `set` to change a local for the rest of the run)."""
        if not arg:
            raise _Usage("usage: !STMT")
        g, ns = self.eval_namespace()
        try:
            code = compile(arg, "<!>", "single")
        except SyntaxError as exc:
            raise _Usage(f"syntax error: {exc.msg}") from None
        import contextlib
        import io

        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                exec(code, g, ns)  # noqa: S102 - the user's own statement
        except Exception as exc:  # noqa: BLE001
            return err(f"{type(exc).__name__}: {exc}")
        return ok(buf.getvalue().rstrip("\n"))

    def do_set(self, arg: str) -> CommandResult:
        """set NAME = EXPR: change a local of the selected frame for the rest of the run."""
        name, eq, expr = arg.partition("=")
        name, expr = name.strip(), expr.strip()
        if not eq or not name.isidentifier() or not expr:
            raise _Usage("usage: set NAME = EXPR")
        st = self.need_frame()
        frame = st.frame
        code = frame.f_code
        if name not in code.co_varnames + code.co_cellvars + code.co_freevars:
            raise _Usage(f"{name!r} is not a local of {code.co_name}")
        if self.ctx.post_mortem:
            raise _Usage("the frame has finished (post-mortem): locals cannot change")
        g, ns = self.eval_namespace()
        try:
            value = eval(compile(expr, "<set>", "eval"), g, ns)  # noqa: S307
        except SyntaxError as exc:
            raise _Usage(f"syntax error: {exc.msg}") from None
        except Exception as exc:  # noqa: BLE001
            return err(f"{type(exc).__name__}: {exc}")
        frame.f_locals[name] = value
        compat.locals_to_fast(frame)
        self._rebuild_stop()
        from .values import summarize

        return ok(f"{name} = {summarize(value).text}")

    def _rebuild_stop(self) -> None:
        from .snapshot import build_stop

        ctx = self.ctx
        if ctx.stop is not None:
            ctx.stop = build_stop(self.s, ctx, ctx.stop.message)

    # -- guards and compiles -------------------------------------------------------------------------------------
    def current_guard_tree(self) -> GuardTree | None:
        """Guard tree of the entry serving the selected frame (or built at a compile stop), evaluated on inputs."""
        trees = self._guard_trees()
        return trees[0] if trees else None

    def _guard_trees(self) -> list[GuardTree]:
        guards = _guards_module()
        ctx = self.ctx
        if guards is None:
            return []
        if ctx.miss_event is not None:
            ev = ctx.miss_event
            return [guards.entry_guard_tree(e, ev.f_locals, backend=getattr(ev, "backend", None)) for e in ev.entries]
        if ctx.compile_event is not None:
            ev = ctx.compile_event
            inputs = getattr(ev, "f_locals", None)
            return [guards.build_guard_tree(ev.guard_manager, str(ev.compile_id), inputs)]
        st = self.ctx.frame
        if st is None:
            return []
        entry = self._serving_entry(st.frame.f_code)
        if entry is None:
            return []
        return [guards.entry_guard_tree(entry, st.inputs or None)]

    def _serving_entry(self, code: Any) -> Any:
        info = self.s.generated_info(code)
        if info is None:
            return None
        for e in compat.cache_entries(info[0]):
            if e.code is code:
                return e
        from .patches import serving_precompile_entry  # edited code runs from a precompile entry (issue 5)

        return serving_precompile_entry(self.s, code)

    def do_guards(self, arg: str) -> CommandResult:
        """guards [fail]: the guard tree of this cache entry, each leaf checked on this call's inputs."""
        if arg not in ("", "fail"):
            raise _Usage("usage: guards [fail]")
        guards = _guards_module()
        if guards is None:
            raise _Usage("guard trees are not available in this build")
        trees = self._guard_trees()
        if not trees:
            raise _Usage("no cache entry is known for this frame")
        if arg == "fail":
            return ok(guards.format_failing(trees), data=trees)
        return ok("\n\n".join(guards.format_guard_tree(t) for t in trees), data=trees[0])

    def do_whatif(self, arg: str) -> CommandResult:
        """whatif: check this call's inputs against every cache entry of the code object: which would serve it."""
        guards = _guards_module()
        ctx = self.ctx
        if guards is None:
            raise _Usage("guard trees are not available in this build")
        backend = None
        if ctx.miss_event is not None:
            entries, inputs = ctx.miss_event.entries, ctx.miss_event.f_locals
            backend = getattr(ctx.miss_event, "backend", None)
        else:
            st = self.need_frame()
            info = self.s.generated_info(st.frame.f_code)
            if info is None:
                raise _Usage("the original code of this frame is not known")
            entries, inputs = compat.cache_entries(info[0]), st.inputs
        trees = [guards.entry_guard_tree(e, inputs, backend=backend) for e in entries]
        lines = []
        for t in trees:
            verdict = "PASS (would serve this call)" if t.passed else f"FAIL ({len(t.failing)} failing guard(s))"
            lines.append(f"entry {t.compile_id}: {verdict}")
            for leaf in t.failing:
                lines.append(f"    {leaf.guard_type:<14} {' and '.join(leaf.code)}" + (f"   # {leaf.user_line}" if leaf.user_line else ""))
        return ok("\n".join(lines) if lines else "no cache entries", data=trees)

    def do_entries(self, arg: str) -> CommandResult:
        """entries: the cache entries of this code object, newest first, with hit counts and its recompiles."""
        return self._entries_result()

    def _compiled_frame(self) -> Any:
        if self.s.capture is None:
            return None
        orig = self._original_code()
        if orig is None:
            return None
        for f in self.s.capture.frames():
            if f.key == id(orig):
                return f
        return None

    def do_compiles(self, arg: str) -> CommandResult:
        """compiles: every code object Dynamo compiled so far: entries with hits, graph breaks, the recompile timeline."""
        return self._compiles_result()

    def do_graph(self, arg: str) -> CommandResult:
        """graph [NAME]: the FX graph(s) this cache entry calls (or the graph whose name contains NAME)."""
        frame = self._compiled_frame()
        if frame is None:
            raise _Usage("no compiled code object here")
        graphs = list(frame.graphs)
        if arg:
            graphs = [g for g in graphs if arg in g.name]
        else:
            cid = self.ctx.stop.compile_id if self.ctx.stop else None
            mine = [g for g in graphs if g.compile_id == cid]
            graphs = mine or graphs
        if not graphs:
            raise _Usage("no FX graph was captured for this code object" + (f" matching {arg!r}" if arg else ""))
        text = "\n\n".join(f"# {g.name}  (compile {g.compile_id}, {g.node_count} nodes)\n{g.code.strip()}" for g in graphs)
        return ok(text, data=graphs)

    # -- settings and help -----------------------------------------------------------------------------------------
    def do_break_on(self, arg: str) -> CommandResult:
        """break-on [KIND on|off]: show or switch a stop kind (compile, entry, recompile, graph-break, exception)."""
        if not arg:
            return ok("active stops: " + (", ".join(k for k in BREAK_ON_KINDS if k in self.s.break_on) or "none"))
        try:
            kind, state = shlex.split(arg)
        except ValueError:
            raise _Usage("usage: break-on KIND on|off") from None
        if kind not in BREAK_ON_KINDS:
            raise _Usage(f"unknown stop kind {kind!r} (known: {', '.join(BREAK_ON_KINDS)})")
        if state not in ("on", "off"):
            raise _Usage("usage: break-on KIND on|off")
        (self.s.break_on.add if state == "on" else self.s.break_on.discard)(kind)
        self.s._quiet.clear()
        return ok(f"break on {kind}: {state}")

    def do_h(self, arg: str) -> CommandResult:
        """h [CMD]: help on every command, or on one."""
        if arg:
            name = ALIASES.get(arg, arg)
            fn = self.handler(name)
            if fn is None or not fn.__doc__:
                raise _Usage(f"no help for {arg!r}")
            return ok(fn.__doc__.strip())
        return ok(help_text())


def help_text() -> str:
    """One line per command, from the docstrings (the same text the TUI's help screen shows).

    Commands of the mixins that are not in `COMMAND_ORDER` are listed after it, in name order.
    """
    lines = []
    extra = sorted(n[3:].replace("_", "-") for n in dir(CommandSet) if n.startswith("do_") and n != "do_exec")
    for name in list(COMMAND_ORDER) + [n for n in extra if n not in COMMAND_ORDER]:
        fn = getattr(CommandSet, "do_" + name.replace("-", "_"), None) if name != "!" else CommandSet.do_exec
        if fn is not None and fn.__doc__:
            lines.append(fn.__doc__.strip().splitlines()[0])
    return "\n".join(lines)


COMMAND_ORDER = (
    "s", "n", "r", "c", "until", "b", "cl", "bt", "u", "d", "l", "ll", "src", "orig", "stack", "locals", "p", "!",
    "set", "guards", "whatif", "entries", "compiles", "graph", "recompile", "eager", "skip", "drop", "dynamic",
    "why", "diff", "break-on", "detach",
    "h", "q",
)


class _Usage(Exception):
    """A malformed command: the message is the error line."""


def _guards_module() -> Any:
    try:
        from . import guards
    except ImportError:
        return None
    return guards


def graph_break_text(session: "Session", code: Any) -> str:
    """Why the frame that led to this resume function broke its graph, and where (see
    `recompile.graph_break_detail`, which also shows what was passed on the stack)."""
    from .recompile import graph_break_detail

    frames = list(session.ctx.frames) if session.ctx is not None else []
    for i, st in enumerate(frames):
        if st.frame is not None and st.frame.f_code is code:
            return graph_break_detail(session, frames[: i + 1])
    return f"{code.co_name}: graph-break details need the paused resume function's frame"
