"""What Dynamo imposes, in one place: the names it gives what it generates, the shape of its graph-break
reasons, and its guard taxonomy.

Dynamo's choices that the engine reads in several places live here once, so a torch release that changes one
changes one line: the names of resume functions (``torch_dynamo_resume_in_<fn>_at_<line>``), of their arguments
(``___stack<k>`` for the original frame's value stack, ``__nested_*`` for its own bookkeeping), of the globals
generated code calls (``__compiled_fn_*``, ``__resume_at_*``); how a graph-break reason is laid out (a head,
then ``Explanation:`` and ``Hint:`` lines); which guard types pin a value, which a shape or a type, and which
``GuardFilterEntry.guard_type`` names stand for a leaf of the guard tree (torch's ``guard_filter_fn`` sees the
Python guard's create-function name, the tree shows the C++ leaf: ``CONSTANT_MATCH`` against ``EQUALS_MATCH``).

Pure functions over strings and code objects: no torch import (torch's private APIs are `compat`'s). Verified
on torch 2.13.0, 2.14.1 and 2.15.0.
"""

from __future__ import annotations

import re
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
