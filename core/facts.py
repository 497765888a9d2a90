"""What Dynamo imposes, in one place: the names it gives what it generates, the shape of its graph-break
reasons, and its guard taxonomy.

Dynamo's choices that the engine reads in several places live here once, so a torch release that changes one
changes one line: the names of resume functions (``torch_dynamo_resume_in_<fn>_at_<line>``), of their arguments
(``___stack<k>`` for the original frame's value stack, ``__nested_*`` for its own bookkeeping), of the globals
generated code calls (``__compiled_fn_*``, ``__resume_at_*``); how a graph-break reason is laid out (a head,
then ``Explanation:`` and ``Hint:`` lines); which guard types pin a value, which a shape or a type, and which
``GuardFilterEntry.guard_type`` names stand for a leaf of the guard tree (torch's ``guard_filter_fn`` sees the
Python guard's create-function name, the tree shows the C++ leaf: ``CONSTANT_MATCH`` against ``EQUALS_MATCH``).

Pure functions over strings and code objects: no torch import (torch's private APIs are `compat`'s). The guard
filter types were checked against the ``GuardFilterEntry`` records torch hands a ``guard_filter_fn`` on torch
2.13.0 and 2.14.1 (``tests/core/test_facts.py`` does it on every lane); the names and the reason layout are those
the modules that use them were verified with (2.13.0 to 2.15.0).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType

# --------------------------------------------------------------------------------------------------------------
# Names Dynamo gives what it generates
# --------------------------------------------------------------------------------------------------------------

#: ``co_name`` of a resume function: ``torch_dynamo_resume_in_<function>_at_<line>``.
RESUME_PREFIX = "torch_dynamo_resume_in_"
#: A resume function's arguments that were on the original frame's value stack at the break (``___stack0``).
STACK_ARG_PREFIX = "___stack"
#: A resume function's arguments Dynamo keeps for itself (``__nested_resume_fns``, ``__nested_frame_values``).
BOOKKEEPING_PREFIX = "__nested"
#: The global generated code calls an FX graph by (``__compiled_fn_1_<uuid>``).
COMPILED_FN_PREFIX = "__compiled_fn"
#: The global generated code calls a resume function by (``__resume_at_30_2``).
RESUME_GLOBAL_PREFIX = "__resume_at"


def is_resume_name(name: str) -> bool:
    """True for a resume function's ``co_name`` (or a qualified name ending in one)."""
    return name.rsplit(".", 1)[-1].startswith(RESUME_PREFIX)


def resume_origin_name(name: str) -> str:
    """The function a resume function continues, from its name (``torch_dynamo_resume_in_forward_at_26`` →
    ``"forward"``); `name` unchanged when it is no resume function's."""
    short = name.rsplit(".", 1)[-1]
    if not short.startswith(RESUME_PREFIX):
        return name
    return short.removeprefix(RESUME_PREFIX).rsplit("_at_", 1)[0]


def is_stack_arg(name: str) -> bool:
    """True for a resume function's argument that carries a value-stack slot (``___stack0``)."""
    return name.startswith(STACK_ARG_PREFIX)


def resume_arguments(code: CodeType) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A resume function's parameters, split by what they carry: (value-stack slots ``___stack*`` bottom first,
    the original frame's locals carried over, Dynamo's bookkeeping ``__nested_*``), each in argument order."""
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    stack = tuple(n for n in names if n.startswith(STACK_ARG_PREFIX))
    bookkeeping = tuple(n for n in names if n.startswith(BOOKKEEPING_PREFIX))
    carried = tuple(n for n in names if n not in stack and n not in bookkeeping)
    return stack, carried, bookkeeping


#: The locals generated code keeps a graph's output tuple in (``graph_out_0``), and its temporaries (``tmp_5``).
GRAPH_OUT_PREFIX = "graph_out_"
TEMP_PREFIX = "tmp_"


def is_graph_output(name: str) -> bool:
    """True for the local generated code holds a graph's output tuple in (``graph_out_0``)."""
    return name.startswith(GRAPH_OUT_PREFIX)


def is_graph_global(name: str) -> bool:
    """True for the global generated code calls an FX graph by."""
    return name.startswith(COMPILED_FN_PREFIX)


#: A graph's global with its uuid tail (``__compiled_fn_2_17e8b037_93a1_4c1e_8d6f_0a1b2c3d4e5f``).
_GRAPH_GLOBAL = re.compile(r"^(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")


def short_graph_name(name: str) -> str:
    """``"__compiled_fn_2_17e8b037_..."`` → ``"__compiled_fn_2"`` (the uuid tail only makes the name unique)."""
    m = _GRAPH_GLOBAL.match(name)
    return m.group(1) if m else name


def is_resume_global(name: str) -> bool:
    """True for the global generated code calls a resume function by."""
    return name.startswith(RESUME_GLOBAL_PREFIX)


#: How Dynamo names a module its generated code imports (``__import_torch_dot__dynamo_dot_utils``).
IMPORT_PREFIX = "__import_"


def readable_import(name: str) -> str:
    """``__import_torch_dot__dynamo_dot_utils`` → ``torch._dynamo.utils``: the module a mangled global stands for."""
    return name[len(IMPORT_PREFIX):].replace("_dot_", ".")


def readable_global(name: str) -> str:
    """Dynamo's mangled globals as the object they stand for (``__import_torch_dot__dynamo_dot_utils`` →
    ``torch._dynamo.utils``, ``__builtins_dict___1`` → ``builtins``, a graph's global without its uuid); other
    names unchanged."""
    if name.startswith(IMPORT_PREFIX):
        return readable_import(name)
    if name.startswith("__builtins_dict__"):
        return "builtins"
    if is_graph_global(name):
        return short_graph_name(name)
    return name


def is_generated_code_global(name: str) -> bool:
    """True for a global only Dynamo-generated code loads: a graph, a resume function, or Dynamo's own module
    (``__import_torch_dot__dynamo...``, its bookkeeping calls)."""
    return is_graph_global(name) or is_resume_global(name) or name.startswith(IMPORT_PREFIX + "torch_dot__dynamo")


def callable_name(name: str) -> str:
    """A name for the compiled callable in the code a user writes: ``model`` for a module's ``forward``, ``fn``
    for a resume function or a name that is no identifier, else the function's own name."""
    short = name.rsplit(".", 1)[-1]
    if short == "forward":
        return "model"
    if short.startswith(RESUME_PREFIX):
        return "fn"
    return short if short.isidentifier() else "fn"


# --------------------------------------------------------------------------------------------------------------
# Graph-break reasons
# --------------------------------------------------------------------------------------------------------------

#: torch writes a reason's head, then (since 2.7) an ``Explanation:`` paragraph and ``Hint:`` lines.
_EXPLANATION = re.compile(r"\n\s*Explanation:")
_NOTE_HEADS = ("Explanation:", "Hint:")


@lru_cache(maxsize=1024)
def parse_break_reason(reason: str) -> tuple[str, tuple[str, ...]]:
    r"""torch's graph-break reason as (head, notes): the text before ``Explanation:`` with its whitespace
    collapsed to one line (``"Unsupported Tensor.item() call with capture_scalar_outputs=False"``), and the
    ``Explanation: ...`` and ``Hint: ...`` lines, stripped, in order.

    >>> parse_break_reason("Unsupported Tensor.item() call\n  Explanation: Dynamo ...\n  Hint: Set ...")
    ('Unsupported Tensor.item() call', ('Explanation: Dynamo ...', 'Hint: Set ...'))
    """
    head = _EXPLANATION.split(reason, maxsplit=1)[0]
    notes = tuple(s for s in (line.strip() for line in reason.splitlines()) if s.startswith(_NOTE_HEADS))
    return " ".join(head.split()), notes


#: torch's own advice in its texts (guard notes, recompile reasons): ``torch._dynamo.config.X = Y``.
_CONFIG_SUGGESTION = re.compile(r"torch\._dynamo\.config\.(\w+)\s*=\s*(\w+)")


def config_suggestions(text: str) -> list[str]:
    """The ``torch._dynamo.config.X = Y`` lines torch suggests in `text` (a guard's ``HINT:`` note, a reason),
    in order, spelled alike (``torch._dynamo.config.allow_unspec_int_on_nn_module = True``)."""
    return [f"torch._dynamo.config.{name} = {value}" for name, value in _CONFIG_SUGGESTION.findall(text)]


# --------------------------------------------------------------------------------------------------------------
# How torch writes a leaf guard's code parts
# --------------------------------------------------------------------------------------------------------------

#: torch's ``TENSOR_MATCH`` code part (``torch._dynamo.guards.get_tensor_guard_code_part``, the same on torch
#: 2.13.0 to 2.15.0): ``check_tensor(SOURCE, CLASS, DispatchKeySet(KEYS), DTYPE, device=INDEX,
#: requires_grad=BOOL, size=[...], stride=[...])``, ``None`` for a dynamic dimension.
_TENSOR_CHECK = re.compile(
    r"^check_tensor\((?P<source>.*), (?P<cls>[\w.]+), DispatchKeySet\((?P<keys>[^)]*)\), (?P<dtype>torch\.\w+), "
    r"device=(?P<device>[^,]+), requires_grad=(?P<rg>\w+), size=\[(?P<size>[^\]]*)\], "
    r"stride=\[(?P<stride>[^\]]*)\]\)$"
)


@dataclass(frozen=True)
class TensorCheck:
    """A ``TENSOR_MATCH`` code part, read (`tensor_check`).

    Attributes:
        source: the guarded tensor as torch writes it (``"L['x']"``).
        cls: its class (``"Tensor"``, ``"torch.nn.parameter.Parameter"``).
        keys: the dispatch keys, comma-separated (``"CPU, BackendSelect, ADInplaceOrView, AutogradCPU"``).
        dtype: ``"torch.float32"``.
        device: the device index as written (``"None"`` on the CPU, ``"0"``).
        requires_grad: what the guard expects.
        size_text, stride_text: the lists as written, without brackets (``"2, None"``).
    """

    source: str
    cls: str
    keys: str
    dtype: str
    device: str
    requires_grad: bool
    size_text: str
    stride_text: str

    @property
    def size(self) -> tuple[int | None, ...]:
        """Each dimension's size, None where it is dynamic; () for a 0-d tensor."""
        return _dims(self.size_text)

    @property
    def stride(self) -> tuple[int | None, ...]:
        """Each dimension's stride, None where it is dynamic."""
        return _dims(self.stride_text)


def _dims(text: str) -> tuple[int | None, ...]:
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    return tuple(int(p) if p.lstrip("-").isdigit() else None for p in parts)


def tensor_check(code: str) -> TensorCheck | None:
    """`code` (one code part of a ``TENSOR_MATCH`` leaf) read as a `TensorCheck`; None when it is not one."""
    m = _TENSOR_CHECK.match(code)
    if m is None:
        return None
    return TensorCheck(m["source"], m["cls"], m["keys"], m["dtype"], m["device"], m["rg"] == "True", m["size"],
                       m["stride"])


def tensor_check_in(parts: Iterable[str]) -> TensorCheck | None:
    """The first of a leaf's code parts that reads as a `TensorCheck`, if any."""
    for part in parts:
        found = tensor_check(part)
        if found is not None:
            return found
    return None


#: ``___check_type_id(L['x'], 140217489390816)`` / ``___check_obj_id(...)``: the number is an object's address in
#: the compiling process (torch's ``TYPE_MATCH`` and ``ID_MATCH`` code parts).
_OBJECT_ID_ARG = re.compile(r"(___check_(?:type|obj)_id\([^,()]+), \d+\)")


def without_object_ids(code: str) -> str:
    """`code` with the addresses in its ``___check_type_id`` / ``___check_obj_id`` calls written as ``…``: they
    differ in every process, and the ``type=<class 'int'>`` torch writes after them says what they stand for."""
    return _OBJECT_ID_ARG.sub(r"\1, …)", code) if "___check_" in code else code


#: torch's ``TYPE_MATCH`` code part: ``___check_type_id(L['x'], 140217489390816), type=<class 'int'>``.
_TYPE_CHECK = re.compile(r"(?P<check>___check_type_id\([^()]*\)), type=<class '(?P<type>[^']+)'>")


def type_check(code: str) -> tuple[str, str] | None:
    """(the ``___check_type_id(...)`` call, the type's qualified name) of a ``TYPE_MATCH`` code part
    (``("___check_type_id(L['x'], 9412...)", "int")``); None for any other code."""
    found = _TYPE_CHECK.fullmatch(code.strip())
    return (found["check"], found["type"]) if found is not None else None


# --------------------------------------------------------------------------------------------------------------
# Guard taxonomy: what a leaf guard pins, and the GuardFilterEntry types that stand for it
# --------------------------------------------------------------------------------------------------------------

#: Leaf types that compare the guarded value with the constant Dynamo traced (``L['n'] == 3``): Dynamo specialised
#: on the value. What a guard on it expects can be read off its code.
CONSTANT_GUARDS: frozenset[str] = frozenset({"EQUALS_MATCH", "TRUE_MATCH", "FALSE_MATCH", "NONE_MATCH", "NOT_NONE"})

#: Leaf types that pin a value Dynamo may have baked into the FX graph or the generated code: the constant guards,
#: and identity and version checks (the same object, the same dict contents, the same closure or function).
PINNING_GUARDS: frozenset[str] = CONSTANT_GUARDS | frozenset(
    {"ID_MATCH", "DICT_VERSION", "CLOSURE_MATCH", "FUNCTION_MATCH"})

#: Leaf types that pin a shape, length, type or key set the graph was traced for.
SHAPE_GUARDS: frozenset[str] = frozenset(
    {"TENSOR_MATCH", "LENGTH_CHECK", "DICT_LENGTH", "TUPLE_ITERATOR_LEN", "TYPE_MATCH", "DICT_CONTAINS",
     "DICT_KEYS_MATCH", "MAPPING_KEYS_MATCH", "NO_HASATTR", "HASATTR"})

#: ``GuardFilterEntry.guard_type`` / ``derived_guard_types`` names behind a constant leaf. torch's filter sees the
#: Python guard's create-function name, not the C++ leaf's: an int compared with ``==`` comes as ``CONSTANT_MATCH``
#: with ``EQUALS_MATCH`` derived, a bool as ``BOOL_MATCH``, None as ``NONE_MATCH`` (VERIFIED torch 2.13: dropping
#: only one of a ``CONSTANT_MATCH``/``EQUALS_MATCH`` pair of one source keeps the leaf).
CONSTANT_FILTER_TYPES: tuple[str, ...] = ("BOOL_MATCH", "CONSTANT_MATCH", "EQUALS_MATCH", "FALSE_MATCH",
                                          "NONE_MATCH", "NOT_NONE", "NOT_NONE_MATCH", "TRUE_MATCH")

#: What a ``guard_filter_fn`` a user writes names for a constant leaf (the two types torch uses for ints and
#: strings, torch-internals §15).
CONSTANT_SNIPPET_TYPES: tuple[str, ...] = ("CONSTANT_MATCH", "EQUALS_MATCH")

#: Root ("ambient") leaves and the filter types that create them (their filter entries are named ``""``).
ROOT_FILTER_TYPES: dict[str, tuple[str, ...]] = {
    "GLOBAL_STATE": ("GLOBAL_STATE",),
    "TORCH_FUNCTION_MODE_STACK": ("TORCH_FUNCTION_STATE",),
    "DEFAULT_DEVICE": ("DEFAULT_DEVICE",),
}

#: Other leaves whose filter entries go by another name than the leaf's (VERIFIED torch 2.13: a tuple's length
#: check comes as ``SEQUENCE_LENGTH``, a key absent from a dict as ``DICT_NOT_CONTAINS``, and the length check of
#: a dict global (``if summary:`` on an empty dict: the leaf ``DICT_LENGTH``) as ``SEQUENCE_LENGTH`` too; a filter
#: leaving that entry out removes the leaf, and the entry then serves a non-empty dict with the empty one's branch).
_OTHER_FILTER_TYPES: dict[str, tuple[str, ...]] = {
    "DICT_CONTAINS": ("DICT_CONTAINS", "DICT_NOT_CONTAINS"),
    "DICT_LENGTH": ("DICT_LENGTH", "SEQUENCE_LENGTH"),
    "LENGTH_CHECK": ("LENGTH_CHECK", "SEQUENCE_LENGTH"),
}

#: Leaves that are part of another guard's filter entry, so no filter drops them alone (VERIFIED torch 2.13: the
#: dynamic-dimension marking check of a tensor is built by its ``TENSOR_MATCH`` entry; torch-internals §15).
PART_OF_ENTRY: dict[str, str] = {
    "DIMENSION_DYNAMIC_MARKING_GUARD": "TENSOR_MATCH",
}

#: The filter type of every symbolic-shape guard of an entry (they are one epilogue lambda guard in the tree).
SHAPE_ENV_FILTER_TYPE = "SHAPE_ENV"


def filter_types(guard_type: str, source: str, code: tuple[str, ...] = (), *,
                 epilogue: bool = False) -> tuple[str, ...] | None:
    """The ``GuardFilterEntry.guard_type`` (or ``derived_guard_types``) names that stand for one leaf of the guard
    tree (`guard_type` on `source`, its code `code`): what a guard filter must leave out to drop it. None when no
    filter entry stands for it alone: a root lambda guard Dynamo adds itself, or a leaf that is part of another
    guard's entry (`PART_OF_ENTRY`)."""
    if guard_type in PART_OF_ENTRY:
        return None
    if epilogue:
        return (SHAPE_ENV_FILTER_TYPE,)
    if source == "L":
        types = ROOT_FILTER_TYPES.get(guard_type)
        if types is None and guard_type == "LAMBDA_GUARD" and "saved_tensors_hooks" in " ".join(code):
            types = ("AUTOGRAD_SAVED_TENSORS_HOOKS",)
        return types
    if guard_type in CONSTANT_GUARDS:
        return CONSTANT_FILTER_TYPES
    return _OTHER_FILTER_TYPES.get(guard_type, (guard_type,))


def snippet_types(guard_type: str, types: tuple[str, ...]) -> tuple[str, ...]:
    """The filter types a ``guard_filter_fn`` the user writes names for a leaf whose filter types are `types`."""
    return CONSTANT_SNIPPET_TYPES if guard_type in CONSTANT_GUARDS else types
