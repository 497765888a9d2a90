"""Immutable snapshots the engine hands to front ends.

Everything here is a frozen dataclass built on the program's worker thread at a stop. Front ends (TUI, plain,
report) only read these; they never touch torch or a live frame. Values are summarised (`ValueSummary`): no
tensor is copied and every repr is cut to a fixed length, so the memory held per stop is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


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


#: Stop kinds a user can switch with `--break-on` / `break-on KIND on|off`.
BREAK_ON_KINDS: tuple[str, ...] = ("compile", "entry", "recompile", "graph-break", "exception")
#: The kinds active when the user names none (DESIGN.md).
DEFAULT_BREAK_ON: frozenset[str] = frozenset({"entry", "recompile", "exception"})


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
    """

    index: int
    offset: int
    opname: str
    arg: int | None
    argrepr: str
    lineno: int | None
    jump_target: int | None = None
    is_jump_target: bool = False


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
    """

    key: int
    name: str
    filename: str
    firstlineno: int
    instructions: tuple[Instr, ...]
    generated: bool = True
    compile_id: str | None = None

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
    """

    code: CodeView
    index: int
    lineno: int | None
    stack: tuple[ValueSummary, ...]
    stack_exact: bool
    locals: tuple[tuple[str, ValueSummary], ...]
    breakpoints: tuple[int, ...] = ()
    changed: tuple[str, ...] = ()


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
        detail: kind-specific text blocks (graph-break reason, recompile report) as (title, text) pairs.
        seq: a per-session counter, increasing with each stop.
    """

    kind: StopKind
    message: str
    frames: tuple[FrameView, ...] = ()
    compile_id: str | None = None
    entry_index: int | None = None
    entry_count: int | None = None
    return_value: ValueSummary | None = None
    exception: str | None = None
    detail: tuple[tuple[str, str], ...] = ()
    seq: int = 0

    @property
    def frame(self) -> FrameView | None:
        return self.frames[-1] if self.frames else None


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

    PASS = "pass"
    FAIL = "fail"
    NO_VALUE = "no value"        # the guarded value could not be produced (missing key, missing closure var, ...)
    NOT_EVALUATED = "-"          # no inputs were given
    ERROR = "error"              # the guard raised


@dataclass(frozen=True)
class LeafGuardView:
    """One leaf guard of a guard manager.

    Attributes:
        id: stable id within the tree (``"g17"``); what `guard drop ID` takes.
        guard_type: the C++ leaf class name (``"TYPE_MATCH"``, ``"TENSOR_MATCH"``, ``"LAMBDA_GUARD"``, ...).
        source: the source of the manager it hangs on (``"L['x']"``), ``"L"`` at the root.
        code: the guard expressions (verbose code parts, location comments removed), one per line.
        user_line: the user source line the guard came from (``"y = y + n"``), if torch recorded one.
        location: ``"file.py:18 in f"``, if torch recorded one.
        relational: True for relational guards (``NO_TENSOR_ALIASING``), listed once, evaluated through the root.
        epilogue: True for epilogue lambda guards (symbolic-shape guards).
        status: pass/fail for the inputs the tree was evaluated against.
        expected: what the guard wants, as text, when it can be read off the guard (``"3"``), else None.
        actual: the current value, summarised, when evaluated, else None.
        reason: torch's failure text when it gives one (``"tensor 'L['x']' rank mismatch. expected 1, actual 2"``).
        note: torch's remark after the location, e.g. the ``HINT: ...`` on an nn.Module int attribute, or a
            symbolic-shape comment (``duck sizing added this equality ...``), else None.
    """

    id: str
    guard_type: str
    source: str
    code: tuple[str, ...]
    user_line: str | None = None
    location: str | None = None
    relational: bool = False
    epilogue: bool = False
    status: GuardStatus = GuardStatus.NOT_EVALUATED
    expected: str | None = None
    actual: str | None = None
    reason: str | None = None
    note: str | None = None


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
    """

    name: str
    compile_id: str
    code: str
    graph_text: str
    node_count: int


@dataclass(frozen=True)
class GraphBreakView:
    """A graph break Dynamo took while compiling one frame.

    Attributes:
        compile_id: the compile during which it happened.
        reason: torch's reason text (first line, ``"Unsupported Tensor.item() call ..."``, full text kept).
        filename, lineno: where in user code the frame stopped, when known.
        user_line: that source line's text, when known.
        resume_functions: names of the resume functions that compile referenced (``"__resume_at_30_2"``).
        duplicate: True when an earlier graph break had the same reason at the same place (torch then logs it
            as "user stack suppressed due to duplicate graph break").
    """

    compile_id: str
    reason: str
    filename: str | None
    lineno: int | None
    user_line: str | None
    resume_functions: tuple[str, ...] = ()
    duplicate: bool = False


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
        guards_text: the guard tree as text (``guards.format_guard_tree``, else torch's ``str(guard_manager)``),
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


# --------------------------------------------------------------------------------------------------------------
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
    """

    index: int
    role: Role
    source: str
    detail: str = ""
    effect_kind: str | None = None


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
