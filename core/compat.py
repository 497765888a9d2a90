"""Every private torch API and every Python-version check dynadbg relies on, in one place.

Each name records the torch and Python versions it was verified on. A missing API disables the feature that needs
it: `FEATURES` says which are available and `missing_features()` gives the messages a front end shows at start-up;
nothing here raises at import time.

Verified on: Python 3.11.7 with torch 2.13.0+cpu (see ../shared/notes/torch-internals.md for the facts).
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType
from typing import Any, Callable

# --------------------------------------------------------------------------------------------------------------
# Python versions
# --------------------------------------------------------------------------------------------------------------

PY311 = sys.version_info[:2] == (3, 11)
PY312_PLUS = sys.version_info >= (3, 12)
PY313_PLUS = sys.version_info >= (3, 13)
#: Tracing back end: settrace + f_trace_opcodes on 3.11, sys.monitoring on 3.12+ (torch-internals §8).
USE_SYS_MONITORING = PY312_PLUS
#: On 3.11 a frame paused in a trace function exposes its real stack top, and torch clamps the requested depth
#: to it, so reading ``co_stacksize`` slots gives exactly the live stack (torch-internals §7).
STACKTOP_IS_EXACT = PY311

# --------------------------------------------------------------------------------------------------------------
# torch (imported lazily: `import dynadbg` must stay cheap and must not fail without torch)
# --------------------------------------------------------------------------------------------------------------

FEATURES: dict[str, str | None] = {}
"""feature name -> None when available, else the reason it is disabled."""


def _probe(name: str, fn: Callable[[], Any]) -> Any:
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - any failure means the API is not there
        FEATURES[name] = f"{name} disabled: {type(exc).__name__}: {exc}"
        return None
    FEATURES[name] = None
    return value


def missing_features() -> list[str]:
    """Messages for the features this torch lacks (empty when everything was found)."""
    load()
    return [msg for msg in FEATURES.values() if msg]


_loaded = False

torch: Any = None
eval_frame_c: Any = None           # torch._C._dynamo.eval_frame
convert_frame: Any = None          # torch._dynamo.convert_frame
NULL_STACK_VALUE: Any = object()   # replaced by torch's sentinel in load()


def load() -> None:
    """Import torch and detect the private APIs. Idempotent; call on the worker thread before first use."""
    global _loaded, torch, eval_frame_c, convert_frame, NULL_STACK_VALUE
    if _loaded:
        return
    _loaded = True
    import torch as _torch
    import torch._dynamo  # noqa: F401
    import torch._dynamo.convert_frame as _cf

    torch = _torch
    convert_frame = _cf
    eval_frame_c = _probe("eval_frame", lambda: _torch._C._dynamo.eval_frame)
    NULL_STACK_VALUE = _probe("value stack", lambda: _torch._C._dynamo.eval_frame.NULL_STACK_VALUE) or NULL_STACK_VALUE
    _probe("value stack", lambda: _torch._C._dynamo.eval_frame._get_frame_value_stack_with_depth)
    _probe("debugger callback", lambda: _torch._C._dynamo.eval_frame.set_bytecode_debugger_callback)
    _probe("bytecode hook", lambda: _cf.register_bytecode_hook)
    _probe("cache entries", lambda: _torch._dynamo.eval_frame._debug_get_cache_entry_list)
    _probe("compile stop", lambda: _cf.wrap_guarded_code)
    _probe("recompile stop", lambda: _cf.CatchErrorsWrapper.__call__)
    _probe("reset code", lambda: _torch._C._dynamo.eval_frame.reset_code)


# --------------------------------------------------------------------------------------------------------------
# Value stack and frames — torch 2.13.0, Python 3.11.7 (3.12/3.13: issue 6)
# --------------------------------------------------------------------------------------------------------------


def frame_value_stack(frame: FrameType, depth: int) -> list[Any]:
    """The bottom `depth` slots of `frame`'s value stack (NULL slots are `NULL_STACK_VALUE`).

    Rests on ``torch._C._dynamo.eval_frame._get_frame_value_stack_with_depth`` (torch 2.13; read-only). On 3.11,
    torch clamps `depth` to the frame's real stack top while a trace function runs in it.
    """
    return eval_frame_c._get_frame_value_stack_with_depth(frame, depth)


def set_debugger_callback(fn: Callable[[CodeType], None] | None) -> Callable[[CodeType], None] | None:
    """Install `fn` as the callback torch calls before any Dynamo-generated code runs; returns the previous one.

    Rests on ``torch._C._dynamo.eval_frame.set_bytecode_debugger_callback`` (process-global, torch 2.13).
    """
    prev = eval_frame_c.get_bytecode_debugger_callback()
    eval_frame_c.set_bytecode_debugger_callback(fn)
    return prev


def cache_entries(code: CodeType) -> list[Any]:
    """The cache entries of an original code object, newest first (``_debug_get_cache_entry_list``)."""
    return torch._dynamo.eval_frame._debug_get_cache_entry_list(code)


def reset_code(code: CodeType) -> None:
    """Drop every cache entry of one original code object (``torch._C._dynamo.eval_frame.reset_code``)."""
    eval_frame_c.reset_code(code)


def locals_to_fast(frame: FrameType) -> None:
    """Write ``frame.f_locals`` edits back into the frame's fast locals (3.11/3.12; 3.13 writes through)."""
    if PY313_PLUS:
        return
    import ctypes

    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))


def parse_exception_table(code: CodeType) -> list[tuple[int, int, int, int, bool]]:
    """(start, end, target, depth, lasti) byte-offset entries of `code`'s exception table.

    Rests on the private ``dis._parse_exception_table`` (CPython 3.11-3.13); empty when it is missing.
    """
    import dis

    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:
        return []
    return [(e.start, e.end, e.target, e.depth, e.lasti) for e in parse(code)]
