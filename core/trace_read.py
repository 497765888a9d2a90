"""Reading an instruction translator's state without changing the compile (worker thread, inside Dynamo).

Dynamo builds variable trackers lazily: an input it has not looked at yet is a ``LazyVariableTracker`` that
becomes a real tracker (adding graph inputs and guards) the first time anything asks it a question, including
``isinstance(vt, TensorVariable)`` and any attribute read. Everything here therefore decides what a tracker is
from ``type(vt).__mro__`` (by class name) and reads only instance dicts (``vars(vt)``), through the whitelisted
readers of `dynadbg.core.compat`; an unrealized input is shown as unrealized, with its source and the type of the
object behind it. Fake tensors are read for metadata only (``shape``, ``stride()``, ``dtype``, ``device``,
``requires_grad``); a symbolic size is shown by ``str()`` and its hint, which add no guard.
"""

from __future__ import annotations

import linecache
import types
from typing import Any, Callable

from . import compat
from .trace_model import (
    FakeTensorView,
    SizeView,
    TraceFrame,
    TraceGuard,
    TraceNode,
    TraceValue,
    TraceValueKind,
    make_value,
)
from .values import cut, tensor_head

#: longest `TraceValue.text` (characters)
MAX_TEXT = 120
#: container items summarised (the rest shown as a count)
MAX_ITEMS = 4
#: most nodes / guards listed at a stop (the newest kept; counts are always whole)
MAX_LISTED = 2000


def _cut(text: str) -> str:
    """`values.cut` (one line, an ellipsis where it is cut) at this module's length (a text that needs no cut is
    returned as it is without the call: most of them, at every new tracker a full trace recording sees)."""
    if len(text) <= MAX_TEXT and "\n" not in text:
        return text
    return cut(text, MAX_TEXT)


def _safe_repr(value: Any) -> str:
    try:
        return _cut(repr(value))
    except Exception as exc:  # noqa: BLE001 - a user repr may raise anything
        return f"<{type(value).__name__}: repr failed ({type(exc).__name__})>"


def _dtype_text(dtype: Any) -> str | None:
    return None if dtype is None else str(dtype).replace("torch.", "")


def tensor_text(shape: tuple[str, ...] | None, dtype: str | None, device: str | None) -> str:
    """``Tensor[3, s0] float32 cpu`` (the same shape as `values.summarize` of a real tensor)."""
    return " ".join(p for p in (tensor_head("Tensor", list(shape) if shape is not None else None), dtype, device)
                    if p)


def _fake_meta(fake: Any) -> tuple[tuple[str, ...] | None, str | None, str | None]:
    try:
        shape = tuple(str(s) if type(s) is int else compat.symbolic_text(s)[0] for s in fake.shape)
    except Exception:  # noqa: BLE001
        shape = None
    try:
        dtype = _dtype_text(fake.dtype)
        device = str(fake.device)
    except Exception:  # noqa: BLE001
        dtype = device = None
    return shape, dtype, device


def _source(vt: Any) -> str | None:
    return compat.source_name(vars(vt).get("source"))


#: (sizes, dtype, device) of a tensor with no symbolic size -> (sizes as text, dtype text, device text, the text)
_TENSOR_TEXTS: dict[tuple[Any, Any, Any], tuple[tuple[str, ...], str | None, str | None, str]] = {}


def _tensor_parts(tensor: Any, fake: bool) -> tuple[tuple[str, ...] | None, str | None, str | None, str]:
    """(sizes, dtype, device, `tensor_text`) of a fake tensor (`fake`) or of the real tensor behind an unrealized
    input, metadata only. Without a symbolic size the result is shared by every tensor of the same sizes, dtype
    and device (a recording makes one per new tensor tracker: most are of a few shapes)."""
    key = None
    try:
        if not (fake and getattr(tensor, "_has_symbolic_sizes_strides", True)):
            key = (tensor.shape, tensor.dtype, tensor.device)
            hit = _TENSOR_TEXTS.get(key)
            if hit is not None:
                return hit
    except Exception:  # noqa: BLE001 - an unhashable size: made below
        key = None
    if fake:
        shape, dtype, device = _fake_meta(tensor)
    else:
        shape = None
        try:
            shape = tuple(str(s) for s in (key[0] if key is not None else tensor.shape))
            dtype, device = _dtype_text(tensor.dtype), str(tensor.device)
        except Exception:  # noqa: BLE001
            return shape, None, None, type(tensor).__name__
    parts = (shape, dtype, device, tensor_text(shape, dtype, device))
    if key is not None and shape is not None:
        if len(_TENSOR_TEXTS) > 4096:
            _TENSOR_TEXTS.clear()
        _TENSOR_TEXTS[key] = parts  # type: ignore[assignment]
    return parts


#: tracker type -> the class names of its ``__mro__``
_MRO_NAMES: dict[type, frozenset[str]] = {}


def _mro_names(t: type) -> frozenset[str]:
    names = _MRO_NAMES.get(t)
    if names is None:
        names = _MRO_NAMES[t] = frozenset(c.__name__ for c in t.__mro__)
    return names


def _named(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return type(obj).__name__
    module = getattr(obj, "__module__", None)
    if module in ("torch._C._VariableFunctions", "torch._C", "torch.functional"):
        module = "torch"
    if module and (module == "torch" or module.startswith(("torch.", "operator", "math"))):
        return f"{module}.{name}"
    return str(name)


# --------------------------------------------------------------------------------------------------------------
# one tracker -> TraceValue, dispatched on the class names of type(vt).__mro__
# --------------------------------------------------------------------------------------------------------------


def _tensor(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    fake = compat.fake_value_of(vt)
    if fake is not None:
        shape, dtype, device, text = _tensor_parts(fake, True)
    else:
        size = d.get("size")
        shape = tuple(compat.symbolic_text(s)[0] for s in size) if isinstance(size, (tuple, list)) else None
        dtype, device = _dtype_text(d.get("dtype")), (None if d.get("device") is None else str(d.get("device")))
        text = tensor_text(shape, dtype, device)
    return make_value(TraceValueKind.TENSOR, type(vt).__name__, text, _source(vt), compat.proxy_node_name(vt), shape,
                      dtype, device)


def _symnode(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    text, hint, _sym = compat.symbolic_text(d.get("sym_num"))
    kind_name = type(d.get("sym_num")).__name__
    shown = f"{kind_name} {text}" + (f" (hint {hint})" if hint is not None and str(hint) != text else "")
    return make_value(TraceValueKind.SYMBOLIC, type(vt).__name__, _cut(shown), _source(vt), compat.proxy_node_name(vt))


#: summaries of source-less constants of the plain types (LOAD_CONST makes a new tracker every time)
_CONSTANTS: dict[tuple[str, type, Any], TraceValue] = {}
_PLAIN = (int, float, str, bool, type(None), bytes)


def _constant(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    value = d.get("value")
    if d.get("source") is None and type(value) in _PLAIN:
        key = (type(vt).__name__, type(value), value)
        hit = _CONSTANTS.get(key)
        if hit is None:
            if len(_CONSTANTS) > 4096:
                _CONSTANTS.clear()
            hit = _CONSTANTS[key] = make_value(TraceValueKind.CONSTANT, type(vt).__name__, _safe_repr(value))
        return hit
    return make_value(TraceValueKind.CONSTANT, type(vt).__name__, _safe_repr(value), _source(vt))


_NULLS: dict[str, TraceValue] = {}


def _null(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    name = type(vt).__name__
    value = _NULLS.get(name)
    if value is None:
        value = _NULLS[name] = make_value(TraceValueKind.NULL, name, "NULL")
    return value


def _items_text(items: Any, depth: int, sub: Any) -> str:
    if not isinstance(items, (list, tuple)):
        return "?"
    shown = [sub(v, depth + 1).text for v in items[:MAX_ITEMS]] if depth < 2 else []
    more = len(items) - len(shown)
    if more:
        shown.append(f"… {more} more" if shown else f"{len(items)} items")
    return ", ".join(shown)


def _sequence(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    names = _mro_names(type(vt))
    items = d.get("items")
    inner = _items_text(items, depth, sub)
    if "SizeVariable" in names:
        text = f"torch.Size([{inner}])"
    elif "TupleVariable" in names:
        text = f"({inner}{',' if isinstance(items, (list, tuple)) and len(items) == 1 else ''})"
    elif "ListVariable" in names:
        text = f"[{inner}]"
    else:
        text = f"{type(vt).__name__.replace('Variable', '')}({inner})"
    return make_value(TraceValueKind.CONTAINER, type(vt).__name__, _cut(text), _source(vt))


def _dict(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    items: Any = d.get("items")  # a tracker's items: a list, a dict or anything else torch keeps there
    n = len(items) if hasattr(items, "__len__") else "?"
    return make_value(TraceValueKind.CONTAINER, type(vt).__name__, f"dict ({n} items)", _source(vt))


def _module(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    mtype = d.get("module_type")
    if mtype is None and d.get("value") is not None:
        mtype = type(d.get("value"))
    name = getattr(mtype, "__name__", "Module")
    return make_value(TraceValueKind.MODULE, type(vt).__name__, f"{name} module", _source(vt), type_name=name)


def _function(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    fn = d.get("fn", d.get("value"))
    text = _named(fn) if fn is not None else type(vt).__name__
    obj = d.get("obj")
    if obj is not None and "UserMethodVariable" in _mro_names(type(vt)):
        text = f"{text} of {sub(obj, depth + 1).text}" if depth < 2 else text
    return make_value(TraceValueKind.FUNCTION, type(vt).__name__, _cut(text), _source(vt))


def _nested_function(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    name_vt = d.get("fn_name")
    name = vars(name_vt).get("value") if name_vt is not None and not compat.is_lazy_tracker(name_vt) else None
    return make_value(TraceValueKind.FUNCTION, type(vt).__name__, _cut(str(name or "<nested function>")), _source(vt))


def _getattr(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    obj = d.get("obj")
    base = sub(obj, depth + 1).text if obj is not None and depth < 2 else "?"
    if " " in base:
        base = f"({base})"  # (Tensor[3] float32 cpu).sin
    return make_value(TraceValueKind.FUNCTION, type(vt).__name__, _cut(f"{base}.{d.get('name', '?')}"), _source(vt))


def _object(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    value = d.get("value")
    names = _mro_names(type(vt))
    if "UserDefinedClassVariable" in names or "PythonModuleVariable" in names:
        text = getattr(value, "__name__", type(value).__name__)
    else:
        text = f"{type(value).__name__} object"
    return make_value(TraceValueKind.OBJECT, type(vt).__name__, _cut(str(text)), _source(vt))


def _other(vt: Any, d: dict[str, Any], depth: int, sub: Any) -> TraceValue:
    return make_value(TraceValueKind.OTHER, type(vt).__name__, type(vt).__name__.replace("Variable", "") or "?",
                      _source(vt))


#: tracker class name -> reader; the first name of ``type(vt).__mro__`` found here decides
_READERS: dict[str, Callable[[Any, dict[str, Any], int, Any], TraceValue]] = {
    "TensorVariable": _tensor,
    "SymNodeVariable": _symnode,
    "ConstantVariable": _constant,
    "EnumVariable": _constant,
    "NullVariable": _null,
    "ConstDictVariable": _dict,
    "BaseListVariable": _sequence,
    "NNModuleVariable": _module,
    "UnspecializedNNModuleVariable": _module,
    "NestedUserFunctionVariable": _nested_function,
    "UserMethodVariable": _function,
    "BaseUserFunctionVariable": _function,
    "BuiltinVariable": _function,
    "BaseTorchVariable": _function,
    "SkipFunctionVariable": _function,
    "GetAttrVariable": _getattr,
    "UserDefinedClassVariable": _object,
    "UserDefinedObjectVariable": _object,
    "PythonModuleVariable": _object,
}

_BY_TYPE: dict[type, Callable[[Any, dict[str, Any], int, Any], TraceValue]] = {}


def _reader(t: type) -> Callable[[Any, dict[str, Any], int, Any], TraceValue]:
    reader = _BY_TYPE.get(t)
    if reader is None:
        reader = _other
        for cls in t.__mro__:
            found = _READERS.get(cls.__name__)
            if found is not None:
                reader = found
                break
        _BY_TYPE[t] = reader
    return reader


def _unrealized(vt: Any, value: Any, source: Any) -> TraceValue:
    tname = type(value).__name__
    shape = dtype = device = None
    text = tname
    if compat.torch is not None and isinstance(value, compat.torch.Tensor):
        # the real input behind the lazy tracker: its metadata, read from the tensor itself
        shape, dtype, device, text = _tensor_parts(value, False)
    elif isinstance(value, (int, float, bool, str)) or value is None:
        text = _safe_repr(value)
    elif isinstance(value, (list, tuple, dict)):
        text = f"{tname} of {len(value)}"
    elif hasattr(value, "forward") and hasattr(value, "_modules"):
        text = f"{tname} module"
    elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
        text = f"{tname} {_named(value)}"  # plain attributes of functions and classes: no user code runs
    return make_value(TraceValueKind.UNREALIZED, type(vt).__name__, _cut(text), compat.source_name(source),
                      shape=shape, dtype=dtype, device=device, type_name=tname)


def value_summary(vt: Any, depth: int = 0, sub: Any = None) -> TraceValue:
    """The summary of one variable tracker, never realizing it (see the module docstring). `sub(vt, depth)`
    summarises the trackers inside a container (default: this function)."""
    if vt is None:
        return make_value(TraceValueKind.OTHER, "None", "None")
    try:
        if compat.is_lazy_tracker(vt):
            realized, value, source = compat.lazy_state(vt)
            if realized is None:
                return _unrealized(vt, value, source)
            vt = realized
        return _reader(type(vt))(vt, vars(vt), depth, sub or value_summary)
    except Exception as exc:  # noqa: BLE001 - a reader bug costs this slot, never the compile
        return make_value(TraceValueKind.OTHER, type(vt).__name__, f"<unreadable: {type(exc).__name__}>")


#: what the cache keeps as the "realized tracker" of a lazy one not realized yet
_NOT_YET = object()


class SummaryCache:
    """Summaries of trackers kept for one attempt, keyed by identity (the tracker is held, so its id is not
    reused). A tracker's summary depends only on its type and instance fields, which Dynamo does not change for
    most trackers; containers (a list tracker is mutated in place, an iterator advances, a tuple shows items that
    may be realized later) and lazy trackers not yet realized are read every time.

    `summary` is `value_summary` (the same value) with the reader and whether its result may be kept decided once
    per tracker type (`_plan`), and a lazy tracker's cache read once: it runs at every new tracker a full trace
    recording sees."""

    _MUTABLE = frozenset({"BaseListVariable", "ConstDictVariable", "SetVariable", "IteratorVariable",
                          "DequeVariable"})

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, TraceValue, Any]] = {}
        # per tracker type: (reader, None for a lazy tracker's type; keep: True / False, or "tuple" (kept once
        # each of its items is realized); mutable: a lazy tracker realized to one is not kept)
        self._plans: dict[type, tuple[Any, bool | str, bool]] = {}

    def _plan(self, t: type) -> tuple[Any, bool | str, bool]:
        names = _mro_names(t)
        mutable = not names.isdisjoint(self._MUTABLE)
        keep: bool | str = ("tuple" if "TupleVariable" in names and "ListVariable" not in names else not mutable)
        if t is type(None):
            reader: Any = _none
        elif compat.is_lazy_tracker_type(t):
            reader = None
        else:
            reader = _reader(t)
        plan = self._plans[t] = (reader, keep, mutable)
        return plan

    def summary(self, vt: Any) -> TraceValue:
        # an entry holds its tracker, so no other object has that id while it exists: the id alone finds it
        hit = self._cache.get(id(vt))
        if hit is not None:
            state = hit[2]
            if state is False:
                return hit[1]
            realized = compat.lazy_realized_to(vt)
            if (_NOT_YET if realized is None else realized) is state:
                return hit[1]
        key = id(vt)
        t = type(vt)
        plan = self._plans.get(t)
        if plan is None:
            plan = self._plan(t)
        reader, keep, _mutable = plan
        if reader is None:
            return self._lazy(vt, key, keep)
        try:
            value: TraceValue = reader(vt, vars(vt), 0, self._sub)
        except Exception as exc:  # noqa: BLE001 - a reader bug costs this slot, never the compile
            value = make_value(TraceValueKind.OTHER, t.__name__, f"<unreadable: {type(exc).__name__}>")
        if keep is True:
            self._cache[key] = (vt, value, False)
        elif keep == "tuple":
            # a tuple tracker never changes, but an item not realized yet would be shown stale once it is
            items = vars(vt).get("items") or ()
            if not any(compat.is_lazy_tracker(i) and compat.lazy_realized_to(i) is None for i in items):
                self._cache[key] = (vt, value, False)
        return value

    def _lazy(self, vt: Any, key: int, keep: bool | str) -> TraceValue:
        """A lazy tracker: the summary of what it was realized to, else of the value and source behind it; kept
        while it stays as it was (unrealized, or realized to the same tracker, not a mutable one)."""
        shown = vt
        try:
            realized, value, source = compat.lazy_state(vt)
            if realized is None:
                out = _unrealized(vt, value, source)
            else:
                shown = realized
                out = _reader(type(realized))(realized, vars(realized), 0, self._sub)
        except Exception as exc:  # noqa: BLE001
            return make_value(TraceValueKind.OTHER, type(shown).__name__, f"<unreadable: {type(exc).__name__}>")
        if keep:
            if realized is None:
                self._cache[key] = (vt, out, _NOT_YET)
            else:
                plan = self._plans.get(type(realized)) or self._plan(type(realized))
                if not plan[2]:
                    self._cache[key] = (vt, out, realized)
        return out

    def _sub(self, vt: Any, depth: int) -> TraceValue:
        """The summary of a tracker inside a container: the cached one when there is one (a tensor on the stack
        before, say), else made at that depth (containers inside stop recursing at depth 2)."""
        hit = self._cache.get(id(vt))
        if hit is not None and hit[2] is False:
            return hit[1]
        return value_summary(vt, depth, self._sub)

    def clear(self) -> None:
        self._cache.clear()


_NONE_VALUE = TraceValue(TraceValueKind.OTHER, "None", "None")


def _none(vt: Any, d: Any, depth: int, sub: Any) -> TraceValue:
    return _NONE_VALUE


def stack_of(tx: Any, summary: Callable[[Any], TraceValue] = value_summary) -> tuple[TraceValue, ...]:
    """The symbolic value stack of `tx`, bottom first."""
    return tuple(summary(vt) for vt in compat.translator_fields(tx).get("stack", ()))


def locals_of(tx: Any, summary: Callable[[Any], TraceValue] = value_summary) -> tuple[tuple[str, TraceValue], ...]:
    """The symbolic locals of `tx` (``symbolic_locals``), in their order."""
    loc = compat.translator_fields(tx).get("symbolic_locals") or {}
    return tuple((str(name), summary(vt)) for name, vt in loc.items())


def fake_detail(name: str, vt: Any) -> FakeTensorView:
    """``fake NAME``: the fake value behind one tracker (sizes with hints, strides, dtype, device)."""
    summary = value_summary(vt)
    target = vt
    if compat.is_lazy_tracker(vt):
        realized, _value, _source = compat.lazy_state(vt)
        if realized is None:
            return FakeTensorView(name, summary, source=summary.source)
        target = realized
    fake = compat.fake_value_of(target)
    if fake is None:
        return FakeTensorView(name, summary, node=summary.node, source=summary.source)

    def sizes(values: Any) -> tuple[SizeView, ...]:
        out = []
        for s in values:
            text, hint, sym = compat.symbolic_text(s)
            out.append(SizeView(text, hint, sym))
        return tuple(out)

    shape: tuple[SizeView, ...] = ()
    stride: tuple[SizeView, ...] = ()
    dtype = device = None
    grad = None
    if summary.kind is TraceValueKind.TENSOR:
        try:
            shape = sizes(fake.shape)
            stride = sizes(fake.stride())
            dtype, device = _dtype_text(fake.dtype), str(fake.device)
            grad = bool(fake.requires_grad)
        except Exception:  # noqa: BLE001
            pass
    else:
        shape = sizes([fake])
    return FakeTensorView(name, summary, shape, stride, dtype, device, grad, summary.node, summary.source,
                          type(fake).__name__)


# --------------------------------------------------------------------------------------------------------------
# the graph and guards so far, the inlining chain
# --------------------------------------------------------------------------------------------------------------


def _target_text(node: Any) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    return _named(target)


def _node_value(node: Any) -> str:
    meta = node.meta if isinstance(getattr(node, "meta", None), dict) else {}
    fake = meta.get("example_value")
    if fake is None:
        return ""
    if compat.torch is not None and isinstance(fake, compat.torch.Tensor):
        return tensor_text(*_fake_meta(fake))
    if hasattr(fake, "node"):
        text, hint, _sym = compat.symbolic_text(fake)
        return f"{type(fake).__name__} {text}" + (f" (hint {hint})" if hint is not None and str(hint) != text else "")
    if isinstance(fake, (tuple, list)):
        return f"{type(fake).__name__} of {len(fake)}"
    return type(fake).__name__


def graph_nodes(output: Any, new: set[str] | frozenset[str] = frozenset()) -> tuple[tuple[TraceNode, ...], int]:
    """(the FX nodes traced so far, newest `MAX_LISTED` kept; their total count)."""
    graph = compat.fx_graph_of(output)
    nodes = list(graph.nodes)
    out = tuple(TraceNode(str(n.name), str(n.op), _target_text(n), _node_value(n), str(n.name) in new)
                for n in nodes[-MAX_LISTED:])
    return out, len(nodes)


def guards_list(output: Any, new_count: int = 0) -> tuple[tuple[TraceGuard, ...], int]:
    """(the guards installed so far, oldest first, the newest `MAX_LISTED`; total); the last `new_count` marked."""
    guards = list(compat.guards_of(output))
    total = len(guards)
    shown = guards[-MAX_LISTED:]
    first_new = len(shown) - new_count
    out = []
    for i, g in enumerate(shown):
        kind, source = compat.guard_fields(g)
        out.append(TraceGuard(kind, source, i >= first_new))
    return tuple(out), total


def newest_node_names(output: Any, count: int) -> tuple[str, ...]:
    """The names of the `count` newest FX nodes (oldest of them first)."""
    if count <= 0:
        return ()
    graph = compat.fx_graph_of(output)
    names = []
    for node in reversed(graph.nodes):
        names.append(str(node.name))
        if len(names) >= count:
            break
    return tuple(reversed(names))


def newest_guards(output: Any, count: int) -> tuple[TraceGuard, ...]:
    """The `count` newest guards (oldest of them first)."""
    if count <= 0:
        return ()
    out = []
    for g in compat.guard_set_reversed(compat.guards_of(output)):
        kind, source = compat.guard_fields(g)
        out.append(TraceGuard(kind, source, True))
        if len(out) >= count:
            break
    return tuple(reversed(out))


def source_line(filename: str, line: int | None) -> str | None:
    """The text of `line` in `filename` (stripped), or None."""
    if line is None:
        return None
    text = linecache.getline(filename, line)
    return text.strip() or None


def chain_of(tx: Any, index_of: Callable[[Any], tuple[int, str, int | None, int | None]]) -> tuple[TraceFrame, ...]:
    """The inlining chain of `tx`, outermost first. `index_of(t)` gives (instruction index, opname, user offset,
    line) of the instruction translator `t` is at."""
    frames = []
    t = tx
    while t is not None:
        fields = compat.translator_fields(t)
        code = fields["f_code"]  # every instruction translator sets f_code when it is made
        index, opname, offset, line = index_of(t)
        frames.append(TraceFrame(int(fields.get("inline_depth", 0) or 0), code.co_name, code.co_filename,
                                 code.co_firstlineno, line, index, opname, offset))
        t = fields.get("parent")
    return tuple(reversed(frames))
