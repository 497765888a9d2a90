"""The role of every instruction in Dynamo's generated code: which ones call the FX graph, unpack its outputs,
replay side effects, rebuild Python state, run the graph-break instruction eagerly, call a resume function.

`code_roles(code, facts)` tags each instruction of one generated code object (a cache entry's transformed code,
or a resume function's own code) and groups them into regions for region headers. It rests on two sources:

* **capture**: what `capture.Capture` recorded for this compile — the ``__compiled_fn_*`` globals and their FX
  graphs (placeholder and output node names), the ``__resume_at_*`` globals and their resume functions (argument
  names, origin, resume offset: the instruction just before the resume offset in the user's code is the one
  that graph-broke). A role derived from these says ``source="capture"``.
* **shape**: the fixed order in which Dynamo emits code (``OutputGraph.compile_subgraph`` in torch 2.13:
  prologue, pre-graph bytecode, graph call, ``codegen_suffix`` — side effects and the rebuilt stack and
  locals —, the unsupported instruction, the resume call, the return) read off the instructions with the
  value-stack flow of `flow`. Such a role says ``source="shape"``.

Everything is a pure function of the code object and the facts: safe on any thread, cached per code object.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from types import CodeType
from typing import Any, Sequence

from . import facts as dynamo
from . import flow
from .model import CodeRoles, GraphCallInfo, GraphView, InstrRole, ResumeCallInfo, Role, RoleRegion

# --------------------------------------------------------------------------------------------------------------
# facts from the capture
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResumeFact:
    """What the capture knows about one resume function a generated code calls.

    Attributes:
        global_name: ``"__resume_at_60_3"``.
        function_name: the resume function's ``co_name`` (``"torch_dynamo_resume_in_f_at_48"``).
        arg_names: its positional parameters, in order (``("__nested_resume_fns", "__nested_frame_values",
            "___stack0", "box")``): what each argument it receives stands for.
        break_opname: the opname of the user's instruction just before the resume offset (the one Dynamo could
            not trace and runs eagerly), when the origin is known.
    """

    global_name: str
    function_name: str | None
    arg_names: tuple[str, ...]
    break_opname: str | None = None


@dataclass(frozen=True)
class CodegenFacts:
    """Capture records about one generated code object (see `facts_from_capture`).

    Attributes:
        compile_id: the compile that produced it.
        graphs: FX graphs of that compile (name → placeholders/outputs read from ``GraphView.code``).
        resumes: the resume functions its code calls.
        is_resume_function: True when the code *is* a resume function's own code (created by Dynamo; its
            prologue restores the stack, then it jumps into a copy of the user's bytecode).
    """

    compile_id: str | None = None
    graphs: tuple[GraphView, ...] = ()
    resumes: tuple[ResumeFact, ...] = ()
    is_resume_function: bool = False


def resume_fact(global_name: str, resume_code: CodeType | None,
                origin: tuple[CodeType, int | None] | None = None) -> ResumeFact:
    """A `ResumeFact` for `global_name` from the resume function's code and its origin (user code, offset)."""
    if resume_code is None:
        return ResumeFact(global_name, None, ())
    args = tuple(resume_code.co_varnames[: resume_code.co_argcount])
    brk = None
    if origin is not None and origin[1] is not None:
        # the user's instruction that broke is the last real operation before the resume offset (3.13 resumes
        # after the STORE that takes the call's result, 3.11 right after the call)
        before = [op for op in flow.ops_of(origin[0]) if op.offset < origin[1]]
        for op in reversed(before[-4:]):
            if op.opname not in _PACKING and op.opname not in ("PRECALL", "KW_NAMES"):
                brk = op.opname
                break
    return ResumeFact(global_name, resume_code.co_name, args, brk)


def facts_from_capture(capture: Any, code: CodeType, frames: Sequence[Any] | None = None) -> CodegenFacts:
    """Build `CodegenFacts` for generated `code` from a `capture.Capture` (call on the program's thread).

    Args:
        capture: the session's `Capture`.
        code: a generated code object (a cache entry's code) or a resume function's own code.
        frames: ``capture.frames()`` if the caller already has it (it is not cheap); taken here otherwise.
    """
    info = capture.generated_info(code)
    frames = capture.frames() if frames is None else frames
    compile_id = info[1] if info is not None else None
    graphs: tuple[GraphView, ...] = ()
    resume_names: tuple[str, ...] = ()
    is_resume_function = False
    for fv in frames:
        if fv.is_resume and fv.key == id(code):
            is_resume_function = True
        for entry in fv.entries:
            if entry.code is not None and entry.code.key == id(code):
                graphs = tuple(g for g in fv.graphs if g.name in entry.graphs)
                resume_names = entry.resume_functions
    if not resume_names:
        resume_names = tuple(n for n in _global_loads(code) if dynamo.is_resume_global(n))
    resumes = []
    for name in resume_names:
        rc = capture.resume_global(name)
        origin = capture.resume_origin_of(rc) if rc is not None else None
        if rc is not None and origin is None:
            from . import compat

            origin = compat.resume_origin(rc)
        resumes.append(resume_fact(name, rc, origin))
    return CodegenFacts(compile_id, graphs, tuple(resumes), is_resume_function)


def _global_loads(code: CodeType) -> list[str]:
    return [op.argval for op in flow.ops_of(code) if op.opname == "LOAD_GLOBAL" and isinstance(op.argval, str)]


# --------------------------------------------------------------------------------------------------------------
# names and expressions
# --------------------------------------------------------------------------------------------------------------

class _Exprs:
    """Python expressions for the values on the abstract stack (``self.fc1.weight``, ``graph_out_0[1]``)."""

    def __init__(self, ops: Sequence[flow.Op], state: flow.FlowState) -> None:
        self.ops = ops
        self.state = state
        self.temps: dict[str, str] = {}
        self.memo: dict[int, str] = {}
        #: expression → (graph_out local, index) for the items of a graph's output tuple this made
        #: (``graph_out_0[1]`` → ``("graph_out_0", 1)``)
        self.outputs: dict[str, tuple[str, int]] = {}
        # temporaries Dynamo caches a value in (``COPY 1; STORE_FAST tmp_5``): name → expression of the value
        for op in ops:
            if op.opname == "STORE_FAST" and isinstance(op.argval, str) and op.argval.startswith(dynamo.TEMP_PREFIX):
                st = state.before[op.index]
                if st:
                    self.temps[op.argval] = self.slot(st[-1])

    def slot(self, s: flow.Slot, depth: int = 0) -> str:
        if s[1] == "null":
            return "NULL"
        if s[1] in ("exc", "lasti"):
            return "<exception>" if s[1] == "exc" else "<lasti>"
        if s[1].startswith("fast:") and 0 <= s[0] < len(self.ops):
            names = self.ops[s[0]].argval
            k = int(s[1][5:])
            if isinstance(names, tuple) and k < len(names):
                return self.temps.get(str(names[k]), str(names[k]))
        if s[1].startswith("item:"):
            st = self.state.before[s[0]] if 0 <= s[0] < len(self.ops) else None
            seq = self.slot(st[-1], depth + 1) if st else "…"
            return f"{seq}[{s[1][5:]}]"
        return self.of(flow.origin_of(s), depth)

    def of(self, i: int, depth: int = 0) -> str:
        if i in self.memo:
            return self.memo[i]
        text = self._of(i, depth)
        if len(text) > 80:
            text = text[:79] + "…"
        self.memo[i] = text
        return text

    def _of(self, i: int, depth: int) -> str:
        if i < 0 or i >= len(self.ops) or depth > 12:
            return "…"
        op = self.ops[i]
        st = self.state.before[i] or ()
        name = op.opname
        if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME"):
            v = str(op.argval)
            return self.temps.get(v, v)
        if name == "LOAD_GLOBAL":
            return dynamo.readable_global(str(op.argval))
        if name == "PUSH_NULL":
            return "NULL"
        if name == "LOAD_CONST":
            return _const(op.argval)
        if name in ("LOAD_ATTR", "LOAD_METHOD") and st:
            return f"{self.slot(st[-1], depth + 1)}.{op.argval}"
        if name == "BINARY_SUBSCR" and len(st) >= 2:
            base = self.slot(st[-2], depth + 1)
            key = self.slot(st[-1], depth + 1)
            if base == "builtins":
                return f"{base}.{key.strip(chr(39))}"
            text = f"{base}[{key}]"
            k = flow.origin_of(st[-1])
            loader = self.ops[k] if 0 <= k < len(self.ops) else None
            if dynamo.is_graph_output(base) and loader is not None and loader.opname == "LOAD_CONST" \
                    and isinstance(loader.argval, int):
                self.outputs[text] = (base, loader.argval)
            return text
        if name == "BUILD_SLICE" and len(st) >= (op.arg or 2):
            parts = [self.slot(s, depth + 1) for s in st[len(st) - (op.arg or 2):]]
            return ":".join("" if p == "None" else p for p in parts)
        if name in ("CALL", "CALL_KW", "CALL_FUNCTION_EX"):
            callee = callee_index(self.ops, self.state, i)
            fn = self.of(callee, depth + 1) if callee is not None else "…"
            return f"{fn}(…)"
        if name in ("BUILD_LIST", "BUILD_TUPLE"):
            return "[…]" if name == "BUILD_LIST" else "(…)"
        if name == "BINARY_OP":
            return f"(… {op.argrepr} …)"
        return f"<{name}>"


def _const(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def callee_index(ops: Sequence[flow.Op], state: flow.FlowState, call: int) -> int | None:
    """Index of the instruction that loaded the callable a call instruction calls (None if unknown)."""
    op = ops[call]
    st = state.before[call]
    if st is None:
        return None
    if op.opname == "CALL":
        below = (op.arg or 0) + 2
    elif op.opname == "CALL_KW":
        below = (op.arg or 0) + 3
    elif op.opname == "CALL_FUNCTION_EX":
        below = 3 + ((op.arg or 0) & 1)
    else:
        return None
    if len(st) < below:
        return None
    pair = st[len(st) - below: len(st) - below + 2]
    for s in pair:
        if s[1] not in ("null", "self"):
            return flow.origin_of(s)
    return flow.origin_of(pair[0])


# --------------------------------------------------------------------------------------------------------------
# the tagging
# --------------------------------------------------------------------------------------------------------------

_CALLS = frozenset({"CALL", "CALL_KW", "CALL_FUNCTION_EX"})
_PREFIX = frozenset({"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP", "EXTENDED_ARG"})
_RETURNS = frozenset({"RETURN_VALUE", "RETURN_CONST"})
#: Opcodes Dynamo uses to move, pack and unpack values around the graph break; the unsupported instruction is
#: the last one before the resume call that is not one of these.
_PACKING = frozenset({
    "BUILD_LIST", "BUILD_TUPLE", "BUILD_SLICE", "BUILD_MAP", "SWAP", "COPY", "LOAD_CONST", "LOAD_FAST",
    "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_DEREF", "LOAD_CLOSURE",
    "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_SLICE", "STORE_SLICE", "POP_TOP", "LIST_EXTEND",
    "LIST_APPEND", "DELETE_FAST", "PUSH_NULL", "STORE_FAST", "NOP", "EXTENDED_ARG", "LOAD_FAST_AND_CLEAR",
    "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "BUILD_CONST_KEY_MAP", "BUILD_SET", "UNPACK_SEQUENCE",
})
_PREGRAPH_HELPERS = frozenset({"record_pregraph_bytecode_enter", "record_pregraph_bytecode_exit"})
_ATTR_HELPERS = frozenset({"object_setattr_ignore_descriptor", "object_delattr_ignore_descriptor", "__setattr__",
                           "__delattr__"})
_CONTAINER_METHODS = frozenset({"extend", "clear", "update", "append", "insert", "pop", "add", "discard",
                                "remove", "setdefault", "popitem", "iter_next"})
_NEW_CONTAINERS = frozenset({"BUILD_LIST", "BUILD_MAP", "BUILD_TUPLE", "BUILD_SET", "BUILD_CONST_KEY_MAP"})

#: id(code) -> ((code,), [(facts, roles), ...]): a few fact sets per code object (with and without capture).
_cache: dict[int, tuple[tuple[CodeType], list[tuple[CodegenFacts | None, CodeRoles]]]] = {}
_flow_cache: dict[int, tuple[CodeType, tuple[flow.Op, ...], flow.FlowState]] = {}


def flow_of(code: CodeType) -> tuple[tuple[flow.Op, ...], flow.FlowState]:
    """(ops, static flow) of `code`, cached by identity (generated code can be unhashable)."""
    hit = _flow_cache.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1], hit[2]
    ops = flow.ops_of(code)
    state = flow.analyse(code, ops)
    if len(_flow_cache) > 512:
        _flow_cache.clear()
    _flow_cache[id(code)] = (code, ops, state)
    return ops, state


def code_roles(code: CodeType, facts: CodegenFacts | None = None) -> CodeRoles:
    """The role of every instruction of generated `code`, and its regions.

    Args:
        code: a cache entry's generated code, or a resume function's own code.
        facts: capture records for it (`facts_from_capture`); without them every role is ``source="shape"``.

    Returns:
        `CodeRoles` with one `InstrRole` per instruction (same indexes as `disasm.code_view`) and the
        maximal runs of equal role as `RoleRegion`s. Cached per (code object, facts).
    """
    hits = _cache.get(id(code))
    if hits is not None and hits[0][0] is code:
        for cached_facts, result in hits[1]:
            if cached_facts is facts:
                return result
        for cached_facts, result in hits[1]:
            if cached_facts == facts:
                return result
    ops, state = flow_of(code)
    result = _Tagger(code, ops, state, facts).run()
    if len(_cache) > 512:
        _cache.clear()
    if hits is None or hits[0][0] is not code:
        hits = _cache[id(code)] = ((code,), [])
    hits[1][:] = hits[1][-3:] + [(facts, result)]
    return result


class _Tagger:
    def __init__(self, code: CodeType, ops: tuple[flow.Op, ...], state: flow.FlowState,
                 facts: CodegenFacts | None) -> None:
        self.code = code
        self.ops = ops
        self.state = state
        self.facts = facts
        n = len(ops)
        self.role: list[Role | None] = [None] * n
        self.source = ["shape"] * n
        self.detail = [""] * n
        self.eager = [""] * n
        self.output: list[tuple[str, int, str | None] | None] = [None] * n
        self.kind: list[str | None] = [None] * n
        self.exprs = _Exprs(ops, state)
        self.graph_calls: list[GraphCallInfo] = []
        self.resume_calls: list[ResumeCallInfo] = []
        #: graph_out_N local -> (short graph name, FX output node names, captured)
        self._graph_out_names: dict[str, tuple[str, tuple[str, ...], bool]] = {}
        self._break_source = "shape"

    def set(self, i: int, role: Role, detail: str = "", source: str = "shape", kind: str | None = None,
            force: bool = False) -> None:
        if self.role[i] is None or force:
            self.role[i] = role
            self.detail[i] = detail
            self.source[i] = source
            self.kind[i] = kind
            self.output[i] = None
            self.eager[i] = ""

    # ---------------------------------------------------------------------------------------------------------
    def run(self) -> CodeRoles:
        facts = self.facts
        if facts is not None:
            is_resume_fn = facts.is_resume_function
        else:
            is_resume_fn = dynamo.is_resume_name(self.code.co_name) and self._has_resume_marker()
        if is_resume_fn:
            self._resume_function(facts is not None and facts.is_resume_function)
        else:
            self._generated()
        self._attach_call_preparation()
        n = len(self.ops)
        roles = tuple(
            InstrRole(i, self.role[i] or Role.UNKNOWN, self.source[i], self.detail[i], self.kind[i], self.eager[i],
                      self.output[i])
            for i in range(n)
        )
        return CodeRoles(
            key=id(self.code), name=self.code.co_name, roles=roles, regions=_regions(roles, self),
            graph_calls=tuple(self.graph_calls), resume_calls=tuple(self.resume_calls),
        )

    def _attach_call_preparation(self) -> None:
        """PRECALL / KW_NAMES belong to the call they prepare."""
        ops = self.ops
        for i in range(len(ops) - 1, -1, -1):
            if ops[i].opname in ("PRECALL", "KW_NAMES"):
                j = i + 1
                while j < len(ops) and ops[j].opname in ("PRECALL", "KW_NAMES"):
                    j += 1
                call_role = self.role[j] if j < len(ops) else None
                if call_role is not None and ops[j].opname in _CALLS:
                    if call_role != Role.USER_CODE:
                        self.set(i, call_role, "gets the next call ready", self.source[j], self.kind[j],
                                 force=True)

    def _has_resume_marker(self) -> bool:
        # a resume function's own code stores this marker; Dynamo's transformed code of it keeps the name in
        # co_varnames but never stores it
        return any(op.opname == "STORE_FAST" and op.argval == "__is_tracing_resume_prologue" for op in self.ops)

    # ---------------------------------------------------------------------------------------------------------
    def _resume_function(self, from_capture: bool) -> None:
        """A resume function's own code: prologue, the resume prologue that restores the stack (and context
        managers) and jumps to where the user's code stopped, then the copy of the user's bytecode."""
        ops = self.ops
        src = "capture" if from_capture else "shape"
        i = 0
        while i < len(ops) and ops[i].opname in _PREFIX:
            self.set(i, Role.PROLOGUE, "sets up the frame")
            i += 1
        end = None
        for j in range(i, len(ops)):
            if ops[j].opname in flow.UNCONDITIONAL:
                end = j
                break
        if end is None:
            end = i - 1
        for j in range(i, end + 1):
            op = ops[j]
            if op.opname in flow.UNCONDITIONAL:
                d = "jumps to the instruction where the original function stopped"
            elif op.opname == "LOAD_FAST" and dynamo.is_stack_arg(str(op.argval)):
                d = f"puts {op.argval} back on the value stack"
            elif op.argval == "__is_tracing_resume_prologue":
                d = "marks the resume prologue for Dynamo's tracer"
            elif op.opname in ("BEFORE_WITH", "SETUP_WITH"):
                d = "re-enters the with block the original function was inside at the graph break"
            elif op.opname in _CALLS:
                d = "rebuilds the context manager of that with block"
            else:
                d = "restores the state the original frame had at the graph break"
            self.set(j, Role.RESUME_PROLOGUE, d, src)
        for j in range(end + 1, len(ops)):
            self.set(j, Role.USER_CODE, "the user's original bytecode, resumed here", src)

    # ---------------------------------------------------------------------------------------------------------
    def _generated(self) -> None:
        ops, state = self.ops, self.state
        n = len(ops)
        i = 0
        while i < n and ops[i].opname in _PREFIX:
            self.set(i, Role.PROLOGUE, "sets up the frame (cells, free variables)")
            i += 1
        start = i
        graphs = {g.name: g for g in (self.facts.graphs if self.facts else ())}
        resumes = {r.global_name: r for r in (self.facts.resumes if self.facts else ())}
        callees: dict[int, int] = {}
        for op in ops:
            if op.opname in _CALLS:
                c = callee_index(ops, state, op.index)
                if c is not None:
                    callees[op.index] = c
        # --- graph calls
        graph_end = start - 1
        first_graph_load = None
        for call, c in sorted(callees.items()):
            cop = ops[c]
            if cop.opname == "LOAD_GLOBAL" and dynamo.is_graph_global(str(cop.argval)):
                end = self._graph_call(call, c, graphs.get(str(cop.argval)))
                graph_end = max(graph_end, end)
                if first_graph_load is None:
                    first_graph_load = c
        if first_graph_load is not None:
            for j in range(start, first_graph_load):
                self.set(j, Role.PRE_GRAPH, "Dynamo's bytecode that runs before the graph (aliases, random "
                                            "state)")
        # --- resume calls and the graph-break instruction
        resume_calls = [(call, c) for call, c in sorted(callees.items()) if self._is_resume_callee(c)]
        break_index = None
        if resume_calls:
            first_load = min(self._first_load_of_resume(c) for _call, c in resume_calls)
            break_index = self._find_break(max(graph_end + 1, start), first_load, resumes)
            tail_from = (break_index + 1) if break_index is not None else first_load
            if break_index is not None:
                self._graph_break(break_index, resumes)
                self._with_block_around_break(max(graph_end + 1, start), first_load, callees)
            for call, c in resume_calls:
                self._resume_call(call, c, resumes)
            for j in range(tail_from, n):
                if ops[j].opname in _RETURNS:
                    self.set(j, Role.RETURN, "returns what the resume function returned")
                elif ops[j].opname == "NOP":
                    self.set(j, Role.RESUME_CALL, "does nothing (a placeholder left by code generation)")
                elif ops[j].opname in flow.UNCONDITIONAL:
                    self.set(j, Role.RESUME_CALL, "jumps past the exception handler to the resume call")
                else:
                    self.set(j, Role.RESUME_CALL, "packs the arguments of the resume function")
        # --- the suffix: outputs, side effects, rebuilt values
        suffix_end = break_index if break_index is not None else n
        if break_index is None:
            for j in range(n - 1, graph_end, -1):
                if ops[j].opname in _RETURNS:
                    self.set(j, Role.RETURN, "returns the function's result")
        self._suffix(max(graph_end + 1, start), suffix_end, graphs)

    # ---------------------------------------------------------------------------------------------------------
    def _graph_call(self, call: int, load: int, graph: GraphView | None) -> int:
        ops, state = self.ops, self.state
        name = str(ops[load].argval)
        short = dynamo.short_graph_name(name)
        src = "capture" if graph is not None else "shape"
        op = ops[call]
        nargs = op.arg or 0
        st = state.before[call] or ()
        arg_slots = st[len(st) - nargs:] if nargs else ()
        inputs = tuple(self.exprs.slot(s) for s in arg_slots)
        # the graph's signature as the capture recorded it (FX's placeholders and output nodes)
        placeholders, outputs = (graph.placeholders, graph.outputs) if graph is not None else ((), ())
        if len(placeholders) != len(inputs):
            placeholders = ()
        # pre-graph profiling markers inside the call's operand range
        marker_calls = []
        for j in range(load + 1, call):
            if ops[j].opname in _CALLS:
                c = callee_index(ops, state, j)
                if c is not None and ops[c].argval in _PREGRAPH_HELPERS:
                    marker_calls.append((j, c))
        for j, c in marker_calls:
            helper = str(ops[c].argval)
            first = min(self._tree(j))
            d = ("starts timing the pre-graph bytecode (torch._dynamo.utils." + helper + ")"
                 if helper.endswith("enter") else
                 "stops timing the pre-graph bytecode (torch._dynamo.utils." + helper + ")")
            for k in range(first, j + 1):
                if ops[k].opname in ("LOAD_FAST",) and k > first and str(ops[k].argval).startswith("tmp_") \
                        and not helper.endswith("exit"):
                    continue
                self.set(k, Role.PRE_GRAPH, d)
            # the result: stored (enter) or dropped (exit)
            if j + 1 < call and ops[j + 1].opname in ("STORE_FAST", "POP_TOP"):
                self.set(j + 1, Role.PRE_GRAPH, d)
        # argument loads
        arg_of: dict[int, int] = {}
        for pos, s in enumerate(arg_slots):
            arg_of[flow.origin_of(s)] = pos
            arg_of[s[0]] = pos
        for j in range(load + 1, call):
            if self.role[j] is not None:
                continue
            if ops[j].opname in ("PRECALL", "KW_NAMES"):
                self.set(j, Role.GRAPH_CALL, f"prepares the call of {short}", src)
                continue
            if ops[j].opname in ("COPY", "STORE_FAST", "LOAD_FAST") and j not in arg_of and (
                    ops[j].opname == "COPY" or str(ops[j].argval).startswith("tmp_")):
                st = state.before[j] or ()
                if ops[j].opname == "COPY" and st:
                    what = self.exprs.slot(st[-(ops[j].arg or 1)])
                    self.set(j, Role.GRAPH_INPUT, f"keeps {what} for several inputs of {short}", "shape")
                    continue
                if ops[j].opname == "STORE_FAST":
                    self.set(j, Role.GRAPH_INPUT, f"caches a value several inputs of {short} share in "
                                                  f"{ops[j].argval}", "shape")
                    continue
            several = [p for p, sl in enumerate(arg_slots) if sl[0] == j]
            if len(several) > 1:  # a fused load (3.13 LOAD_FAST_LOAD_FAST) feeds two inputs
                exprs = ", ".join(inputs[p] for p in several)
                self.set(j, Role.GRAPH_INPUT, f"loads inputs {', '.join(map(str, several))} of {short}: {exprs}",
                         "capture" if placeholders else "shape")
                continue
            fed = arg_of.get(j)
            if fed is None:
                fed = self._feeds(j, arg_of, call)
            label = f"input {fed}" if fed is not None else "an input"
            expr = inputs[fed] if fed is not None and fed < len(inputs) else ""
            ph = f" (FX placeholder {placeholders[fed]})" if placeholders and fed is not None else ""
            d = f"loads {label} of {short}" + (f": {expr}" if expr else "") + ph
            self.set(j, Role.GRAPH_INPUT, d, "capture" if placeholders else "shape")
        shown = ", ".join(inputs[:6]) + (", …" if len(inputs) > 6 else "")
        self.set(load, Role.GRAPH_CALL, f"loads the compiled FX graph {short}", src)
        self.set(call, Role.GRAPH_CALL,
                 f"calls the FX graph {short} with {shown or 'no inputs'} and leaves its outputs as a tuple", src)
        # after the call: temporaries deleted, the output tuple stored (or unpacked, or dropped)
        end = call
        j = call + 1
        while j < len(ops) and ops[j].opname == "DELETE_FAST" and str(ops[j].argval).startswith("tmp_"):
            self.set(j, Role.GRAPH_CALL, f"drops a temporary used to load the inputs of {short}", src)
            end = j
            j += 1
        if j < len(ops):
            nxt = ops[j]
            if nxt.opname == "STORE_FAST" and str(nxt.argval).startswith("graph_out"):
                self.set(j, Role.GRAPH_CALL, f"keeps the output tuple of {short} in {nxt.argval}", src)
                end = j
            elif nxt.opname == "POP_TOP":
                self.set(j, Role.GRAPH_CALL, f"drops the (empty) output of {short}", src)
                end = j
            else:
                # fast path: cells, SWAP 2, UNPACK_SEQUENCE n
                for k in range(j, min(len(ops), j + 64)):
                    if ops[k].opname == "UNPACK_SEQUENCE":
                        for m in range(j, k):
                            self.set(m, Role.REBUILD, "builds the list of cells for the resume function")
                        self.set(k, Role.GRAPH_OUTPUT, f"unpacks the {ops[k].arg} outputs of {short} onto the "
                                                       "value stack", src)
                        end = k
                        break
        self.graph_calls.append(GraphCallInfo(
            call_index=call, load_index=load, name=name, short_name=short, inputs=inputs,
            placeholders=placeholders, outputs=outputs, captured=graph is not None,
        ))
        if end > call and ops[end].opname == "STORE_FAST":
            self._graph_out_names[str(ops[end].argval)] = (short, outputs, graph is not None)
        return end

    # builtins.set: inside the class body `set` is the method that tags an instruction
    def _tree(self, j: int) -> builtins.set[int]:
        """`j` and every instruction whose pushed value flows into it (its operands, their operands, ...)."""
        out: set[int] = set()
        todo = [j]
        while todo:
            k = todo.pop()
            if k in out or not 0 <= k < len(self.ops):
                continue
            out.add(k)
            op = self.ops[k]
            if op.opname in ("COPY", "SWAP"):
                continue
            st = self.state.before[k] or ()
            pops, _ = flow.pops_pushes(op)
            todo.extend(sl[0] for sl in (st[len(st) - pops:] if pops else ()))
        return out

    def _operand_start(self, call: int) -> int:
        """The lowest instruction index among those that pushed the operands `call` consumes."""
        st = self.state.before[call] or ()
        op = self.ops[call]
        pops, _ = flow.pops_pushes(op)
        used = st[len(st) - pops:] if pops else ()
        return min((s[0] for s in used), default=call)

    def _feeds(self, j: int, arg_of: dict[int, int], limit: int) -> int | None:
        """The graph input position the value pushed by `j` ends up in (through the instructions that consume
        it), or None."""
        seen = 0
        cur = j
        while seen < 32:
            cons = [c for c in (self.state.consumers[cur] if cur < len(self.state.consumers) else ()) if c < limit]
            if not cons:
                # stored to a temporary? find who uses the temporary
                return None
            cur = cons[0]
            if cur in arg_of:
                return arg_of[cur]
            seen += 1
        return None

    # ---------------------------------------------------------------------------------------------------------
    def _is_resume_callee(self, c: int) -> bool:
        op = self.ops[c]
        if op.opname == "LOAD_GLOBAL" and dynamo.is_resume_global(str(op.argval)):
            return True
        # nested graph breaks call __nested_resume_fns[-1]
        if op.opname == "BINARY_SUBSCR":
            st = self.state.before[c] or ()
            if len(st) >= 2:
                base = self.ops[flow.origin_of(st[-2])]
                return base.opname.startswith("LOAD_FAST") and base.argval == "__nested_resume_fns"
        return False

    def _first_load_of_resume(self, c: int) -> int:
        op = self.ops[c]
        if op.opname == "BINARY_SUBSCR":
            st = self.state.before[c] or ()
            return min((s[0] for s in st[-2:]), default=c)
        return c

    def _find_break(self, lo: int, first_load: int, resumes: dict[str, ResumeFact]) -> int | None:
        """The unsupported instruction: the last one before the resume call that is not Dynamo's packing,
        not in an exception handler, and not the with-block re-entry Dynamo wraps around it; when the
        capture knows the user's instruction that broke, it must have the same opname."""
        ops = self.ops
        handler_only = self.state.handler_only
        wanted = {r.break_opname for r in resumes.values() if r.break_opname}

        def ok(j: int) -> bool:
            return j not in handler_only and not self._is_with_call(j)

        if wanted:
            for j in range(first_load - 1, lo - 1, -1):
                if ops[j].opname in wanted and ok(j):
                    self._break_source = "capture"
                    return j
        for j in range(first_load - 1, lo - 1, -1):
            if ops[j].opname not in _PACKING and ops[j].opname not in ("PRECALL", "KW_NAMES", "NOP") and ok(j) \
                    and ops[j].opname not in flow.UNCONDITIONAL:
                self._break_source = "shape"
                return j
        return None

    def _is_with_call(self, j: int) -> bool:
        """A call of ``__enter__`` / ``__exit__`` (Dynamo re-enters the user's with block around the
        graph-break instruction and leaves it after)."""
        if self.ops[j].opname not in _CALLS:
            return False
        c = callee_index(self.ops, self.state, j)
        return c is not None and self.ops[c].opname in ("LOAD_ATTR", "LOAD_METHOD") and \
            self.ops[c].argval in ("__enter__", "__exit__")

    def _with_block_around_break(self, lo: int, first_load: int, callees: dict[int, int]) -> None:
        """Tag the with-block re-entry and exit around the graph-break instruction, and the handler that
        leaves the block when it raises."""
        ops = self.ops
        for j in range(lo, first_load):
            if self._is_with_call(j):
                c = callees.get(j)
                enter = c is not None and ops[c].argval == "__enter__"
                d = ("re-enters the user's with block, so the graph-break instruction runs inside it" if enter
                     else "leaves the user's with block after the graph-break instruction")
                self._mark_tree(j, Role.GRAPH_BREAK, d, None, lo)  # type: ignore[arg-type]
                k = j + 1
                if k < len(ops) and ops[k].opname == "POP_TOP":
                    self.set(k, Role.GRAPH_BREAK, d)
        for j in range(lo, first_load):
            if j in self.state.handler_only:
                self.set(j, Role.GRAPH_BREAK, "runs only if the graph-break instruction raises: leaves the with "
                                              "block and re-raises")

    def _graph_break(self, b: int, resumes: dict[str, ResumeFact]) -> None:
        ops = self.ops
        src = self._break_source
        op = ops[b]
        eager = ""
        if op.opname in _CALLS:
            c = callee_index(ops, self.state, b)
            what = self.exprs.of(c) if c is not None else "a callable"
            if c is not None and ops[c].opname in ("LOAD_ATTR", "LOAD_METHOD"):
                owner_st = self.state.before[c] or ()
                owner = self._pretty(self.exprs.slot(owner_st[-1])) if owner_st else "an object"
                eager = f".{ops[c].argval}()"
                what = f"{eager} on {owner}"
            elif c is not None and all(part.isidentifier() for part in what.split(".")):
                eager = what  # a name: ``print``, ``builtins.int``
            d = f"calls {what} eagerly (Dynamo could not put it in the graph)"
        elif op.opname.startswith(("POP_JUMP", "JUMP_IF")):
            d = "branches on a value only known at run time"
        else:
            d = f"runs {op.opname} eagerly (Dynamo could not trace it)"
        self.set(b, Role.GRAPH_BREAK, d, src, force=True)
        self.eager[b] = eager
        j = b - 1
        while j >= 0 and ops[j].opname in ("PRECALL", "KW_NAMES"):
            self.set(j, Role.GRAPH_BREAK, "prepares the graph-break call", src, force=True)
            j -= 1

    def _pretty(self, expr: str) -> str:
        """``graph_out_0[1]`` (an item of a graph's output tuple, as `_Exprs` made it) → ``output 1 of
        __compiled_fn_2 (FX node y)``; any other expression unchanged."""
        item = self.exprs.outputs.get(expr)
        outs = self._graph_out_names
        if item is not None and item[0] in outs:
            short, names, _ = outs[item[0]]
            k = item[1]
            node = f" (FX node {names[k]})" if 0 <= k < len(names) else ""
            return f"output {k} of {short}{node}"
        return expr

    def _resume_call(self, call: int, c: int, resumes: dict[str, ResumeFact]) -> None:
        ops = self.ops
        load = ops[c]
        gname = str(load.argval) if load.opname == "LOAD_GLOBAL" else "__nested_resume_fns[-1]"
        fact = resumes.get(gname)
        src = "capture" if fact is not None and fact.function_name else "shape"
        fn = fact.function_name if fact is not None and fact.function_name else gname
        carries = tuple(_describe_resume_arg(a) for a in fact.arg_names) if fact is not None else ()
        what = ", ".join(fact.arg_names) if fact is not None and fact.arg_names else "the saved stack and locals"
        self.set(c, Role.RESUME_CALL, f"loads the resume function {gname} ({fn})", src, force=True)
        # the value stack shows the global the code loads, the status line and frames the code's own name: both
        named = f"{fn} (loaded as {gname})" if fn != gname else fn
        self.set(call, Role.RESUME_CALL, f"calls the resume function {named} with {what}", src, force=True)
        self.resume_calls.append(ResumeCallInfo(call_index=call, load_index=c, global_name=gname,
                                                function_name=fn if src == "capture" else None,
                                                arg_names=fact.arg_names if fact is not None else (),
                                                carries=carries))

    # ---------------------------------------------------------------------------------------------------------
    def _suffix(self, lo: int, hi: int, graphs: dict[str, GraphView]) -> None:
        """codegen_suffix: graph outputs, side effects, rebuilt stack values and locals."""
        ops, state = self.ops, self.state
        outs = self._graph_out_names
        # graph outputs: LOAD_FAST graph_out_N; LOAD_CONST k; BINARY_SUBSCR
        for j in range(lo, hi):
            op = ops[j]
            if op.opname.startswith("LOAD_FAST") and dynamo.is_graph_output(str(op.argval)) and j + 2 < len(ops) \
                    and ops[j + 1].opname == "LOAD_CONST" and ops[j + 2].opname == "BINARY_SUBSCR":
                k = ops[j + 1].argval
                short, names, captured = outs.get(str(op.argval), ("the graph", (), False))
                node = names[k] if isinstance(k, int) and 0 <= k < len(names) else None
                d = f"takes output {k} of {short}" + (f" (FX node {node})" if node else "")
                for m in (j, j + 1, j + 2):
                    if self.role[m] is None and isinstance(k, int):
                        self.set(m, Role.GRAPH_OUTPUT, d, "capture" if node else "shape")
                        self.output[m] = (short, k, node)
                    else:
                        self.set(m, Role.GRAPH_OUTPUT, d, "capture" if node else "shape")
            elif op.opname == "DELETE_FAST" and dynamo.is_graph_output(str(op.argval)):
                self.set(j, Role.GRAPH_OUTPUT, f"drops {op.argval}, the graph's output tuple")
        # side effects
        for j in range(lo, hi):
            kind, d = self._side_effect(j)
            if kind is not None:
                self._mark_tree(j, Role.SIDE_EFFECT, d, kind, lo)
        # temporaries that follow a side effect's values (COPY; STORE_FAST tmp; POP_TOP of a helper's result)
        for j in range(lo, hi):
            if self.role[j] is not None:
                continue
            st = state.before[j] or ()
            op = ops[j]
            src = None
            if op.opname == "COPY" and st:
                src = flow.origin_of(st[-(op.arg or 1)])
            elif op.opname in ("STORE_FAST", "POP_TOP") and st:
                src = st[-1][0]
            if src is not None and 0 <= src < len(ops) and self.role[src] == Role.SIDE_EFFECT:
                self.set(j, Role.SIDE_EFFECT, self.detail[src], kind=self.kind[src])
        # everything else rebuilds Python state
        for j in range(lo, hi):
            if self.role[j] is None:
                op = ops[j]
                if op.opname in ("STORE_FAST", "STORE_DEREF") and not str(op.argval).startswith(("tmp_", "graph_out")):
                    d = f"stores the rebuilt local {op.argval}"
                elif op.opname in _RETURNS:
                    self.set(j, Role.RETURN, "returns the function's result")
                    continue
                elif op.opname == "NOP":
                    d = "does nothing (a placeholder left by code generation)"
                elif op.opname in ("BUILD_LIST", "LIST_EXTEND", "SWAP", "COPY", "POP_TOP", "BUILD_TUPLE"):
                    d = "arranges the rebuilt stack values and locals"
                else:
                    d = self._rebuild_detail(j, hi)
                self.set(j, Role.REBUILD, d)

    def _rebuild_detail(self, j: int, break_index: int) -> str:
        """Say which value `j` helps rebuild, and for whom (the graph-break instruction, the return)."""
        expr = self.exprs.of(j)
        cur, hops = j, 0
        while hops < 64:
            cons = self.state.consumers[cur]
            if not cons:
                break
            cur = cons[0]
            hops += 1
            name = self.ops[cur].opname
            if cur == break_index:
                return f"puts {expr} back on the value stack for the graph-break instruction"
            if name in _RETURNS:
                return f"rebuilds {expr}, the value the function returns"
            if name in ("BUILD_LIST", "BUILD_TUPLE", "LIST_EXTEND"):
                return f"rebuilds {expr}, saved for the resume function (a stack value or local)"
        return f"rebuilds {expr} (a value the original code has at this point)"

    def _side_effect(self, j: int) -> tuple[str | None, str]:
        ops, state = self.ops, self.state
        op = ops[j]
        st = state.before[j] or ()
        name = op.opname
        if name == "STORE_ATTR" and len(st) >= 2:
            return "attribute", f"replays a side effect: sets {self.exprs.slot(st[-1])}.{op.argval}"
        if name == "DELETE_ATTR" and st:
            return "attribute", f"replays a side effect: deletes {self.exprs.slot(st[-1])}.{op.argval}"
        if name in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            verb = "sets" if name == "STORE_GLOBAL" else "deletes"
            return "global", f"replays a side effect: {verb} the global {op.argval}"
        if name in ("STORE_DEREF", "DELETE_DEREF"):
            return "cell", f"replays a side effect: sets the closure cell {op.argval}"
        if name in ("STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE") and len(st) >= 2:
            container = st[-2] if name != "STORE_SLICE" else st[-3]
            origin = ops[flow.origin_of(container)]
            if origin.opname in _NEW_CONTAINERS:
                return None, ""
            target = self.exprs.slot(container)
            if target.startswith(("graph_out", "[…]")):
                return None, ""
            return "container", f"replays a side effect: mutates {target}"
        if name in _CALLS:
            c = callee_index(ops, state, j)
            if c is None:
                return None, ""
            attr = ops[c].argval if ops[c].opname in ("LOAD_ATTR", "LOAD_METHOD") else None
            if attr in _ATTR_HELPERS:
                args = self._call_args(j)
                target = f"{args[0]}.{args[1].strip(chr(39))}" if len(args) >= 2 else "an attribute"
                verb = "deletes" if "del" in str(attr) else "sets"
                return "attribute", f"replays a side effect: {verb} {target}"
            if attr in _CONTAINER_METHODS:
                cst = state.before[c] or ()
                owner = self.exprs.slot(cst[-1]) if cst else "a container"
                if owner.startswith(("[…]", "graph_out")):
                    return None, ""
                return "container", f"replays a side effect: {owner}.{attr}(…)"
        return None, ""

    def _call_args(self, call: int) -> list[str]:
        st = self.state.before[call] or ()
        n = self.ops[call].arg or 0
        return [self.exprs.slot(s) for s in st[len(st) - n:]] if n else []

    def _mark_tree(self, j: int, role: Role, d: str, kind: str, lo: int) -> None:
        """Mark `j` and, recursively, the instructions that pushed the operands it consumes (within the
        suffix and not already tagged)."""
        todo = [j]
        while todo:
            k = todo.pop()
            if k < lo or (self.role[k] is not None and k != j):
                continue
            self.set(k, role, d, kind=kind, force=(k == j))
            op = self.ops[k]
            st = self.state.before[k] or ()
            if op.opname == "COPY":
                continue
            pops, _ = flow.pops_pushes(op)
            if op.opname == "SWAP":
                pops = 0
            for s in st[len(st) - pops:] if pops else ():
                if s[0] != k:
                    todo.append(s[0])


def _describe_resume_arg(name: str) -> str:
    if name == "__nested_resume_fns":
        return "__nested_resume_fns: the resume functions of enclosing frames (nested graph breaks)"
    if name == "__nested_frame_values":
        return "__nested_frame_values: the saved values of enclosing frames"
    if dynamo.is_stack_arg(name):
        slot = name[len(dynamo.STACK_ARG_PREFIX):]
        return f"{name}: value {slot} of the original frame's value stack at the graph break"
    return f"{name}: the user's local {name}"


def _regions(roles: Sequence[InstrRole], tagger: _Tagger) -> tuple[RoleRegion, ...]:
    out: list[RoleRegion] = []
    i = 0
    n = len(roles)
    while i < n:
        j = i
        while j + 1 < n and roles[j + 1].role == roles[i].role:
            j += 1
        role = roles[i].role
        srcs = {roles[k].source for k in range(i, j + 1)}
        out.append(RoleRegion(i, j, role, "capture" if srcs == {"capture"} else ("shape" if srcs == {"shape"}
                                                                                  else "mixed"),
                              _title(role, i, j, tagger)))
        i = j + 1
    return tuple(out)


def _title(role: Role, i: int, j: int, tagger: _Tagger) -> str:
    if role == Role.GRAPH_CALL:
        for g in tagger.graph_calls:
            if i <= g.call_index <= j:
                return f"call of the FX graph {g.short_name} ({len(g.inputs)} inputs)"
        for g in tagger.graph_calls:  # only the load of the graph: its CALL comes after the inputs
            if i <= g.load_index <= j:
                return f"load of the FX graph {g.short_name} (called at {g.call_index})"
        return "call of the FX graph"
    if role == Role.GRAPH_BREAK:
        for k in range(i, j + 1):
            if tagger.eager[k]:
                return f"the graph-break instruction, run eagerly: {tagger.eager[k]}"
    if role == Role.RESUME_CALL:
        for r in tagger.resume_calls:
            if i <= r.call_index <= j:
                return f"call of the resume function {resume_name(r.function_name, r.global_name)}"
        return "packing the resume function's arguments"
    return _ROLE_TITLES[role]


def resume_name(function_name: str | None, global_name: str) -> str:
    """A resume function by both its names where both are known: ``"torch_dynamo_resume_in_f_at_26 (=
    __resume_at_196_3)"`` (its code's name, then the global generated code loads it from)."""
    if function_name and function_name != global_name:
        return f"{function_name} (= {global_name})"
    return global_name


_ROLE_TITLES: dict[Role, str] = {
    Role.PROLOGUE: "prologue",
    Role.RESUME_PROLOGUE: "resume prologue: restore the stack, jump back in",
    Role.PRE_GRAPH: "pre-graph bytecode",
    Role.GRAPH_INPUT: "loading the graph's inputs",
    Role.GRAPH_CALL: "call of the FX graph",
    Role.GRAPH_OUTPUT: "unpacking the graph's outputs",
    Role.SIDE_EFFECT: "replaying side effects",
    Role.REBUILD: "rebuilding stack values and locals",
    Role.GRAPH_BREAK: "the graph-break instruction, run eagerly",
    Role.RESUME_CALL: "call of the resume function",
    Role.RETURN: "return",
    Role.USER_CODE: "the user's bytecode (resumed)",
    Role.UNKNOWN: "unknown",
}

#: One sentence per role, for legends and help screens.
ROLE_HELP: dict[Role, str] = {
    Role.PROLOGUE: "Set-up every code object starts with: RESUME, and copying closure cells into the frame.",
    Role.RESUME_PROLOGUE: "In a resume function: puts the saved stack values back and jumps to where the "
                          "original function stopped.",
    Role.PRE_GRAPH: "Bytecode Dynamo runs before the graph: timing markers and fix-ups of inputs.",
    Role.GRAPH_INPUT: "Loads one input of the compiled FX graph (a tensor, parameter or other value).",
    Role.GRAPH_CALL: "Calls the compiled FX graph; its outputs come back as one tuple.",
    Role.GRAPH_OUTPUT: "Takes a value out of the graph's output tuple.",
    Role.SIDE_EFFECT: "Re-does a mutation the traced code made (attribute, global, cell, list or dict), "
                      "since the graph cannot do it.",
    Role.REBUILD: "Rebuilds the Python values the original code would have at this point (stack and locals).",
    Role.GRAPH_BREAK: "The instruction Dynamo could not trace; it runs as plain Python here.",
    Role.RESUME_CALL: "Calls the resume function that continues the original code after the break.",
    Role.RETURN: "Returns the result.",
    Role.USER_CODE: "The user's own bytecode, copied into the resume function.",
    Role.UNKNOWN: "Not matched to any part of Dynamo's code generation.",
}
