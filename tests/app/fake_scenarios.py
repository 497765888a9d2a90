"""Canned data for the fake engine (`fake_engine.FakeEngine`): listings, stops, guard trees, recompile records.

Every value is a frozen `dynadbg.core.model` type, made by the engine's own pure functions wherever one exists, so
the fake shows what the engine would and cannot drift from it:

* listings are `disasm.code_view` of real code objects: the original ``Scale.forward`` is compiled from
  `fake_program.py` and the Dynamo-like generated code is assembled (`assemble`, with the ``bytecode`` library
  the engine's edits use) from an `Op` list;
* value summaries are `values.summarize` of real objects (tensors, the module, a labelled graph function), with
  fixed identities (``changed`` marks never depend on real ids);
* the stops' value stacks follow the real flow analysis (`flow.pops_pushes`): an `Op` only names the values it
  pushes;
* roles, explanations, provenance, edit previews and diffs (in `fake_engine`) are `roles.code_roles`,
  `explain.explain`, `provenance.provenance`, `edits.preview_edit` / `build_patched` / `diff_code` on that code,
  with the capture's facts given as plain data (`forward_facts`);
* the guard trees of ``forward`` and its n=4 recompile stop (frame, record, choices), case
  ``module_int_counter``'s recompile stops (frame, record, choices, hints) and the entry stop into compile 0/2
  after them, and ``eval_after_training.py``'s recompile stop and the entry stop after it are recorded from the
  real engine (`record_fake`, ``recordings/``; `test_recording` re-makes them); a recorded listing's code object
  is re-assembled from it (`code_of`).

Builders: `forward_scenario` (a small Dynamo-like ``forward`` with a graph break, one stop per instruction),
`big_scenario` (a 2,000-instruction code object, for the step benchmark), `guard_tree_of` (any number of leaves,
500-module-model shaped; synthetic, for size), `counter_recompile_scenario` (``module_int_counter.py``'s
third call, recorded: a recompile stop on ``L['self'].counter == 1`` and ``== 0``, two entries),
`crash_scenario`, `never_compiled_scenario`.
"""

from __future__ import annotations

import ast
import dis
import functools
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from types import CodeType
from typing import Any

from dynadbg.core import flow
from dynadbg.core.disasm import code_view
from dynadbg.core.model import (
    CacheEntryView,
    CodeView,
    CompiledFrameView,
    FrameRecompiles,
    FrameView,
    GraphView,
    GuardNodeView,
    GuardStatus,
    GuardTree,
    LeafGuardView,
    RecompileChoice,
    RecompileRecord,
    SourceLocation,
    Stop,
    StopKind,
    ValueSummary,
    WatchValue,
)
from dynadbg.core.roles import CodegenFacts, ResumeFact
from dynadbg.core.runner import ExitResult
from dynadbg.core.values import NULL, label_graph, summarize

#: The file the fake listings point at (its lines are real).
PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_program.py")

#: Stable fake object identities (locals' "changed" marks depend on them, never on real ids).
_ids = iter(range(0x1000, 0x7FFFFFFF, 16))

#: Objects whose summaries the scenarios show, kept alive (a graph function's label lives as long as it does).
_KEEP: list[Any] = []

def value(thing: Any) -> ValueSummary:
    """`values.summarize` of a real object, with a fixed fake identity (and no address in its text)."""
    _KEEP.append(thing)
    summary = summarize(thing)
    return replace(summary, text=re.sub(r" at 0x[0-9a-f]+", " at 0x7f00c0de0000", summary.text),
                   identity=next(_ids))


def tensor(*shape: int, grad: bool = False) -> ValueSummary:
    """The summary of a real float32 cpu tensor of `shape` (`values.summarize`)."""
    import torch

    return value(torch.ones(*shape, requires_grad=grad))


def obj(type_name: str, text: str) -> ValueSummary:
    """A summary typed by hand: only for what a test puts in a frame of its own (a caller's extra local)."""
    return ValueSummary(type_name, text, identity=next(_ids))


def graph_function(name: str, compile_id: str) -> ValueSummary:
    """The summary of a compiled FX graph function as the engine labels it (`values.label_graph`)."""

    def fn(*args: Any) -> Any:
        return args

    label_graph(fn, name, compile_id)
    return value(fn)


def _user_functions(source: str, filename: str, first_line: int) -> dict[str, Any]:
    """The classes of `source` (its imports and class definitions run, nothing else), compiled as if they sat at
    `first_line` of `filename`: real code objects with the real line numbers."""
    import torch

    tree = ast.parse(source)
    tree.body = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef))]
    ast.increment_lineno(tree, first_line - 1)
    namespace: dict[str, Any] = {"torch": torch, "__name__": "fake_program"}
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - our own test program's class definitions
    return namespace


def program_classes() -> dict[str, Any]:
    """`fake_program.py`'s classes (``Scale``), compiled from the file (the program itself is never run)."""
    with open(PROGRAM, encoding="utf-8") as f:
        return _user_functions(f.read(), PROGRAM, 1)


# ---------------------------------------------------------------------------------------------------------------
# Listings and stops
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One instruction of a generated code object, as `assemble` reads it, and the values it pushes at the stops.

    Attributes:
        opname, argrepr, lineno: as `dis` shows them (a name, ``NULL + name``, a constant's repr, a comparison or
            operator symbol; a jump's argrepr is ignored: `jump` is its target).
        pushes: summaries it pushes (bottom first), as many as the real flow analysis says it pushes.
        store: local name it binds (STORE_FAST), from the popped value.
        jump: index it may jump to.
        arg: the argument of an opcode whose argument is a count (PRECALL, CALL, RESUME, COPY, SWAP).
    """

    opname: str
    argrepr: str = ""
    lineno: int | None = None
    pushes: tuple[ValueSummary, ...] = ()
    store: str | None = None
    jump: int | None = None
    arg: int | None = None


def assemble(ops: Sequence[Op], *, name: str, argnames: Sequence[str], filename: str = PROGRAM,
             firstlineno: int = 15) -> CodeType:
    """A real code object running `ops` (CPython's own assembler through the ``bytecode`` library)."""
    import bytecode as bc

    labels = {op.jump: bc.Label() for op in ops if op.jump is not None}
    symbols = [sym for _name, sym in getattr(dis, "_nb_ops", [])]
    out: list[Any] = []
    lineno = firstlineno
    for i, op in enumerate(ops):
        if i in labels:
            out.append(labels[i])
        lineno = op.lineno if op.lineno is not None else lineno
        opcode = dis.opmap[op.opname]
        text = op.argrepr
        if opcode < dis.HAVE_ARGUMENT:
            out.append(bc.Instr(op.opname, lineno=lineno))
            continue
        if op.jump is not None:
            arg: Any = labels[op.jump]
        elif op.opname == "LOAD_GLOBAL":
            arg = (text.startswith("NULL"), text.removeprefix("NULL + "))
        elif opcode in dis.hasconst:
            arg = ast.literal_eval(text)
        elif opcode in dis.haslocal or opcode in dis.hasname:
            arg = text
        elif opcode in dis.hascompare:
            arg = bc.Compare(dis.cmp_op.index(text))
        elif op.opname == "BINARY_OP":
            arg = bc.BinaryOp(symbols.index(text))
        else:
            arg = op.arg if op.arg is not None else 0
        out.append(bc.Instr(op.opname, arg, lineno=lineno))
    code = bc.Bytecode(out)
    code.name, code.filename, code.first_lineno = name, filename, firstlineno
    code.argnames, code.argcount = list(argnames), len(argnames)
    return code.to_code()


def view(code: CodeType, key: int, *, generated: bool = True, compile_id: str | None = "0/0") -> CodeView:
    """`disasm.code_view` of `code` under a fixed `key` (no real id in what the fake shows)."""
    return replace(code_view(code, generated=generated, compile_id=compile_id), key=key)


def code_of(listing: CodeView, argnames: Sequence[str]) -> CodeType:
    """A real code object that lists as the recorded `listing` does (each instruction's name, argument text and
    line; `assemble`), for what the fake answers from a code object at a recorded stop (edit previews, diffs)."""
    ops = [Op(i.opname, i.argrepr, i.lineno, jump=i.jump_target, arg=i.arg) for i in listing.instructions]
    code = assemble(ops, name=listing.name, argnames=argnames, filename=listing.filename,
                    firstlineno=listing.firstlineno)
    rows = [(i.opname, i.argrepr, i.lineno) for i in listing.instructions]
    assert [(i.opname, i.argrepr, i.lineno) for i in code_view(code).instructions] == rows, listing.name
    return code


def simulate(code: CodeView, real: CodeType, ops: Sequence[Op], locals0: Sequence[tuple[str, ValueSummary]], *,
             first_kind: StopKind = StopKind.ENTRY, compile_id: str = "0/0", entry: tuple[int, int] = (1, 1),
             seq0: int = 1, breakpoints: tuple[int, ...] = ()) -> list[Stop]:
    """One stop before each instruction of `real` run straight on (the scenarios' jumps fall through): the value
    stack as the real flow analysis moves it (`flow.pops_pushes`), filled with the values each `Op` pushes."""
    stack: list[ValueSummary] = []
    local_values = dict(locals0)
    previous = dict(locals0)
    stops = []
    rows = flow.ops_of(real)
    given = iter(ops)
    # an EXTENDED_ARG row (a big code object's) is a row of the listing with no `Op` of its own
    ops = [Op("EXTENDED_ARG") if row.opname == "EXTENDED_ARG" else next(given) for row in rows]
    assert next(given, None) is None and len(rows) == len(code.instructions)
    for i, (op, row) in enumerate(zip(ops, rows)):
        changed = tuple(n for n, v in local_values.items() if previous.get(n) is not v)
        frame = FrameView(code, i, code.instructions[i].lineno, tuple(stack), True,
                          tuple(local_values.items()), breakpoints, changed)
        kind = first_kind if i == 0 else StopKind.STEP
        message = (f"entering {code.name} (compile {compile_id})" if i == 0
                   else f"step in {code.name} at index {i}")
        stops.append(Stop(kind, message, (frame,), compile_id, entry[0], entry[1], seq=seq0 + i))
        previous = dict(local_values)
        pops, pushes = flow.pops_pushes(row)
        assert pushes == len(op.pushes), f"{i} {op.opname} pushes {pushes} values, the Op names {len(op.pushes)}"
        popped = [stack.pop() for _ in range(min(pops, len(stack)))]
        if op.store is not None and popped:
            local_values[op.store] = popped[0]
        stack.extend(op.pushes)
    return stops


def forward_ops() -> list[Op]:
    """Dynamo-style generated code for `fake_program.Scale.forward` (n=3): graph call, branch, graph break."""
    import torch

    scale = program_classes()["Scale"](2.0)
    x = torch.ones(4, 4)
    y = x * 2.0 + 3
    y2 = y.relu()
    fn1 = graph_function("__compiled_fn_1", "0/0")
    out = value((y,))
    y_, y2_ = value(y), value(y2)
    three = value(3)

    def __resume_at_38_2(self: Any, n: Any, y: Any) -> Any:  # noqa: N807 - Dynamo's name for it
        return y.sum(dim=0) * n

    return [
        Op("RESUME", "", 15, arg=0),
        Op("LOAD_GLOBAL", "NULL + __compiled_fn_1", 16, pushes=(NULL, fn1)),
        Op("LOAD_FAST", "x", pushes=(value(x),)),
        Op("LOAD_FAST", "n", pushes=(three,)),
        Op("PRECALL", "", arg=2),
        Op("CALL", "", pushes=(out,), arg=2),
        Op("STORE_FAST", "graph_out_0", store="graph_out_0"),
        Op("LOAD_FAST", "graph_out_0", pushes=(out,)),
        Op("LOAD_CONST", "0", pushes=(value(0),)),
        Op("BINARY_SUBSCR", "", pushes=(y_,)),
        Op("STORE_FAST", "y", store="y"),
        Op("LOAD_FAST", "n", 17, pushes=(three,)),
        Op("LOAD_CONST", "2", pushes=(value(2),)),
        Op("COMPARE_OP", ">", pushes=(value(True),)),
        Op("POP_JUMP_FORWARD_IF_FALSE", "", jump=20),
        Op("LOAD_FAST", "y", 18, pushes=(y_,)),
        Op("LOAD_METHOD", "relu", pushes=(value(y.relu), y_)),
        Op("PRECALL", "", arg=0),
        Op("CALL", "", pushes=(y2_,), arg=0),
        Op("STORE_FAST", "y", store="y"),
        Op("LOAD_GLOBAL", "NULL + print", 19, pushes=(NULL, value(print))),
        Op("LOAD_CONST", "'graph break here'", pushes=(value("graph break here"),)),
        Op("PRECALL", "", arg=1),
        Op("CALL", "", pushes=(value(None),), arg=1),
        Op("POP_TOP", ""),
        Op("LOAD_GLOBAL", "NULL + __resume_at_38_2", pushes=(NULL, value(__resume_at_38_2))),
        Op("LOAD_FAST", "self", pushes=(value(scale),)),
        Op("LOAD_FAST", "n", pushes=(three,)),
        Op("LOAD_FAST", "y", pushes=(y2_,)),
        Op("PRECALL", "", arg=3),
        Op("CALL", "", pushes=(value(y2.sum(dim=0) * 3),), arg=3),
        Op("RETURN_VALUE", "", 19),
    ]


#: The arguments of Dynamo's code for ``forward`` (as the original function's).
FORWARD_ARGS = ("self", "x", "n")


def forward_code() -> CodeType:
    """The generated code of `forward_ops` as a real code object (line numbers of `fake_program.py`)."""
    return assemble(forward_ops(), name="forward", argnames=FORWARD_ARGS)


def forward_facts() -> CodegenFacts:
    """What the capture records for compile 0/0 of ``forward``: its FX graph's signature and its resume function
    (``torch_dynamo_resume_in_forward_at_19`` takes self, n, y; the user's instruction that broke is a CALL)."""
    return CodegenFacts("0/0", (forward_graph(),),
                        (ResumeFact("__resume_at_38_2", "torch_dynamo_resume_in_forward_at_19", ("self", "n", "y"),
                                    "CALL"),))


def big_ops(count: int = 2000) -> list[Op]:
    """`count` instructions: repeated graph-call blocks with forward jumps (for the 2,000-instruction benchmark)."""
    x, three, out, y = tensor(4, 4), value(3), value((0,)), tensor(4, 4)
    ops = [Op("RESUME", "", 15, arg=0)]
    block = 0
    while len(ops) + 14 <= count - 2:
        start = len(ops)
        # at most 100 graph names: a LOAD_GLOBAL argument stays under 256 (no EXTENDED_ARG row)
        name = f"__compiled_fn_{block % 100}"
        fn = graph_function(name, "0/0")
        ops += [
            Op("LOAD_GLOBAL", f"NULL + {name}", 16, pushes=(NULL, fn)),
            Op("LOAD_FAST", "x", pushes=(x,)),
            Op("LOAD_FAST", "n", pushes=(three,)),
            Op("PRECALL", "", arg=2),
            Op("CALL", "", pushes=(out,), arg=2),
            Op("LOAD_CONST", "0", pushes=(value(0),)),
            Op("BINARY_SUBSCR", "", pushes=(y,)),
            Op("STORE_FAST", "y", 17, store="y"),
            Op("LOAD_FAST", "n", pushes=(three,)),
            Op("LOAD_CONST", "2", pushes=(value(2),)),
            Op("COMPARE_OP", ">", pushes=(value(True),)),
            Op("POP_JUMP_FORWARD_IF_FALSE", "", jump=start + 14),
            Op("LOAD_FAST", "y", 18, pushes=(y,)),
            Op("POP_TOP", ""),
        ]
        block += 1
    ops += [Op("NOP")] * (count - 2 - len(ops))
    return ops + [Op("LOAD_CONST", "None", 20, pushes=(value(None),)), Op("RETURN_VALUE", "")]


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
    """The guard tree of ``forward``'s entry 0/0 (specialised on ``n == 3``); `n_fails` evaluates it for n=4.

    Recorded (`record_fake.record_forward`, ``recordings/fake_program_forward.json``): the real engine's
    `guard_trees` for `fake_program.Scale.forward` compiled for n=3, at the n=3 call's entry stop and at the n=4
    call's recompile stop."""
    (tree,) = _forward_recording()["n4" if n_fails else "n3"]
    return tree


@functools.cache
def _forward_recording() -> dict[str, Any]:
    """``recordings/fake_program_forward.json`` as model values (`record_fake.load`; frozen, so shared)."""
    from record_fake import FORWARD_RECORDING, load

    return load(FORWARD_RECORDING)


def guard_tree_of(leaves: int = 20_000, *, modules: int = 500,
                  fail_at: int | Collection[int] | None = None, nest: bool = False) -> GuardTree:
    """A guard tree shaped like a `modules`-module model's, with about `leaves` leaves in all.

    Synthetic on purpose: it is built by hand for its size (the 20,000-leaf benchmark in ``bench_tui.py``, the
    scale tests of the guard pane), which no recording of a real run should carry. Its shape follows the real tree
    of a compiled ``nn.ModuleList`` of ``nn.Linear`` (``benchmarks/bench_guards.py``'s ``Net``, about 20,000
    leaves for 2,500 layers on torch 2.13; ``bench_guard_nav.py`` measures the pane on that real tree): a manager
    per module, one per parameter under it; its leaves' codes, ids in them and locations are made up.

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
        code: the real code object the stops' listing shows (`FakeEngine` answers roles, explain, provenance,
            edit previews and diffs from it with the engine's own functions).
        recompile_record: what `recompile_records` answers at a recompile stop.
        teach: whether `roles`, `explain` and `stack_provenance` answer (else "not here": the panes show values
            only).
        facts: what the capture records for `code` (graph signatures, resume functions), for the roles.
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
    code: CodeType | None = None
    recompile_record: RecompileRecord | None = None
    teach: bool = False
    facts: CodegenFacts | None = None


GRAPH_CODE = '''def forward(self, L_x_ : torch.Tensor, L_n_ : int):
    l_x_ = L_x_
    mul = l_x_ * 2.0;  l_x_ = None
    add = mul + 3;  mul = None
    relu = add.relu();  add = None
    return (relu,)'''


def forward_graph(*, teach: bool = True) -> GraphView:
    """The FX graph ``__compiled_fn_1`` of compile 0/0 (with `teach`: its nodes' user lines)."""
    return GraphView("__compiled_fn_1", "0/0", GRAPH_CODE, "graph():\n    ...", 6,
                     (("l_x_", None), ("l_n_", None), ("mul", 16), ("add", 16), ("relu", 18), ("output", None))
                     if teach else (), placeholders=("L_x_", "L_n_"), outputs=("relu",),
                     code_lines=(("l_x_", 2), ("mul", 3), ("add", 4), ("relu", 5)))


def original_forward() -> CodeView:
    """The listing of `fake_program.Scale.forward`'s real code (the original of the generated code)."""
    return view(program_classes()["Scale"].forward.__code__, 0xF1, generated=False, compile_id=None)


def forward_scenario(*, breakpoints: tuple[int, ...] = (), n_fails: bool = False, teach: bool = False) -> Scenario:
    """``Scale.forward`` entered with x=ones(4, 4), n=3, then one stop per instruction.

    With `teach`, `roles`, `explain` and `stack_provenance` answer (the engine's functions on the real code, with
    `forward_facts`): the role gutter, section headers and provenance lines show."""
    import torch

    ops = forward_ops()
    real = assemble(ops, name="forward", argnames=FORWARD_ARGS)
    code = view(real, 0xF0)
    locals0 = [("self", value(program_classes()["Scale"](2.0))), ("x", value(torch.ones(4, 4))), ("n", value(3))]
    stops = simulate(code, real, ops, locals0, breakpoints=breakpoints, entry=(1, 2))
    original = original_forward()
    graph = forward_graph(teach=teach)
    entries = (
        CacheEntryView("0/0", code, "eager", hits=3, graphs=("__compiled_fn_1",),
                       resume_functions=("__resume_at_38_2",)),
        CacheEntryView("0/1", replace(code, key=0xF2, compile_id="0/1"), "eager", hits=0,
                       graphs=("__compiled_fn_5",), resume_functions=("__resume_at_38_6",)),
    )
    compiled = FrameRecompiles(0xF1, "forward", PROGRAM, 15, original, None, False, None, None, entries,
                               graphs=(graph,))
    return Scenario(stops, forward_guard_tree(n_fails=n_fails), original, (graph,), compiled,
                    start_messages=("dynadbg: breaking on entry, recompile, exception",), code=real, teach=teach,
                    facts=forward_facts() if teach else None)


def big_scenario(count: int = 2000, steps: int = 200, *, teach: bool = False) -> Scenario:
    """A `count`-instruction code object with `steps` step stops starting at instruction 900 (with `teach`, its
    roles read from the code's shape by `roles.code_roles`)."""
    ops = big_ops(count)
    real = assemble(ops, name="forward_big", argnames=("x", "n"))
    code = view(real, 0xB16)
    locals0 = [("x", tensor(4, 4)), ("n", value(3))]
    stops = simulate(code, real, ops, locals0)
    start = min(900, max(0, count - steps - 1))
    chosen = [stops[0]] + stops[start:start + steps]
    chosen = [replace(s, seq=i + 1) for i, s in enumerate(chosen)]
    return Scenario(chosen, guard_tree_of(200), None, (), None, code=real, teach=teach)


def recompile_scenario() -> Scenario:
    """Entry into ``forward`` (n=3), then the recompile stop of the n=4 call as the real engine answered it
    (recorded, `record_fake.record_forward`: ``L['n'] == 3`` fails; its frame, record and choices), then entry 0/1
    (the `forward_ops` listing)."""
    base = forward_scenario(n_fails=True)
    first = base.stops[0]
    recompile = replace(_forward_recording()["stop"], seq=2)
    second = replace(first, compile_id="0/1", entry_index=1, entry_count=2, seq=3,
                     message="entering forward (compile 0/1)")
    base.stops = [first, recompile, second]
    base.recompile_record = recompile.recompile
    return base


@functools.cache
def _counter_recording() -> dict[str, Any]:
    """``recordings/module_int_counter.json`` as model values (`record_fake.load`; frozen, so shared)."""
    from record_fake import load

    return load()


def counter_guard_tree(entry: str = "0/1") -> GuardTree:
    """Entry `entry` (``"0/1"`` or ``"0/0"``) of ``module_int_counter.py``'s ``forward``, evaluated for its third
    call (``self.counter`` is 2), as the real engine answered `guard_trees` at that recompile stop (recorded)."""
    return next(tree for tree in _counter_recording()["guard_trees2"] if tree.compile_id == entry)


def counter_recompile_record() -> RecompileRecord:
    """What the real engine recorded at ``module_int_counter.py``'s second recompile: ``self.counter`` is 2;
    entries 0/1 and 0/0 fail (verdicts, diffs, limit, inputs, changed, advice with its call site and planned
    filter, all recorded)."""
    record = _counter_recording()["stop2"].recompile
    assert record is not None
    return record


def counter_choices() -> tuple[RecompileChoice, ...]:
    """What that recompile stop offers (`Stop.choices`), as the real engine made them (recorded)."""
    return _counter_recording()["stop2"].choices


def counter_recompile_scenario() -> Scenario:
    """``tests/programs/module_int_counter.py``'s third call, recorded from the real engine: ``forward``'s entries
    0/1 and 0/0 reject ``self.counter == 2`` (``L['self'].counter == 1`` / ``== 0`` fail, with torch's HINT); the
    recompile stop (its frame, record, choices and hints as recorded), then (after a choice) the entry stop into
    compile 0/2 as recorded after recompiling: Dynamo's generated code for that call (its listing; the fake's
    edit previews use `code_of` it)."""
    recording = _counter_recording()
    stop, entry = replace(recording["stop2"], seq=1), replace(recording["entry"], seq=2)
    frame = stop.selected_frame
    assert frame is not None and stop.recompile is not None and entry.frame is not None
    return Scenario([stop, entry], counter_guard_tree(), frame.code, (), None,
                    code=code_of(entry.frame.code, [name for name, _ in frame.locals]),
                    recompile_record=stop.recompile,
                    start_messages=("dynadbg: breaking on entry, recompile, exception",))


@functools.cache
def _mode_switch_recording() -> dict[str, Any]:
    """``recordings/eval_after_training.json`` as model values (`record_fake.load`; frozen, so shared)."""
    from record_fake import MODE_SWITCH_RECORDING, load

    return load(MODE_SWITCH_RECORDING)


def mode_switch_recompile_scenario() -> Scenario:
    """``tests/programs/eval_after_training.py``'s second call, recorded from the real engine: the model switched
    to eval() under ``torch.no_grad()`` and its step count moved on, so entry 0/0 fails its GLOBAL_STATE guard
    (grad mode), both BatchNorm ``.training`` flags (one group) and ``L['self'].steps == 0``: the drop's default
    is the step count, GLOBAL_STATE and the flags are left out of it (each selectable). The recompile stop (its
    frame, record, choices), its guard tree, then the entry stop into compile 0/1 as recorded after recompiling."""
    recording = _mode_switch_recording()
    stop, entry = replace(recording["stop"], seq=1), replace(recording["entry"], seq=2)
    frame = stop.selected_frame
    assert frame is not None and stop.recompile is not None and entry.frame is not None
    (tree,) = recording["guard_trees"]
    return Scenario([stop, entry], tree, frame.code, (), None,
                    code=code_of(entry.frame.code, [name for name, _ in frame.locals]),
                    recompile_record=stop.recompile,
                    start_messages=("dynadbg: breaking on entry, recompile, exception",))


def recorded_recompile_scenario() -> Scenario:
    """The first recompile stop of ``tests/programs/module_int_counter.py`` as the real engine answered it
    (`record_fake.load`: the stop with its record and choices, its guard tree and guard diffs); the program ends
    after the decision."""
    recording = _counter_recording()
    stop = recording["stop"]
    trees = recording["guard_trees"]
    return Scenario([stop], trees[0] if trees else None, stop.selected_frame.code if stop.selected_frame else None,
                    recompile_record=stop.recompile)


def crash_scenario() -> Scenario:
    """A script that raises before any stop."""
    tb = ('Traceback (most recent call last):\n  File "boom.py", line 3, in <module>\n    main()\n'
          '  File "boom.py", line 2, in main\n    raise ValueError("boom")\nValueError: boom\n')
    return Scenario([], exit=ExitResult(1, tb, "ValueError: boom"))


def never_compiled_scenario() -> Scenario:
    """A script that never reaches torch.compile."""
    return Scenario([], exit=ExitResult(0), start_messages=())


# ---------------------------------------------------------------------------------------------------------------
# Watches
# ---------------------------------------------------------------------------------------------------------------


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
