"""Where the values a Dynamo-generated code object feeds its FX graph come from, as guard sources.

Guards name what they check by *source*, the expression torch evaluates from the frame: ``L['x']`` (a local or
free variable), ``G['lin_a']`` (a global), then attribute and item steps (``G['lin_a']._parameters['weight']``).
This module reads the same sources off generated code: `graph_inputs` follows, on the abstract value stack of
`flow.analyse`, each argument of every ``__compiled_fn_*`` call back to the loads that produced it (through
Dynamo's ``COPY; STORE_FAST tmp_N`` temporaries), and `parse_source` turns a source's text into steps.
`dynadbg.core.toolkit_validate` compares the inputs of Dynamo's code with those of an edit to find the sources
an edit makes the graph read, which must be guarded. Pure functions over code objects; no torch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import CodeType
from typing import Any

from . import compat, flow
from .roles import callee_index

#: One step of a source after its root: ``("attr", name)`` or ``("item", key)``.
Step = tuple[str, Any]


@dataclass(frozen=True)
class Source:
    """A guard source: a root (``"L"``: the frame's locals, free variables included; ``"G"``: its globals) and
    a name there, then attribute/item steps.

    Attributes:
        root: ``"L"`` or ``"G"``.
        name: the local or global name.
        steps: ``("attr", "_parameters")``, ``("item", "weight")``, ... in order.
    """

    root: str
    name: str
    steps: tuple[Step, ...] = ()

    @property
    def text(self) -> str:
        """Torch's spelling: ``G['lin_a']._parameters['weight']``."""
        out = f"{self.root}[{self.name!r}]"
        for kind, key in self.steps:
            out += f".{key}" if kind == "attr" else f"[{key!r}]"
        return out

    def child(self, step: Step) -> "Source":
        return Source(self.root, self.name, self.steps + (step,))

    def startswith(self, other: "Source") -> bool:
        """Whether `other` is this source or one it is reached from."""
        return (self.root, self.name) == (other.root, other.name) and self.steps[:len(other.steps)] == other.steps

    def rebased(self, old: "Source", new: "Source") -> "Source":
        """This source with its prefix `old` replaced by `new` (``G['a'].w`` → ``G['b'].w``)."""
        if not self.startswith(old):
            raise ValueError(f"{self.text} is not under {old.text}")
        return Source(new.root, new.name, new.steps + self.steps[len(old.steps):])

    def __str__(self) -> str:
        return self.text


def parse_source(text: str) -> Source | None:
    """``"G['lin_a']._parameters['weight']"`` → its `Source`; None for text that is not a plain chain of
    ``L[...]``/``G[...]``, attributes and constant subscripts (``list(dict.keys(L['d']))[0]``)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    steps: list[Step] = []
    while True:
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if isinstance(node.value, ast.Name) and node.value.id in ("L", "G") and isinstance(node.slice.value, str):
                return Source(node.value.id, node.slice.value, tuple(reversed(steps)))
            steps.append(("item", node.slice.value))
            node = node.value
        else:
            return None


def value_at(source: Source, f_locals: dict[str, Any] | None, f_globals: dict[str, Any] | None) -> Any:
    """Evaluate `source` on live objects (``L`` = `f_locals`, ``G`` = `f_globals`). Raises KeyError,
    AttributeError, IndexError, TypeError as the access does; KeyError when the root scope is not given."""
    scope = f_locals if source.root == "L" else f_globals
    if scope is None:
        raise KeyError(f"no {'frame locals' if source.root == 'L' else 'globals'} to read {source.text} from")
    value = scope[source.name]
    for kind, key in source.steps:
        value = getattr(value, key) if kind == "attr" else value[key]
    return value


@dataclass(frozen=True)
class GraphInput:
    """One argument of a call of a compiled FX graph in generated code.

    Attributes:
        position: its position in the call (0-based).
        source: the guard source it is loaded from, None when it is not a plain load chain (a computed value,
            a constant).
        constant: True when it is a ``LOAD_CONST`` value (then `value` holds it).
        value: the constant, when `constant`.
        rows: the listing rows of the instructions that produce it (for messages).
        text: the instructions as ``"LOAD_GLOBAL lin_a; LOAD_ATTR _parameters; ..."``, for comparing two codes.
    """

    position: int
    source: Source | None
    constant: bool = False
    value: Any = None
    rows: tuple[int, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class GraphCall:
    """One call of a ``__compiled_fn_*`` global.

    Attributes:
        name: the global's name.
        call_row: the row of the CALL.
        inputs: its arguments, in order; empty with `followed` False when they could not be followed
            (``CALL_FUNCTION_EX`` on an unknown sequence).
        followed: whether the arguments were followed.
    """

    name: str
    call_row: int
    inputs: tuple[GraphInput, ...]
    followed: bool = True


class _Resolver:
    """Sources of abstract stack slots of one code object (memoised per instruction)."""

    def __init__(self, code: CodeType) -> None:
        self.code = code
        # not the shared per-code cache (roles.flow_of): it would keep generated code alive until the process
        # exits, and Dynamo's cleanup hooks then fire during interpreter shutdown
        self.ops = flow.ops_of(code)
        self.state = flow.analyse(code, self.ops)
        self.args = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                          + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)])
        self.frees = set(code.co_freevars) | set(code.co_cellvars)
        #: name -> indexes of the STORE_FAST instructions that write it
        self.stores: dict[str, list[int]] = {}
        for op in self.ops:
            if op.opname == "STORE_FAST" and isinstance(op.argval, str):
                self.stores.setdefault(op.argval, []).append(op.index)

    def slot(self, slot: flow.Slot, depth: int = 0) -> GraphInput:
        if slot[1] in ("null", "exc", "lasti"):
            return GraphInput(0, None)
        if slot[1].startswith("fast:") and 0 <= slot[0] < len(self.ops):
            # 3.13's LOAD_FAST_LOAD_FAST: the k-th of its two names
            names = self.ops[slot[0]].argval
            k = int(slot[1][5:])
            if isinstance(names, tuple) and k < len(names):
                return self._local(str(names[k]), slot[0], f"LOAD_FAST {names[k]}", depth)
            return GraphInput(0, None)
        return self.at(flow.origin_of(slot), depth)

    def _local(self, var: str, i: int, text: str, depth: int) -> GraphInput:
        """A load of local `var` at row `i`: what the last store before it put there (Dynamo's temporaries),
        else the frame's own argument or free variable ``L[var]``."""
        here = (i,)
        earlier = [k for k in self.stores.get(var, ()) if k < i]
        if earlier:
            k = earlier[-1]
            stored = self.state.before[k]
            if stored:
                inner = self.slot(stored[-1], depth + 1)
                return GraphInput(0, inner.source, inner.constant, inner.value, inner.rows + (k,) + here,
                                  f"{inner.text}; STORE_FAST {var}; {text}")
            return GraphInput(0, None, rows=here, text=text)
        if var in self.args or var in self.frees:
            return GraphInput(0, Source("L", var), rows=here, text=text)
        return GraphInput(0, None, rows=here, text=text)

    def at(self, i: int, depth: int = 0) -> GraphInput:
        if not 0 <= i < len(self.ops) or depth > 40:
            return GraphInput(0, None)
        op = self.ops[i]
        st = self.state.before[i] or ()
        name = op.opname
        here = (i,)
        text = f"{name} {op.argrepr}".strip()
        if name in ("LOAD_FAST", "LOAD_FAST_CHECK"):
            return self._local(str(op.argval), i, text, depth)
        if name in ("LOAD_DEREF", "LOAD_CLOSURE"):
            return GraphInput(0, Source("L", str(op.argval)), rows=here, text=text)
        if name == "LOAD_GLOBAL":
            return GraphInput(0, Source("G", str(op.argval)), rows=here, text=text)
        if name == "LOAD_CONST":
            return GraphInput(0, None, True, op.argval, here, text)
        if name == "LOAD_ATTR" and st and not _method_load(op):
            base = self.slot(st[-1], depth + 1)
            src = base.source.child(("attr", str(op.argval))) if base.source is not None else None
            return GraphInput(0, src, rows=base.rows + here, text=f"{base.text}; {text}")
        if name == "BINARY_SUBSCR" and len(st) >= 2:
            base = self.slot(st[-2], depth + 1)
            key = self.slot(st[-1], depth + 1)
            src = None
            if base.source is not None and key.constant and isinstance(key.value, (str, int)):
                src = base.source.child(("item", key.value))
            return GraphInput(0, src, rows=base.rows + key.rows + here, text=f"{base.text}; {key.text}; {text}")
        return GraphInput(0, None, rows=here, text=text)


def _method_load(op: flow.Op) -> bool:
    """A ``LOAD_ATTR`` that loads a method with its self (3.12+: the argument's low bit; 3.11 has
    ``LOAD_METHOD`` for that, and its ``LOAD_ATTR`` argument is a plain name index)."""
    return compat.PY312 and bool((op.arg or 0) & 1)


def graph_calls(code: CodeType) -> tuple[GraphCall, ...]:
    """Every call of a ``__compiled_fn_*`` global in `code` with the source of each argument (see the module
    docstring). Pure; the flow analysis behind it is cached per code object."""
    res = _Resolver(code)
    ops, state = res.ops, res.state
    out = []
    for op in ops:
        if op.opname not in ("CALL", "CALL_FUNCTION_EX", "CALL_KW"):
            continue
        callee = callee_index(ops, state, op.index)
        if callee is None:
            continue
        cop = ops[callee]
        if cop.opname != "LOAD_GLOBAL" or not str(cop.argval).startswith("__compiled_fn"):
            continue
        st = state.before[op.index] or ()
        if op.opname == "CALL":
            n = op.arg or 0
            args = st[len(st) - n:] if n else ()
            inputs = tuple(_at(res.slot(s), k) for k, s in enumerate(args))
            out.append(GraphCall(str(cop.argval), op.index, inputs))
        else:
            # CALL_FUNCTION_EX: the arguments are a tuple (or list) built just before, when they can be followed
            items = _sequence_items(res, st[-1 - ((op.arg or 0) & 1)]) if st else ()
            out.append(GraphCall(str(cop.argval), op.index, items, followed=bool(items)))
    return tuple(out)


def _at(inp: GraphInput, position: int) -> GraphInput:
    return GraphInput(position, inp.source, inp.constant, inp.value, tuple(sorted(set(inp.rows))), inp.text)


def _sequence_items(res: _Resolver, slot: flow.Slot) -> tuple[GraphInput, ...]:
    """The items of a ``BUILD_TUPLE``/``BUILD_LIST`` (``LIST_TO_TUPLE`` of one) passed to ``CALL_FUNCTION_EX``."""
    i = flow.origin_of(slot)
    ops, state = res.ops, res.state
    if not 0 <= i < len(ops):
        return ()
    op = ops[i]
    before = state.before[i]
    if op.opname in ("CALL_INTRINSIC_1",) and before:
        return _sequence_items(res, before[-1])
    if op.opname in ("BUILD_TUPLE", "BUILD_LIST"):
        st = state.before[i] or ()
        n = op.arg or 0
        return tuple(_at(res.slot(s), k) for k, s in enumerate(st[len(st) - n:] if n else ()))
    return ()


def global_load_rows(code: CodeType, name: str) -> tuple[int, ...]:
    """Rows of ``LOAD_GLOBAL name`` in `code` (with or without the NULL bit)."""
    return tuple(op.index for op in flow.ops_of(code) if op.opname == "LOAD_GLOBAL" and op.argval == name)


def attr_load_rows(code: CodeType, base: Source, attr: str) -> tuple[tuple[int, str], ...]:
    """Where `code` loads attribute `attr` of the value at `base`: (row, how) with how ``"attr"`` for a
    ``LOAD_ATTR attr`` on it and ``"key"`` for the ``LOAD_CONST 'attr'`` of a subscript of it (Dynamo reads a
    module's parameters, buffers and submodules as ``_parameters['weight']``)."""
    res = _Resolver(code)
    out: list[tuple[int, str]] = []
    for op in res.ops:
        st = res.state.before[op.index] or ()
        if op.opname == "LOAD_ATTR" and op.argval == attr and st and not _method_load(op):
            got = res.slot(st[-1]).source
            if got is not None and got == base:
                out.append((op.index, "attr"))
        elif op.opname == "BINARY_SUBSCR" and len(st) >= 2:
            owner = res.slot(st[-2]).source
            key = res.slot(st[-1])
            if (owner is not None and key.constant and key.value == attr and len(owner.steps) >= 1
                    and owner.steps[-1][0] == "attr" and owner.steps[-1][1] in ("_parameters", "_buffers", "_modules")
                    and Source(owner.root, owner.name, owner.steps[:-1]) == base):
                out.append((key.rows[-1], "key"))
    return tuple(out)
