"""Immutable snapshots the engine hands to front ends.

Everything here is a frozen dataclass built on the program's worker thread at a stop. Front ends (TUI, plain,
report) only read these; they never touch torch or a live frame. Values are summarised (`ValueSummary`): no
tensor is copied and every repr is cut to a fixed length, so the memory held per stop is bounded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from types import CodeType
from typing import Any, NamedTuple


class StopKind(str, Enum):
    """Why the program is paused. The string values are the `--break-on` kind names where one exists."""

    COMPILE = "compile"
    ENTRY = "entry"
    RECOMPILE = "recompile"
    GRAPH_BREAK = "graph-break"
    EXCEPTION = "exception"
    BREAKPOINT = "breakpoint"
    STEP = "step"
    RETURN = "return"
    INTERRUPT = "interrupt"
    #: inside Dynamo's compile, at an instruction it is about to trace (`Stop.trace` has the details)
    TRACE = "trace"
    TRACE_BREAK = "trace-break"
    TRACE_ERROR = "trace-error"


#: Stop kinds a user can switch with `--break-on` / `break-on KIND on|off`.
BREAK_ON_KINDS: tuple[str, ...] = ("compile", "entry", "recompile", "graph-break", "exception", "reentry", "trace",
                                   "trace-break", "trace-error")
#: The stop kinds that pause inside Dynamo's symbolic tracing (compile time, `dynadbg.core.trace_stops`).
TRACE_STOP_KINDS: frozenset[StopKind] = frozenset({StopKind.TRACE, StopKind.TRACE_BREAK, StopKind.TRACE_ERROR})
#: The kinds active when the user names none (DESIGN.md).
DEFAULT_BREAK_ON: frozenset[str] = frozenset({"entry", "recompile", "exception", "reentry"})


class ExceptionTableEntry(NamedTuple):
    """One entry of a code object's exception table (byte offsets, as ``dis`` parses it; 3.11+).

    Attributes:
        start, end: the covered range ``[start, end)``.
        target: the handler's offset.
        depth: the value-stack depth the handler starts with.
        lasti: whether the offset of the raising instruction is pushed too.
    """

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


class GeneratedInfo(NamedTuple):
    """What the engine knows of a Dynamo-generated code object.

    Attributes:
        original: the user's code object it was generated for.
        compile_id: the Dynamo compile id that made it (``"0/1"``).
        is_resume: True when it is (the generated code of) a resume function.
    """

    original: CodeType
    compile_id: str
    is_resume: bool


@dataclass(frozen=True)
class ValueSummary:
    """A bounded description of one Python object.

    Attributes:
        type_name: qualified-ish type name, e.g. ``"Tensor"``, ``"int"``, ``"function"``.
        text: a repr cut to `values.MAX_REPR` characters; for tensors a one-line summary such as
            ``"Tensor[3, 4] float32 cpu"``.
        is_null: True for a NULL value-stack slot (CPython pushes NULL before some callables).
        unknown: True when the engine cannot vouch for the slot (e.g. a parent frame suspended mid-call).
        shape: tensor shape, else None.
        dtype: tensor dtype as text (``"float32"``), else None.
        device: tensor device as text (``"cpu"``, ``"cuda:0"``), else None.
        requires_grad: tensor requires_grad, else None.
        identity: ``id()`` of the object at snapshot time (0 for NULL/unknown); used to mark changed locals.
    """

    type_name: str
    text: str
    is_null: bool = False
    unknown: bool = False
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    requires_grad: bool | None = None
    identity: int = 0

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None


@dataclass(frozen=True)
class Instr:
    """One instruction of a code object, as `dis` resolves it.

    Attributes:
        index: position in the instruction list (0-based, no CACHE entries); what `b IDX` and `until IDX` use.
        offset: byte offset in ``co_code`` (what `dis` prints and ``frame.f_lasti`` reports).
        opname: e.g. ``"LOAD_FAST"``.
        arg: the raw oparg, or None.
        argrepr: `dis`'s readable argument (``"x"``, ``"to 24"``, ``"NULL + __compiled_fn_1"``).
        lineno: source line this instruction maps to, or None.
        jump_target: index of the instruction this one may jump to, or None.
        is_jump_target: True if some instruction jumps here.
        name: the name the argument stands for when it is one (a global, attribute, local, cell or free
            variable: ``"__compiled_fn_1_<uuid>"`` for ``NULL + __compiled_fn_1_<uuid>``), else None.
    """

    index: int
    offset: int
    opname: str
    arg: int | None
    argrepr: str
    lineno: int | None
    jump_target: int | None = None
    is_jump_target: bool = False
    name: str | None = None


@dataclass(frozen=True)
class CodeView:
    """A code object as a listing.

    Attributes:
        key: stable identifier of the live code object inside this session (``id(code)``; the engine keeps the
            code alive so the id is not reused).
        name: ``co_name`` (``"forward"``, ``"torch_dynamo_resume_in_f_at_12"``).
        filename: ``co_filename``.
        firstlineno: ``co_firstlineno``.
        instructions: the listing, in order.
        generated: True for Dynamo-generated code (a cache entry's code), False for the original user code.
        compile_id: the Dynamo compile id that produced it (``"0/1"``), when known.
        is_resume: True for a resume function (the code Dynamo made for what follows a graph break) or its
            generated code, as the capture recorded it; False for any other code and when unknown.
    """

    key: int
    name: str
    filename: str
    firstlineno: int
    instructions: tuple[Instr, ...]
    generated: bool = True
    compile_id: str | None = None
    is_resume: bool = False

    def index_of_offset(self, offset: int) -> int | None:
        for ins in self.instructions:
            if ins.offset == offset:
                return ins.index
        return None


@dataclass(frozen=True)
class FrameView:
    """One frame of generated code on the call stack at a stop.

    Attributes:
        code: the frame's code listing.
        index: index of the instruction about to run (or that raised, at an exception stop); -1 if unknown.
        lineno: the source line of that instruction, or None.
        stack: value-stack slots, bottom first (the last one is TOS).
        stack_exact: True when the slots were read at the frame's real stack top; False when they come from a
            tracked depth (then slots the engine cannot vouch for are marked `unknown`).
        locals: (name, summary) pairs in ``co_varnames + co_cellvars + co_freevars`` order, bound names only.
        breakpoints: instruction indexes with a breakpoint in this code object.
        changed: names of locals whose value (object identity) changed since the previous stop in this frame.
        below_call: a caller frame, suspended in a call: `stack` holds the slots below the pending call, whose
            operands the call consumed (`format.stack_note` says it); False for the frame that runs.
        depth_from_flow: the frame was not traced from its start: the depth `stack` was read at comes from the
            code's flow (`flow.analyse`), not from tracking.
    """

    code: CodeView
    index: int
    lineno: int | None
    stack: tuple[ValueSummary, ...]
    stack_exact: bool
    locals: tuple[tuple[str, ValueSummary], ...]
    breakpoints: tuple[int, ...] = ()
    changed: tuple[str, ...] = ()
    below_call: bool = False
    depth_from_flow: bool = False


@dataclass(frozen=True)
class Stop:
    """What the program is paused on.

    Attributes:
        kind: why it stopped.
        message: one line for the status bar, e.g. ``"breakpoint 3 in f at index 12"``.
        frames: generated-code frames on the stack, outermost first; the last one is where the program is.
            Empty for stops that are not inside a frame (compile, recompile).
        compile_id: compile id of the current code (``"1/0"``) when known.
        entry_index: 1-based position of the serving cache entry among the code's entries (newest first), if known.
        entry_count: number of cache entries the original code has now.
        return_value: at a `return` stop, the value being returned.
        exception: at an `exception` stop, ``"ValueError: boom"``.
        exception_lines: at an `exception` stop, the exception as Python prints it below a traceback
            (``traceback.format_exception_only``: the line above, and a SyntaxError's caret lines or notes).
        recompile: at a recompile stop, the record of the miss (`RecompileRecord`: every failing guard of every
            entry, the inputs, guard diffs, the recompile limit), as analysed when the call missed.
        graph_break: when the innermost frame is a resume function, why it runs (`BreakContext`: the graph
            break that made it, where it continues the original function, the values handed over); else None.
        seq: a per-session counter, increasing with each stop.
        selected: index into `frames` of the frame `u`/`d` selected (-1: the innermost, the default). Locals,
            stack, guards and watches of the engine's queries are those of this frame.
        choices: at a recompile stop, what the user can decide (`RecompileChoice`, in the order offered); empty
            at every other stop.
        hints: at a recompile stop, the ``torch._dynamo.config.X = Y`` lines torch itself suggests.
        watches: every watch expression evaluated in the selected frame at this stop (`WatchValue`).
        teaching: the roles of the selected frame's code and its value stack's provenance, built with the stop
            when the listener asks for them (`StopTeaching`); None otherwise (and for recorded stops).
    """

    kind: StopKind
    message: str
    frames: tuple[FrameView, ...] = ()
    compile_id: str | None = None
    entry_index: int | None = None
    entry_count: int | None = None
    return_value: ValueSummary | None = None
    exception: str | None = None
    exception_lines: tuple[str, ...] = ()
    recompile: "RecompileRecord | None" = None
    graph_break: "BreakContext | None" = None
    #: at a graph-break stop with no frame: the break no resume function follows, and what runs eagerly instead
    eager_fallback: "EagerFallback | None" = None
    seq: int = 0
    selected: int = -1
    choices: tuple["RecompileChoice", ...] = ()
    hints: tuple[str, ...] = ()
    watches: tuple["WatchValue", ...] = ()
    #: set when this is a recorded past stop shown by `back`/`forward` (read-only history), else None
    history: "HistoryMark | None" = None
    teaching: "StopTeaching | None" = None
    #: at a stop on a breakpoint marker: the marker and where this code's graph call lies relative to it
    marker: "MarkerView | None" = None
    #: at an entry stop: True when it is the next call of a code object the user stepped in (``reentry``)
    reentry: bool = False
    #: at a trace stop (`TRACE_STOP_KINDS`): everything it shows (`trace_model.TraceStopView`), else None
    trace: "Any" = None

    @property
    def frame(self) -> FrameView | None:
        return self.frames[-1] if self.frames else None

    @property
    def selected_frame(self) -> FrameView | None:
        """The frame `u`/`d` (`Session.select_frame`) chose; the innermost one when none was chosen."""
        if not self.frames:
            return None
        if 0 <= self.selected < len(self.frames):
            return self.frames[self.selected]
        return self.frames[-1]


@dataclass(frozen=True)
class HistoryMark:
    """Where a shown stop lies in the recorded history (``"history 3 of 120"``).

    Attributes:
        position: 1-based number of the recorded entry shown (1 = the oldest still kept).
        total: entries recorded (kept) now.
        present: the number `forward` reaches the present at (``total`` when the present stop is the newest
            entry, ``total + 1`` when the present stop was not recorded, e.g. a compile stop).
    """

    position: int
    total: int
    present: int


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded stop at an instruction (`dynadbg.core.history`): immutable summaries only, no live objects.

    Attributes:
        seq: the stop's `Stop.seq`; negative for an instruction the program ran through without stopping
            (``history every on``).
        kind: why the program stopped there.
        message: the stop's status line.
        code_name: ``co_name`` of the innermost frame's code.
        compile_id: compile id of that code (``"0/1"``), when known.
        code_key: ``CodeView.key`` of that code.
        index: instruction index about to run; offset: its byte offset; opname and argrepr: its text.
        frames: the stop's frames (`FrameView`: value stack and locals as `ValueSummary`), outermost first.
        selected: index into `frames` of the frame selected at the stop.
        nbytes: the estimate of memory this entry holds (bytes), what the history's memory cap counts.
    """

    seq: int
    kind: StopKind
    message: str
    code_name: str
    compile_id: str | None
    code_key: int
    index: int
    offset: int
    opname: str
    argrepr: str
    frames: tuple[FrameView, ...]
    selected: int
    nbytes: int

    @property
    def frame(self) -> FrameView:
        return self.frames[-1]


@dataclass(frozen=True)
class HistoryView:
    """What `back`/`forward` show: a recorded stop (read-only), or the present stop again.

    Attributes:
        mark: where in the history (`HistoryMark`); ``mark.position == mark.present`` at the present.
        stop: the `Stop` to render: for a recorded entry a rebuilt stop whose ``history`` is `mark` (its frames
            carry the recorded value stack and locals); at the present, the live stop (``history`` None).
        entry: the recorded entry shown, None at the present.
    """

    mark: HistoryMark
    stop: Stop
    entry: HistoryEntry | None

    @property
    def at_present(self) -> bool:
        return self.entry is None


@dataclass(frozen=True)
class HistoryInfo:
    """The recorder's state (``history``).

    Attributes:
        count: entries kept; limit: most entries kept (0: recording is off); nbytes / max_bytes: memory estimate
            of the kept entries and its cap (bytes); evicted: entries dropped so far to stay in both bounds;
        position: the entry shown (`back`), None at the present; recent: the newest entries, oldest first,
            each with its 1-based number; every: instructions run through without a stop are recorded too.
    """

    count: int
    limit: int
    nbytes: int
    max_bytes: int
    evicted: int
    position: HistoryMark | None
    recent: tuple[tuple[int, HistoryEntry], ...] = ()
    every: bool = False


@dataclass(frozen=True)
class CommandResult:
    """What one console command produced.

    Attributes:
        output: text to show (may be empty).
        error: an error line when the command was unknown, malformed or failed; nothing changed in that case.
        resumed: True when the command let the program run (step, next, continue, ...).
        quit: True when the command ended the program.
        data: structured payload for front ends that render it themselves (e.g. a `GuardTree`), or None.
    """

    output: str = ""
    error: str | None = None
    resumed: bool = False
    quit: bool = False
    data: object | None = field(default=None, compare=False)


# --------------------------------------------------------------------------------------------------------------
# Guard trees (built by `dynadbg.core.guards`)
# --------------------------------------------------------------------------------------------------------------

class GuardStatus(str, Enum):
    """Outcome of one leaf guard for a given set of inputs."""

    PASS = "pass"  # noqa: S105 - a guard outcome, not a password
    FAIL = "fail"
    NO_VALUE = "no value"        # the guarded value could not be produced (missing key, missing closure var, ...)
    NOT_EVALUATED = "-"          # no inputs were given
    ERROR = "error"              # the guard raised


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's source that torch recorded (a guard's origin, where a graph break happened).

    Attributes:
        filename: the file as torch wrote it (often relative to the working directory, or ``_dynamo/...``).
        lineno: the 1-based line.
        function: the function's name (``"forward"``), when torch gave one.
        text: that source line's text (``"y = y + n"``), when torch gave it.
    """

    filename: str
    lineno: int
    function: str | None = None
    text: str | None = None


class CaveatKind(StrEnum):
    """Which of torch's remarks on a guard its user's code did not make (`LeafGuardView.caveat`)."""

    ZERO_ONE = "0/1 specialization"
    NAN = "NaN specialization"


@dataclass(frozen=True)
class Caveat:
    """A guard torch says the user's code did not cause (read off its note by `caveats.caveat_of`).

    Attributes:
        kind: which remark.
        source: the guarded value (``"L['x'].size()[0]"``, ``"L['s']"``), when it can be read off the code.
        dim: for a 0/1 specialization of a tensor size, the dimension, else None.
        tensor: for a 0/1 specialization, the tensor's source (``"L['x']"``), else None.
    """

    kind: CaveatKind
    source: str | None = None
    dim: int | None = None
    tensor: str | None = None


@dataclass(frozen=True)
class LeafGuardView:
    """One leaf guard of a guard manager.

    Attributes:
        id: stable id within the tree (``"g17"``); what `guard drop ID` takes.
        guard_type: the C++ leaf class name (``"TYPE_MATCH"``, ``"TENSOR_MATCH"``, ``"LAMBDA_GUARD"``, ...).
        source: the source of the manager it hangs on (``"L['x']"``), ``"L"`` at the root.
        code: the guard expressions (verbose code parts, location comments removed), one per line.
        location: where torch says the guard came from (file, line, function and the source line's text), if it
            recorded it.
        relational: True for relational guards (``NO_TENSOR_ALIASING``), listed once, evaluated through the root.
        epilogue: True for epilogue lambda guards (symbolic-shape guards).
        status: pass/fail for the inputs the tree was evaluated against.
        expected: what the guard wants, as text, when it can be read off the guard (``"3"``), else None.
        actual: the current value, summarised, when evaluated, else None.
        reason: torch's failure text when it gives one (``"tensor 'L['x']' rank mismatch. expected 1, actual 2"``).
        note: torch's remark after the location, e.g. the ``HINT: ...`` on an nn.Module int attribute, or a
            symbolic-shape comment (``duck sizing added this equality ...``), else None.
        size_changed: for a failing ``TENSOR_MATCH`` whose tensor differs only in sizes: the dimensions whose size
            the guard pins and the value no longer has, in order (``(0,)``; torch's reason names the first).
        caveat: torch's remark that the guard is not due to the user's code (0/1 or NaN specialization), read
            off `note` when the leaf is built (`caveats.caveat_of`), else None.
    """

    id: str
    guard_type: str
    source: str
    code: tuple[str, ...]
    location: SourceLocation | None = None
    relational: bool = False
    epilogue: bool = False
    status: GuardStatus = GuardStatus.NOT_EVALUATED
    expected: str | None = None
    actual: str | None = None
    reason: str | None = None
    note: str | None = None
    size_changed: tuple[int, ...] = ()
    caveat: Caveat | None = None

    @property
    def user_line(self) -> str | None:
        """The user source line the guard came from (``"y = y + n"``), if torch recorded one."""
        return self.location.text if self.location is not None else None


@dataclass(frozen=True)
class GuardNodeView:
    """One guard manager (a node of the tree) and what hangs below it.

    Attributes:
        id: stable id within the tree (``"m4"``).
        source: e.g. ``"L['cfg']['mode']"``; ``"L"`` for the root.
        manager_type: ``"RootGuardManager"``, ``"GuardManager"``, ``"DictGuardManager"``.
        accessor: the accessor that leads here from the parent (``"DictGetItemGuardAccessor('mode')"``), None at root.
        value_type: type of the guarded value (``"<class 'int'>"``).
        leaves: its leaf guards.
        children: child managers (dict key/value managers included), in the tree's order.
        status: FAIL if any leaf below fails, NO_VALUE if the value is missing, PASS if all pass.
        leaf_count: number of leaves in this subtree.
    """

    id: str
    source: str
    manager_type: str
    accessor: str | None
    value_type: str
    leaves: tuple[LeafGuardView, ...]
    children: tuple["GuardNodeView", ...]
    status: GuardStatus = GuardStatus.NOT_EVALUATED
    leaf_count: int = 0


@dataclass(frozen=True)
class GuardTree:
    """The guard tree of one cache entry.

    Attributes:
        compile_id: the entry's compile id (``"0/1"``).
        root: the root manager.
        epilogue: epilogue lambda guards (symbolic-shape checks with ``dynamic=True``).
        leaf_count: all leaves, epilogue included, relational guards counted once.
        evaluated: True when statuses were computed against inputs.
        failing: every failing leaf (not only the first, as ``check_verbose`` reports), in tree order.
        first_failure: ``check_verbose``'s text for the first failure, when evaluated and failing.
        text: ``str(guard_manager)``, torch's own rendering, for reference.
        invalidated: torch's reason when the cache entry was invalidated (``"Cache line invalidated because
            type(L['o']) got deallocated"``): the entry can never serve a call again. None for a live entry.
    """

    compile_id: str
    root: GuardNodeView
    epilogue: tuple[LeafGuardView, ...] = ()
    leaf_count: int = 0
    evaluated: bool = False
    failing: tuple[LeafGuardView, ...] = ()
    first_failure: str | None = None
    text: str = ""
    invalidated: str | None = None

    @property
    def passed(self) -> bool | None:
        return None if not self.evaluated else not self.failing


class DiffKind(StrEnum):
    """How a guard differs between two trees (`GuardDiff.kind`)."""

    ADDED = "added"          # only in the new tree
    REMOVED = "removed"      # only in the old tree
    CHANGED = "changed"      # same source and guard type, other code (``L['n'] == 3`` → ``L['n'] == 4``)


@dataclass(frozen=True)
class GuardDiff:
    """One difference between two guard trees, keyed by (source, guard_type).

    Attributes:
        kind: added (only in the new tree), removed (only in the old) or changed (same source and guard type,
            different code, e.g. ``L['n'] == 3`` → ``L['n'] == 4``).
        source: the guarded source (``"L['n']"``; ``"L"`` for root and epilogue guards).
        guard_type: the leaf type (``"EQUALS_MATCH"``).
        old_code: the old guard's code (parts joined by newlines), None when added.
        new_code: the new guard's code, None when removed.
        old_id: the old leaf's id in the old tree, None when added.
        new_id: the new leaf's id in the new tree, None when removed.
    """

    kind: DiffKind
    source: str
    guard_type: str
    old_code: str | None
    new_code: str | None
    old_id: str | None = None
    new_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, DiffKind):
            object.__setattr__(self, "kind", DiffKind(self.kind))


# --------------------------------------------------------------------------------------------------------------
# Compiled frames (built by `dynadbg.core.capture`)
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GraphView:
    """An FX graph Dynamo produced.

    Attributes:
        name: the global that calls it (``"__compiled_fn_1_<uuid>"``).
        compile_id: the compile that made it.
        code: ``GraphModule.code`` (Python source of the graph's forward).
        graph_text: ``str(gm.graph)``, the node-level listing.
        node_count: number of FX nodes.
        node_lines: (node name, user source line it was traced from or None) per node, in graph order, from
            each node's recorded stack trace (``node.meta["stack_trace"]``: its innermost frame).
        placeholders: the graph's inputs, in order: each placeholder's target, as `code`'s ``forward`` names
            its parameter (``"L_x_"``, ``"L_self_modules_fc1_parameters_weight_"``).
        outputs: what the graph returns, in order: the FX node names of its output tuple (``"add"``).
        code_lines: (node name, 1-based line of `code` that computes it) for each node FX wrote a line for,
            in graph order (FX's own line map of the generated ``forward``).
    """

    name: str
    compile_id: str
    code: str
    graph_text: str
    node_count: int
    node_lines: tuple[tuple[str, int | None], ...] = ()
    placeholders: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    code_lines: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class GraphBreakView:
    """A graph break Dynamo took while compiling one frame.

    Attributes:
        compile_id: the compile during which it happened.
        reason: torch's reason text, whole (as ``TORCH_LOGS=graph_breaks`` prints it).
        filename, lineno: where in user code the frame stopped, when known.
        user_line: that source line's text, when known.
        resume_functions: names of the resume functions that compile referenced (``"__resume_at_30_2"``).
        duplicate: True when torch logs this break as a duplicate ("user stack suppressed due to duplicate graph
            break"): an earlier break had the same graph-break type at the same chain of user lines
            (`graph_break_dups`).
        trace_id: the id torch logs the break under: the compile id with ``_N`` after the N-th restart of its
            analysis (``"2/0_1"``), None when unknown (then `compile_id` is what torch shows).
        summary: the reason's head: the text before torch's ``Explanation:``, on one line
            (``"Unsupported Tensor.item() call with capture_scalar_outputs=False"``; `facts.parse_break_reason`).
        notes: torch's ``Explanation: ...`` and ``Hint: ...`` lines of the reason, in order.
    """

    compile_id: str
    reason: str
    filename: str | None
    lineno: int | None
    user_line: str | None
    resume_functions: tuple[str, ...] = ()
    duplicate: bool = False
    summary: str = ""
    notes: tuple[str, ...] = ()
    trace_id: str | None = None

    @property
    def logged_id(self) -> str:
        """The id as torch's log shows it (`trace_id`, else `compile_id`)."""
        return self.trace_id or self.compile_id


@dataclass(frozen=True)
class RecompileView:
    """One recompilation of a code object.

    Attributes:
        compile_id: the compile id of the new entry (``"0/1"``).
        reasons: torch's reason strings (``"0/0: L['n'] == 3"``), one per failing old entry.
    """

    compile_id: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class CacheEntryView:
    """One cache entry of a compiled code object.

    Attributes:
        compile_id: e.g. ``"0/1"``.
        code: the generated code listing.
        backend: compiler name (``"eager"``, ``"inductor"``).
        hits: calls this entry served while the debugger watched (-1 when unknown).
        graphs: names of the ``__compiled_fn_*`` globals its code loads.
        resume_functions: names of the ``__resume_at_*`` globals its code loads.
        invalidated: True when torch invalidated it (code is None in torch).
        replaced: True when the code was replaced at the compile stop (then `code` is the replacement).
        guard_tree: the entry's guard tree (`dynadbg.core.guards`), only when the snapshot asked for guards.
        guards_text: the guard tree as text (``format.guards.format_guard_tree``, else torch's
            ``str(guard_manager)``),
            only when the snapshot asked for guards.
        resume_keys: parallel to `resume_functions`: the `CompiledFrameView.key` of each resume function's code
            (``id`` of the code object), or None when the capture did not see it installed.
        dropped: True when the entry is no longer in torch's cache (``torch._dynamo.reset()``, ``reset_code``);
            its compile id may then be reused by a later entry of the same code.
    """

    compile_id: str
    code: CodeView | None
    backend: str | None
    hits: int = -1
    graphs: tuple[str, ...] = ()
    resume_functions: tuple[str, ...] = ()
    invalidated: bool = False
    replaced: bool = False
    guard_tree: "GuardTree | None" = field(default=None, compare=False)
    guards_text: str | None = None
    resume_keys: tuple[int | None, ...] = ()
    dropped: bool = False


@dataclass(frozen=True)
class CompiledFrameView:
    """A code object Dynamo compiled, with everything the debugger captured about it.

    Attributes:
        key: ``id`` of the original code object (kept alive by the engine).
        name: ``co_name``.
        filename, firstlineno: where it lives.
        original: the original bytecode listing (``generated=False``).
        source: the original source text, when ``inspect`` can find it.
        is_resume: True for a resume function (``torch_dynamo_resume_in_f_at_12``).
        resume_origin: for a resume function, the original code's name and line (``"f (demo.py:10)"``).
        resume_offset: for a resume function, the offset in the original code where it resumes.
        entries: cache entries, oldest first, in compile order.
        graph_breaks: graph breaks taken while compiling this frame.
        recompiles: recompilations, in order.
        graphs: FX graphs its compiles produced.
        skipped: torch's reason when Dynamo decided not to compile the frame, else None.
    """

    key: int
    name: str
    filename: str
    firstlineno: int
    original: CodeView
    source: str | None
    is_resume: bool
    resume_origin: str | None
    resume_offset: int | None
    entries: tuple[CacheEntryView, ...]
    graph_breaks: tuple[GraphBreakView, ...] = ()
    recompiles: tuple[RecompileView, ...] = ()
    graphs: tuple[GraphView, ...] = ()
    skipped: str | None = None


@dataclass(frozen=True)
class ResumePoint:
    """Where a resume function continues its original function: the instruction the original frame stopped
    before (at the graph break).

    Attributes:
        function: the original function's ``co_name``; filename, firstlineno: where it lives.
        offset: the byte offset in the original code where the resume function continues, when known.
        opname, argrepr: the instruction at that offset (``"STORE_FAST"``, ``"peak"``), when found.
        lineno: its source line, when known.
    """

    function: str
    filename: str
    firstlineno: int
    offset: int | None = None
    opname: str | None = None
    argrepr: str | None = None
    lineno: int | None = None


@dataclass(frozen=True)
class HandedOver:
    """One argument a resume function received at its entry: a value of the original frame.

    Attributes:
        name: the parameter (``"___stack0"``, ``"h"``).
        value: its value at the stop, summarised.
        carries: for a ``___stack*`` argument, what it carries (`StackArg`), when it could be read.
    """

    name: str
    value: ValueSummary
    carries: "StackArg | None" = None


@dataclass(frozen=True)
class TracedBreak:
    """Where Dynamo's recorded trace holds a graph break (`BreakContext.traced`): ``trace steps COMPILE_ID
    ATTEMPT`` lists the steps up to it.

    Attributes:
        compile_id, attempt: the compile and the tracing attempt that found it.
        ordinal: the breaking instruction's step in that attempt (0-based, every inline depth counted).
        opname, line: the breaking instruction and its source line (None: unknown).
        depth: its inline depth (0: the frame being compiled).
    """

    compile_id: str
    attempt: int
    ordinal: int
    opname: str
    line: int | None
    depth: int = 0


@dataclass(frozen=True)
class BreakContext:
    """Why a resume function runs: the graph break that made it, where it continues the original function,
    and what was handed over (`Stop.graph_break`; `format.graph_break_text` says it).

    Attributes:
        resume_name: the resume function's ``co_name`` (``"torch_dynamo_resume_in_forward_at_26"``).
        compile_id: the compile of the resume function whose code runs, when known.
        known: False when the debugger has no record of the code (no capture): nothing else is filled in.
        resumes: where it continues the original function, when the capture knows its origin.
        brk: the graph break that made it, when captured (before the debugger attached it was not).
        break_compile_id: the compile during which the break happened; break_frame: that frame's name.
        stack: its ``___stack*`` arguments, bottom first: what was on the original frame's value stack.
        carried: its other arguments: the original frame's locals carried over.
        bookkeeping: Dynamo's own arguments (``__nested_resume_fns`` ...), by name.
        globals: the ``__resume_at_*`` globals that hold it (the names generated code calls it by).
        traced: where Dynamo's recorded trace of `break_compile_id` holds the break, when it was recorded.
    """

    resume_name: str
    compile_id: str | None = None
    known: bool = True
    resumes: ResumePoint | None = None
    brk: GraphBreakView | None = None
    break_compile_id: str | None = None
    break_frame: str | None = None
    stack: tuple[HandedOver, ...] = ()
    carried: tuple[HandedOver, ...] = ()
    bookkeeping: tuple[str, ...] = ()
    globals: tuple[str, ...] = ()
    traced: TracedBreak | None = None


@dataclass(frozen=True)
class EagerFallback:
    """A graph break no resume function follows: the frame (or a resume function Dynamo skipped) runs as plain
    Python (`Stop.eager_fallback`; `format.eager_fallback_text` says it).

    Attributes:
        code_name, filename, firstlineno: the code object that runs eagerly.
        skip_reason: torch's reason for not compiling it.
        breaks: the graph breaks behind it, oldest first: those logged while compiling this frame, or, for a
            skipped resume function, those of the compile that made it.
        resume_of: for a skipped resume function, (name, file, first line) of the code it resumes, else None.
    """

    code_name: str
    filename: str
    firstlineno: int
    skip_reason: str
    breaks: tuple[GraphBreakView, ...] = ()
    resume_of: tuple[str, str, int] | None = None


# --------------------------------------------------------------------------------------------------------------
# The engine API's results (`dynadbg.core.protocol.Engine`, implemented by `Session`)
# --------------------------------------------------------------------------------------------------------------


class ErrorKind(StrEnum):
    """What went wrong when an engine method refused (`EngineError.kind`), for front ends that branch on it."""

    USAGE = "usage"              # a malformed or out-of-range argument
    NOT_HERE = "not here"        # this stop has no frame, entry or record for it
    NOT_PAUSED = "not paused"    # the program runs or has finished
    EVAL = "eval"                # the user's expression raised
    REJECTED = "rejected"        # an edit or a decision torch would not take
    INTERNAL = "internal"        # a debugger bug, reported as a value
    UNAVAILABLE = "unavailable"  # a feature this torch lacks the hooks for (or one not installed yet)


@dataclass(frozen=True)
class EngineError:
    """An engine method refused or failed: nothing changed in the program.

    Attributes:
        message: one line for the user (``"index 99 is outside 0..41"``).
        kind: what went wrong (`ErrorKind`; its string value is accepted too and turned into the member).
        raised: for an `ErrorKind.EVAL` error, the type name of the exception the user's code raised
            (``"NameError"``), else None.

    Raises:
        ValueError: `kind` names no `ErrorKind`.
    """

    message: str
    kind: ErrorKind = ErrorKind.USAGE
    raised: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ErrorKind):
            object.__setattr__(self, "kind", ErrorKind(self.kind))

    def __str__(self) -> str:
        return self.message


class ResumeAction(StrEnum):
    """What let the program go on (`Resumed.action`): a control method, or the recompile decision taken."""

    STEP = "step"
    NEXT = "next"
    RETURN = "return"
    CONTINUE = "continue"
    UNTIL = "until"
    DETACH = "detach"
    QUIT = "quit"
    RECOMPILE = "recompile"
    EAGER = "eager"
    SKIP = "skip"
    DROP = "drop"
    DYNAMIC = "dynamic"
    # at a trace stop (inside Dynamo's tracing, `dynadbg.core.trace_engine`): Dynamo traces on
    TRACE_STEP = "trace step"
    TRACE_NEXT = "trace next"
    TRACE_RETURN = "trace return"
    TRACE_CONTINUE = "trace continue"
    TRACE_UNTIL = "trace until"
    TRACE_REWIND = "trace rewind"


@dataclass(frozen=True)
class GuardRef:
    """A reference to one leaf guard of one cache entry (what a decision or a warning is about).

    Attributes:
        compile_id: the entry's compile id (``"0/0"``), None when not known.
        leaf_id: the leaf's id in that entry's tree (``"g18"``; what ``drop``/``guard drop`` take).
        guard_type: the leaf's type (``"EQUALS_MATCH"``).
        source: the guarded source (``"L['self'].counter"``; ``"L"`` at the root).
        code: the guard's expressions (``("L['self'].counter == 0",)``).
    """

    compile_id: str | None
    leaf_id: str
    guard_type: str
    source: str
    code: tuple[str, ...] = ()

    @classmethod
    def of(cls, leaf: "LeafGuardView", compile_id: str | None) -> "GuardRef":
        """The reference to `leaf` of the entry `compile_id`."""
        return cls(compile_id, leaf.id, leaf.guard_type, leaf.source, leaf.code)


class DropRisk(StrEnum):
    """Why results may be wrong once a guard is gone (`DropWarning.risk`)."""

    CONSTANT_FOLDED = "constant folded"    # a value guard: Dynamo may have baked the value into graph or code
    TRACED_FOR = "traced for"              # a shape/type/key guard: the graph was traced for what it checks
    ASSUMED = "assumed"                    # any other guard: the compiled code assumes it holds
    SHAPE_RELATIONS = "shape relations"    # a symbolic-shape guard: every shape relation of the entry goes
    GLOBAL_STATE = "global state"          # an ambient guard: the entry serves calls under other global state


@dataclass(frozen=True)
class DropWarning:
    """A warning about leaving one guard out (`DropRisk` says why; `format.drop_warning_text` says it).

    Attributes:
        risk: what may go wrong.
        guard: the guard it is about.
        expected: the value the guard pins (``"0"``), when it can be read off the guard.
        actual: the value of the call that missed (``"1"``), when known: the entry compiled for it is the one
            that would serve other values unchecked.
    """

    risk: DropRisk
    guard: GuardRef
    expected: str | None = None
    actual: str | None = None


class HeldBackReason(StrEnum):
    """Why the default ``drop`` leaves a failing guard out (`HeldBack.reason`); it stays selectable by id."""

    GLOBAL_STATE = "global state"      # GLOBAL_STATE: grad mode, autocast, ... the whole call ran under
    MODE_FLAG = "mode flag"            # a module's ``.training``: train() and eval() run different code
    DISPATCH_MODE = "dispatch mode"    # torch-function mode stack, default device, dispatch keys
    WHOLE_TENSOR = "whole tensor"      # TENSOR_MATCH: shape, dtype, device, ... of an input (``dynamic``'s job)


@dataclass(frozen=True)
class HeldBack:
    """A failing guard the default ``drop`` leaves out, and why (``drop ID`` still drops it).

    Attributes:
        reason: why it is not in the default.
        guard: the guard (its entry, id, type, source, code).
    """

    reason: HeldBackReason
    guard: GuardRef


@dataclass(frozen=True)
class DropCandidate:
    """One failing guard ``drop`` can take (a row of the TUI's drop dialog).

    Attributes:
        guard: the guard.
        held_back: why the default leaves it out, None when it is in the default.
    """

    guard: GuardRef
    held_back: HeldBackReason | None = None


@dataclass(frozen=True)
class DropPreview:
    """What ``drop`` would do, before anything runs (`Engine.preview_drop`).

    Attributes:
        candidates: the failing guards of the most recently used entry a filter could drop, in the entry's order.
        default: the ids the default drops.
        selected: the ids previewed (empty: nothing would be dropped).
        warnings: why results may be wrong without the selected guards.
        permanent: the code that drops them for good (checked on the compile's filter entries), else None.
        plan: the checked filter (`filter_entries.FilterPlan`), None when nothing was checked.
        error: why ``drop`` of that selection would be refused, else None.
        groups: the candidates that repeat (`GuardGroup`s of the record whose every leaf is a candidate), so a
            front end lists each group as one row; a candidate in none is listed alone.
    """

    candidates: tuple[DropCandidate, ...]
    default: tuple[str, ...]
    selected: tuple[str, ...]
    warnings: tuple[DropWarning, ...] = ()
    permanent: PermanentFix | None = None
    plan: Any = field(default=None, compare=False)
    error: str | None = None
    groups: tuple["GuardGroup", ...] = ()


@dataclass(frozen=True)
class FilterTerm:
    """One condition of a ``guard_filter_fn``: leave out the ``GuardFilterEntry``s with this name and type.

    Attributes:
        name: ``GuardFilterEntry.name`` (``"self.counter"``: the source without ``L[...]``; ``""`` for ambient
            guards).
        guard_types: the ``guard_type`` values to leave out (``("CONSTANT_MATCH", "EQUALS_MATCH")``).
    """

    name: str
    guard_types: tuple[str, ...]


@dataclass(frozen=True)
class DynamicDim:
    """A tensor dimension marked dynamic (``torch._dynamo.mark_dynamic(name, dim)``).

    Attributes:
        name: the input as the user names it (``"x"``, ``"batch['x']"``).
        dim: the dimension (non-negative).
        size: its size in the call that missed, when known.
    """

    name: str
    dim: int
    size: int | None = None

    @property
    def specialised(self) -> bool:
        """Torch specialises this size (0 or 1): ``mark_dynamic`` leaves the dimension static for this call
        (``mark_unbacked`` makes it dynamic)."""
        return self.size in (0, 1)


@dataclass(frozen=True)
class AutoDynamicDim:
    """A tensor dimension torch's automatic dynamic shapes makes dynamic in the compile that follows a cache miss.

    With ``torch._dynamo.config.automatic_dynamic_shapes`` on (torch's default), Dynamo records per code object
    the size each tensor input had in the compiles so far (`compat.recorded_sizes`); the compile that sees another
    size at a dimension builds the new entry with that dimension dynamic, so later sizes there hit it. Not made
    when the config is off (also ``torch.compile(dynamic=False)``), for a size of 0 or 1 (torch specialises
    those), for a ``mark_static``ed dimension, or for a parameter or module attribute kept static by config.

    Attributes:
        source: torch's source of the tensor (``"L['x']"``).
        name: the input as the user names it (``"x"``, ``"kwargs['input_ids']"``).
        dim: the dimension (non-negative).
        seen: the sizes seen there, in order: the size the earlier compiles recorded, then this call's
            (``(8, 16)``); only this call's size when `already`.
        already: torch's record already had the dimension dynamic (an earlier compile made it so; this miss
            is about another guard or another entry).
    """

    source: str
    name: str
    dim: int
    seen: tuple[int, ...]
    already: bool = False


@dataclass(frozen=True)
class DynamicOutcome:
    """What the compile after ``dynamic NAME DIM`` made of that dimension (`advice.DynamicCheck`).

    Attributes:
        name, dim: the marked input and dimension.
        compile_id: the new entry.
        sizes: the sizes its ``TENSOR_MATCH`` on the input pins (``None`` = dynamic), None when no such guard.
        dynamic: the dimension is dynamic in the new entry (its size there is ``None``), None when unreadable.
    """

    name: str
    dim: int
    compile_id: str
    sizes: tuple[int | None, ...] | None
    dynamic: bool | None


@dataclass(frozen=True)
class PermanentFix:
    """What a user writes to get a decision's effect for good, as data (`format.permanent_text` writes the code).

    Attributes:
        kind: the decision it makes permanent: recompile (nothing to write: torch's default), eager (the
            ``eager_on_recompile`` stance), skip (a recompile limit of `recompile_limit` entries, or that stance),
            drop (a ``guard_filter_fn`` of `filter_terms`), dynamic (``mark_dynamic`` of `dims`).
        fn_name: the name the snippet gives the compiled callable (``"model"`` for a module's ``forward``).
        filter_terms: for drop: the filter's conditions, in order.
        dims: for dynamic: the dimensions to mark.
        recompile_limit: for skip: the entries the code has now (None: unknown, the stance alone is offered).
        hints: torch's own suggestions for this code (``"torch._dynamo.config.X = Y"``), written after the fix.
        call_site: the user's ``torch.compile`` call the fix goes on (`callsites.CallSite`), None when unknown
            (then the code says so instead of naming a guessed callable).
        plan: for drop: the ``guard_filter_fn`` checked on the compile's recorded ``GuardFilterEntry`` records
            (`filter_entries.FilterPlan`); the code prints its filter. None: `filter_terms` unchecked.
        limit_hit: for skip: the code hit its recompile limit already (torch compiles it no more: nothing to
            write).
    """

    kind: "DecisionKind"
    fn_name: str = "fn"
    filter_terms: tuple[FilterTerm, ...] = ()
    dims: tuple[DynamicDim, ...] = ()
    recompile_limit: int | None = None
    hints: tuple[str, ...] = ()
    call_site: Any = field(default=None, compare=False)
    plan: Any = field(default=None, compare=False)
    limit_hit: bool = False


@dataclass(frozen=True)
class Resumed:
    """A control method or a recompile decision let the program go on (`format.resumed_text` says what).

    Attributes:
        action: the control method or the decision taken.
        quit: True when the program is ending (``q``).
        left_history: True when a recorded stop was shown: the program goes on from the present.
        dropped: for drop: the guards the next compile leaves out.
        dynamic: for dynamic: the dimensions marked dynamic.
        warnings: why results may be wrong after the decision (one per dropped guard that risks it).
        permanent: for a decision: what a user writes to get its effect for good, else None.
        rewind: for trace rewind: the re-trace it starts (`trace_model.TraceRewind`), else None.
    """

    action: ResumeAction
    quit: bool = False
    left_history: bool = False
    dropped: tuple[GuardRef, ...] = ()
    dynamic: tuple[DynamicDim, ...] = ()
    warnings: tuple[DropWarning, ...] = ()
    permanent: PermanentFix | None = None
    #: for drop: the filter checked on the dropped guards' compiles (`filter_entries.FilterPlan`), None when
    #: nothing was checked; `permanent` is set only when it is ok
    plan: Any = field(default=None, compare=False)
    rewind: "Any" = None
    #: for a ``drop`` with no ids: the failing guards its default left out, each with why (`HeldBack`)
    held_back: tuple["HeldBack", ...] = ()
    #: for drop: the recompile record's groups of repeating failing guards (`GuardGroup`), so the dropped guards
    #: and their warnings of one group are said once
    groups: tuple["GuardGroup", ...] = ()
    #: a step or continue at a recompile stop: the call compiles a new entry (the default decision), said so
    default_recompile: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.action, ResumeAction):
            object.__setattr__(self, "action", ResumeAction(self.action))


@dataclass(frozen=True)
class BreakpointView:
    """A breakpoint on one instruction of one generated code object.

    Attributes:
        number: 1-based, in the order set in the session.
        code_key: `CodeView.key` of the code object (``id(code)``).
        code_name: its ``co_name``.
        index: instruction index (`Instr.index`).
        opname: the instruction's name there.
        condition: a Python expression evaluated in the frame; the breakpoint stops only when it is true.
        hits: times it stopped the program.
        marker: set by a breakpoint marker compiled into the code (``dynadbg.set_trace()`` or torch's
            ``torch._dynamo.bytecode_debugger.breakpoint()``: a ``LOAD_CONST <BREAKPOINT>``), not by ``b``.
    """

    number: int
    code_key: int
    code_name: str
    index: int
    opname: str
    condition: str | None = None
    hits: int = 0
    marker: bool = False


class DecisionKind(StrEnum):
    """What to do at a recompile stop. The values are the command names."""

    RECOMPILE = "recompile"
    EAGER = "eager"
    SKIP = "skip"
    DROP = "drop"
    DYNAMIC = "dynamic"


@dataclass(frozen=True)
class Decision:
    """A recompile-stop decision (`Session.decide`).

    Attributes:
        kind: which choice.
        guard_ids: for DROP: leaf ids (``"g5"`` of the most recently used entry, or ``"0/1:g5"``); empty means
            the default: every failing guard of that entry a guard filter can drop.
        name: for DYNAMIC: the input (``"x"`` or an expression such as ``"L['x']"``).
        dim: for DYNAMIC: the dimension (negative counts from the end).
    """

    kind: DecisionKind
    guard_ids: tuple[str, ...] = ()
    name: str | None = None
    dim: int | None = None

    @property
    def command(self) -> str:
        """The command-language line for this decision (``"drop g3 g4"``, ``"dynamic x 0"``)."""
        if self.kind is DecisionKind.DROP:
            return " ".join(("drop",) + self.guard_ids)
        if self.kind is DecisionKind.DYNAMIC:
            return f"dynamic {self.name} {self.dim}"
        return self.kind.value


@dataclass(frozen=True)
class RecompileChoice:
    """One choice a recompile stop offers, as data (the line-mode text and the TUI's keys both come from it).

    Attributes:
        kind: the decision kind.
        decision: the decision this choice sends as offered (DROP with the default ids, DYNAMIC with a name and
            dimension the analysis suggests).
        syntax: how to type it (``"drop [ID...]"``, ``"dynamic NAME DIM"``).
        summary: what it does, one line.
        available: False when the choice cannot be taken here (e.g. the recompile limit is hit).
        why_not: why it is not available, else None.
        permanent: what gets the same effect for good (`format.permanent_text` writes its code), else None.
        warnings: why results may be wrong after it (constant folding), one per guard it would drop.
        detail: extra text for the line, e.g. ``"(default: g3 of 0/0)"``.
        plan: for drop: the default's ``guard_filter_fn`` checked on the entry's recorded filter entries
            (`filter_entries.FilterPlan`: what it drops, or why no filter can; not available when it cannot),
            None when nothing was checked.
        left_out: for drop: failing guards the default leaves out because no filter drops them alone
            (`filter_entries.NoFilter`, each with why).
        automatic: for dynamic: the dimensions torch's automatic dynamic shapes makes dynamic in the new entry
            itself (`RecompileRecord.auto_dynamic`); the choice is not available when they are all that changed.
        held_back: for drop: the failing guards the default leaves out (`HeldBack`, each with its reason).
    """

    kind: DecisionKind
    decision: Decision
    syntax: str
    summary: str
    available: bool = True
    why_not: str | None = None
    permanent: PermanentFix | None = None
    warnings: tuple[DropWarning, ...] = ()
    detail: str = ""
    plan: Any = field(default=None, compare=False)
    left_out: tuple[Any, ...] = ()
    automatic: tuple[AutoDynamicDim, ...] = ()
    #: for drop: failing guards a filter could drop that the default leaves out (global state, mode flags,
    #: whole tensors), each with why; selectable by id
    held_back: tuple[HeldBack, ...] = ()


@dataclass(frozen=True)
class WatchValue:
    """A watch expression and its value at a stop.

    Attributes:
        number: 1-based, in the order added (what ``unwatch N`` takes).
        expr: the expression as typed.
        text: its value's repr, cut to a fixed length (empty when it raised).
        value: its value summarised (tensors as shape/dtype/device), None when it raised or was not evaluated.
        error: ``"NameError: name 'y' is not defined"`` when it raised (the program is not stopped for it), else
            None.
        changed: True when `text` differs from the previous stop's (False at the first stop it was evaluated).
        evaluated: False when there was no frame to evaluate it in at this stop.
    """

    number: int
    expr: str
    text: str = ""
    value: ValueSummary | None = None
    error: str | None = None
    changed: bool = False
    evaluated: bool = True


@dataclass(frozen=True)
class EvalResult:
    """What ``p EXPR`` (`Session.evaluate`) or ``!STMT`` (`Session.exec_statement`) produced.

    Attributes:
        text: the value's repr cut to a fixed length (``p``), or what the statement printed (``!``).
        value: the value summarised (``p`` only), else None.
    """

    text: str
    value: ValueSummary | None = None
    #: ``!STMT`` / a bare statement: the locals of the paused generated frame it rebound (written to the frame)
    changed_locals: tuple[str, ...] = ()
    #: True the first time in the session a statement changed a local of generated code (say so once)
    first_local_change: bool = False


# --------------------------------------------------------------------------------------------------------------
# Instruction edits and patches (made by `dynadbg.core.edits`, installed by `dynadbg.core.patches`)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewInstr:
    """An instruction an edit puts in.

    Attributes:
        opname: its name (``"LOAD_CONST"``).
        arg: its argument as typed (``"7"``, ``"x"``, ``"NULL + print"``, a jump's target row ``"12"``), None for
            none. Kept as text: it is resolved against the code the edit applies to, so a patch file replays it.
    """

    opname: str
    arg: str | None = None

    @property
    def text(self) -> str:
        return self.opname if self.arg is None else f"{self.opname} {self.arg}"


class EditOpKind(StrEnum):
    """What one instruction edit does (`EditOp.kind`); the values are the command names."""

    EDIT = "edit"        # replace the instruction at the row by one instruction
    INSERT = "insert"    # put instructions at the row (jumps to it and its exception handler reach them first)
    DELETE = "delete"    # remove the instruction at the row


@dataclass(frozen=True)
class EditOp:
    """One instruction edit (one command).

    Attributes:
        kind: edit (replace the instruction at `index` by one instruction), insert (put instructions at `index`:
            the first takes that row, and jumps to that row and the exception handler covering it now reach it
            first) or delete (remove the instruction at `index`); a command name is accepted too.
        index: a row of the listing the op applies to (0-based; ``insert`` also takes the row count: append).
        instrs: the new instructions: one for ``edit``, one or more for ``insert``, none for ``delete``. Jump
            targets in them name rows of the listing before the op.
    """

    kind: EditOpKind
    index: int
    instrs: tuple[NewInstr, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.kind, EditOpKind):
            object.__setattr__(self, "kind", EditOpKind(self.kind))

    @property
    def text(self) -> str:
        """The op as a command (``"insert 12 POP_TOP; LOAD_CONST 7"``)."""
        head = f"{self.kind.value} {self.index}"
        return f"{head} {'; '.join(i.text for i in self.instrs)}" if self.instrs else head

    def to_json(self) -> dict[str, Any]:
        return {"op": self.kind.value, "index": self.index, "instrs": [[i.opname, i.arg] for i in self.instrs]}


@dataclass(frozen=True)
class EditError:
    """Why an edit, a patch or a patch file was rejected. Nothing was installed.

    Attributes:
        kind: ``"syntax"``, ``"index"``, ``"unknown opcode"``, ``"bad argument"``, ``"jump to nowhere"``,
            ``"stack underflow"``, ``"stack overflow"``, ``"stack depth mismatch"``, ``"falls off the end"``,
            ``"exception table"``, ``"changed argument layout"``, ``"cannot assemble"``, ``"patch file"``,
            ``"no match"`` (a patch for another code object), ``"not here"`` (no generated code at this stop, no
            such guard or guard edit), ``"unsupported"`` (this torch lacks an API); for guard edits also
            ``"usage"`` (a malformed command), ``"eval"`` (the guard raised on this call's inputs) and
            ``"rejected"`` (a guard no filter can drop on its own).
        message: one line saying what is wrong and where.
        index: the listing row concerned, when there is one.
    """

    kind: str
    message: str
    index: int | None = None

    def __str__(self) -> str:
        return f"rejected ({self.kind}): {self.message}"


@dataclass(frozen=True)
class StackRow:
    """One instruction with the stack depth the validator computed for it.

    Attributes:
        index: listing row.
        offset: byte offset.
        opname: instruction name.
        argrepr: `dis`'s argument text.
        depth: value-stack depth before it runs (the real depth: on 3.11 ``PRECALL``'s arguments stay counted
            until ``CALL``), None when no path reaches it.
        effect: net stack effect when it falls through (jumps may differ).
        needs: how many slots it pops or peeks at.
    """

    index: int
    offset: int
    opname: str
    argrepr: str
    depth: int | None
    effect: int
    needs: int


@dataclass(frozen=True)
class StackAnalysis:
    """Stack depths of a whole code object and every problem found (`analyze_stack`).

    Attributes:
        rows: one `StackRow` per listing row.
        max_depth: the deepest the stack gets on any path.
        stacksize: the code's ``co_stacksize``.
        problems: every problem, in row order (empty when the code is consistent).
    """

    rows: tuple[StackRow, ...]
    max_depth: int
    stacksize: int
    problems: tuple[EditError, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class DiffLine:
    """One line of a listing diff.

    Attributes:
        tag: ``" "`` unchanged, ``"-"`` only in the old code, ``"+"`` only in the new code.
        old_index: the row in the old listing, None for ``"+"``.
        new_index: the row in the new listing, None for ``"-"``.
        text: the instruction as ``OPNAME argrepr`` (a jump as ``to <row>``).
    """

    tag: str
    old_index: int | None
    new_index: int | None
    text: str


# Teaching views (built by `dynadbg.core.roles`, `provenance` and `explain`)
# --------------------------------------------------------------------------------------------------------------

class Role(str, Enum):
    """What part of Dynamo's code generation an instruction of generated code belongs to."""

    PROLOGUE = "prologue"
    RESUME_PROLOGUE = "resume prologue"
    PRE_GRAPH = "pre-graph"
    GRAPH_INPUT = "graph input"
    GRAPH_CALL = "graph call"
    GRAPH_OUTPUT = "graph output"
    SIDE_EFFECT = "side effect"
    REBUILD = "rebuild"
    GRAPH_BREAK = "graph break"
    RESUME_CALL = "resume call"
    RETURN = "return"
    USER_CODE = "user code"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class InstrRole:
    """The role of one instruction.

    Attributes:
        index: instruction index (as in `CodeView.instructions`).
        role: its role.
        source: ``"capture"`` when the role rests on what the capture recorded for this compile (graph names
            and signatures, resume functions and their origins), ``"shape"`` when it is read off the code's
            shape and Dynamo's emission order.
        detail: one line saying what this instruction does for that role (``"loads input 1 of
            __compiled_fn_2: self.fc1.weight"``).
        effect_kind: for a side effect: ``"attribute"``, ``"global"``, ``"cell"`` or ``"container"``.
        eager_call: for the graph-break instruction that calls something, what it runs eagerly (``".item()"``,
            ``"builtins.int"``); empty when it calls nothing nameable.
        output: for an instruction that takes an output out of a graph's output tuple: (the graph's short name
            ``"__compiled_fn_2"``, the output's index, its FX node name or None when not captured); else None.
    """

    index: int
    role: Role
    source: str
    detail: str = ""
    effect_kind: str | None = None
    eager_call: str = ""
    output: tuple[str, int, str | None] | None = None


@dataclass(frozen=True)
class RoleRegion:
    """A maximal run of instructions with the same role (a region header in the bytecode pane).

    Attributes:
        start, end: first and last instruction index, inclusive.
        role: the role.
        source: ``"capture"``, ``"shape"`` or ``"mixed"``.
        title: the header text (``"call of the FX graph __compiled_fn_2 (3 inputs)"``).
    """

    start: int
    end: int
    role: Role
    source: str
    title: str


@dataclass(frozen=True)
class GraphCallInfo:
    """One call of a compiled FX graph in generated code.

    Attributes:
        call_index: index of the CALL.
        load_index: index of the LOAD_GLOBAL of the ``__compiled_fn_*`` global.
        name: the global's full name; short_name without its uuid (``"__compiled_fn_2"``).
        inputs: the Python expression each graph input is loaded from (``"self.fc1.weight"``), in order.
        placeholders: the FX placeholder names (``"L_self_modules_fc1_parameters_weight_"``), when captured.
        outputs: the FX node names the graph returns, in order, when captured.
        captured: True when the capture recorded this graph.
    """

    call_index: int
    load_index: int
    name: str
    short_name: str
    inputs: tuple[str, ...]
    placeholders: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    captured: bool = False


@dataclass(frozen=True)
class ResumeCallInfo:
    """One call of a resume function in generated code.

    Attributes:
        call_index: index of the CALL_FUNCTION_EX / CALL.
        load_index: index of the instruction that loaded the resume function.
        global_name: ``"__resume_at_60_3"``.
        function_name: ``"torch_dynamo_resume_in_f_at_48"`` when the capture saw it installed.
        arg_names: its parameters in order (what each packed argument stands for).
        carries: one line per argument (``"___stack0: value 0 of the original frame's value stack ..."``).
    """

    call_index: int
    load_index: int
    global_name: str
    function_name: str | None
    arg_names: tuple[str, ...] = ()
    carries: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodeRoles:
    """Roles of every instruction of one generated code object.

    Attributes:
        key: ``id`` of the code object.
        name: its ``co_name``.
        roles: one per instruction, in order.
        regions: maximal runs of equal role, in order, covering every instruction.
        graph_calls: the FX graph calls found.
        resume_calls: the resume-function calls found.
    """

    key: int
    name: str
    roles: tuple[InstrRole, ...]
    regions: tuple[RoleRegion, ...]
    graph_calls: tuple[GraphCallInfo, ...] = ()
    resume_calls: tuple[ResumeCallInfo, ...] = ()

    def region_at(self, index: int) -> RoleRegion | None:
        for r in self.regions:
            if r.start <= index <= r.end:
                return r
        return None


@dataclass(frozen=True)
class SlotOrigin:
    """Where one value-stack slot came from.

    Attributes:
        slot: position, 0 = bottom (the last slot is TOS).
        index: the instruction that pushed it; -1 when the interpreter pushed it on entering an exception
            handler (the exception, or the saved offset to re-raise from).
        opname, argrepr: that instruction's opname and readable argument (``"(exception handler)"`` and what
            was pushed, for index -1).
        value_index: the instruction that produced the value (differs from `index` for a COPY).
        is_null: True when the instruction pushed a NULL into this slot (PUSH_NULL, LOAD_GLOBAL's NULL).
        expression: the value as a Python expression where it can be told (``"self.fc1.weight"``).
        note: what the slot stands for in Dynamo's code: ``"output 0 of __compiled_fn_2 (FX node add)"``,
            at a resume call the arguments it carries; else empty.
    """

    slot: int
    index: int
    opname: str
    argrepr: str
    value_index: int
    is_null: bool = False
    expression: str = ""
    note: str = ""


@dataclass(frozen=True)
class Provenance:
    """Provenance of every value-stack slot before one instruction.

    Attributes:
        index: the instruction about to run.
        slots: bottom first.
        path: ``"executed"`` when computed along the instructions the frame really ran, ``"static"`` when
            along the code's control flow (the first path reaching `index`).
        ambiguous: True when paths with different origins meet at `index` and the static path was used.
    """

    index: int
    slots: tuple[SlotOrigin, ...]
    path: str
    ambiguous: bool = False


@dataclass(frozen=True)
class StopTeaching:
    """The teaching data of one stop, built on the program's thread with the `Stop` itself, so that a front end
    shows a step in one round trip (a listener with ``wants_teaching = True`` gets it on every stop).

    Attributes:
        roles: the roles of the selected frame's code object (what `Engine.roles()` answers), None when that is
            no generated code.
        provenance: who pushed each value-stack slot of the selected frame (what `Engine.stack_provenance()`
            answers), None where the frame has no value stack to explain (no instruction, an empty or unknown
            stack).
        traced_breaks: for each instruction of a graph-break region of the code (role ``GRAPH_BREAK``), where
            Dynamo's recorded trace of the compile that generated the code holds that break, as (instruction
            index, `TracedBreak`), in index order; only breaks the trace recorder still holds.
    """

    roles: CodeRoles | None = None
    provenance: Provenance | None = None
    traced_breaks: tuple[tuple[int, "TracedBreak"], ...] = ()

    def traced_break_at(self, index: int) -> "TracedBreak | None":
        """Where Dynamo's recorded trace holds the graph break instruction `index` belongs to, else None."""
        return next((t for i, t in self.traced_breaks if i == index), None)


@dataclass(frozen=True)
class StackEffectView:
    """What one instruction does to the value stack, with the live values at a stop.

    Attributes:
        index: the instruction.
        pops: the slots it consumes, bottom first, as (slot position, value summary text or ``"?"``).
        pushes: what it leaves, bottom first (``"the result of calling …"``).
        net: net change in depth.
        text: one line (``"pops 2 (slot 3: Tensor[3] float32 cpu, slot 4: 0); pushes 1: the item"``).
    """

    index: int
    pops: tuple[tuple[int, str], ...]
    pushes: tuple[str, ...]
    net: int
    text: str


@dataclass(frozen=True)
class PatchDiff:
    """Dynamo's code against the edited code, instruction by instruction (`diff_code`).

    Attributes:
        name: the code object's name.
        lines: every row of both listings, aligned (unchanged, removed, added).
        added: how many rows only the new code has.
        removed: how many rows only the old code has.
    """

    name: str
    lines: tuple[DiffLine, ...]
    added: int
    removed: int

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


@dataclass(frozen=True)
class EditPreview:
    """What one more edit would do, without installing anything (the TUI's edit dialog).

    Attributes:
        op: the edit previewed.
        error: why it is rejected, or None.
        analysis: stack depths of the resulting code (None when it could not be assembled).
        diff: Dynamo's code against the resulting code (None when rejected before assembling).
        code: the resulting code object (None when rejected).
    """

    op: EditOp
    error: EditError | None
    analysis: StackAnalysis | None = None
    diff: PatchDiff | None = None
    code: CodeType | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class PatchKey:
    """What a patch is for: a code object (by name, file and first line) and Dynamo's code for it (fingerprint).

    Attributes:
        name: ``co_name`` of the original code (``"forward"``, ``"torch_dynamo_resume_in_f_at_12"``).
        filename: ``co_filename``.
        firstlineno: ``co_firstlineno``.
        fingerprint: `fingerprint` of the Dynamo-generated code the ops apply to.
    """

    name: str
    filename: str
    firstlineno: int
    fingerprint: str

    def describe(self) -> str:
        return f"{self.name} ({os.path.basename(self.filename)}:{self.firstlineno}, code {self.fingerprint[:12]})"

    def same_function(self, other: "PatchKey") -> bool:
        """Same name, file (or file name) and first line: the same function, whatever Dynamo made of it."""
        return (self.name == other.name and self.firstlineno == other.firstlineno
                and (self.filename == other.filename
                     or os.path.basename(self.filename) == os.path.basename(other.filename)))

    def matches(self, other: "PatchKey") -> bool:
        return self.same_function(other) and self.fingerprint == other.fingerprint


@dataclass(frozen=True)
class PatchSpec:
    """One patch read from a patch file: what it is for and its ops.

    Attributes:
        key: the code object and Dynamo code it was made for.
        ops: the edit ops, in order.
        torch_version: the torch it was made with (``"2.13.0+cpu"``), as recorded.
        python_version: the Python it was made with (``"3.11.7"``), as recorded.
        guards: guard operations (``toolkit_model.GuardOp``: drops, adds, transports, rebinds), replayed
            against live objects when the patch is applied (format 2).
        mode: how a toolkit copy was installed (``"front"``, ``"next"``, ``"replace"``), None for a session edit.
        persist: whether the toolkit re-applies it to later compiles.
    """

    key: PatchKey
    ops: tuple[EditOp, ...]
    torch_version: str = ""
    python_version: str = ""
    guards: tuple[Any, ...] = ()
    mode: str | None = None
    persist: bool = False


@dataclass(frozen=True)
class PatchView:
    """A patch the session holds (for listings).

    Attributes:
        key: what it is for.
        ops: its edit ops.
        compile_ids: compiles it was applied to (``("0/0", "0/1")``).
        pending: True for a patch loaded from a file that no compile has matched yet.
        guard_ops: how many guard operations it carries (a patch file's drops, adds, expressions).
    """

    key: PatchKey
    ops: tuple[EditOp, ...]
    compile_ids: tuple[str, ...] = ()
    pending: bool = False
    guard_ops: int = 0


@dataclass(frozen=True)
class EditOutcome:
    """What an edit command did: an instruction edit or a patch file (`diff`, `code`), or a guard edit (`edit`,
    `warning`). Nothing changed when `error` is set.

    Attributes:
        error: why nothing was installed or changed, or None.
        message: what was installed or changed, where and from when (``"installed: runs from the next call"``).
        diff: Dynamo's code against the code now installed, when there is one.
        code: the code object now installed (None when rejected).
        edit: the guard edit made or undone (`GuardEditView`), when there is one.
        warning: why results may be wrong without a dropped guard (show it prominently), else None.
        guard_edits_gone: numbers (``guard`` lists them) of the guard edits made on an instruction edit's copy
            that went with it (`patch undo` took the copy out); empty otherwise.
    """

    error: EditError | None = None
    message: str = ""
    diff: PatchDiff | None = None
    code: CodeType | None = field(default=None, compare=False, repr=False)
    edit: "GuardEditView | None" = None
    warning: DropWarning | None = None
    guard_edits_gone: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------------------------------------------
# Guard edits (`dynadbg.core.guard_edits`)
# --------------------------------------------------------------------------------------------------------------


class GuardEditKind(StrEnum):
    """What a guard edit does (`GuardEditView.kind`); the values are the ``guard`` subcommands."""

    ADD = "add"      # a leaf or lambda guard added to a copy of the entry (or to the entry being built)
    DROP = "drop"    # a guard left out of the code object's compiles


@dataclass(frozen=True)
class GuardEditView:
    """One guard edit of the session (`format.guard_edit_line` writes its line).

    Attributes:
        number: 1-based, in the order made (what ``guard undo N`` takes).
        kind: add or drop (the subcommand name is accepted too).
        code_name: the code object it applies to (``"forward"``).
        compile_id: the cache entry it was made on (``"0/0"``).
        text: the added expression or leaf guard's code, or the dropped guard's code
            (``"L['self'].counter == 0"``).
        source: the guarded source (``"L['self'].counter"``); None for an expression guard.
        guard_type: the leaf type (``"EQUALS_MATCH"``); ``"LAMBDA_GUARD"`` for an expression guard.
        warning: why results may be wrong without a dropped guard, else None.
        active: False once undone.
        copy_id: the compile id of the `dynadbg.core.toolkit` copy of the entry that carries the edit (installed
            in place of the entry, removed again by ``guard undo`` and at the session's end); None for an edit
            made on the compile being built at a compile stop, or on the live tree (an expression guard).
    """

    number: int
    kind: GuardEditKind
    code_name: str
    compile_id: str | None
    text: str
    source: str | None = None
    guard_type: str = "LAMBDA_GUARD"
    warning: DropWarning | None = None
    active: bool = True
    copy_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, GuardEditKind):
            object.__setattr__(self, "kind", GuardEditKind(self.kind))


# --------------------------------------------------------------------------------------------------------------
# Recompile records (`dynadbg.core.recompile`)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LimitStatus:
    """Where a code object stands against Dynamo's recompile limits when it misses its cache.

    Attributes:
        entries: cache entries of the code object before this compile.
        counted: those that count toward ``recompile_limit`` (entries guarding the same ID_MATCH'd objects, e.g.
            the same module instance; usually all of them).
        total: entries across all ``isolate_recompiles`` regions (what ``accumulated_recompile_limit`` counts).
        limit: ``torch._dynamo.config.recompile_limit`` (alias ``cache_size_limit``) at that moment.
        accumulated_limit: ``torch._dynamo.config.accumulated_recompile_limit``.
        exceeds: the limit this compile hits (``"recompile_limit"`` / ``"accumulated_recompile_limit"``), else
            None. When set, Dynamo does not compile: the code runs its existing entries only, else eagerly, for
            the rest of the run (``RUN_ONLY``) — unless `raises`.
        is_recompile: torch counts and logs this compile as a recompile (False when only entries for other
            ID_MATCH'd objects exist).
        limit_source: where `limit` comes from: ``"torch.compile(recompile_limit=2)"`` (the per-compile option,
            which torch puts in place of the config value for that region) or
            ``"torch._dynamo.config.recompile_limit"``.
        raises: why a limit hit raises ``FailOnRecompileLimitHit`` in the program instead of running the call
            eagerly (``"fail_on_recompile_limit_hit=True"``, ``"fullgraph=True"``), else None.

    What a LIMIT HIT stop may offer follows from these facts: torch will not compile (so "recompile" is not
    what torch does: with `raises` torch raises in the program, else the call runs eagerly and so do all later
    misses of this code); only "eager" (run this call uncompiled) and "skip" remain meaningful.
    """

    entries: int
    counted: int
    total: int
    limit: int
    accumulated_limit: int
    exceeds: str | None = None
    is_recompile: bool = True
    limit_source: str = "torch._dynamo.config.recompile_limit"
    raises: str | None = None

    @property
    def hit_now(self) -> bool:
        """This compile hits a limit (Dynamo will not compile)."""
        return self.exceeds is not None

    @property
    def hit_next(self) -> bool:
        """This compile fills the limit: the next recompile of the code hits it."""
        return self.exceeds is None and (self.counted + 1 >= self.limit or self.total + 1 >= self.accumulated_limit)


@dataclass(frozen=True)
class EntryVerdict:
    """One old cache entry checked on the inputs that missed.

    Attributes:
        compile_id: the entry's compile id (``"0/0"``).
        passed: every guard passes (then torch did not use it for another reason: backend, region).
        failing: every failing leaf (FAIL, ERROR, and the NO_VALUE leaf where a value is missing), tree order.
        first_failure: what torch's ``check_verbose`` reports first (the guard torch's recompile log names).
        torch_reason: that reason as torch prints it: sources shortened, ``"0/0: self.counter == 0"``.
        torch_leaf: id of the failing leaf torch reports, when it is one of `failing`.
        invalidated: torch's reason when the entry was invalidated (``"... got deallocated"``), else None.
        leaf_count: leaves of the entry's tree.
        error: why the entry could not be analysed, else None.
    """

    compile_id: str
    passed: bool
    failing: tuple[LeafGuardView, ...] = ()
    first_failure: str | None = None
    torch_reason: str | None = None
    torch_leaf: str | None = None
    invalidated: str | None = None
    leaf_count: int = 0
    error: str | None = None


@dataclass(frozen=True)
class NonGuardFailure:
    """A failure that is not about the call's inputs (global state, an invalidated entry, dispatch keys ...).

    Attributes:
        kind: one of `NON_INPUT_KINDS`.
        compile_id: the entry it was seen on.
        text: what happened, one line.
    """

    kind: str
    compile_id: str
    text: str


@dataclass(frozen=True)
class EntryDiff:
    """`guards.diff_guard_trees` of two consecutive entries (older → newer, in compile order)."""

    old: str
    new: str
    diffs: tuple[GuardDiff, ...]


@dataclass(frozen=True)
class StackArg:
    """What one ``___stack*`` argument of a resume function carries: a value that was on the original frame's
    value stack at the graph break (read off the resume function's bytecode and source, `recompile.resume_stack_args`).

    Attributes:
        name: the argument (``"___stack0"``).
        position: its slot on the original frame's value stack (0 = bottom).
        function: the original function's name (``"forward"``).
        top: True for the top of the stack (TOS) at the break: the value the call that broke the graph made.
        line: the source line where the original frame stopped, when known.
        variable: for TOS, the user's variable the resume point stores it into (``"peak"``), else None.
        expression: for TOS, the source that made it: the right-hand side when stored into `variable`
            (``"h.abs().max().item()"``), else the whole line; None when the source is not readable.
    """

    name: str
    position: int
    function: str
    top: bool = False
    line: int | None = None
    variable: str | None = None
    expression: str | None = None


@dataclass(frozen=True)
class InputChange:
    """An input of the call that missed whose value a failing guard of the most recently used entry pins
    to another one (``self.counter: 0 → 1``).

    Attributes:
        name: the input as torch spells sources in its reasons (``"self.counter"``; a symbolic-shape guard's
            expression for a shape).
        expected: the value the guard pins, when it can be read off the guard.
        actual: the value this call has.
        variable: for a resume function's ``___stack*`` argument, the user's variable it carries (``"peak"``).
    """

    name: str
    expected: str | None
    actual: str
    variable: str | None = None


class GroupCause(StrEnum):
    """What a group of failing guards shows happened, when the data shows it (`GuardGroup.cause`)."""

    TRAIN_TO_EVAL = "train to eval"    # every guarded module ``.training`` flag of the entry went True → False
    EVAL_TO_TRAIN = "eval to train"    # ... False → True


@dataclass(frozen=True)
class GuardGroup:
    """Failing guards of one entry with one guard type and one expected/actual pair, on sibling sources (sources
    that end in the same accessor under one common head: ``L['self']._modules['blocks']._modules['3']._modules['bn']
    .training`` for ``N`` blocks), made from the record's leaves by `grouping.group_failing`.

    Attributes:
        compile_id: the entry (``"0/0"``).
        guard_type: the leaves' type (``"TRUE_MATCH"``).
        expected, actual: what every leaf of the group wants and sees (``"True"``, ``"False"``).
        leaf_ids: the leaves, tree order (``("g45", "g88", ...)``; what ``drop`` takes).
        sources: their sources, in the same order.
        head: the longest run of accessors every source starts with (``"L['self']._modules['blocks']._modules"``).
        tail: the longest run of accessors every source ends with, after `head` (``"._modules['bn'].training"``).
        one_slot: every source is `head` + one accessor + `tail` (then ``head[*]tail`` spells them all).
        location: the user line every leaf came from, when they share one, else None.
        owner_types: the class names of the objects the sources are attributes of (``("BatchNorm2d",)``), read
            off the guard tree's managers; empty when unknown.
        cause: what the group shows happened, when the data shows it, else None.
        flags_total: for a ``.training`` group: the guarded ``.training`` flags of the entry (failing or not).
    """

    compile_id: str
    guard_type: str
    expected: str | None
    actual: str | None
    leaf_ids: tuple[str, ...]
    sources: tuple[str, ...]
    head: str
    tail: str
    one_slot: bool = False
    location: SourceLocation | None = None
    owner_types: tuple[str, ...] = ()
    cause: GroupCause | None = None
    flags_total: int = 0

    @property
    def pattern(self) -> str:
        """The sources in one spelling: ``"L['self']._modules['blocks']._modules[*]._modules['bn'].training"``
        (`one_slot`), else ``"L['self'] … .training"``."""
        return f"{self.head}[*]{self.tail}" if self.one_slot else f"{self.head} … {self.tail}"


@dataclass(frozen=True)
class ChangeGroup:
    """`InputChange`s of sibling sources with one expected/actual pair (``10 × ....training: True → False``).

    Attributes:
        names: the inputs, as torch spells sources (``"self._modules['blocks']._modules['0']._modules['bn']
            .training"``), in order.
        expected, actual: the pair every one of them shows.
        head, tail, one_slot: as in `GuardGroup`, over `names`.
        cause: the cause of the failing-guard group these inputs are the sources of, when it has one.
    """

    names: tuple[str, ...]
    expected: str | None
    actual: str
    head: str
    tail: str
    one_slot: bool = False
    cause: GroupCause | None = None

    @property
    def pattern(self) -> str:
        return f"{self.head}[*]{self.tail}" if self.one_slot else f"{self.head} … {self.tail}"


@dataclass(frozen=True)
class DropResult:
    """What the guard filter of ``drop`` did in the compile that followed the stop (`decisions.GuardDropper`).

    Attributes:
        compile_id: the compile (``"0/1"``).
        fired: False when the filter did not run in it (nothing was dropped).
        requested: the guards the user chose to drop (of the old entry).
        dropped: (source, guard type) of each ``GuardFilterEntry`` left out, in torch's order.
        missed: chosen guards the new compile did not build (nothing to drop: e.g. automatic dynamic made
            the value symbolic).
        constants: (``LOAD_CONST`` argument, offset) of numbers the new code carries as constants, when a
            dropped value guard risks constant folding (e.g. a replayed attribute update): what to look at.
    """

    compile_id: str
    fired: bool
    requested: tuple[GuardRef, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    missed: tuple[GuardRef, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()
    #: for each chosen guard the compile did not build: the guard types its recorded filter entries have on that
    #: source instead (None: its entries were not recorded, what it guards there is not known)
    instead: tuple[tuple[GuardRef, tuple[str, ...] | None], ...] = ()


class OutcomeKind(StrEnum):
    """What came of a cache miss (`RecompileOutcome.kind`)."""

    COMPILED = "compiled"                  # a new entry was compiled
    AFTER_LIMIT = "after limit"            # the code hit its recompile limit earlier: torch ran the call eagerly


@dataclass(frozen=True)
class RecompileOutcome:
    """What the compile after a cache miss produced (`format.outcome_text` says it).

    Attributes:
        kind: compiled, or run eagerly because the recompile limit was hit earlier.
        compile_id: the new entry's compile id, when compiled.
        drop: what ``drop``'s guard filter did in that compile, when the user dropped guards.
        dynamic: what it made of the dimension ``dynamic`` marked, when the user marked one.
    """

    kind: OutcomeKind
    compile_id: str | None = None
    drop: DropResult | None = None
    #: what the compile made of the dimension ``dynamic`` marked (checked on its TENSOR_MATCH), when marked
    dynamic: DynamicOutcome | None = None
    #: what the compile made of each dimension the record predicted automatic dynamic would make dynamic
    #: (`RecompileRecord.auto_dynamic`), read back off the new entry's TENSOR_MATCH
    auto_dynamic: tuple[DynamicOutcome, ...] = ()


@dataclass(frozen=True)
class RecompileRecord:
    """One cache miss of a code object that already had entries: what failed, and what came of it.

    Attributes:
        seq: 1-based order of the miss in the run (the recompile timeline).
        code_key: ``id`` of the original code object (`CompiledFrameView.key`).
        frame_name, filename, firstlineno: the code object (``co_qualname``, ``co_filename``,
            ``co_firstlineno``).
        compile_id: the id the compile that follows gets (``"0/2"``; predicted from Dynamo's counter), or None.
        entries: every entry checked on the call's inputs, in torch's order (most recently used first — the
            order torch's recompile reasons use).
        non_input: failures that are not about the inputs.
        inputs: (name, summary) of the call's locals (arguments and free variables).
        diffs: guard diffs of consecutive entries, oldest pair first.
        limit: the recompile-limit situation, None when it could not be computed.
        decision: recompile (also when no stop was active, and for drop and dynamic), eager or skip.
        action: what the user did on top of the decision (a drop with the leaf ids it dropped, a dynamic
            with the input and dimension marked), else None.
        outcome: what the compile produced, when known (`format.outcome_text` says it).
        error: why the analysis failed, else None.
        pending: True while the program is paused at this miss's recompile stop (nothing decided yet).
        stack_args: for a resume function, what each value handed over from the original frame's value stack
            carries (`StackArg`), in argument order.
        scalar_break: a ``___stack*`` argument is the Python number a ``Tensor.item()`` / ``tolist()`` call made
            (the graph break that made the resume function); ``capture_scalar_outputs`` would keep it in the graph.
        code_name: the code object's ``co_name`` (a resume function's qualified name borrows the class of the
            method it resumes: ``MLP.torch_dynamo_resume_in_forward_at_26``).
        is_resume: True when the code object is a resume function.
        changed: the inputs the failing guards of the most recently used entry saw change, one per input.
        auto_dynamic: the dimensions whose size changed that torch's automatic dynamic shapes makes dynamic in
            the compile that follows (`AutoDynamicDim`); empty when it makes none (the config is off, the
            dimension is kept static) or this torch keeps no size record (`compat.FEATURES`).
        groups: the failing guards that repeat, grouped (`GuardGroup`; `grouping.group_failing`).
        changed_groups: the `changed` inputs that repeat, grouped (`ChangeGroup`).
    """

    seq: int
    code_key: int
    frame_name: str
    filename: str
    firstlineno: int
    compile_id: str | None
    entries: tuple[EntryVerdict, ...] = ()
    non_input: tuple[NonGuardFailure, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    diffs: tuple[EntryDiff, ...] = ()
    limit: LimitStatus | None = None
    decision: DecisionKind = DecisionKind.RECOMPILE
    action: Decision | None = None
    outcome: RecompileOutcome | None = None
    error: str | None = None
    pending: bool = False
    stack_args: tuple[StackArg, ...] = ()
    scalar_break: bool = False
    code_name: str = ""
    is_resume: bool = False
    changed: tuple[InputChange, ...] = ()
    auto_dynamic: tuple[AutoDynamicDim, ...] = ()
    #: failing guards of one type and one expected/actual pair on sibling sources, per entry (`GuardGroup`;
    #: only groups of two or more; a leaf not in a group is listed alone)
    groups: tuple[GuardGroup, ...] = ()
    #: `changed` inputs of sibling sources with one pair (`ChangeGroup`; two or more each)
    changed_groups: tuple[ChangeGroup, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.decision, DecisionKind):
            object.__setattr__(self, "decision", DecisionKind(self.decision))
    #: what the permanent fixes rest on (`advice.RecompileAdvice`: the call site, the checked guard filter of the
    #: default ``drop``, the ``dynamic`` sizes), None when the miss was analysed without the capture's records
    advice: Any = field(default=None, compare=False)

    @property
    def torch_reasons(self) -> tuple[str, ...]:
        """One torch-style reason per failing entry (``"0/0: self.counter == 0"``), in torch's order."""
        return tuple(v.torch_reason for v in self.entries if v.torch_reason)

    @property
    def limit_hit(self) -> bool:
        return self.limit is not None and self.limit.hit_now and self.decision is DecisionKind.RECOMPILE

    def stack_arg(self, name: str) -> StackArg | None:
        """The `StackArg` named `name` (``"___stack0"``), if the record has one."""
        return next((a for a in self.stack_args if a.name == name), None)


@dataclass(frozen=True)
class FrameRecompiles(CompiledFrameView):
    """A `CompiledFrameView` with the recompile insight of the run (the ``entries`` command's data; front ends
    that only know `CompiledFrameView` keep working).

    Attributes:
        serving: compile id of the entry serving the current frame, else None.
        hits_counted: True when ``entries[i].hits`` are real counts.
        timeline: this code object's `RecompileRecord`s, in the order the misses happened.
        limit: the latest `LimitStatus`, else None.
        limit_hits: the records whose compile hit the recompile limit.
    """

    serving: str | None = None
    hits_counted: bool = False
    timeline: tuple[RecompileRecord, ...] = ()
    limit: LimitStatus | None = None
    limit_hits: tuple[RecompileRecord, ...] = ()
    guard_costs: tuple["GuardCostView", ...] = ()


@dataclass(frozen=True)
class GuardCostView:
    """What one cache entry's guards cost per call (`dynadbg.core.guard_cost`).

    Attributes:
        compile_id: the entry (``"0/1"``).
        guards: leaf guards of its tree (epilogue included, relational guards once), None when unreadable.
        eval_us: torch's own "Guard eval latency" of the entry in microseconds (``profile_guard_manager`` at
            compile time: one cold-cache evaluation of the whole tree), None when not measured (the entry was
            compiled before the session started, or this torch lacks the profiler).
        by_source: ``(group, guards, tensor guards)`` per source group, largest first (``L['x']``,
            ``L['self']._modules['enc']``, globals, ambient state).
        advice: one line per documented way to cut this overhead that applies (``guard_filter_fn`` presets,
            the ``skip_guard_eval_unsafe`` stance).
    """

    compile_id: str
    guards: int | None
    eval_us: float | None
    by_source: tuple[tuple[str, int, int], ...] = ()
    advice: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompilesData:
    """The ``compiles`` command's data.

    Attributes:
        frames: every compiled code object with its recompile insight.
        timeline: every recompile of the run, in the order they happened.
        limit_hits: the recompiles that hit the recompile limit.
        without_entries: frames Dynamo tried and gave no entry (name, skip reason or None).
    """

    frames: tuple[FrameRecompiles, ...]
    timeline: tuple[RecompileRecord, ...] = ()
    limit_hits: tuple[RecompileRecord, ...] = ()
    without_entries: tuple[tuple[str, str | None], ...] = field(default=())


@dataclass(frozen=True)
class Explanation:
    """Everything `explain IDX` says about one instruction.

    Attributes:
        index, opname, argrepr: the instruction.
        meaning: what the opcode does, in plain words, on this Python version.
        version_note: how it differs on other Python versions (3.11–3.13), else empty.
        stack: its stack effect with the live values (when a stop gave them).
        role: its role in Dynamo's code, or None for code without roles.
        role_sentence: the role in a sentence.
    """

    index: int
    opname: str
    argrepr: str
    meaning: str
    version_note: str
    stack: StackEffectView | None
    role: InstrRole | None
    role_sentence: str


@dataclass(frozen=True)
class GuardHelp:
    """Plain-words help for one guard type.

    Attributes:
        guard_type: ``"TENSOR_MATCH"``.
        checks: what it checks.
        fails_when: what change of input makes it fail.
    """

    guard_type: str
    checks: str
    fails_when: str


# --------------------------------------------------------------------------------------------------------------
# Continue-mode notices: returns of generated frames, breakpoint markers (`dynadbg.core.session`)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReturnedView:
    """A frame of generated code returned while the session was attached (one per code object per stop-to-stop
    run; `ReturnsOmitted` counts the rest past `engine_hooks.RETURN_LINES_PER_RUN`).

    Attributes:
        code_name: ``co_name`` of the generated code (``"fn"``, ``"torch_dynamo_resume_in_fn_at_6"``).
        owner: the class of the frame's ``self`` when its code is a method (``"MLP"`` for ``MLP.forward``), else
            None.
        text: the returned value's repr (a tensor's values too), cut to 200 characters.
        value: the returned value summarised.
        is_resume: True for a resume function.
    """

    code_name: str
    owner: str | None
    text: str
    value: ValueSummary
    is_resume: bool = False


@dataclass(frozen=True)
class ReturnsOmitted:
    """Generated code objects that returned in the last stop-to-stop run past the per-run count of return lines.

    Attributes:
        count: how many code objects returned without a line of their own.
    """

    count: int


@dataclass(frozen=True)
class MarkerView:
    """A breakpoint marker the program stopped at (``dynadbg.set_trace()`` / torch's
    ``bytecode_debugger.breakpoint()`` / ``breakpoint()`` compiled into a ``LOAD_CONST <BREAKPOINT>``).

    Attributes:
        index: the marker's instruction index.
        graph_calls: instruction indexes of this code's calls of compiled graphs (``__compiled_fn_*``), in order.
        graph_ran: True when a graph call comes before the marker (its results exist at this stop), False when
            every one comes after it, None when the code calls no compiled graph.
    """

    index: int
    graph_calls: tuple[int, ...]
    graph_ran: bool | None


@dataclass(frozen=True)
class ExitResult:
    """How the program ended.

    Attributes:
        status: the exit status ``python SCRIPT`` would have had (0, the `SystemExit` code, 1 on an exception).
        traceback: the formatted traceback when the script raised, else None.
        exception: ``"ValueError: boom"`` when the script raised, else None.
        quit: True when the user ended it from the debugger (`q`).
    """

    status: int
    traceback: str | None = None
    exception: str | None = None
    quit: bool = False
