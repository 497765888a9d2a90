"""Bounded summaries of Python objects: no tensor data is copied and every repr is cut to `MAX_REPR` characters."""

from __future__ import annotations

import re
import reprlib
import sys
import types
import weakref
from itertools import islice
from typing import Any

from .facts import short_graph_name
from .model import ValueSummary

#: Longest repr kept for any value (characters).
MAX_REPR = 120

class _SummaryRepr(reprlib.Repr):
    """`reprlib.Repr` that writes a tensor inside a container as its summary (``Tensor[2, 3] float32 cpu``):
    torch's own repr formats the values, which costs far more than the rest of a stop (hundreds of µs for a graph
    output tuple) and, on a GPU, copies them to the host."""

    def repr1(self, x: Any, level: int) -> str:
        tensor = _tensor_parts(x)
        if tensor is not None:
            return tensor[0]
        return super().repr1(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        """A dict's first `maxdict` items in insertion order, as ``repr`` lists them (`reprlib` sorts every key
        first: a module's ``_modules`` read ``'0', '1', '10', '100'`` and cost a sort of all of them per stop)."""
        n = len(x)
        if n == 0:
            return "{}"
        if level <= 0:
            return "{...}"
        repr1 = self.repr1
        pieces = [f"{repr1(key, level - 1)}: {repr1(val, level - 1)}" for key, val in islice(x.items(), self.maxdict)]
        if n > self.maxdict:
            pieces.append(self.fillvalue)
        return "{" + ", ".join(pieces) + "}"


_repr = _SummaryRepr()
_repr.maxstring = MAX_REPR
_repr.maxother = MAX_REPR
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6
_repr.maxlevel = 3

NULL = ValueSummary(type_name="NULL", text="NULL", is_null=True)


class NullSlot:
    """What ``__stack__`` holds for a NULL value-stack slot (not None: None is a real value on the stack)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<NULL>"

    def __bool__(self) -> bool:
        return False


#: The one `NullSlot` (compare with ``is``).
NULL_SLOT = NullSlot()
UNKNOWN = ValueSummary(type_name="?", text="<unknown>", unknown=True)

#: Compiled-graph functions Dynamo installed as ``__compiled_fn_*`` globals → their label. Their own repr names the
#: FX module's method (``<function forward at …>``), which reads as the user's original ``forward``.
_GRAPH_LABELS: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


def label_graph(fn: Any, global_name: str, compile_id: str) -> None:
    """Summaries of `fn` read ``<graph __compiled_fn_2 of 0/0>`` from now on (the uuid suffix of the global
    name dropped). Called when Dynamo installs the global (``OutputGraph.install_global_unsafe``)."""
    short = short_graph_name(global_name)
    try:
        _GRAPH_LABELS[fn] = f"<graph {short} of {compile_id}>"
    except TypeError:  # not weak-referenceable: keep its own repr
        pass


def cut(text: str, limit: int = MAX_REPR) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks the cut)."""
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut_pair(old: str, new: str, limit: int = 160, context: int = 24) -> tuple[str, str]:
    """`old` and `new` on one line each, at most about `limit` characters, both cut around their first difference.

    The common head and tail are kept to `context` characters beside the change and replaced by an ellipsis
    beyond it, so ``check_tensor(..., size=[2, 8], ...)`` → ``…size=[2, None]…`` shows what changed. Two
    different texts never come out the same: each shown part starts before the first differing character.
    Returns the texts unchanged (on one line) when both fit.
    """
    old, new = old.replace("\n", "\\n"), new.replace("\n", "\\n")
    if len(old) <= limit and len(new) <= limit:
        return old, new
    head = 0
    for a, b in zip(old, new):
        if a != b:
            break
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - context)

    def one(text: str) -> str:
        end = min(len(text), len(text) - tail + context)
        part = text[start:end]
        if len(part) > limit:
            part = part[: limit - 1]
            end = -1
        return ("…" if start else "") + part + ("…" if end != len(text) else "")

    return one(old), one(new)


def type_name(value: Any) -> str:
    return type(value).__name__


def summarize(value: Any, null_sentinel: Any = None) -> ValueSummary:
    """Summarise `value` without copying it.

    Tensors become ``"Tensor[3, 4] float32 cpu"`` with shape/dtype/device/requires_grad fields (read from
    metadata only: no ``.item()``, no device sync). Everything else gets a `reprlib` repr cut to `MAX_REPR`;
    a repr that raises is shown as ``<TypeName (repr failed: Error)>``.

    Args:
        value: any object.
        null_sentinel: the object that stands for a NULL stack slot (``NULL_STACK_VALUE``), if any.
    """
    if null_sentinel is not None and value is null_sentinel:
        return NULL
    tensor = _tensor_summary(value)
    if tensor is not None:
        return tensor
    if type(value) is types.FunctionType:
        label = _GRAPH_LABELS.get(value)
        if label is not None:
            return ValueSummary(type_name="function", text=label, identity=id(value))
    module = _module_summary(value)
    if module is not None:
        return ValueSummary(type_name=type_name(value), text=cut(module), identity=id(value))
    owner = getattr(value, "__self__", None) if isinstance(value, _BOUND_TYPES) else None
    if owner is not None and not isinstance(owner, types.ModuleType):
        # a bound method (``y.sum``, ``t.item``): its name and a summary of its object, not a repr with an address
        text = f"method {getattr(value, '__name__', '?')} of {summarize(owner).text}"
        return ValueSummary(type_name=type_name(value), text=cut(text), identity=id(value))
    try:
        text = _repr.repr(value)
    except Exception as exc:  # noqa: BLE001 - user reprs can raise anything
        text = f"<{type_name(value)} (repr failed: {type(exc).__name__})>"
    return ValueSummary(type_name=type_name(value), text=cut(one_line(text)), identity=id(value))


#: the bound-method types whose ``__self__`` is the object they act on (a builtin function's is its module)
_BOUND_TYPES = (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)

#: a line break and the indentation after it, in a multi-line repr
_LAYOUT = re.compile(r"\s*\n\s*")


def one_line(text: str) -> str:
    """A multi-line repr (a table, a config, a tensor's rows) as one line with its layout folded to single
    spaces, rather than with escaped line breaks."""
    return _LAYOUT.sub(" ", text)


def _module_summary(value: Any) -> str | None:
    """An ``nn.Module`` as its class, its mode and its direct children (``Net eval mode: blocks=Sequential,
    head=Linear``): its own repr prints the whole module tree, thousands of lines for a real model. Reads
    ``training`` and ``_modules`` only (no parameter is touched)."""
    kinds = _TORCH_TYPES or _torch_types()
    if kinds is None or not isinstance(value, kinds[1]):
        return None
    try:
        children = vars(value).get("_modules") or {}
        parts = [f"{name}={type(child).__name__}" for name, child in list(children.items())[:12]]
        if len(children) > 12:
            parts.append(f"… {len(children)} children")
        mode = "train mode" if vars(value).get("training", True) else "eval mode"
        return f"{type_name(value)} {mode}" + (": " + ", ".join(parts) if parts else "")
    except Exception:  # noqa: BLE001 - an exotic module: its repr then
        return None


def tensor_head(type_name: str, dims: list[str] | None) -> str:
    """``Tensor[3, 4]`` from a tensor's type name and its sizes as text (``s0`` for a symbol; None: unknown,
    ``Tensor[?]``); a 0-d tensor (one number, as ``y.sum()`` makes) is ``Tensor[] (0-d)``."""
    if dims is None:
        return f"{type_name}[?]"
    return f"{type_name}[{', '.join(dims)}]" if dims else f"{type_name}[] (0-d)"


#: (torch.Tensor, torch.nn.Module) once torch is imported (summaries never import it themselves)
_TORCH_TYPES: tuple[Any, Any] | None = None


def _torch_types() -> tuple[Any, Any] | None:
    global _TORCH_TYPES
    if _TORCH_TYPES is None:
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "Tensor") or not hasattr(getattr(torch, "nn", None), "Module"):
            return None
        _TORCH_TYPES = (torch.Tensor, torch.nn.Module)
    return _TORCH_TYPES


def _tensor_parts(value: Any) -> tuple[str, tuple[int, ...], str, str, bool] | None:
    """(text, shape, dtype, device, requires_grad) of a tensor, else None: metadata only."""
    kinds = _TORCH_TYPES or _torch_types()
    if kinds is None or not isinstance(value, kinds[0]):
        return None
    try:
        shape = tuple(int(s) for s in value.shape)
        read = True
    except Exception:  # noqa: BLE001 - symbolic or exotic shapes
        shape, read = (), False
    dtype = str(value.dtype).removeprefix("torch.")
    device = str(value.device)
    requires_grad = bool(value.requires_grad)
    name = type(value).__name__
    head = tensor_head(name, [str(s) for s in shape]) if read else f"{name}[]"
    return f"{head} {dtype} {device}" + (" grad" if requires_grad else ""), shape, dtype, device, requires_grad


def _tensor_summary(value: Any) -> ValueSummary | None:
    parts = _tensor_parts(value)
    if parts is None:
        return None
    text, shape, dtype, device, requires_grad = parts
    return ValueSummary(
        type_name=type(value).__name__,
        text=text,
        shape=shape,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
        identity=id(value),
    )
