"""Canned data for the fake engine (`fake_engine.FakeEngine`): listings, stops, guard trees, recompile records.

Every value is a frozen `dynadbg.core.model` type, as the real engine builds them. Builders: `forward_scenario` (a
small Dynamo-like ``forward`` with a graph break, one stop per instruction), `big_scenario` (a 2,000-instruction
code object, for the step benchmark), `guard_tree_of` (any number of leaves, 500-module-model shaped),
`counter_recompile_scenario` (case 002's third call: a recompile stop on ``L['self'].counter == 1`` with two
entries, its choices as `RecompileChoice` data), `crash_scenario`, `never_compiled_scenario`.

`edit_rows` / `analyze_rows` / `diff_rows` give the edit preview of a fake listing: each row's pops and pushes as
its `Op` declares them (typed instructions through `dis.stack_effect`), a straight-line run (the fake stops fall
through their jumps too), in the real engine's `StackAnalysis` and `PatchDiff` types.
"""

from __future__ import annotations

import difflib
import dis
import json
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dynadbg.core.guards import GuardDiff
from dynadbg.core.model import (
    CacheEntryView,
    CodeRoles,
    CodeView,
    CompiledFrameView,
    DiffLine,
    EditError,
    EditOp,
    EntryDiff,
    EntryVerdict,
    FrameRecompiles,
    FrameView,
    GraphView,
    GuardNodeView,
    GuardStatus,
    GraphCallInfo,
    GuardTree,
    Instr,
    InstrRole,
    LeafGuardView,
    LimitStatus,
    PatchDiff,
    RecompileChoice,
    RecompileRecord,
    ResumeCallInfo,
    Role,
    RoleRegion,
    SourceLocation,
    StackAnalysis,
    StackRow,
    Stop,
    StopKind,
    ValueSummary,
    WatchValue,
)
from dynadbg.core.recompile import changed_inputs
from dynadbg.core.runner import ExitResult

#: The file the fake listings point at (its lines are real).
PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_program.py")

NULL = ValueSummary("NULL", "NULL", is_null=True)
UNKNOWN = ValueSummary("?", "<unknown>", unknown=True)

#: Stable fake object identities (locals' "changed" marks depend on them, never on real ids).
_ids = iter(range(0x1000, 0x7FFFFFFF, 16))


def tensor(*shape: int, dtype: str = "float32", device: str = "cpu", grad: bool = False) -> ValueSummary:
    """A tensor summary as `core.values.summarize` would make it."""
    text = f"Tensor[{', '.join(map(str, shape))}] {dtype} {device}" + (" grad" if grad else "")
    return ValueSummary("Tensor", text, shape=tuple(shape), dtype=dtype, device=device, requires_grad=grad,
                        identity=next(_ids))


def obj(type_name: str, text: str) -> ValueSummary:
    """A non-tensor summary."""
    return ValueSummary(type_name, text, identity=next(_ids))


# ---------------------------------------------------------------------------------------------------------------
# Listings and stops
# ---------------------------------------------------------------------------------------------------------------

#: Byte size of each opname's instruction plus inline caches (CPython 3.11), for realistic offsets.
_SIZES = {"LOAD_GLOBAL": 12, "CALL": 10, "PRECALL": 4, "BINARY_SUBSCR": 10, "LOAD_METHOD": 22, "COMPARE_OP": 6,
          "BINARY_OP": 4, "UNPACK_SEQUENCE": 4, "LOAD_ATTR": 10, "STORE_ATTR": 10}


@dataclass(frozen=True)
class Op:
    """One instruction of a fake listing and its effect on a simulated value stack.

    Attributes:
        opname, argrepr, lineno: as in `Instr`.
        pops: slots it pops.
        pushes: summaries it pushes (bottom first).
        store: local name it binds (STORE_FAST), from the popped value.
        jump: index it may jump to.
    """

    opname: str
    argrepr: str = ""
    lineno: int | None = None
    pops: int = 0
    pushes: tuple[ValueSummary, ...] = ()
    store: str | None = None
    jump: int | None = None
    arg: int | None = None


def listing(ops: Sequence[Op], *, name: str, key: int, filename: str = PROGRAM, firstlineno: int = 15,
            generated: bool = True, compile_id: str | None = "0/0") -> CodeView:
    """A `CodeView` of `ops` with offsets, carried-forward line numbers and jump-target marks."""
    targets = {op.jump for op in ops if op.jump is not None}
    rows, offset, lineno = [], 0, None
    for i, op in enumerate(ops):
        lineno = op.lineno if op.lineno is not None else lineno
        arg = op.arg if op.arg is not None else (0 if op.argrepr or op.opname.startswith(("LOAD", "STORE")) else None)
        rows.append(Instr(i, offset, op.opname, arg, op.argrepr, lineno, op.jump, i in targets, _name(op)))
        offset += _SIZES.get(op.opname, 2)
    return CodeView(key, name, filename, firstlineno, tuple(rows), generated, compile_id)


#: Opcodes whose argument is a name (`Instr.name`), as `dis` groups them.
_NAMED = frozenset(dis.hasname) | frozenset(dis.haslocal) | frozenset(dis.hasfree)


def _name(op: Op) -> str | None:
    """The name a fake instruction's argument stands for (its argrepr without ``NULL + ``), as `dis` resolves it."""
    if dis.opmap.get(op.opname) not in _NAMED or not op.argrepr:
        return None
    return op.argrepr.removeprefix("NULL|self + ").removeprefix("NULL + ")


def simulate(code: CodeView, ops: Sequence[Op], locals0: Sequence[tuple[str, ValueSummary]], *,
             first_kind: StopKind = StopKind.ENTRY, compile_id: str = "0/0", entry: tuple[int, int] = (1, 1),
             seq0: int = 1, breakpoints: tuple[int, ...] = ()) -> list[Stop]:
    """One stop before each instruction of a straight-line run of `ops` (jumps fall through)."""
    stack: list[ValueSummary] = []
    local_values = dict(locals0)
    previous = dict(locals0)
    stops = []
    for i, op in enumerate(ops):
        changed = tuple(n for n, v in local_values.items() if previous.get(n) is not v)
        frame = FrameView(code, i, code.instructions[i].lineno, tuple(stack), True,
                          tuple(local_values.items()), breakpoints, changed)
        kind = first_kind if i == 0 else StopKind.STEP
        message = (f"entering {code.name} (compile {compile_id})" if i == 0
                   else f"step in {code.name} at index {i}")
        stops.append(Stop(kind, message, (frame,), compile_id, entry[0], entry[1], seq=seq0 + i))
        previous = dict(local_values)
        popped = [stack.pop() for _ in range(min(op.pops, len(stack)))]
        if op.store is not None and popped:
            local_values[op.store] = popped[0]
        stack.extend(op.pushes)
    return stops


def forward_ops() -> list[Op]:
    """Dynamo-style generated code for `fake_program.Scale.forward` (n=3): graph call, branch, graph break."""
    fn1 = obj("function", "<graph __compiled_fn_1 of 0/0>")
    out = obj("tuple", "(Tensor[4, 4] float32 cpu,)")
    y = tensor(4, 4)
    relu = obj("builtin_function_or_method", "<built-in method relu of Tensor object at 0x7f00c0de0002>")
    y2 = tensor(4, 4)
    prt = obj("builtin_function_or_method", "<built-in function print>")
    resume = obj("function", "<function __resume_at_38_2 at 0x7f00c0de0003>")
    return [
        Op("RESUME", "", 15, arg=0),
        Op("LOAD_GLOBAL", "NULL + __compiled_fn_1", 16, pushes=(NULL, fn1), arg=1),
        Op("LOAD_FAST", "x", pushes=(tensor(4, 4),), arg=1),
        Op("LOAD_FAST", "n", pushes=(obj("int", "3"),), arg=2),
        Op("PRECALL", "", arg=2),
        Op("CALL", "", pops=4, pushes=(out,), arg=2),
        Op("STORE_FAST", "___graph_out_0", pops=1, store="___graph_out_0", arg=4),
        Op("LOAD_FAST", "___graph_out_0", pushes=(out,), arg=4),
        Op("LOAD_CONST", "0", pushes=(obj("int", "0"),), arg=1),
        Op("BINARY_SUBSCR", "", pops=2, pushes=(y,)),
        Op("STORE_FAST", "y", pops=1, store="y", arg=3),
        Op("LOAD_FAST", "n", 17, pushes=(obj("int", "3"),), arg=2),
        Op("LOAD_CONST", "2", pushes=(obj("int", "2"),), arg=2),
        Op("COMPARE_OP", ">", pops=2, pushes=(obj("bool", "True"),), arg=4),
        Op("POP_JUMP_FORWARD_IF_FALSE", "to 58", pops=1, jump=20, arg=4),
        Op("LOAD_FAST", "y", 18, pushes=(y,), arg=3),
        Op("LOAD_METHOD", "relu", pops=1, pushes=(relu, y), arg=0),
        Op("PRECALL", "", arg=0),
        Op("CALL", "", pops=2, pushes=(y2,), arg=0),
        Op("STORE_FAST", "y", pops=1, store="y", arg=3),
        Op("LOAD_GLOBAL", "NULL + print", 19, pushes=(NULL, prt), arg=3),
        Op("LOAD_CONST", "'graph break here'", pushes=(obj("str", "'graph break here'"),), arg=3),
        Op("PRECALL", "", arg=1),
        Op("CALL", "", pops=3, pushes=(obj("NoneType", "None"),), arg=1),
        Op("POP_TOP", "", pops=1),
        Op("LOAD_GLOBAL", "NULL + __resume_at_38_2", pushes=(NULL, resume), arg=5),
        Op("LOAD_FAST", "self", pushes=(obj("Scale", "Scale()"),), arg=0),
        Op("LOAD_FAST", "n", pushes=(obj("int", "3"),), arg=2),
        Op("LOAD_FAST", "y", pushes=(y2,), arg=3),
        Op("PRECALL", "", arg=3),
        Op("CALL", "", pops=5, pushes=(tensor(4),), arg=3),
        Op("RETURN_VALUE", "", 19, pops=1),
    ]


def original_ops() -> list[Op]:
    """The original bytecode of `Scale.forward` (abridged)."""
    return [
        Op("RESUME", "", 15, arg=0),
        Op("LOAD_FAST", "x", 16), Op("LOAD_FAST", "self"), Op("LOAD_ATTR", "factor"),
        Op("BINARY_OP", "*"), Op("LOAD_FAST", "n"), Op("BINARY_OP", "+"), Op("STORE_FAST", "y"),
        Op("LOAD_FAST", "n", 17), Op("LOAD_CONST", "2"), Op("COMPARE_OP", ">"),
        Op("POP_JUMP_FORWARD_IF_FALSE", "to 62", jump=17),
        Op("LOAD_FAST", "y", 18), Op("LOAD_METHOD", "relu"), Op("PRECALL", ""), Op("CALL", ""),
        Op("STORE_FAST", "y"),
        Op("LOAD_GLOBAL", "NULL + print", 19), Op("LOAD_CONST", "'graph break here'"), Op("PRECALL", ""),
        Op("CALL", ""), Op("POP_TOP", ""),
        Op("LOAD_FAST", "y", 20), Op("LOAD_ATTR", "sum"), Op("LOAD_CONST", "0"), Op("KW_NAMES", "('dim',)"),
        Op("PRECALL", ""), Op("CALL", ""), Op("LOAD_FAST", "n"), Op("BINARY_OP", "*"), Op("RETURN_VALUE", ""),
    ]


def big_ops(count: int = 2000) -> list[Op]:
    """`count` instructions: repeated graph-call blocks with forward jumps (for the 2,000-instruction benchmark)."""
    ops = [Op("RESUME", "", 15, arg=0)]
    block = 0
    while len(ops) < count - 1:
        start = len(ops)
        fn = obj("function", f"<graph __compiled_fn_{block} of 0/0>")
        ops += [
            Op("LOAD_GLOBAL", f"NULL + __compiled_fn_{block}", 16, pushes=(NULL, fn)),
            Op("LOAD_FAST", "x", pushes=(tensor(4, 4),)),
            Op("LOAD_FAST", "n", pushes=(obj("int", "3"),)),
            Op("PRECALL", ""),
            Op("CALL", "", pops=4, pushes=(obj("tuple", "(Tensor[4, 4] float32 cpu,)"),)),
            Op("LOAD_CONST", "0", pushes=(obj("int", "0"),)),
            Op("BINARY_SUBSCR", "", pops=2, pushes=(tensor(4, 4),)),
            Op("STORE_FAST", "y", 17, pops=1, store="y"),
            Op("LOAD_FAST", "n", pushes=(obj("int", "3"),)),
            Op("LOAD_CONST", "2", pushes=(obj("int", "2"),)),
            Op("COMPARE_OP", ">", pops=2, pushes=(obj("bool", "True"),)),
            Op("POP_JUMP_FORWARD_IF_FALSE", f"to {start * 2 + 40}", pops=1, jump=min(start + 14, count - 1)),
            Op("LOAD_FAST", "y", 18, pushes=(tensor(4, 4),)),
            Op("POP_TOP", "", pops=1),
        ]
        block += 1
    ops = ops[: count - 1] + [Op("LOAD_CONST", "None", 20, pushes=(obj("NoneType", "None"),)),
                              Op("RETURN_VALUE", "", pops=1)]
    return ops[:count]


# ---------------------------------------------------------------------------------------------------------------
# Guard trees
# ---------------------------------------------------------------------------------------------------------------

def _leaf(i: int, guard_type: str, source: str, code: str, user_line: str | None, status: GuardStatus,
          **kw: Any) -> LeafGuardView:
    return LeafGuardView(f"g{i}", guard_type, source, (code,),
                         SourceLocation("fake_program.py", kw.pop("line", 16), "forward", user_line), status=status,
                         **kw)


def _node(i: int, source: str, accessor: str | None, value_type: str, leaves: Sequence[LeafGuardView],
          children: Sequence[GuardNodeView] = (), manager: str = "GuardManager") -> GuardNodeView:
    leaf_count = len(leaves) + sum(c.leaf_count for c in children)
    failing = any(leaf.status == GuardStatus.FAIL for leaf in leaves) or any(c.status == GuardStatus.FAIL for c in children)
    return GuardNodeView(f"m{i}", source, manager, accessor, value_type, tuple(leaves), tuple(children),
                         GuardStatus.FAIL if failing else GuardStatus.PASS, leaf_count)


def forward_guard_tree(*, n_fails: bool = False) -> GuardTree:
    """The guard tree of ``forward``'s entry 0/0 (specialised on ``n == 3``); `n_fails` evaluates it for n=4."""
    p, f = GuardStatus.PASS, GuardStatus.FAIL
    n_status = f if n_fails else p
    x = _node(1, "L['x']", "FrameLocalsGuardAccessor(key='x')", "<class 'torch.Tensor'>", [
        _leaf(1, "TENSOR_MATCH", "L['x']",
              "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), "
              "torch.float32, device=None, requires_grad=False, size=[4, 4], stride=[4, 1])",
              "y = x * self.factor + n", p),
        _leaf(2, "NO_HASATTR", "L['x']", "hasattr(L['x'], '_dynamo_dynamic_indices') == False",
              "y = x * self.factor + n", p),
    ])
    n = _node(2, "L['n']", "FrameLocalsGuardAccessor(key='n')", "<class 'int'>", [
        _leaf(3, "TYPE_MATCH", "L['n']", "___check_type_id(L['n'], 140244005432128)", "if n > 2:", p, line=17),
        _leaf(4, "EQUALS_MATCH", "L['n']", "L['n'] == 3", "if n > 2:", n_status, line=17, expected="3",
              actual="4" if n_fails else "3",
              reason="L['n'] == 3" if n_fails else None),
    ])
    factor = _node(4, "L['self'].factor", "GetAttrGuardAccessor(factor)", "<class 'float'>", [
        _leaf(6, "EQUALS_MATCH", "L['self'].factor", "L['self'].factor == 2.0", "y = x * self.factor + n", p,
              expected="2.0", actual="2.0"),
    ])
    self_ = _node(3, "L['self']", "FrameLocalsGuardAccessor(key='self')", "<class 'fake_program.Scale'>", [
        _leaf(5, "TYPE_MATCH", "L['self']", "___check_type_id(L['self'], 94355214112320)", None, p),
    ], [factor])
    torch_ = _node(6, "G['torch']", "DictGetItemGuardAccessor('torch')", "<class 'module'>", [
        _leaf(7, "ID_MATCH", "G['torch']", "___check_obj_id(G['torch'], 140244003915344)", None, p),
    ])
    g = _node(5, "G", "GlobalsGuardAccessor", "<class 'dict'>", [], [torch_])
    root = _node(0, "L", None, "<class 'dict'>", [
        _leaf(0, "GLOBAL_STATE", "L", "___check_global_state()", None, p),
    ], [x, n, self_, g], manager="RootGuardManager")
    failing = tuple(leaf for leaf in n.leaves if leaf.status == f)
    return GuardTree("0/0", root, (), root.leaf_count, True, failing,
                     "L['n'] == 3" if n_fails else None, "TREE_GUARD_MANAGER: ...")


def guard_tree_of(leaves: int = 20_000, *, modules: int = 500,
                  fail_at: int | Collection[int] | None = None, nest: bool = False) -> GuardTree:
    """A guard tree shaped like a `modules`-module model's, with about `leaves` leaves in all.

    Each module manager has a TYPE_MATCH leaf and parameter managers holding the rest; `fail_at` (a module's
    index, or several) makes that module's last leaf fail. The module managers hang on the root, or with `nest`
    as in torch's trees of a module: root → ``L['self']`` → ``L['self']._modules['layers']`` → modules (each of
    the two with a TYPE_MATCH leaf: two leaves more).
    """
    failing_modules = {fail_at} if isinstance(fail_at, int) else set(fail_at or ())
    per_module = max(2, leaves // modules)
    params = max(1, (per_module - 1) // 8)
    counter = iter(range(1, 10 ** 9))
    mods = []
    for m in range(modules):
        base = f"L['self']._modules['layers']._modules['{m}']"
        fail = m in failing_modules
        children = []
        made = 1
        for p_i in range(params):
            size = min(8, per_module - made) if p_i < params - 1 else per_module - made
            if size <= 0:
                break
            src = f"{base}._parameters['w{p_i}']"
            leaves_p = [
                _leaf(next(counter), "TENSOR_MATCH" if k == 0 else "NO_TENSOR_ALIASING" if k == 1 else "ID_MATCH",
                      src, f"___check_obj_id({src}, {140000000000000 + m * 1000 + p_i * 10 + k})",
                      f"self.layers[{m}](x)", GuardStatus.FAIL if fail and p_i == params - 1 and k == size - 1
                      else GuardStatus.PASS)
                for k in range(size)
            ]
            made += size
            children.append(_node(next(counter), src, f"DictGetItemGuardAccessor('w{p_i}')",
                                  "<class 'torch.nn.parameter.Parameter'>", leaves_p))
        mods.append(_node(next(counter), base, f"DictGetItemGuardAccessor('{m}')", "<class 'torch.nn.Linear'>", [
            _leaf(next(counter), "TYPE_MATCH", base, f"___check_type_id({base}, 9435521411{m:04d})",
                  f"self.layers[{m}](x)", GuardStatus.PASS),
        ], children))
    top: list[GuardNodeView] = mods
    if nest:
        layers = _node(next(counter), "L['self']._modules['layers']", "DictGetItemGuardAccessor('layers')",
                       "<class 'torch.nn.ModuleList'>", [
                           _leaf(next(counter), "TYPE_MATCH", "L['self']._modules['layers']",
                                 "___check_type_id(L['self']._modules['layers'], 94355214100000)", None,
                                 GuardStatus.PASS)], mods)
        top = [_node(next(counter), "L['self']", "FrameLocalsGuardAccessor(key='self')", "<class 'Net'>", [
            _leaf(next(counter), "TYPE_MATCH", "L['self']", "___check_type_id(L['self'], 94355214100001)", None,
                  GuardStatus.PASS)], [layers])]
    root = _node(0, "L", None, "<class 'dict'>", [
        _leaf(0, "GLOBAL_STATE", "L", "___check_global_state()", None, GuardStatus.PASS),
    ], top, manager="RootGuardManager")
    failing = tuple(
        leaf for mod in mods if mod.status == GuardStatus.FAIL for c in mod.children for leaf in c.leaves
        if leaf.status == GuardStatus.FAIL
    )
    return GuardTree("0/0", root, (), root.leaf_count, True, failing)


# ---------------------------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class Scenario:
    """What the fake program does.

    Attributes:
        stops: the stops, in order; each resuming command moves to the next (``s 3`` skips two).
        guard_tree: what `FakeEngine.guard_trees` returns while stopped.
        original: what `original_code` answers.
        graphs: what `graphs` answers.
        compiled: what `entries` answers.
        exit: how the program ends after the last stop.
        start_messages: `on_message` lines sent at start.
        run_after: indexes of stops after which a resume leaves the program running until `interrupt`.
        guard_delay: seconds `guard_trees` takes (to see the loading indicator).
        prints: lines the program prints (to stdout) when it starts.
        ops: the `Op`s of the listing the stops run (their pops/pushes drive the edit preview's stack depths).
        stacksize: ``co_stacksize`` of that listing.
        recompile_record: what `recompile_records` answers at a recompile stop.
        roles: what `roles` answers for the listing (None: "no roles here", as for code without them).
        notes: instruction index → what a value it pushed stands for in Dynamo's code (provenance notes).
    """

    stops: list[Stop]
    guard_tree: GuardTree | None = None
    original: CodeView | None = None
    graphs: tuple[GraphView, ...] = ()
    compiled: CompiledFrameView | None = None
    exit: ExitResult = field(default_factory=lambda: ExitResult(0))
    start_messages: tuple[str, ...] = ()
    run_after: frozenset[int] = frozenset()
    guard_delay: float = 0.0
    prints: tuple[str, ...] = ()
    ops: tuple[Op, ...] = ()
    stacksize: int = 6
    recompile_record: RecompileRecord | None = None
    roles: CodeRoles | None = None
    notes: dict[int, str] = field(default_factory=dict)


GRAPH_CODE = '''def forward(self, L_x_ : torch.Tensor, L_n_ : int):
    l_x_ = L_x_
    mul = l_x_ * 2.0;  l_x_ = None
    add = mul + 3;  mul = None
    relu = add.relu();  add = None
    return (relu,)'''


#: Roles of `forward_ops`, by index range (first, last, role, detail), as `dynadbg.core.roles` would tag them.
_FORWARD_ROLES: tuple[tuple[int, int, Role, str], ...] = (
    (0, 0, Role.PROLOGUE, "starts the frame"),
    (1, 1, Role.GRAPH_CALL, "loads the compiled FX graph __compiled_fn_1"),
    (2, 3, Role.GRAPH_INPUT, "loads an input of __compiled_fn_1"),
    (4, 6, Role.GRAPH_CALL, "calls the FX graph __compiled_fn_1 with x, n and keeps its outputs as a tuple"),
    (7, 9, Role.GRAPH_OUTPUT, "takes output 0 of __compiled_fn_1 (FX node relu)"),
    (10, 10, Role.REBUILD, "stores y, as the original code would have it"),
    (11, 19, Role.USER_CODE, "the user's bytecode"),
    (20, 22, Role.GRAPH_BREAK, "gets the graph-break call ready"),
    (23, 23, Role.GRAPH_BREAK, "calls print() eagerly (Dynamo could not put it in "
                               "the graph)"),
    (24, 24, Role.REBUILD, "drops the call's result, as the original code does"),
    (25, 30, Role.RESUME_CALL, "calls the resume function __resume_at_38_2 with self, n, y"),
    (31, 31, Role.RETURN, "returns the resume function's result"),
)


#: What the graph-break instructions of `_FORWARD_ROLES` run eagerly (`InstrRole.eager_call`).
_EAGER_CALLS = {23: "print()"}


def forward_roles(code: CodeView) -> CodeRoles:
    """The roles of `forward_ops`' listing (`_FORWARD_ROLES`), regions as maximal runs of one role."""
    roles = [InstrRole(i, role, "capture" if role in (Role.GRAPH_CALL, Role.GRAPH_BREAK) else "shape", detail,
                       eager_call=_EAGER_CALLS.get(i, ""))
             for first, last, role, detail in _FORWARD_ROLES for i in range(first, last + 1)]
    regions: list[RoleRegion] = []
    for r in roles:
        if regions and regions[-1].role == r.role:
            regions[-1] = replace(regions[-1], end=r.index)
        else:
            regions.append(RoleRegion(r.index, r.index, r.role, r.source, r.role.value))
    graph = GraphCallInfo(5, 1, "__compiled_fn_1", "__compiled_fn_1", ("x", "n"), ("L_x_", "L_n_"), ("relu",),
                          True)
    resume = ResumeCallInfo(30, 25, "__resume_at_38_2", "torch_dynamo_resume_in_forward_at_19",
                            ("self", "n", "y"), ("self: the user's local self", "n: the user's local n",
                                                 "y: the user's local y"))
    return CodeRoles(code.key, code.name, tuple(roles), tuple(regions), (graph,), (resume,))


#: What values pushed by some `forward_ops` instructions stand for (the stack pane's provenance notes).
FORWARD_NOTES = {
    1: "the compiled FX graph __compiled_fn_1",
    2: "input 0 of __compiled_fn_1", 3: "input 1 of __compiled_fn_1",
    5: "the outputs of __compiled_fn_1 (a tuple)",
    9: "output 0 of __compiled_fn_1 (FX node relu)",
    26: "argument self of __resume_at_38_2", 27: "argument n of __resume_at_38_2",
    28: "argument y of __resume_at_38_2",
}


def forward_scenario(*, breakpoints: tuple[int, ...] = (), n_fails: bool = False, teach: bool = False) -> Scenario:
    """``Scale.forward`` entered with x=ones(4, 4), n=3, then one stop per instruction.

    With `teach`, `roles` answers `forward_roles` and provenance notes name graph inputs, outputs and resume
    arguments (the role gutter, section headers and provenance lines show)."""
    ops = forward_ops()
    code = listing(ops, name="forward", key=0xF0)
    locals0 = [("self", obj("Scale", "Scale()")), ("x", tensor(4, 4)), ("n", obj("int", "3"))]
    stops = simulate(code, ops, locals0, breakpoints=breakpoints, entry=(1, 2))
    original = listing(original_ops(), name="forward", key=0xF1, generated=False, compile_id=None)
    graph = GraphView("__compiled_fn_1", "0/0", GRAPH_CODE, "graph():\n    ...", 6,
                      (("l_x_", None), ("l_n_", None), ("mul", 16), ("add", 16), ("relu", 18), ("output", None))
                      if teach else (), placeholders=("L_x_", "L_n_"), outputs=("relu",),
                      code_lines=(("l_x_", 2), ("mul", 3), ("add", 4), ("relu", 5)))
    entries = (
        CacheEntryView("0/0", code, "eager", hits=3, graphs=("__compiled_fn_1",),
                       resume_functions=("__resume_at_38_2",)),
        CacheEntryView("0/1", replace(code, key=0xF2, compile_id="0/1"), "eager", hits=0,
                       graphs=("__compiled_fn_5",), resume_functions=("__resume_at_38_6",)),
    )
    compiled = FrameRecompiles(0xF1, "forward", PROGRAM, 15, original, None, False, None, None, entries,
                               graphs=(graph,))
    return Scenario(stops, forward_guard_tree(n_fails=n_fails), original, (graph,), compiled,
                    start_messages=("dynadbg: breaking on entry, recompile, exception",), ops=tuple(ops),
                    roles=forward_roles(code) if teach else None, notes=dict(FORWARD_NOTES) if teach else {})


def big_roles(code: CodeView) -> CodeRoles:
    """Roles for `big_ops`' listing, read off each block's shape (graph load, inputs, call, output, rebuild, the
    branch as user code): hundreds of sections, to measure the role gutter and headers in a big code object."""
    roles, graphs, load = [], [], 0
    for ins in code.instructions:
        name = ins.opname
        if name == "LOAD_GLOBAL":
            role, load = Role.GRAPH_CALL, ins.index
        elif name in ("PRECALL", "CALL"):
            role = Role.GRAPH_CALL
            if name == "CALL":
                graphs.append(GraphCallInfo(ins.index, load, f"__compiled_fn_{len(graphs)}",
                                            f"__compiled_fn_{len(graphs)}", ("x", "n")))
        elif name == "LOAD_FAST" and roles and roles[-1].role in (Role.GRAPH_CALL, Role.GRAPH_INPUT):
            role = Role.GRAPH_INPUT
        elif name in ("LOAD_CONST", "BINARY_SUBSCR") and roles and roles[-1].role in (Role.GRAPH_CALL,
                                                                                      Role.GRAPH_OUTPUT):
            role = Role.GRAPH_OUTPUT
        elif name == "STORE_FAST":
            role = Role.REBUILD
        elif name == "RESUME":
            role = Role.PROLOGUE
        elif name == "RETURN_VALUE":
            role = Role.RETURN
        else:
            role = Role.USER_CODE
        roles.append(InstrRole(ins.index, role, "shape"))
    regions: list[RoleRegion] = []
    for r in roles:
        if regions and regions[-1].role == r.role:
            regions[-1] = replace(regions[-1], end=r.index)
        else:
            regions.append(RoleRegion(r.index, r.index, r.role, "shape", r.role.value))
    return CodeRoles(code.key, code.name, tuple(roles), tuple(regions), tuple(graphs))


def big_scenario(count: int = 2000, steps: int = 200, *, teach: bool = False) -> Scenario:
    """A `count`-instruction code object with `steps` step stops starting at instruction 900 (with `teach`, roles
    from `big_roles`)."""
    ops = big_ops(count)
    code = listing(ops, name="forward_big", key=0xB16)
    locals0 = [("x", tensor(4, 4)), ("n", obj("int", "3"))]
    stops = simulate(code, ops, locals0)
    start = min(900, max(0, count - steps - 1))
    chosen = [stops[0]] + stops[start:start + steps]
    chosen = [replace(s, seq=i + 1) for i, s in enumerate(chosen)]
    return Scenario(chosen, guard_tree_of(200), None, (), None, ops=tuple(ops),
                    roles=big_roles(code) if teach else None)


def recompile_scenario() -> Scenario:
    """Entry into ``forward`` (n=3), then a recompile stop (n=4 fails ``L['n'] == 3``), then entry 0/1."""
    base = forward_scenario(n_fails=True)
    first = base.stops[0]
    tree = base.guard_tree
    assert tree is not None
    record = RecompileRecord(1, 0xF1, "forward", "fake_program.py", 15, "0/1", (
        EntryVerdict("0/0", False, tree.failing, tree.first_failure, "0/0: n == 3", tree.failing[0].id,
                     leaf_count=tree.leaf_count),), inputs=(("n", "4"),), pending=True, code_name="forward")
    record = replace(record, changed=changed_inputs(record))
    recompile = Stop(StopKind.RECOMPILE, "cache miss on forward: recompiling", (), "0/0", None, 1,
                     recompile=record, seq=2)
    second = replace(first, compile_id="0/1", entry_index=1, entry_count=2, seq=3,
                     message="entering forward (compile 0/1)")
    base.stops = [first, recompile, second]
    return base


#: torch's hint on case 002's guard (integer attributes of an nn.Module are static).
COUNTER_HINT = ("HINT: torch.compile considers integer attributes of the nn.Module to be static. If you are "
                "observing recompilation, you might want to make this integer dynamic using "
                "torch._dynamo.config.allow_unspec_int_on_nn_module = True, or convert this integer into a tensor.")
#: Case 002's file, as the engine names it in guard locations.
COUNTER_FILE = "shared/cases/002_module_int_counter_attr.py"


def counter_ops() -> list[Op]:
    """The original bytecode of case 002's ``WarmupScaled.forward`` (CPython 3.11)."""
    return [
        Op("RESUME", "", 44, arg=0), Op("LOAD_FAST", "self", 45), Op("COPY", "", arg=1),
        Op("LOAD_ATTR", "counter"), Op("LOAD_CONST", "1"), Op("BINARY_OP", "+=", arg=13), Op("SWAP", "", arg=2),
        Op("STORE_ATTR", "counter"), Op("LOAD_GLOBAL", "NULL + min", 46), Op("LOAD_FAST", "self"),
        Op("LOAD_ATTR", "counter"), Op("LOAD_CONST", "4"), Op("PRECALL", "", arg=2), Op("CALL", "", arg=2),
        Op("LOAD_CONST", "4.0"), Op("BINARY_OP", "/", arg=11), Op("STORE_FAST", "warm"),
        Op("LOAD_FAST", "self", 47), Op("LOAD_METHOD", "proj"), Op("LOAD_FAST", "x"), Op("PRECALL", "", arg=1),
        Op("CALL", "", arg=1), Op("LOAD_FAST", "warm"), Op("BINARY_OP", "*", arg=5), Op("RETURN_VALUE", ""),
    ]


def counter_guard_tree(entry: str = "0/1", expected: int = 1, actual: int = 2) -> GuardTree:
    """Entry `entry` of case 002's ``forward`` (abridged), evaluated for a call whose ``self.counter`` is `actual`."""
    p, f = GuardStatus.PASS, GuardStatus.FAIL
    where = SourceLocation(COUNTER_FILE, 45, "forward", "self.counter += 1")
    counter_leaf = LeafGuardView("g6", "EQUALS_MATCH", "L['self'].counter", (f"L['self'].counter == {expected}",),
                                 where, status=f, expected=str(expected), actual=str(actual),
                                 reason=f"L['self'].counter == {expected}", note=COUNTER_HINT)
    counter = _node(4, "L['self'].counter", "DictGetItemGuardAccessor('counter')", "<class 'int'>", [counter_leaf])
    dict_ = _node(3, "L['self'].__dict__", "GetGenericDictGuardAccessor", "<class 'dict'>", [
        LeafGuardView("g5", "DICT_CONTAINS", "L['self'].__dict__", ("not ___dict_contains('forward', "
                      "L['self'].__dict__)",), where, status=p),
    ], [counter])
    self_ = _node(2, "L['self']", "FrameLocalsGuardAccessor(key='self')",
                  "<class '__main__.WarmupScaled'>", [
                      LeafGuardView("g4", "TYPE_MATCH", "L['self']", ("___check_type_id(L['self'], 94355214112320)",),
                                    where, status=p),
                  ], [dict_])
    x = _node(1, "L['x']", "FrameLocalsGuardAccessor(key='x')", "<class 'torch.Tensor'>", [
        LeafGuardView("g2", "TENSOR_MATCH", "L['x']",
                      ("check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
                       "AutogradCPU), torch.float32, device=None, requires_grad=False, size=[2, 4], "
                       "stride=[4, 1])",), SourceLocation(COUNTER_FILE, 47, "forward", "return self.proj(x) * warm"),
                      status=p),
        LeafGuardView("g3", "NO_HASATTR", "L['x']", ("hasattr(L['x'], '_dynamo_dynamic_indices') == False",),
                      SourceLocation(COUNTER_FILE, 47, "forward", "return self.proj(x) * warm"), status=p),
    ])
    root = _node(0, "L", None, "<class 'dict'>", [
        LeafGuardView("g0", "GLOBAL_STATE", "L", ("___check_global_state()",), None, status=p),
        LeafGuardView("g1", "DEFAULT_DEVICE", "L", ("utils_device.CURRENT_DEVICE == None",), None, status=p),
    ], [x, self_], manager="RootGuardManager")
    return GuardTree(entry, root, (), root.leaf_count, True, (counter_leaf,), f"L['self'].counter == {expected}",
                     "TREE_GUARD_MANAGER: ...")


def counter_recompile_record() -> RecompileRecord:
    """What the engine records at case 002's second recompile: ``self.counter`` is 2; entries 0/1 and 0/0 fail."""
    trees = [counter_guard_tree("0/1", 1, 2), counter_guard_tree("0/0", 0, 2)]
    verdicts = tuple(
        EntryVerdict(tree.compile_id, False, tree.failing, tree.first_failure,
                     f"{tree.compile_id}: {tree.first_failure.replace(chr(76) + '[' + repr('self') + ']', 'self')}"
                     f"  # self.counter += 1  # {COUNTER_FILE}:45 in forward ({COUNTER_HINT})", "g6",
                     leaf_count=tree.leaf_count)
        for tree in trees
    )
    diff = EntryDiff("0/0", "0/1", (GuardDiff("changed", "L['self'].counter", "EQUALS_MATCH",
                                              "L['self'].counter == 0", "L['self'].counter == 1", "g6", "g6"),))
    record = RecompileRecord(2, 0xC002, "WarmupScaled.forward", COUNTER_FILE, 44, "0/2", verdicts,
                             inputs=(("self", "WarmupScaled train mode: proj=Linear"), ("x", "Tensor[2, 4] float32 cpu")),
                             diffs=(diff,), limit=LimitStatus(2, 2, 2, 8, 256), pending=True, code_name="forward")
    record = replace(record, changed=changed_inputs(record))
    return replace(record, advice=counter_advice(record))


def counter_advice(record: RecompileRecord):  # noqa: ANN201 - advice.RecompileAdvice
    """The advice the engine makes for that stop: the call site case 002 has (``cm = torch.compile(m,
    backend="eager")``, line 54) and the default drop's filter, planned by the engine's own `plan_filter` on the
    guard filter entries torch 2.13 gives compile 0/1 of ``forward`` (``self.counter`` has a CONSTANT_MATCH and an
    EQUALS_MATCH entry; the rest as recorded on the real program)."""
    from dynadbg.core.advice import RecompileAdvice
    from dynadbg.core.callsites import CallSite, CallSiteKind
    from dynadbg.core.decisions import default_drop_leaves
    from dynadbg.core.filter_entries import CompileFilterEntries, FilterEntry, plan_filter

    rows = [("", "", "GRAD_MODE", ()), ("", "", "GLOBAL_STATE", ("GLOBAL_STATE",)),
            ("x", "L['x']", "TENSOR_MATCH", ("TENSOR_MATCH",)), ("self", "L['self']", "TYPE_MATCH", ("TYPE_MATCH",)),
            ("self.counter", "L['self'].counter", "CONSTANT_MATCH", ("EQUALS_MATCH",)),
            ("self.counter", "L['self'].counter", "EQUALS_MATCH", ("EQUALS_MATCH",))]
    entries = CompileFilterEntries(record.code_key, "forward", "0/1", tuple(
        FilterEntry(i, name, source, gtype, derived, False) for i, (name, source, gtype, derived) in enumerate(rows)))
    site = CallSite(1, CallSiteKind.TORCH_COMPILE, COUNTER_FILE, 54, 'torch.compile(m, backend="eager")',
                    'cm = torch.compile(m, backend="eager")', "module WarmupScaled")
    return RecompileAdvice(site, (site,), plan_filter(default_drop_leaves(record), entries))


#: torch's own suggestion at that stop (`Stop.hints`).
COUNTER_HINTS = ("torch._dynamo.config.allow_unspec_int_on_nn_module = True",)
def counter_choices() -> tuple[RecompileChoice, ...]:
    """What case 002's recompile stop offers (`Stop.choices`), made by the engine's own pure functions
    (`decisions.recompile_choices`, which builds the drop's checked filter from the record's advice) from the
    canned record, so the fake shows the very choices the engine makes (no hand-typed copy to drift)."""
    from dynadbg.core.decisions import recompile_choices

    record = counter_recompile_record()
    return recompile_choices(record)


def counter_recompile_scenario() -> Scenario:
    """Case 002 (``shared/cases/002_module_int_counter_attr.py``), third call: ``forward``'s entries 0/1 and 0/0
    reject ``self.counter == 2`` (``L['self'].counter == 1`` / ``== 0`` fail, with torch's HINT); the recompile
    stop, then an entry stop in compile 0/2 (after a choice; its listing is the `forward_ops` stand-in)."""
    record = counter_recompile_record()
    original = listing(counter_ops(), name="forward", key=0xC0, filename=COUNTER_FILE, firstlineno=44,
                       generated=False, compile_id=None)
    inputs = (("self", obj("WarmupScaled", "WarmupScaled(\n  (proj): Linear(in_features=4, out_features=4, "
                                           "bias=True)\n)")), ("x", tensor(2, 4)))
    frame = FrameView(original, -1, None, (), False, inputs)
    stop = Stop(StopKind.RECOMPILE, "forward is about to recompile: its 2 cache entries rejected this call",
                (frame,), None, None, 2, recompile=record, seq=1, choices=counter_choices(), hints=COUNTER_HINTS)
    ops = forward_ops()
    code = listing(ops, name="forward", key=0xC2, compile_id="0/2")
    after = simulate(code, ops, [("self", obj("Scale", "Scale()")), ("x", tensor(4, 4)), ("n", obj("int", "3"))],
                     compile_id="0/2", entry=(1, 3), seq0=2)[0]
    return Scenario([stop, after], counter_guard_tree(), original, (), None, ops=tuple(ops),
                    recompile_record=record,
                    start_messages=("dynadbg: breaking on entry, recompile, exception",))


#: The state a GLOBAL_STATE guard's code carries on torch 2.13 (its JSON runs to hundreds of characters).
_GLOBAL_STATE_JSON = json.dumps({
    "allow_bf16_reduce": 0, "allow_fp16_reduce": 0, "allow_tf32": False,
    "autocast_state": {"cached_enabled": True, "dtype": [15, 5, 5, 15, 5, 5, 15, 15, 5, 5], "enabled": [False] * 10},
    "default_dtype": 6, "deterministic_algorithms": False, "deterministic_algorithms_warn_only": False,
    "grad_mode": True, "num_threads": 2, "torch_function": True, "torch_function_all_disabled": False,
}, separators=(",", ":"))


def mode_switch_recompile_scenario() -> Scenario:
    """Case 002's stop where the call also switched the model to eval() under ``torch.no_grad()``: entry 0/1's
    failing guards are the counter (in the default drop), the GLOBAL_STATE and two BatchNorm ``.training`` flags
    (left out of the default, each selectable); the choices made by the engine's own `recompile_choices`."""
    from dynadbg.core.decisions import recompile_choices
    from dynadbg.core.grouping import group_failing

    base = counter_recompile_scenario()
    record = base.recompile_record
    assert record is not None
    first = record.entries[0]
    fail = GuardStatus.FAIL
    extra = (
        LeafGuardView("g1", "GLOBAL_STATE", "L", (f"___check_global_state() against {_GLOBAL_STATE_JSON}",),
                      status=fail, reason="GLOBAL_STATE changed: grad_mode"),
        LeafGuardView("g9", "TRUE_MATCH", "L['self']._modules['bn1'].training",
                      ("L['self']._modules['bn1'].training == True",), status=fail, expected="True", actual="False"),
        LeafGuardView("g11", "TRUE_MATCH", "L['self']._modules['bn2'].training",
                      ("L['self']._modules['bn2'].training == True",), status=fail, expected="True", actual="False"),
    )
    verdict = replace(first, failing=(extra[0], *first.failing, *extra[1:]))
    entries = (verdict, *record.entries[1:])
    # the two ``.training`` failures are one group, as the engine's analysis makes it (`grouping.group_failing`)
    record = replace(record, entries=entries, groups=group_failing(entries))
    stop = replace(base.stops[0], recompile=record, choices=recompile_choices(record))
    return replace(base, stops=[stop, *base.stops[1:]], recompile_record=record)


def crash_scenario() -> Scenario:
    """A script that raises before any stop."""
    tb = ('Traceback (most recent call last):\n  File "boom.py", line 3, in <module>\n    main()\n'
          '  File "boom.py", line 2, in main\n    raise ValueError("boom")\nValueError: boom\n')
    return Scenario([], exit=ExitResult(1, tb, "ValueError: boom"))


def never_compiled_scenario() -> Scenario:
    """A script that never reaches torch.compile."""
    return Scenario([], exit=ExitResult(0), start_messages=())


# ---------------------------------------------------------------------------------------------------------------
# Edit previews of fake listings
# ---------------------------------------------------------------------------------------------------------------

#: Rows a typed instruction pops (when `dis.stack_effect` alone does not say it).
_NEEDS = {"STORE_FAST": 1, "POP_TOP": 1, "RETURN_VALUE": 1, "BINARY_SUBSCR": 2, "BINARY_OP": 2, "COMPARE_OP": 2,
          "STORE_ATTR": 2, "LOAD_ATTR": 1, "LOAD_METHOD": 1, "POP_JUMP_FORWARD_IF_FALSE": 1,
          "POP_JUMP_FORWARD_IF_TRUE": 1, "UNARY_NEGATIVE": 1, "UNARY_NOT": 1}


def typed_row(opname: str, arg: str | None, at: int) -> tuple[str, str, int, int] | EditError:
    """(opname, argrepr, effect, needs) of an instruction the user typed, checked as the engine would."""
    if opname not in dis.opmap or opname in ("CACHE", "EXTENDED_ARG"):
        near = difflib.get_close_matches(opname, list(dis.opmap), 3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        return EditError("unknown opcode", f"{opname} is not an opcode of this Python{hint}", at)
    opcode = dis.opmap[opname]
    if opcode < dis.HAVE_ARGUMENT:
        if arg is not None:
            return EditError("bad argument", f"{opname} takes no argument (got {arg!r})", at)
        effect = dis.stack_effect(opcode)
    else:
        if arg is None:
            return EditError("bad argument", f"{opname} needs an argument", at)
        number = 1 if arg.startswith("NULL") else int(arg) if arg.isdigit() else 0
        effect = dis.stack_effect(opcode, number)
    needs = _NEEDS.get(opname, max(0, -effect))
    if opname in ("COPY", "SWAP") and arg is not None and arg.isdigit():
        needs = int(arg)
    return opname, arg or "", effect, needs


def analyze_rows(rows: Sequence[tuple[str, str, int, int]], stacksize: int) -> StackAnalysis:
    """Depths of a straight-line run of `rows` (the fake listings fall through their jumps, as `simulate` does)."""
    out, problems, depth, deepest = [], [], 0, 0
    for k, (opname, argrepr, effect, needs) in enumerate(rows):
        if depth is not None and depth < needs:
            what = "value" if needs == 1 else "values"
            problems.append(EditError("stack underflow", f"row {k} {opname} needs {needs} {what} but the stack "
                                                         f"holds {depth}", k))
            out.append(StackRow(k, k * 2, opname, argrepr, depth, effect, needs))
            depth = None
            continue
        out.append(StackRow(k, k * 2, opname, argrepr, depth, effect, needs))
        if depth is not None:
            depth += effect
            deepest = max(deepest, depth)
            if depth > stacksize:
                problems.append(EditError("stack overflow", f"the stack reaches depth {depth} after row {k} "
                                                            f"{opname}, more than co_stacksize {stacksize}", k))
    return StackAnalysis(tuple(out), deepest, stacksize, tuple(problems))


def diff_rows(name: str, old: Sequence[tuple[str, str, int, int]], new: Sequence[tuple[str, str, int, int]]) -> PatchDiff:
    """Rows of both listings aligned as `dynadbg.core.edits.diff_code` aligns them."""
    a = [f"{o} {r}".strip() for o, r, _, _ in old]
    b = [f"{o} {r}".strip() for o, r, _, _ in new]
    lines: list[DiffLine] = []
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += [DiffLine(" ", i1 + k, j1 + k, a[i1 + k]) for k in range(i2 - i1)]
            continue
        lines += [DiffLine("-", i, None, a[i]) for i in range(i1, i2)]
        lines += [DiffLine("+", None, j, b[j]) for j in range(j1, j2)]
        removed += i2 - i1
        added += j2 - j1
    return PatchDiff(name, tuple(lines), added, removed)


#: A listing row for the edit preview: (opname, argrepr, stack effect, values it needs).
Row = tuple[str, str, int, int]


def listing_rows(code: CodeView, ops: Sequence[Op]) -> list[Row]:
    """The edit-preview rows of a fake listing (each `Op`'s pops and pushes)."""
    return [(instr.opname, instr.argrepr, len(op.pushes) - op.pops, op.pops)
            for instr, op in zip(code.instructions, list(ops) + [Op("NOP")] * len(code.instructions))]


def edit_rows(rows: list[Row], op: EditOp) -> list[Row] | EditError:
    """`rows` with the edit `op` applied, or why it is rejected (index, opcode, argument)."""
    n = len(rows)
    limit = n if op.kind == "insert" else n - 1
    if not 0 <= op.index <= limit:
        return EditError("index", f"row {op.index} is outside 0..{limit}", op.index)
    new = []
    for instr in op.instrs:
        row = typed_row(instr.opname, instr.arg, op.index)
        if isinstance(row, EditError):
            return row
        new.append(row)
    if op.kind == "edit":
        return rows[:op.index] + new + rows[op.index + 1:]
    if op.kind == "insert":
        return rows[:op.index] + new + rows[op.index:]
    return rows[:op.index] + rows[op.index + 1:]


def rows_after(scenario: Scenario, ops: Sequence[EditOp]) -> tuple[list[Row], list[Row] | EditError, str]:
    """(Dynamo's rows, the rows after `ops` or why one was rejected, the code's name) of the scenario's listing."""
    first = scenario.stops[0].frame if scenario.stops else None
    base = listing_rows(first.code, scenario.ops) if first is not None else []
    rows: list[Row] | EditError = base
    for op in ops:
        rows = rows if isinstance(rows, EditError) else edit_rows(rows, op)
    return base, rows, first.code.name if first is not None else "forward"


def watch_values(watches: Sequence[tuple[int, str]], stop: Stop,
                 memory: dict[int, tuple[int, str | None, str | None]]) -> tuple[WatchValue, ...]:
    """Each watch (number, expression) at `stop`: a local's summary by name, else a NameError; `changed` against
    the stop before. `memory` keeps number → (stop seq, value, value at the stop before) between calls."""
    frame, out = stop.selected_frame, []
    for number, expr in watches:
        if frame is None:
            out.append(WatchValue(number, expr, evaluated=False))
            continue
        value = dict(frame.locals).get(expr)
        error = None if value is not None else f"NameError: name {expr!r} is not defined"
        key = value.text if value is not None else error
        seq, last, before = memory.get(number, (None, None, None))
        if seq != stop.seq:
            before = last
        memory[number] = (stop.seq, key, before)
        out.append(WatchValue(number, expr, value.text if value else "", value, error,
                              before is not None and before != key))
    return tuple(out)
