"""Frozen results of the trace service (`dynadbg.core.trace`): Dynamo's own symbolic tracing, step by step.

A *trace step* is one instruction Dynamo's symbolic interpreter (an ``InstructionTranslator``) is about to
trace, at any inline depth, in one *attempt* of one compile (a compile id such as ``"0/0"``; a restart starts
attempt 1, 2, ... of the same compile id). Values on the symbolic stack and in the symbolic locals are
*variable trackers*, summarised here as `TraceValue` without ever realizing a lazy tracker (an input Dynamo has
not looked at yet is shown as unrealized, with its source). Tensors are fake: shape, stride, dtype, device and
symbolic sizes with their hints, never data.

Everything here is built on the program's worker thread, inside Dynamo's compile, and only read by front ends.
Text for users is made from these values in `dynadbg.core.format.trace`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .model import CodeView


class TraceValueKind(str, Enum):
    """What a symbolic value is (from the tracker's class, read by type, never by ``isinstance``)."""

    TENSOR = "tensor"            # a TensorVariable: a fake tensor and its FX node
    SYMBOLIC = "symbolic"        # a SymNodeVariable: a symbolic int/float/bool (an FX node too)
    CONSTANT = "constant"        # a Python constant known at trace time
    NULL = "null"                # the NULL CPython pushes before some callables
    UNREALIZED = "unrealized"    # a lazy tracker Dynamo has not looked into yet: no guard, no graph input so far
    MODULE = "module"            # an nn.Module (specialized or not)
    FUNCTION = "function"        # a user function, a builtin, a torch function, a method
    CONTAINER = "container"      # a tuple, list, dict, range, iterator, torch.Size
    OBJECT = "object"            # a user-defined object or class, a Python module
    OTHER = "other"              # any other tracker (its class name says which)


@dataclass(frozen=True)
class TraceValue:
    """One symbolic value (a variable tracker), summarised without realizing it.

    Attributes:
        kind: what it is.
        tracker: the tracker's class name (``"TensorVariable"``, ``"LazyVariableTracker"``).
        text: a one-line description, cut to a fixed length (``"Tensor[3, s0] float32 cpu"``, ``"2"``).
        source: where the value comes from in the frame (``"L['x']"``, ``"G['w']"``), when the tracker has one.
        node: the FX node name standing for it (tensors and symbolic values), else None.
        shape: a tensor's sizes as text (``("3", "s0")``), else None.
        dtype: a tensor's dtype (``"float32"``), else None.
        device: a tensor's device (``"cpu"``), else None.
        type_name: for an unrealized value, the Python type of the object behind it (``"Tensor"``, ``"int"``).
    """

    kind: TraceValueKind
    tracker: str
    text: str
    source: str | None = None
    node: str | None = None
    shape: tuple[str, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    type_name: str | None = None

    @property
    def unrealized(self) -> bool:
        return self.kind is TraceValueKind.UNREALIZED


_NEW = object.__new__
_SET = object.__setattr__


def make_value(kind: TraceValueKind, tracker: str, text: str, source: str | None = None, node: str | None = None,
               shape: tuple[str, ...] | None = None, dtype: str | None = None, device: str | None = None,
               type_name: str | None = None) -> TraceValue:
    """``TraceValue(...)``, the same value (equal, same hash and repr), made in half the time: the frozen
    dataclass's ``__init__`` sets each of the nine fields through ``object.__setattr__``; this sets the instance
    dict once. A full trace recording makes one per new tracker it sees (hundreds per compile)."""
    value = _NEW(TraceValue)
    _SET(value, "__dict__", {"kind": kind, "tracker": tracker, "text": text, "source": source, "node": node,
                             "shape": shape, "dtype": dtype, "device": device, "type_name": type_name})
    return value


@dataclass(frozen=True)
class SizeView:
    """One size or stride of a fake tensor: its text (``"3"``, ``"s0"``, ``"2*s0"``), the hint (the value of
    this compile's input; None for an unbacked symbol) and whether it is symbolic."""

    text: str
    hint: int | None
    symbolic: bool


@dataclass(frozen=True)
class FakeTensorView:
    """``fake NAME``: the fake value Dynamo traced for a local or a stack slot (no data: metadata only).

    Attributes:
        name: what was asked for (a local name, or ``"stack[2]"``).
        value: the slot's summary.
        shape: sizes (`SizeView`, outermost first); stride: strides; both empty for a symbolic scalar.
        dtype, device: as text; requires_grad: the fake's flag; None where not a tensor.
        node: the FX node; source: the frame source (``L['x']``) when it is an input.
        fake_type: the fake value's class (``"FakeTensor"``, ``"SymInt"``).
    """

    name: str
    value: TraceValue
    shape: tuple[SizeView, ...] = ()
    stride: tuple[SizeView, ...] = ()
    dtype: str | None = None
    device: str | None = None
    requires_grad: bool | None = None
    node: str | None = None
    source: str | None = None
    fake_type: str | None = None


class RewriteKind(str, Enum):
    """How one of Dynamo's instructions relates to the user's ``dis`` listing."""

    SAME = "same"          # the user's own instruction (same opname and argument)
    REWRITE = "rewrite"    # Dynamo's rewrite of the user's instruction(s) at `user_offset` (``is None``,
                           # zero-argument ``super()``, ``BINARY_SLICE``, ``LOAD_FAST_LOAD_FAST``, ...)
    ADDED = "added"        # an instruction Dynamo added (no user counterpart)


@dataclass(frozen=True)
class TraceStep:
    """One traced instruction (the record made just before Dynamo traces it).

    Attributes:
        ordinal: position in its attempt (0-based, every depth counted, in the order Dynamo traced them).
        compile_id: ``"0/0"``; attempt: 0 for the first tracing attempt, n after n restarts.
        depth: inline depth (0: the frame being compiled; 1: a function it inlines; ...).
        code_name: ``co_name`` of the code traced at that depth; filename; firstlineno.
        line: the source line of the instruction (read from the instruction itself).
        index: the instruction's index in Dynamo's instruction list of that code.
        opname, argrepr: the instruction as Dynamo has it.
        user_offset: the ``dis`` offset in the user's code object this instruction stands for (None: added).
        rewrite: how it relates to the user's listing; rewrite_of: for a rewrite, the user's opname(s).
        nodes, guards: FX graph nodes and guards so far, before this instruction.
        replay: the instruction is part of a re-trace after a restart, before the point that restarted it.
        full: the step was recorded with stack and locals (see `TraceStepDetail`).
    """

    ordinal: int
    compile_id: str
    attempt: int
    depth: int
    code_name: str
    filename: str
    firstlineno: int
    line: int | None
    index: int
    opname: str
    argrepr: str
    user_offset: int | None
    rewrite: RewriteKind
    rewrite_of: str | None
    nodes: int
    guards: int
    replay: bool = False
    full: bool = False


@dataclass(frozen=True)
class TraceFrame:
    """One translator of the inlining chain at a step (``bt``), outermost first.

    Attributes:
        depth: inline depth; code_name, filename, firstlineno: its code; line: the line it is at;
        index: the instruction it is at (in Dynamo's list; for an outer frame, the call it is inlining);
        opname: that instruction; user_offset: mapped to the user's ``dis`` offsets.
    """

    depth: int
    code_name: str
    filename: str
    firstlineno: int
    line: int | None
    index: int
    opname: str
    user_offset: int | None


@dataclass(frozen=True)
class TraceNode:
    """One FX node of the graph traced so far.

    Attributes:
        name: the node's name; op: ``placeholder`` / ``call_function`` / ``call_method`` / ``call_module`` /
            ``get_attr`` / ``output``; target: what it calls (``torch.sin``, ``mul``); value: its fake value in
            a line (``Tensor[3] float32 cpu``); new: added by the last traced instruction.
    """

    name: str
    op: str
    target: str
    value: str
    new: bool = False


@dataclass(frozen=True)
class TraceGuard:
    """One guard Dynamo has installed so far (``torch._guards.Guard``, not built yet).

    Attributes:
        guard_type: ``TENSOR_MATCH``, ``TYPE_MATCH``, ... (the guard builder's method name); source: what it
            checks (``L['x']``); new: installed by the last traced instruction.
    """

    guard_type: str
    source: str
    new: bool = False


class BreakPath(str, Enum):
    """Which of Dynamo's graph-break paths a break took (the caller of ``log_graph_break``)."""

    CALL = "call"      # an instruction Dynamo cannot trace (``break_graph_if_unsupported``): restart, then cut
                       # the graph before it, run it eagerly, resume after it in a new function
    JUMP = "jump"      # a branch on a traced value (``generic_jump``): cut at the jump now, no restart; both
                       # branches continue in resume functions
    STEP = "step"      # no resumable point at the instruction: restart, cut at the last instruction with an empty
                       # stack, the rest of the frame runs eagerly (no resume function)
    FRAME = "frame"    # the break cannot be handled: Dynamo gives up on the whole frame (it runs eagerly)
    OTHER = "other"


@dataclass(frozen=True)
class EmitPlan:
    """What Dynamo does with a graph break, as far as it is known at the stop.

    Attributes:
        restart: Dynamo restarts the trace first (the re-trace replays up to this point, then cuts).
        graph_nodes: FX nodes traced so far (the graph the cut compiles; Dynamo may prune unused ones).
        eager: the instruction that runs eagerly, in the frame being compiled (for a break inside an inlined
            call, the whole call at depth 0), or None (the whole frame runs eagerly, or the rest of it).
        eager_line: its source line.
        resume_code: the code object name the resume function continues (None: no resume function).
        resume_after_line: the line of the instruction the resume function starts after.
        resume_name: the resume function's name once Dynamo has made it (None until then).
        graph_names: the graph call(s) the cut produced (``__compiled_fn_3``), once known.
        rest_eager: the rest of the frame runs eagerly after the cut (no resume function).
        eager_callee: for an eager call, what it calls (from the symbolic stack before it), when recorded.
        returns: the frame returns the eager instruction's result right after it: Dynamo makes no resume function.
    """

    restart: bool
    graph_nodes: int
    eager: str | None
    eager_line: int | None
    resume_code: str | None
    resume_after_line: int | None
    resume_name: str | None = None
    graph_names: tuple[str, ...] = ()
    rest_eager: bool = False
    eager_callee: str | None = None
    returns: bool = False


@dataclass(frozen=True)
class TraceBreak:
    """One graph break found while tracing.

    Attributes:
        compile_id, attempt: where it was found.
        path: which graph-break path (`BreakPath`).
        reason: torch's reason, its head on one line (`facts.parse_break_reason`: the text ``TORCH_LOGS=graph_breaks``
            prints after "Graph Break Reason:", before its Explanation); gb_type: torch's graph-break type
            (``"Unsupported Tensor.item() call ..."``), when set.
        hints: torch's hints for it.
        step: the breaking instruction (the innermost one traced: its record holds the operands, which Dynamo
            had already popped when it found the break); operands: the value stack just before it.
        chain: the inlining chain at the breaking instruction, outermost first.
        plan: what Dynamo emits for it.
        filename, line: where torch's graph-break log puts it (the innermost user frame).
    """

    compile_id: str
    attempt: int
    path: BreakPath
    reason: str
    gb_type: str | None
    hints: tuple[str, ...]
    step: TraceStep | None
    operands: tuple[TraceValue, ...] | None
    chain: tuple[TraceFrame, ...]
    plan: EmitPlan
    filename: str | None
    line: int | None


@dataclass(frozen=True)
class TraceError:
    """A tracing error that ends the attempt without a graph (``fullgraph=True`` at a graph break, a frame Dynamo
    skips, an internal error).

    Attributes:
        exc_type: the exception's class name; message: its first lines; gb_type: torch's graph-break type;
        fullgraph: the translator errors on graph breaks (``fullgraph=True`` / ``error_on_graph_break``);
        skip_frame: Dynamo will run the frame eagerly instead of raising.
    """

    exc_type: str
    message: str
    gb_type: str | None
    fullgraph: bool
    skip_frame: bool


@dataclass(frozen=True)
class TraceRestart:
    """A restart: the attempt ended and the frame is traced again from its start.

    Attributes:
        compile_id; attempt: the attempt that ended; reason: torch's restart reason; at_ordinal: the step of
        that attempt the re-trace replays up to (the next attempt's steps before it are a replay); line: its line.
    """

    compile_id: str
    attempt: int
    reason: str
    at_ordinal: int | None
    line: int | None


@dataclass(frozen=True)
class TraceCut:
    """A graph cut (``OutputGraph.compile_subgraph``): the graph so far becomes a compiled graph call.

    Attributes:
        compile_id, attempt; reason: torch's compile reason (``"return_value"``, ``"generic_jump ..."``, a graph
        break); nodes: FX nodes at the cut; graph_break: the cut is for a graph break; line: the line traced.
    """

    compile_id: str
    attempt: int
    reason: str
    nodes: int
    graph_break: bool
    line: int | None


@dataclass(frozen=True)
class TraceAttemptView:
    """One tracing attempt of a compile.

    Attributes:
        attempt: its number; steps: instructions traced (every depth); max_depth: deepest inline depth;
        outcome: ``"running"``, ``"restart"``, ``"done"`` (a graph and code came out) or ``"error"``;
        restart: the restart that ended it, if any; error: the tracing error that ended it, if any;
        replay_until: for an attempt after a restart, the ordinal its replay ends at.
    """

    attempt: int
    steps: int
    max_depth: int
    outcome: str
    restart: TraceRestart | None = None
    error: TraceError | None = None
    replay_until: int | None = None


@dataclass(frozen=True)
class TraceCompileView:
    """The recorded trace of one compile id (``trace info``, the report's per-compile trace summary).

    Attributes:
        compile_id; code_name, filename, firstlineno: the frame compiled; attempts: every attempt, in order;
        breaks: graph breaks found; cuts: graph cuts; steps: instructions traced over all attempts;
        evicted: steps dropped to stay within the trace bounds (0: the whole trace is kept).
    """

    compile_id: str
    code_name: str
    filename: str
    firstlineno: int
    attempts: tuple[TraceAttemptView, ...]
    breaks: tuple[TraceBreak, ...]
    cuts: tuple[TraceCut, ...]
    steps: int
    evicted: int = 0

    @property
    def restarts(self) -> tuple[TraceRestart, ...]:
        return tuple(a.restart for a in self.attempts if a.restart is not None)


class TraceStopReason(str, Enum):
    """Why the program paused inside Dynamo's tracing."""

    START = "start"            # Dynamo starts tracing a frame (its first user instruction; `--break-on trace`)
    STEP = "step"              # `s`
    NEXT = "next"              # `n`
    RETURN = "return"          # `r`: out of the inlined function
    UNTIL = "until"            # `until LINE`
    BREAKPOINT = "breakpoint"  # a `tb FILE:LINE` trace breakpoint
    GRAPH_BREAK = "graph-break"  # a graph break found (`--break-on trace-break`)
    ERROR = "error"            # a tracing error (`--break-on trace-error`), post-mortem
    REWIND = "rewind"          # `rewind N` re-traced to this point


@dataclass(frozen=True)
class TraceMark:
    """Where a recorded step shown by `trace_back` lies (``position`` of ``total`` steps of the attempt)."""

    position: int
    total: int


@dataclass(frozen=True)
class TraceBreakpointView:
    """A trace breakpoint (``tb FILE:LINE [if EXPR]``): stops whenever Dynamo traces that line, at any depth.

    Attributes:
        number; filename: as given (matched as a path suffix); line; condition: over the symbolic locals'
        constants and the step (``depth``, ``attempt``, ``opname``, ``line``); hits.
    """

    number: int
    filename: str
    line: int
    condition: str | None
    hits: int = 0


@dataclass(frozen=True)
class TraceSettings:
    """How the trace service records and stops.

    Attributes:
        available: the trace hooks are installed (else `disabled` says why).
        record: ``"light"`` (opcode, line, depth, counts: always on) or ``"full"`` (stack and locals summaries,
            new nodes and guards: while trace stops are armed, or after ``trace record full``); ``"off"``.
        forced_full: ``trace record full`` was asked for.
        replay: stops in the replay after a restart (``trace replay on``); off: the replay runs through.
        limit, max_bytes: the bounds of the recorded steps (oldest attempts dropped first).
        steps, nbytes: what is kept now; evicted: steps dropped so far.
        breakpoints: the trace breakpoints; armed: the trace stop kinds active.
        disabled: messages for the parts of the feature this torch lacks.
    """

    available: bool
    record: str
    forced_full: bool
    replay: bool
    limit: int
    max_bytes: int
    steps: int
    nbytes: int
    evicted: int
    breakpoints: tuple[TraceBreakpointView, ...] = ()
    armed: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()


class TraceAction(str, Enum):
    """What Dynamo does with an instruction symbolically (`TraceExplanation.action`)."""

    LOAD_LOCAL = "load-local"
    STORE_LOCAL = "store-local"
    LOAD_GLOBAL = "load-global"
    LOAD_CONST = "load-const"
    LOAD_ATTR = "load-attr"
    STORE_ATTR = "store-attr"
    CALL = "call"
    BINARY = "binary"
    COMPARE = "compare"
    UNARY = "unary"
    SUBSCRIPT = "subscript"
    BUILD = "build"
    UNPACK = "unpack"
    BRANCH = "branch"
    JUMP = "jump"
    ITER = "iter"
    RETURN = "return"
    YIELD = "yield"
    STACK = "stack"
    PROLOGUE = "prologue"
    CONTEXT = "context"
    OTHER = "other"


@dataclass(frozen=True)
class TraceExplanation:
    """``explain`` at a trace stop: what Dynamo does with the current instruction symbolically.

    Attributes:
        step: the instruction; action: its kind of symbolic work; operands: the stack slots it consumes, TOS
        last (from its pre-instruction record); callee: for a call, the tracker called (TOS-n); depth: inline
        depth; fullgraph: a graph break here would raise (``fullgraph=True``).
    """

    step: TraceStep
    action: TraceAction
    operands: tuple[TraceValue, ...]
    callee: TraceValue | None
    depth: int
    fullgraph: bool


@dataclass(frozen=True)
class TraceStopView:
    """Everything a trace stop shows (`Engine.trace_view()`; also `Stop.trace`): one call for a front end.

    Attributes:
        reason: why it stopped.
        step: the instruction about to be traced (at a graph break or an error: the breaking instruction).
        chain: the inlining chain, outermost first (``bt``); the last one is `step`'s frame.
        stack: the symbolic value stack before the instruction, bottom first (TOS last).
        locals: the symbolic locals of `step`'s frame (name, value), in the code's order.
        changed: locals whose tracker changed since the previous trace stop in the same frame.
        code: the user's code object of `step`'s frame as a ``dis`` listing (offsets as the user's ``dis``).
        user_index: the listing index of `step`'s user instruction (None: added by Dynamo).
        source_line: the text of `step.line`.
        nodes: the FX graph so far; guards: the guards so far; shape_guards: symbolic-shape guards so far
            (text); new marks what the previous instruction added.
        nodes_total, guards_total: counts (the lists may be cut to a fixed length).
        brk: at a graph-break stop (or after one in this attempt), the break; error: at an error stop.
        attempts: this compile's attempts so far (the restart strip).
        holds_compile_lock: the program is paused inside torch's compile (its compile lock held): no other
            thread of the program can compile until it goes on.
        live: the translator is paused at this step (False for a recorded step shown by `trace_back`).
        mark: for a recorded step, where it lies in the recorded trace.
        record: ``"light"`` or ``"full"`` recording at this step; replay_on: stops in replays are on.
    """

    reason: TraceStopReason
    step: TraceStep
    chain: tuple[TraceFrame, ...]
    stack: tuple[TraceValue, ...] | None
    locals: tuple[tuple[str, TraceValue], ...] | None
    changed: tuple[str, ...]
    code: CodeView | None
    user_index: int | None
    source_line: str | None
    nodes: tuple[TraceNode, ...]
    guards: tuple[TraceGuard, ...]
    shape_guards: tuple[str, ...]
    nodes_total: int
    guards_total: int
    brk: TraceBreak | None
    error: TraceError | None
    attempts: tuple[TraceAttemptView, ...]
    holds_compile_lock: bool
    live: bool = True
    mark: TraceMark | None = None
    record: str = "full"
    replay_on: bool = False

    @property
    def at_restart_point(self) -> bool:
        """The re-trace after a restart is back at the instruction that restarted it (the graph break's
        instruction, where Dynamo now handles the break: `brk` is that break)."""
        s = self.step
        return any(a.attempt == s.attempt and a.replay_until == s.ordinal for a in self.attempts)


@dataclass(frozen=True)
class TraceRewind:
    """What ``rewind N`` started (`model.Resumed.rewind`): Dynamo traces the frame again from its start.

    Attributes:
        code_name: the frame being re-traced (the compile's code, depth 0).
        attempt: the attempt number of the re-trace (the attempt rewound from, plus one).
        count: how many instructions before the one rewound from the re-trace stops.
    """

    code_name: str
    attempt: int
    count: int
