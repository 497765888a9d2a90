"""The engine API every front end uses (`Engine`), what a front end implements for it (`Listener`, and
`InlineDriver` for one that answers stops on the program's own thread), and the narrow view of the session its
services get (`Host`).

`Engine` is written in the manner of `bdb.Bdb` (``set_step``, ``set_next``, ``set_return``, ``set_continue``,
``set_until``, ``set_break``, ``clear_break``): each method returns a frozen `dynadbg.core.model` value or an
`EngineError` with its reason, never prose for a front end to parse. `dynadbg.core.session.Session` implements
it; the tests' fake engine implements it with canned data.

Threads: every method may be called from any thread. While the program is paused, the call is run on the
program's worker thread (every torch call, frame read, eval and edit happens there) and blocks until it is done;
called on the worker thread itself (an inline driver's command line) it runs directly. While the program
runs, methods that need a stop return ``EngineError(kind=ErrorKind.NOT_PAUSED)``; `compiles`, `list_breakpoints`,
`set_break_on`, `watches`, `add_watch`, `remove_watch`, `quit` and `interrupt` (among others) work at any time:
the implementation's method carries ``anytime = True`` (`dynadbg.core.engine_base.engine_method`), and the command
language reads that flag to know which verbs work while the program runs.

The command language is a layer over this API, not part of it: front ends hold a
`dynadbg.core.commands.CommandLine` over the engine, as pdb sits on bdb.

Control methods and `decide` return `Resumed`: the program goes on as soon as the call returns, and the next
`Listener.on_stop` brings the next `Stop`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from types import CodeType, FrameType

    from .model import (
        BreakpointView,
        CodeRoles,
        CodeView,
        CommandResult,
        CompilesData,
        Decision,
        DropPreview,
        EditError,
        EditOp,
        EditOutcome,
        EditPreview,
        EngineError,
        EntryDiff,
        ExitResult,
        EvalResult,
        Explanation,
        FrameRecompiles,
        GeneratedInfo,
        GraphView,
        GuardEditView,
        GuardTree,
        HistoryInfo,
        HistoryMark,
        HistoryView,
        PatchDiff,
        PatchView,
        Provenance,
        RecompileRecord,
        Resumed,
        Stop,
        ValueSummary,
        WatchValue,
    )


class Listener(Protocol):
    """What a front end implements. Every method is called on the program's worker thread."""

    def on_stop(self, stop: Stop) -> None:
        """The program paused; it stays paused until a control method or a decision lets it go on."""

    def on_running(self, message: str) -> None:
        """The program runs again (``"running"``), or torch compiles a frame (``"compiling NAME (FILE:LINE)"``,
        then ``"running"`` when that compile returned)."""

    def on_message(self, text: str) -> None:
        """An information or warning line (feature disabled, entry compiled, ...)."""

    def on_exit(self, result: ExitResult) -> None:
        """The program ended; the session's hooks are already restored."""

    def on_resumed(self, result: Resumed) -> None:
        """A control method or a decision let the program go on, before it runs on: a line-mode front end prints
        the command's answer here, so it comes before the program's own next output (a front end that shows
        answers where it sent the command does nothing here)."""

    # Optional: ``wants_teaching = True``: every `Stop` then carries `Stop.teaching` (the roles and the value
    # stack's provenance of its selected frame), so a front end that shows them needs no other call per stop.
    # Optional: ``on_returned(item: ReturnedView | ReturnsOmitted)``, a generated frame returned (once per code
    # object per stop-to-stop run) or the count of those past the per-run limit; without it the session sends
    # the line's text (`format.notices`) to `on_message`.


class InlineDriver(Protocol):
    """Answers stops on the program's own thread (`Session.attach`): the line-mode REPL of ``dynadbg.debug()``.

    The driver holds its command line (`dynadbg.core.commands.CommandLine` over the session), as every front end
    does: the engine runs no command text, it only calls `answer` until the program may go on."""

    def answer(self, stop: Stop) -> CommandResult:
        """Read one command at `stop`, run it (on this thread: the engine methods it calls run directly) and show
        what it produced; its result. Called again at the same stop until a command lets the program go on
        (``result.resumed`` or ``result.quit``, or the engine's own record of a control call)."""


class Engine(Protocol):
    """What a front end calls on the engine. Results are frozen model values or `EngineError`."""

    # -- the stop ------------------------------------------------------------------------------------------------
    @property
    def paused(self) -> bool: ...

    @property
    def finished(self) -> bool: ...

    def current_stop(self) -> "Stop | EngineError":
        """The stop the program is paused at, rebuilt after any change (breakpoints, selection, edits)."""

    # -- history (stepping back; dynadbg.core.history) -------------------------------------------------------------
    def back(self, count: int = 1) -> "HistoryView | EngineError":
        """Show the recorded stop `count` (≥ 1) stops before the one shown (read-only): its `HistoryView`, whose
        ``stop.history`` marks it; `current_stop` returns that stop until `forward` reaches the present or the
        program resumes. ``EngineError(kind="usage")`` when fewer stops are recorded or none at all."""

    def forward(self, count: int = 1) -> "HistoryView | EngineError":
        """Move `count` (≥ 1) recorded stops toward the present; at the present ``view.entry`` is None and
        ``view.stop`` is the live stop. ``EngineError(kind="usage")`` past the present."""

    def present(self) -> "Stop | EngineError":
        """Leave history: the live stop (any control method also leaves it first)."""

    def history_position(self) -> "HistoryMark | None":
        """Which recorded stop is shown (``position`` of ``total``), None at the present. Any time."""

    def history_info(self, recent: int = 10) -> "HistoryInfo":
        """The history's size, bounds, memory estimate and its `recent` newest entries. Any time."""

    def set_history_bounds(self, limit: int | None = None, max_bytes: int | None = None,
                           every: bool | None = None) -> "HistoryInfo | EngineError":
        """Change the most entries and the memory cap (bytes) kept (None keeps one; 0 turns recording off); the
        oldest entries beyond them are dropped. `every`: also record the instructions a stepping command runs
        through without stopping (``s N``). Any time, except while history is shown."""

    # -- control (bdb's set_*) ---------------------------------------------------------------------------------------
    def set_step(self, count: int = 1) -> "Resumed | EngineError":
        """Run `count` (≥ 1) instructions, into generated callees (resume functions)."""

    def set_next(self, count: int = 1) -> "Resumed | EngineError":
        """Run `count` instructions of the selected frame, over calls."""

    def set_return(self) -> "Resumed | EngineError":
        """Run until the selected frame returns (stops with the return value)."""

    def set_continue(self) -> "Resumed | EngineError":
        """Run until a breakpoint or an active stop kind."""

    def set_until(self, index: int | None = None) -> "Resumed | EngineError":
        """Run until the selected frame reaches instruction `index` or later (default: the next one), or returns."""

    def detach(self) -> "Resumed | EngineError":
        """Clear breakpoints and every stop kind, then continue to the end."""

    def quit(self) -> None:
        """End the program and restore every hook (returns at once)."""

    def interrupt(self) -> None:
        """Stop at the next generated instruction the program runs."""

    # -- breakpoints ---------------------------------------------------------------------------------------------
    def set_break(self, index: int, condition: str | None = None) -> "BreakpointView | EngineError":
        """A breakpoint at instruction `index` of the selected frame's code (or the compile stop's code)."""

    def clear_break(self, index: int | None = None) -> "tuple[BreakpointView, ...] | EngineError":
        """Clear the breakpoint at `index` of this code (None: every one in this code); the cleared ones."""

    def list_breakpoints(self) -> "tuple[BreakpointView, ...]":
        """Every breakpoint of the session, by number."""

    def set_break_on(self, kind: str | None = None, on: bool = True) -> "frozenset[str] | EngineError":
        """Switch a stop kind (`model.BREAK_ON_KINDS`); None only reads. The active kinds after the change."""

    # -- frames --------------------------------------------------------------------------------------------------
    def select_frame(self, index: int) -> "Stop | EngineError":
        """Select frame `index` of `Stop.frames` (0 = outermost); the stop with its `selected` and watches updated."""

    def up(self, count: int = 1) -> "Stop | EngineError":
        """Select the frame `count` levels toward the caller."""

    def down(self, count: int = 1) -> "Stop | EngineError":
        """Select the frame `count` levels toward the innermost frame."""

    # -- values of the selected frame ----------------------------------------------------------------------------
    def evaluate(self, expr: str) -> "EvalResult | EngineError":
        """``p EXPR``: evaluate over the selected frame's locals, globals and ``__stack__``."""

    def exec_statement(self, stmt: str) -> "EvalResult | EngineError":
        """``!STMT``: run a statement in the selected frame; what it printed. A frame local it assigns is
        written back to the frame (as `set_local`); any other name it binds is kept for later commands."""

    def global_values(self, pattern: str | None = None) -> "tuple[tuple[str, ValueSummary], ...] | EngineError":
        """``globals [PATTERN]``: (name, summary) of the selected frame's globals containing `pattern`."""

    def set_verbose(self, on: bool | None = None) -> bool:
        """``v``: print each generated instruction before it runs (None toggles); the new state. Any time."""

    def set_local(self, name: str, expr: str) -> "ValueSummary | EngineError":
        """Change a local of the selected frame for the rest of the run; the new value."""

    # -- watches -------------------------------------------------------------------------------------------------
    def add_watch(self, expr: str) -> "WatchValue | EngineError":
        """Evaluate `expr` in the selected frame at every stop (a bad expression shows its error, never stops)."""

    def remove_watch(self, number: int) -> "WatchValue | EngineError":
        """Remove watch `number`; the removed watch."""

    def watches(self) -> "tuple[WatchValue, ...]":
        """Every watch with its value at the current stop (or the last one, while running)."""

    # -- recompile decision --------------------------------------------------------------------------------------
    def decide(self, decision: "Decision") -> "Resumed | EngineError":
        """At a recompile stop: recompile / eager / skip / drop guard ids / dynamic name dim, then resume."""

    def preview_drop(self, guard_ids: "tuple[str, ...] | None" = None) -> "DropPreview | EngineError":
        """At a recompile stop: what ``drop`` of `guard_ids` (None: the default) would do; changes nothing."""

    # -- queries -------------------------------------------------------------------------------------------------
    def listing(self) -> "CodeView | EngineError":
        """The selected frame's code (or the compile stop's new code, the recompile stop's original)."""

    def original_code(self) -> "CodeView | EngineError":
        """The original bytecode of the function this code came from."""

    def source(self, whole_file: bool = False) -> "tuple[str, int, tuple[str, ...]] | EngineError":
        """(file name, first line number, source lines) of the original function; `whole_file`: of the whole file
        it is in (first line 1). Read on the program's thread (``linecache``), so front ends never read files."""

    def graphs(self, name: str | None = None) -> "tuple[GraphView, ...] | EngineError":
        """The FX graphs of this entry (or the graphs whose name contains `name`)."""

    def entries(self) -> "FrameRecompiles | EngineError":
        """This code object's cache entries with hits and its recompile timeline."""

    def guard_trees(self) -> "tuple[GuardTree, ...] | EngineError":
        """Guard tree(s) of the entry serving the selected frame, evaluated on its inputs (every entry at a
        recompile stop; the tree being built at a compile stop)."""

    def what_if(self) -> "tuple[GuardTree, ...] | EngineError":
        """This call's inputs against every cache entry of the code object."""

    def recompile_records(self, compile_id: str | None = None) -> "tuple[RecompileRecord, ...] | EngineError":
        """The recompile record of this stop (recompile stop) or every record of this code object."""

    def guard_diffs(self, old: str | None = None, new: str | None = None) -> "tuple[EntryDiff, ...] | EngineError":
        """Guard differences between this code object's entries (consecutive, or `old` → `new`)."""

    # -- teaching (dynadbg.core.roles, explain, provenance) -------------------------------------------------------
    def roles(self) -> "CodeRoles | EngineError":
        """The role of every instruction of the selected frame's code (the compile stop's new code) in Dynamo's
        code generation, one frozen `InstrRole` per instruction index, and the `RoleRegion` spans; graph calls
        and resume calls found. Rests on the capture's records where it has them (``source="capture"``)."""

    def explain(self, index: int | None = None) -> "Explanation | EngineError":
        """Instruction `index` (default: the current one) of the selected frame's code: what the opcode does on
        this Python, its stack effect (the live values when `index` is the current instruction), its role in a
        sentence. ``EngineError(kind="usage")`` for an index out of range."""

    def stack_provenance(self) -> "Provenance | EngineError":
        """For each value-stack slot of the selected frame before its current instruction, bottom first, the
        instruction that pushed it (static flow of the code), with a note for graph outputs (their FX node),
        graph inputs and resume-function arguments."""

    def compiles(self) -> "CompilesData":
        """Every code object Dynamo compiled so far (any time)."""

    # -- instruction edits and patches ---------------------------------------------------------------------------
    def preview_edit(self, op: "EditOp") -> "EditPreview | EngineError":
        """What `op` would do to this generated code, without installing anything."""

    def apply_edit(self, op: "EditOp") -> "EditOutcome | EngineError":
        """Install `op` (compile stop: this call; else from the next call)."""

    def patch_diff(self) -> "PatchDiff | EditError | EngineError": ...

    def patches(self) -> "tuple[PatchView, ...]": ...

    def save_patches(self, path: str) -> "int | EditError | EngineError": ...

    def load_patches(self, path: str) -> "EditOutcome | EngineError": ...

    def undo_patch(self, everything: bool = False) -> "EditOutcome | EngineError": ...

    # -- guard edits ---------------------------------------------------------------------------------------------
    def add_guard(self, expr: str) -> "EditOutcome | EngineError": ...

    def drop_guard(self, leaf_id: str) -> "EditOutcome | EngineError": ...

    def undo_guard_edit(self, which: str = "") -> "EditOutcome | EngineError": ...

    def guard_edits(self) -> "tuple[GuardEditView, ...]": ...

    def export_guard_filter(self) -> str: ...


class Host(Protocol):
    """What the session's services (patches, guard edits, recompile analysis) may use of the session.

    Worker thread only. Services get this, never the `Session` and its private attributes.
    """

    ctx: Any
    generated: dict[int, "CodeType"]
    compile_hooks: list[Callable[[Any], None]]
    teardown_hooks: list[Callable[[], None]]
    capture: Any

    @property
    def quitting(self) -> bool:
        """The program is ending (``q``): services stop installing things."""

    def message(self, text: str) -> None:
        """An information line for the front end (`Listener.on_message`)."""

    def mark_changed(self, code_key: int | None = None) -> None:
        """Tracing decisions cached for generated code (all, or one code object) are stale: recompute them."""

    def generated_info(self, code: "CodeType") -> "GeneratedInfo | None":
        """(original code, compile id, is resume function) of a generated code object, when known."""


class TraceHandler(Protocol):
    """What a back end reports to. All calls happen on the traced (worker) thread."""

    def wants_frame(self, code: CodeType) -> bool:
        """Whether a new frame running `code` should get instruction events."""

    def on_call(self, frame: FrameType) -> None:
        """A wanted frame starts (before its first instruction event)."""

    def on_instruction(self, frame: FrameType, offset: int) -> None:
        """The instruction at byte `offset` of `frame` is about to run."""

    def on_return(self, frame: FrameType, value: Any) -> None:
        """`frame` is returning `value` (also called when it unwinds with an exception: value is None)."""

    def on_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
        """An exception was raised in (or propagated into) `frame` at `offset`."""

    def wants_instructions(self, code: CodeType) -> bool:
        """Whether a wanted frame of `code` needs instruction events too (False: its call, return and exception
        events are enough, e.g. a frame watched only for the value it returns)."""

    def on_untraced_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
        """An exception was raised in (or propagated into) a frame of generated code that gets no instruction
        events (``sys.monitoring`` RAISE, Python 3.12+): the frame is live, unwinding has not begun."""

    def on_untraced_return(self, frame: FrameType, value: Any) -> bool:
        """A frame of generated code that gets no instruction events returns `value` (``sys.monitoring``
        PY_RETURN, Python 3.12+). Returns whether later returns at that instruction still need events (False:
        the back end switches that event off until `MonitoringBackend.new_run`)."""

    def is_generated(self, code: CodeType) -> bool:
        """Whether `code` is Dynamo-generated code the session knows (the exception and return filters)."""


class TraceEngine(Protocol):
    """Trace stops: what a front end calls to step Dynamo's own tracing (implemented by `Session`, through
    `dynadbg.core.trace_engine`). Results are `dynadbg.core.trace_model` values, `model.Resumed` or
    `model.EngineError` (``ErrorKind.NOT_HERE`` away from a trace stop, ``ErrorKind.UNAVAILABLE`` when this
    torch lacks the trace hooks). A trace stop is a `model.Stop` whose ``trace`` is the `TraceStopView` and whose
    kind is one of `model.TRACE_STOP_KINDS`; the program is paused inside torch's compile, on its worker thread."""

    def trace_view(self) -> Any:
        """`TraceStopView`: everything a trace stop shows, in one call (a Trace view is built on this)."""

    def trace_step(self, count: int = 1) -> "Resumed | EngineError": ...

    def trace_next(self, count: int = 1) -> "Resumed | EngineError": ...

    def trace_return(self) -> "Resumed | EngineError": ...

    def trace_continue(self) -> "Resumed | EngineError": ...

    def trace_until(self, line: int | None = None) -> "Resumed | EngineError": ...

    def trace_rewind(self, count: int) -> "Resumed | EngineError": ...

    def trace_back(self, count: int = 1) -> Any:
        """`TraceStopView` of a recorded step (read-only: ``live`` False, ``mark`` set)."""

    def trace_forward(self, count: int = 1) -> Any: ...

    def trace_present(self) -> Any: ...

    def trace_fake(self, name: str) -> Any:
        """`FakeTensorView` of a symbolic local or stack slot at the live trace stop."""

    def trace_explain(self) -> Any:
        """`TraceExplanation` of the instruction shown."""

    def trace_break(self, filename: str, line: int, condition: str | None = None) -> Any:
        """`TraceBreakpointView`; any time."""

    def trace_clear(self, number: int | None = None) -> Any: ...

    def trace_settings(self, record: str | None = None, replay: bool | None = None, limit: int | None = None,
                       max_bytes: int | None = None) -> Any:
        """`TraceSettings`; any time."""

    def trace_compiles(self) -> Any:
        """tuple of `TraceCompileView`, one per compile id so far; any time."""

    def trace_steps(self, compile_id: str | None = None, attempt: int | None = None) -> Any:
        """tuple of `TraceStep`: the kept steps of one attempt."""
