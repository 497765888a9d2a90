"""Guard trees of Dynamo cache entries: read, evaluate against inputs (what-if), diff and render as text.

Torch keeps the guards of one cache entry in a tree of C++ guard managers (``GuardManagerWrapper.root``): each
manager guards one value (its *source*, e.g. ``L['cfg']['mode']``), reached from its parent through an
*accessor*, and holds *leaf guards* (``TYPE_MATCH``, ``EQUALS_MATCH``, ``TENSOR_MATCH`` ...). This module turns
that tree into the frozen `GuardTree` snapshot of `dynadbg.core.model`:

* `build_guard_tree` / `entry_guard_tree` read the tree and, given the frame's ``f_locals``, evaluate *every*
  leaf (torch's ``check_verbose`` stops at the first failure). It never calls ``check()``, which mutates the
  live tree (fail counts, child order; docs/torch-internals.md §2).
* `all_failing_guards` does it for every entry of a code object (the recompile stop).
* `diff_guard_trees` compares two trees; their plain text (``--plain``, ``report``, golden tests) is
  `dynadbg.core.format.guards`'s.

Every torch private API used here is behind `dynadbg.core.compat` (section "guards").
"""

from __future__ import annotations

import ast
import gc
import os
import re
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from types import CodeType
from typing import Any, Callable, Iterable, Iterator, Sequence

from . import compat, facts
from .caveats import caveat_of
from .model import DiffKind, GuardDiff, GuardNodeView, GuardStatus, GuardTree, LeafGuardView, SourceLocation
from .values import cut, summarize

__all__ = [
    "GuardDiff",
    "all_failing_guards",
    "build_guard_tree",
    "closure_locals",
    "diff_guard_trees",
    "entry_guard_tree",
    "iter_leaves",
    "iter_managers",
    "parse_code_part",
    "tensor_match_sizes",
]

#: Failures reading a guarded value that mean "the value is not there" (torch then fails the accessor).
_MISSING_ERRORS: tuple[type[BaseException], ...] = (LookupError, AttributeError, NameError, TypeError)

_PASS, _FAIL, _ERROR = GuardStatus.PASS, GuardStatus.FAIL, GuardStatus.ERROR
_NO_VALUE, _NOT_EVALUATED = GuardStatus.NO_VALUE, GuardStatus.NOT_EVALUATED



# --------------------------------------------------------------------------------------------------------------
# Parsing verbose code parts
# --------------------------------------------------------------------------------------------------------------

_LOCATION_RE = re.compile(r"^(?P<file>\S[^\n]*?):(?P<line>\d+) in (?P<func>[^\s(]+)(?: \((?P<note>.*)\))?$", re.S)


def parse_code_part(part: str) -> tuple[str, SourceLocation | None, str | None]:
    """Split one verbose code part into (code, location, note).

    Torch writes ``"<code padded to 60>  # <user source line>  # <file>:<line> in <fn>"``, sometimes followed by
    ``" (HINT: ...)"`` or another remark in parentheses; ambient guards carry only a location, symbolic-shape
    guards sometimes only a comment (``"# duck sizing added this equality ..."``), which becomes the note.

    >>> parse_code_part("L['n'] == 3                # y = x + n  # demo.py:18 in f")
    ("L['n'] == 3", SourceLocation(filename='demo.py', lineno=18, function='f', text='y = x + n'), None)
    """
    code, sep, tail = part.partition("  # ")
    code = code.rstrip()
    if not sep:
        return code, None, None
    return (code, *_parse_tail(tail))


@lru_cache(maxsize=8192)
def _parse_tail(tail: str) -> tuple[SourceLocation | None, str | None]:
    segments = tail.split("  # ")
    match = _LOCATION_RE.match(segments[-1].strip())
    if match is None:
        return None, tail.strip() or None
    user_line = "  # ".join(segments[:-1]).strip() or None
    filename = compat.guard_location_file(match["file"])   # torch's short name, repaired where torch cut it wrong
    return SourceLocation(filename, int(match["line"]), match["func"], user_line), match["note"]


def location_text(loc: SourceLocation | None, *, short: bool = False) -> str:
    """A guard's origin as torch spells it in its verbose code parts: ``"demo.py:18 in f"`` (`short`:
    ``"demo.py:18"``, the file's base name); empty for None."""
    if loc is None:
        return ""
    if short:
        return f"{os.path.basename(loc.filename)}:{loc.lineno}"
    return f"{loc.filename}:{loc.lineno}" + (f" in {loc.function}" if loc.function else "")


def _normalize_part(part: str) -> str:
    """A verbose code part with torch's column padding squeezed (``"L['n'] == 3  # y = x + n  # f.py:3 in f"``)."""
    return re.sub(r" {2,}# ", "  # ", part.strip())


# --------------------------------------------------------------------------------------------------------------
# Reading "expected" off a guard, and describing the actual value
# --------------------------------------------------------------------------------------------------------------

_LENGTH_TYPES = frozenset({"LENGTH_CHECK", "DICT_LENGTH", "TUPLE_ITERATOR_LEN"})
_ID_MATCH_RE = re.compile(r"^___check_obj_id\((?P<src>.+), (?P<id>\d+)\)(?:, type=<class '(?P<type>[^']+)'>)?$")
_DYNAMIC_MARKS = ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices", "_dynamo_unbacked_indices",
                  "_dynamo_strict_unbacked_indices", "_dynamo_static_indices")
_CODE_IS_EXPECTED = frozenset({"TYPE_MATCH", "ID_MATCH", "DICT_CONTAINS", "NO_HASATTR", "DICT_VERSION",
                               "DISPATCH_KEY_SET_MATCH", "SET_CONTAINS", "MAPPING_KEYS_MATCH"})
#: the failure text of a ``DictGuardManager``'s own length check (guards.cpp: ``"len(" + source + ") != " + size``)
_DICT_LENGTH_RE = re.compile(r"^len\((?P<src>.+)\) != (?P<n>\d+)$")
#: id of a length leaf made without its manager's id (the manager id is normally given)
_EXTRA_ID = "len"
#: Ids of the pseudo-leaves that are no leaf of torch's tree (never a ``g`` number: every ``gN`` shown anywhere
#: is a leaf ``guards`` lists, and an entry's leaf count is the same at every stop).
BACKEND_MATCH_ID = "backend"
CHECK_VERBOSE_ID = "torch-check"


def _expected(guard_type: str, source: str, code: str) -> str | None:
    if guard_type in facts.CONSTANT_GUARDS:
        for op in (" == ", " is not ", " is ", " != "):
            prefix = source + op
            if code.startswith(prefix):
                rest = code[len(prefix):]
                return rest if op == " == " else op.strip() + " " + rest
        return code
    if guard_type in _LENGTH_TYPES:
        if code.startswith("not "):                   # torch's spelling of "len == 0" for dicts
            return "empty (len 0)"
        _, sep, rest = code.rpartition(") == ")
        return f"len {rest}" if sep else code
    if guard_type == "DIMENSION_DYNAMIC_MARKING_GUARD":
        return "no dynamic marking" if code.endswith("== False") else code
    if guard_type == "ID_MATCH":
        match = _ID_MATCH_RE.match(code)
        if match is not None:
            # torch writes the class itself as type= when the object is a class: keep its words, not "a ... object"
            kind = f" ({match['type']})" if match["type"] else ""
            return f"the object with id {match['id']} at compile time{kind}"
        return code
    if guard_type == "TENSOR_MATCH":
        check = facts.tensor_check(code)
        if check is None:
            return code
        text = (f"{check.cls} {check.dtype.removeprefix('torch.')} size=[{check.size_text}] "
                f"stride=[{check.stride_text}] requires_grad={check.requires_grad}")
        device_type = _device_type_of_keys(check.keys) or "cpu"
        if check.device != "None":
            return f"{text} device={device_type}:{check.device}"
        return text if device_type == "cpu" else f"{text} device={device_type}"
    if guard_type in _CODE_IS_EXPECTED:
        return code
    if guard_type == "TORCH_FUNCTION_MODE_STACK":
        return "the mode stack at compile time"
    if guard_type == "NO_TENSOR_ALIASING":
        return "distinct: " + ", ".join(_call_arguments(code)) if _call_arguments(code) else "distinct tensors"
    if source == "L" and " == " in code:                 # ambient root guards: utils_device.CURRENT_DEVICE == None
        return code.rpartition(" == ")[2]
    return None


def _actual(guard_type: str, value: Any, summary: Callable[[Any], str]) -> str:
    try:
        if guard_type in _LENGTH_TYPES:
            return f"len {len(value)}"
        if guard_type == "TYPE_MATCH":
            return f"type={type(value)!r} (type id {id(type(value))})"
        if guard_type == "ID_MATCH":
            return f"{summary(value)} (id {id(value)})"
        if guard_type == "DIMENSION_DYNAMIC_MARKING_GUARD":
            marks = [f"{name.removeprefix('_dynamo_')}={getattr(value, name)!r}" for name in _DYNAMIC_MARKS
                     if hasattr(value, name)]
            return "marked: " + ", ".join(marks) if marks else "no dynamic marking"
        if guard_type == "TENSOR_MATCH" and hasattr(value, "stride") and hasattr(value, "dtype"):
            dtype = str(value.dtype).removeprefix("torch.")
            text = (f"{type(value).__name__} {dtype} size={list(value.shape)} stride={list(value.stride())} "
                    f"requires_grad={bool(value.requires_grad)}")
            return text if value.device.type == "cpu" else f"{text} device={value.device}"
    except Exception:  # noqa: BLE001 - describing a value must never fail
        pass
    return summary(value)


#: the backend dispatch keys that name a device type (the first of them in a tensor's key set is its device)
_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "MPS": "mps", "XPU": "xpu", "HIP": "cuda",
                "HPU": "hpu", "XLA": "xla", "Lazy": "lazy", "MTIA": "mtia", "PrivateUse1": "privateuseone",
                "IPU": "ipu", "VE": "ve", "MAIA": "maia"}


def _device_type_of_keys(keys: str) -> str | None:
    """``"CPU, BackendSelect, ADInplaceOrView, AutogradCPU"`` → ``"cpu"``: the device type a TENSOR_MATCH was
    compiled for, read off its dispatch key set (its ``device=`` field holds only the index). Sparse and
    quantized keys name their device the same way (``SparseCPU``)."""
    for key in (k.strip() for k in keys.split(",")):
        for prefix in ("", "Sparse", "SparseCsr", "Quantized", "Nested"):
            if key.startswith(prefix) and key[len(prefix):] in _DEVICE_KEYS:
                return _DEVICE_KEYS[key[len(prefix):]]
    return None


def _tensor_mismatch(source: str, code: str, value: Any) -> str | None:
    """Why a ``TENSOR_MATCH`` rejects `value`, in the words torch's ``check_verbose`` uses, checking what can be
    read off the guard's code in torch's order (type, dtype, device, requires_grad, rank, sizes, strides).
    None when nothing readable differs (e.g. only the dispatch key set)."""
    check = facts.tensor_check(code)
    if check is None:
        return None
    head = f"tensor '{source}'"
    try:
        if type(value).__name__ != check.cls.rsplit(".", 1)[-1]:
            return f"expected type of '{source}' to be a tensor type of {check.cls}, but found {type(value)!r}"
        if str(value.dtype) != check.dtype:
            return f"{head} dtype mismatch. expected {check.dtype}, actual {value.dtype}"
        device_type = _device_type_of_keys(check.keys)
        if device_type is not None and value.device.type != device_type:
            return f"{head} device mismatch. expected {device_type}, actual {value.device.type}"
        index = None if check.device == "None" else int(check.device)
        if value.device.index != index and value.device.type != "cpu":
            return f"{head} Tensor device index mismatch. Expected device index to be {index}, actual {value.device}"
        if bool(value.requires_grad) != check.requires_grad:
            return f"{head} requires_grad mismatch. expected requires_grad={int(check.requires_grad)}"
        sizes, strides = check.size, check.stride
        if value.dim() != len(sizes):
            return f"{head} rank mismatch. expected {len(sizes)}, actual {value.dim()}"
        for i, (want, have) in enumerate(zip(sizes, value.shape)):
            if want is not None and want != int(have):
                return f"{head} size mismatch at index {i}. expected {want}, actual {int(have)}"
        for i, (want, have) in enumerate(zip(strides, value.stride())):
            if want is not None and want != int(have):
                return f"{head} stride mismatch at index {i}. expected {want}, actual {int(have)}"
    except Exception:  # noqa: BLE001 - an odd value: no readable reason
        return None
    # what is left is the dispatch key set: the tensor's keys with the thread-local include/exclude sets applied,
    # which autocast, functorch transforms and some modes change
    return (f"{head} dispatch key set mismatch. expected DispatchKeySet({check.keys}); dtype, device, "
            f"requires_grad, sizes and strides match (thread-local dispatch state, e.g. autocast, differs)")


def _size_changes(code: str, value: Any) -> tuple[int, ...]:
    """The dimensions whose static size a ``TENSOR_MATCH`` (`code`) pins and `value` no longer has, when the
    tensor's type, dtype, device, requires_grad and rank are those of the guard (what ``mark_dynamic`` could
    cover); () otherwise."""
    check = facts.tensor_check(code)
    if check is None:
        return ()
    try:
        if (type(value).__name__ != check.cls.rsplit(".", 1)[-1] or str(value.dtype) != check.dtype
                or bool(value.requires_grad) != check.requires_grad):
            return ()
        device_type = _device_type_of_keys(check.keys)
        if device_type is not None and value.device.type != device_type:
            return ()
        sizes = check.size
        if value.dim() != len(sizes):
            return ()
        return tuple(i for i, (want, have) in enumerate(zip(sizes, value.shape))
                     if want is not None and want != int(have))
    except Exception:  # noqa: BLE001 - an odd value: nothing to say
        return ()


# --------------------------------------------------------------------------------------------------------------
# Producing the guarded values (what-if evaluation)
# --------------------------------------------------------------------------------------------------------------

class _Missing:
    """The guarded value could not be produced; `error` is torch-style text (``"KeyError on L['cfg']['b']"``)."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


_NO_KEY = object()


@lru_cache(maxsize=65536)
def _compiled(expr: str) -> CodeType:
    return compile(expr, "<guard>", "eval")


@lru_cache(maxsize=65536)
def _accessor_key(accessor: str) -> Any:
    """The key of ``DictGetItemGuardAccessor('mode')`` / ``FrameLocalsGuardAccessor(key='x', ...)``, or _NO_KEY."""
    try:
        if accessor.startswith("FrameLocalsGuardAccessor(key="):
            inner = accessor[len("FrameLocalsGuardAccessor(key="):]
            inner = inner.rsplit(", framelocals_idx=", 1)[0]
            return ast.literal_eval(inner)
        if accessor.startswith("DictGetItemGuardAccessor(") and accessor.endswith(")"):
            return ast.literal_eval(accessor[len("DictGetItemGuardAccessor("):-1])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return _NO_KEY


def _describe_error(source: str, exc: BaseException) -> str:
    return f"{type(exc).__name__} on {source}"


class _Evaluator:
    """Produces guarded values for one tree and one set of inputs: follows accessors from the parent value where
    their meaning is plain (frame locals, dict items, attributes, ``__dict__``, globals), else evaluates the
    manager's source in torch's guard scope ``{"L": f_locals, "G": f_globals, **closure_vars}``."""

    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.globals_value = scope.get("G", {})
        self.eval_globals = dict(scope)       # one copy: eval only adds __builtins__ to it

    def eval_source(self, source: str) -> Any:
        try:
            return eval(_compiled(source), self.eval_globals)  # noqa: S307 - torch's own guard sources
        except _MISSING_ERRORS as exc:
            return _Missing(_describe_error(source, exc))
        except Exception as exc:  # noqa: BLE001 - any other failure also means "no value"
            return _Missing(f"{_describe_error(source, exc)}: {cut(str(exc), 80)}")

    def child_value(self, parent: Any, node: compat.RawGuardManager) -> Any:
        if isinstance(parent, _Missing):
            return parent
        kind = node.accessor_type
        try:
            if kind in ("FrameLocalsGuardAccessor", "DictGetItemGuardAccessor"):
                key = _accessor_key(node.accessor or "")
                if key is not _NO_KEY and type(parent) is dict:
                    return parent[key]
            elif kind == "GetAttrGuardAccessor" and node.attr_name is not None:
                return getattr(parent, node.attr_name)
            elif kind == "GetGenericDictGuardAccessor":
                return object.__getattribute__(parent, "__dict__")
            elif kind == "GlobalsGuardAccessor":
                return self.globals_value
        except _MISSING_ERRORS as exc:
            return _Missing(_describe_error(node.source, exc))
        except Exception as exc:  # noqa: BLE001
            return _Missing(f"{_describe_error(node.source, exc)}: {cut(str(exc), 80)}")
        return self.eval_source(node.source)

    def dict_item(self, parent: Any, node: compat.RawGuardManager, items: list[tuple[Any, Any]] | None) -> Any:
        """Key or value at position `kv_index` (a ``DictGuardManager`` checks its dict by position)."""
        if isinstance(parent, _Missing):
            return parent
        if items is None:
            return self.eval_source(node.source)
        index = node.kv_index or 0
        if index >= len(items):
            return _Missing(f"IndexError on {node.source}")
        return items[index][0 if node.kv_role == "key" else 1]

    def eval_code(self, code: str, extra: dict[str, Any] | None = None) -> Any:
        """Evaluate one guard expression; raises what the expression raises."""
        scope = dict(self.scope)
        if extra:
            scope.update(extra)
        return eval(_compiled(code), scope)  # noqa: S307 - torch's own guard code


_COMPARE_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                ast.Is: "is", ast.IsNot: "is not"}
#: a comparison read the other way round (``2 <= s`` is ``s >= 2``)
_FLIPPED = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "==", "!=": "!="}


def _call_arguments(code: str) -> list[str]:
    """The argument expressions of a call such as ``check_no_aliasing(L['a'], L['b'])`` (empty if not a call)."""
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call):
        return []
    return [ast.get_source_segment(code, arg) or "" for arg in node.args]


def _no_aliasing(*values: Any) -> bool:
    return len({id(v) for v in values}) == len(values)


# --------------------------------------------------------------------------------------------------------------
# Building the tree
# --------------------------------------------------------------------------------------------------------------

class _Builder:
    def __init__(self, guard_manager: Any, f_locals: dict[str, Any] | None) -> None:
        self.guard_manager = guard_manager
        self.f_locals = f_locals
        self.evaluating = f_locals is not None
        self.next_manager = 0
        self.next_leaf = 0
        self.seen_relational: set[int] = set()
        self.failing: list[LeafGuardView] = []
        self.evaluator: _Evaluator | None = None
        self.cv_passed = True
        self.cv_parts: list[str] = []
        self.cv_norm: list[str] = []
        self.cv_error: str | None = None
        self.summaries: dict[int, tuple[Any, str]] = {}
        #: torch's recompile-log text for a failed no-aliasing check (``Duplicate tensors found: [...]``)
        self.aliasing_text: str | None = None
        #: sources of the managers from the root down to the one being built (its ancestors)
        self.path: list[str] = []
        #: dict length checks left to run on their own (`_dict_length_leaf`)
        self.length_probes = 4
        #: leaves the builder adds for checks torch makes without a leaf object (numbered last)
        self.extra_leaves: list[LeafGuardView] = []
        if f_locals is not None:
            scope = compat.guard_eval_scope(guard_manager)
            scope["L"] = f_locals
            self.evaluator = _Evaluator(scope)
            try:
                self.cv_passed, self.cv_parts, _ = compat.guard_check_verbose(guard_manager, f_locals)
            except Exception as exc:  # noqa: BLE001 - torch's own check raising is reported, not raised
                self.cv_passed, self.cv_error = False, f"check_verbose raised {type(exc).__name__}: {exc}"
            self.cv_norm = [_normalize_part(p) for p in self.cv_parts]

    def _summary(self, value: Any) -> str:
        """`values.summarize(value).text`, once per object per tree (several leaves guard the same value)."""
        hit = self.summaries.get(id(value))
        if hit is None:
            hit = self.summaries[id(value)] = (value, summarize(value).text)   # holding value pins its id
        return hit[1]

    # -- torch's first failure ----------------------------------------------------------------------------------

    def _cv_is_about(self, raw: compat.RawLeafGuard, source: str) -> bool:
        """Whether check_verbose's (first) failure is this leaf's."""
        if self.cv_passed or not self.cv_parts:
            return False
        if self.cv_parts == raw.parts:
            return True
        text = self.cv_parts[0]
        if raw.guard_type == "TENSOR_MATCH":
            return text.startswith(f"tensor '{source}' ") or text.startswith(f"expected type of '{source}'")
        if raw.guard_type == "NO_TENSOR_ALIASING":
            return "Duplicate tensor found" in text
        if raw.guard_type == "GLOBAL_STATE":
            return text.startswith("GLOBAL_STATE")
        return False

    # -- leaves ------------------------------------------------------------------------------------------------

    def _leaf_view(self, raw: compat.RawLeafGuard, source: str, status: GuardStatus, *, actual: str | None = None,
                   reason: str | None = None, epilogue: bool = False,
                   parts: Sequence[str] | None = None, expected: str | None = None) -> LeafGuardView:
        if parts is None:
            parts = raw.parts
        if len(parts) == 1:                                   # the common case, kept cheap (20,000-leaf trees)
            first, location, note = parse_code_part(parts[0])
            codes: tuple[str, ...] = (first,)
        else:
            parsed = [parse_code_part(part) for part in parts]
            codes = tuple(p[0] for p in parsed)
            first = codes[0] if codes else ""
            location = next((p[1] for p in parsed if p[1] is not None), None)
            note = next((p[2] for p in parsed if p[2] is not None), None)
        ident = f"g{self.next_leaf}"
        self.next_leaf += 1
        # positional, in LeafGuardView's field order (faster than keywords on big trees)
        if expected is None:
            expected = _expected(raw.guard_type, source, first)
        return LeafGuardView(ident, raw.guard_type, source, codes, location, raw.relational, epilogue,
                             status, expected, actual, reason, note,
                             caveat=caveat_of(note, codes) if note is not None else None)

    def _failing_part(self, raw: compat.RawLeafGuard, value: Any) -> str | None:
        """For a failed multi-part leaf, the first code part that evaluates False (torch's helper does the same)."""
        assert self.evaluator is not None
        for part in raw.parts:
            code = parse_code_part(part)[0]
            try:
                if not self.evaluator.eval_code(code):
                    return code
            except Exception:  # noqa: BLE001 - not every part is plain Python (", type=<class ...>")
                continue
        return None

    def _evaluate_leaf(self, raw: compat.RawLeafGuard, source: str, value: Any, is_root: bool,
                       missing_reason: str | None) -> LeafGuardView:
        if not self.evaluating:
            return self._leaf_view(raw, source, GuardStatus.NOT_EVALUATED)
        if raw.relational:
            return self._evaluate_relational(raw, source)
        if isinstance(value, _Missing):
            return self._leaf_view(raw, source, GuardStatus.NO_VALUE, reason=missing_reason or value.error)
        actual = None if is_root else _actual(raw.guard_type, value, self._summary)
        expected = None
        if raw.guard_type == "LAMBDA_GUARD" and not is_root and len(raw.parts) == 1:
            expected, actual = self._metadata_values(raw, value, actual)
        try:
            ok = bool(raw.guard(value))
        except Exception as exc:  # noqa: BLE001 - a guard that raises counts as failed in torch
            return self._leaf_view(raw, source, GuardStatus.ERROR, actual=actual, expected=expected,
                                   reason=f"{type(exc).__name__}: {cut(str(exc), 200)}")
        if ok:
            return self._leaf_view(raw, source, GuardStatus.PASS, actual=actual, expected=expected)
        if is_root:
            actual = self._root_actual(raw)
        view = self._leaf_view(raw, source, GuardStatus.FAIL, actual=actual, expected=expected,
                               reason=self._fail_reason(raw, source, value))
        if raw.guard_type == "TENSOR_MATCH" and raw.parts:
            changed = _size_changes(parse_code_part(raw.parts[0])[0], value)
            if changed:
                view = replace(view, size_changed=changed)
        return view

    def _metadata_values(self, raw: compat.RawLeafGuard, value: Any,
                         actual: str | None) -> tuple[str | None, str | None]:
        """(expected, actual) of a tensor-subclass metadata guard (``___check_metadata_...``): the metadata
        ``__tensor_flatten__`` gave at compile time and gives now (e.g. ``{'scale': 1.0}`` / ``{'scale': 3.0}``);
        (None, `actual`) for any other lambda guard."""
        assert self.evaluator is not None
        code = parse_code_part(raw.parts[0])[0]
        found, then = compat.tensor_metadata_at_compile(code)
        if not found:
            return None, actual
        have, now = compat.tensor_metadata_now(value)
        return f"metadata {cut(repr(then), 120)}", (f"metadata {cut(repr(now), 120)}" if have else actual)

    def _root_actual(self, raw: compat.RawLeafGuard) -> str | None:
        """The current global state a failed root guard looked at, when it can be named: the torch-function mode
        stack, or the left side of ``<expr> == <value>`` (``utils_device.CURRENT_DEVICE == None``)."""
        assert self.evaluator is not None
        try:
            if raw.guard_type == "TORCH_FUNCTION_MODE_STACK":
                return "mode stack [" + ", ".join(compat.torch_function_mode_stack_names()) + "]"
            code = parse_code_part(raw.parts[0])[0] if len(raw.parts) == 1 else ""
            lhs, sep, _ = code.partition(" == ")
            if sep:
                return self._summary(self.evaluator.eval_code(lhs))
        except Exception:  # noqa: BLE001 - not every ambient guard is plain Python
            return None
        return None

    def _fail_reason(self, raw: compat.RawLeafGuard, source: str, value: Any) -> str:
        if raw.guard_type == "TENSOR_MATCH" and raw.parts:
            # torch words a device move as a dispatch key set mismatch (its device check reads only the index)
            text = _tensor_mismatch(source, parse_code_part(raw.parts[0])[0], value)
            if text is not None and " device mismatch. " in text:
                return text
        if self._cv_is_about(raw, source) and self.cv_parts != raw.parts:
            return "; ".join(self.cv_norm)       # torch's own text (tensor mismatch, GLOBAL_STATE changed, ...)
        if raw.guard_type == "GLOBAL_STATE":
            try:
                parts = compat.leaf_check_verbose(raw.guard, value)
            except Exception:  # noqa: BLE001
                parts = None
            if parts:
                return "; ".join(p.strip() for p in parts)
        if raw.guard_type == "TENSOR_MATCH":
            text = _tensor_mismatch(source, parse_code_part(raw.parts[0])[0] if raw.parts else "", value)
            if text is not None:
                return text
        if len(raw.parts) > 1:
            code = self._failing_part(raw, value)
            if code is not None:
                return code
        return "; ".join(parse_code_part(p)[0] for p in raw.parts)

    def _aliasing_failure(self, raw: compat.RawLeafGuard, source: str) -> LeafGuardView | None:
        """A failed ``NO_TENSOR_ALIASING`` guard with the inputs that are one tensor named, as torch's recompile
        log does (``Duplicate tensors found: ["L['a']", "L['c']"]``): expected "distinct", actual the groups of
        sources that hold the same tensor object. None when the groups cannot be worked out."""
        groups = self._aliased_groups(raw)
        if not groups:
            return None
        names = ", ".join(str(group) for group in groups)
        same = "; ".join(" is ".join(group) for group in groups)
        return self._leaf_view(raw, source, GuardStatus.FAIL, actual=f"same storage: {same}",
                               reason=f"Duplicate tensors found: {names}")

    def _aliased_groups(self, raw: compat.RawLeafGuard) -> list[list[str]]:
        """Sources of the guard's arguments grouped by the object they hold (groups of two or more only)."""
        assert self.evaluator is not None
        code = parse_code_part(raw.parts[0])[0] if raw.parts else ""
        by_id: dict[int, list[str]] = {}
        for arg in _call_arguments(code):
            value = self.evaluator.eval_source(arg)
            if isinstance(value, _Missing):
                continue
            by_id.setdefault(id(value), []).append(arg)
        return [group for group in by_id.values() if len(group) > 1]

    def _evaluate_relational(self, raw: compat.RawLeafGuard, source: str) -> LeafGuardView:
        """Relational guards are not callable: torch checks them while walking the whole tree. check_verbose
        tells FAIL when it is the first failure; when everything passes, they pass; when something else fails
        first, NO_TENSOR_ALIASING / OBJECT_ALIASING are recomputed from their code, others stay unevaluated.
        A failing ``NO_TENSOR_ALIASING`` names the inputs that are the same tensor (`_aliasing_failure`)."""
        if self._cv_is_about(raw, source):
            if raw.guard_type == "NO_TENSOR_ALIASING":
                view = self._aliasing_failure(raw, source)
                if view is not None:
                    self.aliasing_text = view.reason
                    return view
            return self._leaf_view(raw, source, GuardStatus.FAIL, reason="; ".join(self.cv_norm))
        if self.cv_passed:
            return self._leaf_view(raw, source, GuardStatus.PASS)
        assert self.evaluator is not None
        code = parse_code_part(raw.parts[0])[0] if raw.parts else ""
        if raw.guard_type in ("NO_TENSOR_ALIASING", "OBJECT_ALIASING"):
            try:
                ok = bool(self.evaluator.eval_code(code, {"check_no_aliasing": _no_aliasing}))
            except _MISSING_ERRORS as exc:
                return self._leaf_view(raw, source, GuardStatus.NO_VALUE, reason=f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # noqa: BLE001
                return self._leaf_view(raw, source, GuardStatus.ERROR, reason=f"{type(exc).__name__}: {exc}")
            if ok:
                return self._leaf_view(raw, source, GuardStatus.PASS)
            if raw.guard_type == "NO_TENSOR_ALIASING":
                view = self._aliasing_failure(raw, source)
                if view is not None:
                    return view
            reason = "Duplicate tensor found where not expected!" if raw.guard_type == "NO_TENSOR_ALIASING" else code
            return self._leaf_view(raw, source, GuardStatus.FAIL, reason=reason)
        return self._leaf_view(raw, source, GuardStatus.NOT_EVALUATED)

    # -- managers ----------------------------------------------------------------------------------------------

    def manager(self, node: compat.RawGuardManager, value: Any, missing_here: bool) -> GuardNodeView:
        """Build the view of `node` (guarding `value`, or a `_Missing`), preorder ids, statuses bottom-up.

        `missing_here` is True when `node` is the topmost manager whose value is missing: its first leaf in
        preorder is listed in `failing` (torch fails the entry at that accessor).
        """
        ident = f"m{self.next_manager}"
        self.next_manager += 1
        source = node.source
        evaluating = self.evaluating
        missing = isinstance(value, _Missing)
        leaves: list[LeafGuardView] = []
        if node.leaves:
            is_root = node.accessor_type is None and node.kv_role is None
            missing_reason = value.error if missing else None
            want_representative = missing_here
            failing = self.failing
            for raw in node.leaves:
                if raw.relational:
                    key = id(raw.guard)
                    if key in self.seen_relational:
                        continue
                    self.seen_relational.add(key)
                if not evaluating:
                    leaves.append(self._leaf_view(raw, source, _NOT_EVALUATED))
                    continue
                view = self._evaluate_leaf(raw, source, value, is_root, missing_reason)
                leaves.append(view)
                status = view.status
                if status is _FAIL or status is _ERROR:
                    failing.append(view)
                elif want_representative and status is _NO_VALUE and not raw.relational:
                    failing.append(view)
                    want_representative = False
            pending = want_representative
        else:
            pending = missing_here

        extra = 0
        if evaluating and not missing and node.manager_type.endswith("DictGuardManager"):
            length_leaf = self._dict_length_leaf(source, value, ident)
            if length_leaf is not None:
                leaves.append(length_leaf)
                self.failing.append(length_leaf)
                extra = 1

        children: list[GuardNodeView] = []
        # torch's own leaves only: the length check shows where it fails, it is no leaf of the entry (one count
        # per entry, the same at every stop)
        leaf_count = len(leaves) - extra
        if node.children:
            self.path.append(source)
            evaluator = self.evaluator
            items: list[tuple[Any, Any]] | None = None
            if evaluating and not missing and node.manager_type.endswith("DictGuardManager"):
                try:
                    items = list(dict.items(value)) if isinstance(value, dict) else None
                except Exception:  # noqa: BLE001
                    items = None
            for child in node.children:
                if evaluator is None:
                    children.append(self.manager(child, None, False))
                    continue
                if child.kv_role is not None:
                    child_value = evaluator.dict_item(value, child, items)
                else:
                    child_value = evaluator.child_value(value, child)
                child_missing = isinstance(child_value, _Missing)
                child_missing_here = child_missing and not missing
                # a missing manager with no leaves of its own hands its representative down to its first child
                if pending and child_missing:
                    child_missing_here = True
                    pending = False
                children.append(self.manager(child, child_value, child_missing_here))
            self.path.pop()
            for c in children:
                leaf_count += c.leaf_count

        accessor = node.accessor
        if accessor is None and node.kv_role is not None:
            accessor = f"dict {node.kv_role} #{node.kv_index}"
        status = self._aggregate(value, leaves, children) if evaluating else _NOT_EVALUATED
        # positional, in GuardNodeView's field order
        return GuardNodeView(ident, source, node.manager_type, accessor, node.value_type, tuple(leaves),
                             tuple(children), status, leaf_count)

    def _dict_length_leaf(self, source: str, value: Any, manager_id: str = "") -> LeafGuardView | None:
        """The length check a ``DictGuardManager`` makes itself, before its key/value managers, as a leaf.

        Torch keeps no leaf for it (the manager compares ``len(dict)`` with the size it saw at compile time, a
        number no API exposes); its ``check_verbose`` names it ``len(L['d']) != 1``. When that is the first
        failure torch reports for this manager's source, the check becomes a failing ``DICT_LENGTH`` leaf on
        the dict's own source, expected the compile-time length, actual the dict's length now (any key type:
        the check never looks at the keys). Its id is the manager's with ``.len`` (``m4.len``), never a ``g``
        number: torch's own leaves keep their ids at every stop, and every ``g`` id resolves in ``guards``.
        """
        if self.cv_passed:
            return None                               # torch passes the entry: every length matches
        match = _DICT_LENGTH_RE.match(self.cv_parts[0].strip()) if len(self.cv_parts) == 1 else None
        reason = self.cv_norm[0] if match is not None else None
        if match is None or match["src"] != source:
            # torch reports another failure first: check this dict's manager on its own (a bounded number of
            # times per tree: each check copies the tree)
            if self.length_probes <= 0:
                return None
            self.length_probes -= 1
            assert self.f_locals is not None  # called only while evaluating, which needs the frame's locals
            try:
                ok, parts = compat.check_path_only(self.guard_manager.root, {*self.path, source}, self.f_locals)
            except Exception:  # noqa: BLE001 - no probe on this torch: the length stays unknown
                return None
            match = _DICT_LENGTH_RE.match(parts[0].strip()) if not ok and len(parts) == 1 else None
            if match is None or match["src"] != source:
                return None
            reason = f"{_normalize_part(parts[0])} (checked on its own: torch reports another guard first)"
        want = match["n"]
        try:
            actual = f"len {len(value)}"
        except Exception:  # noqa: BLE001 - an odd mapping: leave the actual value out
            actual = None
        view = LeafGuardView(f"{manager_id}.len" if manager_id else _EXTRA_ID, "DICT_LENGTH", source,
                             (f"len({source}) == {want}",), status=_FAIL,
                             expected=f"len {want}", actual=actual, reason=reason)
        self.extra_leaves.append(view)
        return view

    def _aggregate(self, value: Any, leaves: list[LeafGuardView], children: list[GuardNodeView]) -> GuardStatus:
        if not self.evaluating:
            return GuardStatus.NOT_EVALUATED
        if isinstance(value, _Missing):
            return GuardStatus.NO_VALUE
        error = False
        items: tuple[LeafGuardView | GuardNodeView, ...] = (*leaves, *children)
        for item in items:
            status = item.status
            if status is _FAIL or status is _NO_VALUE:
                return _FAIL
            if status is _ERROR:
                error = True
        return _ERROR if error else _PASS

    # -- epilogue ----------------------------------------------------------------------------------------------

    def epilogue(self, raws: list[compat.RawLeafGuard]) -> list[LeafGuardView]:
        """One view per expression of each epilogue lambda guard, each evaluated on its own (with SYMPY_INTERP)."""
        views: list[LeafGuardView] = []
        interp = compat.sympy_interp() if self.evaluating and raws else {}
        for raw in raws:
            found_failure = False
            whole_ok: bool | None = None
            if self.evaluating:
                try:
                    whole_ok = bool(raw.guard(self.f_locals))
                except Exception:  # noqa: BLE001
                    whole_ok = False
            for part in raw.parts:
                if not self.evaluating:
                    views.append(self._leaf_view(raw, "L", GuardStatus.NOT_EVALUATED, epilogue=True, parts=[part]))
                    continue
                assert self.evaluator is not None
                code = parse_code_part(part)[0]
                try:
                    ok = bool(self.evaluator.eval_code(code, interp))
                except _MISSING_ERRORS as exc:
                    view = self._leaf_view(raw, "L", GuardStatus.NO_VALUE, epilogue=True, parts=[part],
                                           reason=f"{type(exc).__name__}: {cut(str(exc), 120)}")
                except Exception as exc:  # noqa: BLE001
                    view = self._leaf_view(raw, "L", GuardStatus.ERROR, epilogue=True, parts=[part],
                                           reason=f"{type(exc).__name__}: {cut(str(exc), 120)}")
                    found_failure = True
                else:
                    expected, actual = self._comparison_sides(code, interp)
                    if ok:
                        view = self._leaf_view(raw, "L", GuardStatus.PASS, epilogue=True, parts=[part],
                                               expected=expected, actual=actual)
                    else:
                        view = self._leaf_view(raw, "L", GuardStatus.FAIL, epilogue=True, parts=[part],
                                               reason=code, expected=expected, actual=actual)
                        found_failure = True
                views.append(view)
            if whole_ok is False and not found_failure and views:
                # torch says the lambda fails but no single expression does: blame the guard as a whole
                index = len(views) - len(raw.parts)
                views[index] = replace(views[index], status=GuardStatus.FAIL,
                                       reason="epilogue guard failed (no single expression did)")
        self.failing.extend(v for v in views if v.status in (GuardStatus.FAIL, GuardStatus.ERROR))
        return views

    def _comparison_sides(self, code: str, interp: dict[str, Any]) -> tuple[str | None, str | None]:
        """(expected, actual) of a symbolic guard that is one comparison (``L['start'] == 4``): the right side as
        written (``"4"``, ``"<= 8"``) and the left side's value on these inputs (``"5"``); when the right side
        is not a constant, its value too (``"3 vs 4"``). (None, None) for anything else."""
        try:
            node = ast.parse(code, mode="eval").body
        except SyntaxError:
            return None, None
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            return None, None
        lhs = ast.get_source_segment(code, node.left) or ""
        rhs = ast.get_source_segment(code, node.comparators[0]) or ""
        op = _COMPARE_OPS.get(type(node.ops[0]))
        if op is None:
            return None, None
        assert self.evaluator is not None
        if isinstance(node.left, ast.Constant) and not isinstance(node.comparators[0], ast.Constant):
            # ``2 <= L['x'].size()[0]``: the constant is what the guard wants, the other side the input's value
            lhs, rhs = rhs, lhs
            op = _FLIPPED.get(op, op)
            node = ast.Compare(left=node.comparators[0], ops=node.ops, comparators=[node.left])
        expected = rhs if op == "==" else f"{op} {rhs}"
        try:
            left = self.evaluator.eval_code(lhs, interp)
            actual = self._summary(left)
            if not isinstance(node.comparators[0], ast.Constant):
                actual = f"{actual} vs {self._summary(self.evaluator.eval_code(rhs, interp))}"
        except Exception:  # noqa: BLE001 - a side that does not evaluate: no actual value
            actual = None
        return expected, actual

    def first_failure(self, epilogue: list[LeafGuardView], epilogue_parts: set[tuple[str, ...]]) -> str | None:
        if not self.evaluating or self.cv_passed:
            return None
        if self.cv_error is not None:
            return self.cv_error
        if len(self.cv_parts) > 1 and tuple(self.cv_parts) in epilogue_parts:
            for view in epilogue:
                if view.status is GuardStatus.FAIL:
                    return _leaf_text(view)
        if self.aliasing_text is not None:
            return self.aliasing_text           # what torch's recompile log prints in place of check_verbose's text
        return "; ".join(self.cv_norm) or "guard check failed"


def _leaf_text(view: LeafGuardView) -> str:
    text = "; ".join(view.code)
    if view.user_line:
        text += f"  # {view.user_line}"
    if view.location:
        text += f"  # {location_text(view.location)}"
    return text


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic GC while a big tree is built: the ~100k small objects of a 20,000-leaf tree otherwise
    trigger full collections over torch's whole heap, which doubled the build time in a measurement."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _merge_locals(f_locals: dict[str, Any] | None, closure: dict[str, Any] | None) -> dict[str, Any] | None:
    if f_locals is None:
        return None
    if not closure:
        return f_locals if type(f_locals) is dict else dict(f_locals)
    merged = dict(closure)
    merged.update(f_locals)
    return merged


def closure_locals(fn: Callable[..., Any]) -> dict[str, Any]:
    """The free variables of `fn` as Dynamo sees them in ``f_locals`` (closure cells appear as ``L['k']``).

    Pass the result as ``closure=`` when building a what-if tree from a function's arguments only; without them
    every guard on a captured variable reads as NO_VALUE (torch-internals §2). Empty cells are left out.
    """
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return {}
    out: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


def build_guard_tree(
    guard_manager_wrapper: Any,
    compile_id: str,
    f_locals: dict[str, Any] | None = None,
    *,
    closure: dict[str, Any] | None = None,
    with_text: bool = False,
) -> GuardTree:
    """Read the guard tree of one cache entry and, when `f_locals` is given, evaluate every leaf against it.

    Managers get ids ``m0, m1, ...`` and leaves ``g0, g1, ...`` in preorder (a manager's leaves, then its dict
    key/value managers, then its accessor children; the epilogue last): the same tree always gets the same ids.
    Relational guards (``NO_TENSOR_ALIASING``), which torch hangs under every manager they relate, are listed once,
    where first met. Epilogue lambda guards (symbolic shapes with ``dynamic=True``; object-aliasing checks such as
    ``G['a'].F is G['b'].F``) become one view per expression.

    Evaluation never calls ``check()`` (it mutates fail counts and child order). Each manager's value comes from
    its parent through the accessor, or from ``eval(source)`` in ``{"L": f_locals, "G": f_globals,
    **closure_vars}``; each leaf is then called on it (``LeafGuard.__call__``); root leaves and the epilogue
    get the ``f_locals`` dict. A value that cannot be produced makes its manager and everything below it
    NO_VALUE; its first leaf is listed in `failing`, since torch fails the entry there. A leaf that raises is
    ERROR. Relational guards are judged through ``RootGuardManager.check_verbose`` (side-effect free), whose
    first failure also gives ``first_failure`` and torch's text for ``reason``. Should torch's check fail while
    no leaf fails on its own, `failing` gets one ``CHECK_VERBOSE`` pseudo-leaf with torch's text, so
    ``tree.passed`` never claims an entry would serve a call that torch rejects.

    Args:
        guard_manager_wrapper: a ``torch._dynamo.guards.GuardManagerWrapper`` (``cache_entry.guard_manager``, or
            ``guarded_code.guard_manager`` at a compile stop). A ``DeletedGuardManagerWrapper`` gives a tree whose
            ``invalidated``/``first_failure`` carry torch's reason and whose `failing` holds one
            ``CACHE_ENTRY_INVALIDATED`` pseudo-leaf.
        compile_id: the entry's compile id, e.g. ``"0/1"``.
        f_locals: the frame's locals by name, free variables included (what Dynamo guards against), or None to
            only read the tree (every status NOT_EVALUATED).
        closure: free variables to add to `f_locals` where it lacks them (see `closure_locals`).
        with_text: also keep torch's own rendering in ``GuardTree.text`` (``str(guard_manager)``). Off by
            default: it costs about 0.2 s and 13 MB for 20,000 leaves, and `format_guard_tree` says the same.

    Returns:
        The frozen `GuardTree`. Never raises for missing values or raising guards; statuses say what happened.

    Raises:
        AttributeError, ImportError: this torch lacks the guard-manager API (``torch._C._dynamo.guards``).
    """
    merged = _merge_locals(f_locals, closure)
    invalidated = compat.guard_manager_invalidation(guard_manager_wrapper)
    if invalidated is not None:
        return _invalidated_tree(compile_id, invalidated, merged is not None)
    with _gc_paused():
        raw_root = compat.read_guard_manager(guard_manager_wrapper.root)
        raw_epilogue = compat.epilogue_guards(guard_manager_wrapper.root)
        builder = _Builder(guard_manager_wrapper, merged)
        root = builder.manager(raw_root, merged, False)
        epilogue = builder.epilogue(raw_epilogue)
    first_failure = builder.first_failure(epilogue, {tuple(r.parts) for r in raw_epilogue})
    if first_failure is not None and not builder.failing:
        # torch fails the entry but no single leaf did on its own (e.g. an accessor behaves differently from the
        # plain Python access used here): still report the entry as failing, with torch's words
        builder.failing.append(LeafGuardView(
            CHECK_VERBOSE_ID, "CHECK_VERBOSE", "L", (first_failure,), status=_FAIL,
            reason=f"torch's check_verbose fails ({first_failure}) but no single leaf does"))
    failing = tuple(builder.failing)
    return GuardTree(
        compile_id=str(compile_id),
        root=root,
        epilogue=tuple(epilogue),
        leaf_count=root.leaf_count + len(epilogue),
        evaluated=builder.evaluating,
        failing=failing,
        first_failure=first_failure,
        text=compat.guard_manager_text(guard_manager_wrapper) if with_text else "",
    )


def _invalidated_tree(compile_id: str, reason: str, evaluated: bool) -> GuardTree:
    leaf = LeafGuardView(
        id="g0",
        guard_type="CACHE_ENTRY_INVALIDATED",
        source="L",
        code=(reason,),
        status=GuardStatus.FAIL,
        reason=reason,
    )
    root = GuardNodeView(
        id="m0",
        source="L",
        manager_type="RootGuardManager",
        accessor=None,
        value_type=repr(type(None)),
        leaves=(leaf,),
        children=(),
        status=GuardStatus.FAIL,
        leaf_count=1,
    )
    return GuardTree(compile_id=str(compile_id), root=root, leaf_count=1, evaluated=evaluated, failing=(leaf,),
                     first_failure=reason, text="", invalidated=reason)


def entry_guard_tree(
    cache_entry: Any,
    f_locals: dict[str, Any] | None = None,
    *,
    closure: dict[str, Any] | None = None,
    with_text: bool = False,
    backend: Any = None,
) -> GuardTree:
    """`build_guard_tree` for a live torch ``_CacheEntry`` (fields ``code``, ``compile_id``, ``guard_manager``).

    With `backend` (the backend object of the call being checked, e.g. ``CacheMissEvent.backend``), an entry
    compiled with another backend callable also fails: torch skips it whatever its guards say (BACKEND_MATCH,
    e.g. a fresh ``aot_autograd(...)`` per ``torch.compile``). `failing` then gets a ``BACKEND_MATCH``
    pseudo-leaf naming both backends, and when every guard passes it is also ``first_failure``, as in torch's
    recompile log.

    An entry torch invalidated (``code`` is None; its guard manager a ``DeletedGuardManagerWrapper`` with
    ``invalidation_reason``, e.g. ``"Cache line invalidated because type(L['o']) got deallocated"``) gives a
    tree whose ``invalidated`` and ``first_failure`` carry that reason, with one failing
    ``CACHE_ENTRY_INVALIDATED`` pseudo-leaf (such an entry never serves a call); it does not raise.

    Args:
        cache_entry: one element of ``compat.cache_entries(code)``
            (``torch._dynamo.eval_frame._debug_get_cache_entry_list``).
        f_locals, closure, with_text: as in `build_guard_tree`.
    """
    compile_id, guard_manager, code = compat.cache_entry_fields(cache_entry)
    if code is None and compat.guard_manager_invalidation(guard_manager) is None:
        merged = _merge_locals(f_locals, closure)
        return _invalidated_tree(compile_id, "cache entry invalidated (its code is gone)", merged is not None)
    tree = build_guard_tree(guard_manager, compile_id, f_locals, closure=closure, with_text=with_text)
    if (backend is not None and tree.evaluated and not tree.invalidated
            and compat.backend_mismatch(cache_entry, backend)):
        tree = _with_backend_mismatch(tree, cache_entry, backend)
    return tree


def _with_backend_mismatch(tree: GuardTree, cache_entry: Any, backend: Any) -> GuardTree:
    cached = compat.describe_backend(getattr(cache_entry, "backend", None))
    new = compat.describe_backend(backend)
    # torch's recompile-log text, verbatim (guards.py, get_guard_fail_reason_helper), so "torch reports" matches
    text = (f"BACKEND_MATCH failure: torch.compile detected different backend callables. "
            f"Cached backend: {cached}. New backend: {new}. If this is unexpected, wrap your backend in "
            f"functools.partial (or reuse the same cached backend) to avoid creating a new backend function each "
            f"time. More details: https://github.com/pytorch/pytorch/issues/168373")
    leaf = LeafGuardView(BACKEND_MATCH_ID, "BACKEND_MATCH", "L", (text,), status=_FAIL,
                         expected=f"the backend this entry was compiled with: {cached}",
                         actual=f"this call's backend: {new}",
                         reason=f"compiled with another backend callable (cached {cached}; this call {new})")
    first = tree.first_failure if tree.first_failure is not None else text
    return replace(tree, failing=(*tree.failing, leaf), first_failure=first)


def all_failing_guards(
    cache_entries: Iterable[Any],
    f_locals: dict[str, Any],
    *,
    closure: dict[str, Any] | None = None,
    with_text: bool = False,
    backend: Any = None,
) -> list[GuardTree]:
    """Evaluate every cache entry of a code object against the same inputs: what the recompile stop shows.

    Args:
        cache_entries: torch ``_CacheEntry`` objects, newest first as torch lists them
            (``compat.cache_entries(code)``).
        f_locals: the frame's locals (free variables included), e.g. ``dict(frame.f_locals)`` at the recompile
            stop.
        closure, with_text: as in `build_guard_tree`.
        backend: the call's backend object (see `entry_guard_tree`): entries of another backend fail too.

    Returns:
        One evaluated `GuardTree` per entry, in the given order; ``tree.failing`` lists every failing guard of
        that entry, ``tree.first_failure`` what torch itself would report.
    """
    return [entry_guard_tree(entry, f_locals, closure=closure, with_text=with_text, backend=backend)
            for entry in cache_entries]


# --------------------------------------------------------------------------------------------------------------
# Walking and diffing snapshots
# --------------------------------------------------------------------------------------------------------------

def iter_leaves(tree: GuardTree) -> Iterable[LeafGuardView]:
    """Every leaf of `tree` in id order (preorder, then the epilogue)."""
    stack = [tree.root]
    while stack:
        node = stack.pop()
        yield from node.leaves
        stack.extend(reversed(node.children))
    yield from tree.epilogue


def iter_managers(tree: GuardTree) -> Iterable[tuple[int, GuardNodeView]]:
    """(depth, manager) pairs in preorder."""
    stack = [(0, tree.root)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, c) for c in reversed(node.children))


def diff_guard_trees(old: GuardTree, new: GuardTree) -> list[GuardDiff]:
    """What changed from `old` to `new` (e.g. the entry that failed and the one compiled after it).

    Leaves are grouped by (source, guard_type); within a group, leaves with identical code are unchanged, the
    rest are paired in tree order as "changed", and any surplus is "added" or "removed". Code that embeds object
    ids (``___check_type_id(L['x'], 9412...)``) compares equal within one process. The alias Dynamo installs for
    the builtins dict is renumbered on every compile (``G['__builtins_dict___26']`` then ``___27``): it is
    compared as one name, and the diff reports the new tree's spelling. Results follow the old tree's order,
    then groups that exist only in the new tree.
    """
    def groups(tree: GuardTree) -> dict[tuple[str, str], list[LeafGuardView]]:
        out: dict[tuple[str, str], list[LeafGuardView]] = {}
        for leaf in iter_leaves(tree):
            out.setdefault((_unnumbered(leaf.source), leaf.guard_type), []).append(leaf)
        return out

    def same_code(a: LeafGuardView, b: LeafGuardView) -> bool:
        return a.code == b.code or tuple(map(_unnumbered, a.code)) == tuple(map(_unnumbered, b.code))

    old_groups, new_groups = groups(old), groups(new)
    keys = list(old_groups) + [k for k in new_groups if k not in old_groups]
    diffs: list[GuardDiff] = []
    for key in keys:
        olds = list(old_groups.get(key, ()))
        news = list(new_groups.get(key, ()))
        for leaf in list(olds):
            match = next((n for n in news if same_code(n, leaf)), None)
            if match is not None:
                olds.remove(leaf)
                news.remove(match)
        for a, b in zip(olds, news):
            diffs.append(GuardDiff(DiffKind.CHANGED, b.source, key[1], "\n".join(a.code), "\n".join(b.code), a.id,
                                   b.id))
        for a in olds[len(news):]:
            diffs.append(GuardDiff(DiffKind.REMOVED, a.source, key[1], "\n".join(a.code), None, a.id, None))
        for b in news[len(olds):]:
            diffs.append(GuardDiff(DiffKind.ADDED, b.source, key[1], None, "\n".join(b.code), None, b.id))
    return diffs


_BUILTINS_ALIAS_RE = re.compile(r"__builtins_dict___\d+")


def _unnumbered(text: str) -> str:
    return _BUILTINS_ALIAS_RE.sub("__builtins_dict___*", text) if "__builtins_dict___" in text else text


def tensor_match_sizes(guard_manager: Any, source: str) -> tuple[int | None, ...] | None:
    """The sizes a new entry's ``TENSOR_MATCH`` on `source` pins (``check_tensor(..., size=[None, 3], ...)``:
    None where the dimension is dynamic), read off the guard's code parts (`compat.read_guard_manager`); None when
    the entry has no such guard or its tree cannot be read."""
    try:
        raw = compat.read_guard_manager(guard_manager.root)
    except Exception:  # noqa: BLE001 - an unreadable tree: nothing to say
        return None
    stack = [raw]
    while stack:
        node = stack.pop()
        if node.source == source:
            for leaf in node.leaves:
                if leaf.guard_type != "TENSOR_MATCH":
                    continue
                check = facts.tensor_check_in(parse_code_part(part)[0] for part in leaf.parts)
                return check.size if check is not None else None
        stack.extend(node.children)
    return None
