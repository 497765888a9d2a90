"""Real leaf guards on a copy of a guard tree: built from live objects the way torch builds them, carried from
one source to another (a transport), checked against the guards built for the old object first.

A copy is ``RootGuardManager.clone_manager``'s; managers are reached from its root through the accessors torch
itself uses for a source (`manager_for`: ``L[...]`` through ``framelocals_manager``, ``G[...]`` through
``globals_dict_manager`` + ``dict_getitem_manager``, an ``nn.Module`` attribute through its ``__dict__`` as
``GuardBuilder.getattr_on_nn_module`` does, other attributes through ``getattr_manager``, items through
``dict_getitem_manager``), and leaves are added with `compat.add_leaf_guard` (the ``add_*_guard`` calls of
torch's ``GuardBuilder``). A transport (`carry`) walks the old source's subtree, mirrors each accessor onto the
new source, calls each old leaf on the new value (a guard torch built for the old object must accept the new
one: a baked constant or another dtype is refused with that guard), and rebuilds it from the new value (an
``ID_MATCH`` is re-pinned to the new object). Worker thread, on live torch objects.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Callable

from . import compat
from .guards import parse_code_part
from .toolkit_model import AddedGuard, Problem, ProblemKind
from .toolkit_sources import Source

#: Leaf types `compat.add_leaf_guard` builds from a live object.
BUILDABLE: frozenset[str] = frozenset({"TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH", "DICT_CONTAINS",
                                       "NONE_MATCH"})
#: Leaves that are part of another guard's meaning and need no copy of their own when the new value passes
#: them (the dimension-marking checks beside a TENSOR_MATCH).
_PASS_ONLY: frozenset[str] = frozenset({"DIMENSION_DYNAMIC_MARKING_GUARD", "LENGTH_CHECK", "DICT_LENGTH",
                                        "NOT_NONE", "TRUE_MATCH", "FALSE_MATCH", "DICT_VERSION", "NO_HASATTR"})
#: The comment every guard the toolkit adds carries after its code (where torch puts the user line).
MARK = "added by dynadbg.toolkit"


@dataclass
class Scope:
    """The live objects sources are read from: the frame's locals (free variables included; None when no call
    is at hand) and globals, and the code object whose locals ``L`` names."""

    f_code: CodeType
    f_globals: dict[str, Any]
    f_locals: dict[str, Any] | None = None

    def value(self, source: Source) -> Any:
        from .toolkit_sources import value_at

        return value_at(source, self.f_locals, self.f_globals)


@dataclass
class Carried:
    """What a transport or a guard build did: guards added, problems found, leaves left out (passing ones that
    need no copy of their own)."""

    added: list[AddedGuard] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)


def describe(value: Any) -> str:
    """A short description of a live value for a refusal: ``a torch.float64 tensor of size [8] on cpu``."""
    if isinstance(value, compat.torch.Tensor):
        return f"a {value.dtype} tensor of size {list(value.size())} on {value.device}"
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def guard_code(guard_type: str, source: str, value: Any, key: Any = None) -> str:
    """The code part torch writes for a leaf of `guard_type` on `value` at `source` (guards.py, torch 2.13)."""
    if guard_type == "TENSOR_MATCH":
        return compat.tensor_match_code(value, source)
    if guard_type == "TYPE_MATCH":
        return f"___check_type_id({source}, {id(type(value))}), type={type(value)}"
    if guard_type == "ID_MATCH":
        return f"___check_obj_id({source}, {id(value)}), type={type(value)}"
    if guard_type == "EQUALS_MATCH":
        return f"{source} == {value!r}"
    if guard_type == "DICT_CONTAINS":
        return f"{'' if key in value else 'not '}___dict_contains({key!r}, {source})"
    if guard_type == "NONE_MATCH":
        return f"{source} is None"
    return f"{guard_type} on {source}"


def kind_for(value: Any) -> str:
    """The leaf torch builds for a value like this one: ``TENSOR_MATCH`` for a tensor, ``NONE_MATCH`` for None,
    ``EQUALS_MATCH`` for a constant (bool, int, float, str, and tuples of them), else ``TYPE_MATCH``."""
    if isinstance(value, compat.torch.Tensor):
        return "TENSOR_MATCH"
    if value is None:
        return "NONE_MATCH"
    if _is_constant(value):
        return "EQUALS_MATCH"
    return "TYPE_MATCH"


def _is_constant(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str, bytes, type(None))):
        return True
    return isinstance(value, tuple) and all(_is_constant(v) for v in value)


def manager_for(root: Any, source: Source, scope: Scope) -> tuple[Any, Any]:
    """(guard manager at `source` under `root`, the live value there). Each step joins the manager torch built
    there (`compat.child_guard_manager`), so an added leaf sits where torch's own tree would have it; a missing
    one is made as torch makes it.

    Raises KeyError/AttributeError/IndexError/TypeError when the value cannot be read, ValueError when a step
    has no accessor here."""
    if source.root == "L":
        if scope.f_locals is None:
            raise KeyError(f"no call's inputs to read {source.text} from")
        value = scope.f_locals[source.name]
        # every step joins the manager torch built there, when it built one (one L['cfg'] in the tree)
        mgr = compat.child_guard_manager(root, ("local", source.name), f"L[{source.name!r}]", value,
                                         f_code=scope.f_code, f_globals=None)
    else:
        g = scope.f_globals
        gmgr = compat.child_guard_manager(root, ("globals", None), "G", g, f_code=None, f_globals=g)
        value = g[source.name]
        mgr = compat.child_guard_manager(gmgr, ("item", source.name), f"G[{source.name!r}]", value, f_code=None,
                                         f_globals=None)
    here = Source(source.root, source.name)
    for kind, key in source.steps:
        nxt = here.child((kind, key))
        if kind == "attr":
            if isinstance(value, compat.torch.nn.Module) and key in vars(value):
                holder = vars(value)
                dmgr = compat.child_guard_manager(mgr, ("dict", None), f"{here.text}.__dict__", holder, f_code=None,
                                                  f_globals=None)
                value = holder[key]
                mgr = compat.child_guard_manager(dmgr, ("item", key), nxt.text, value, f_code=None, f_globals=None)
            else:
                value = getattr(value, key)
                mgr = compat.child_guard_manager(mgr, ("attr", key), nxt.text, value, f_code=None, f_globals=None)
        else:
            if not isinstance(value, dict):
                raise ValueError(f"{nxt.text}: only dict items have an accessor here (a {type(value).__name__})")
            holder, value = value, value[key]
            mgr = compat.child_guard_manager(mgr, ("item", key), nxt.text, value, f_code=None, f_globals=None,
                                             holder=holder)
        here = nxt
    return mgr, value


def add_guard(root: Any, source: Source, scope: Scope, guard_type: str | None = None, *, key: Any = None,
              why: str = "added", from_source: str | None = None, like: Any = None) -> AddedGuard:
    """Add one real leaf on `source` to the tree under `root`, built from the live value there (or from
    `like`, "guard it like this value", when given). `guard_type` None picks `kind_for` the value.

    Raises what `manager_for` raises, and TypeError/ValueError from `compat.add_leaf_guard`."""
    mgr, value = manager_for(root, source, scope)
    live = value
    if like is not None:
        value = like
    kind = guard_type or kind_for(value)
    if kind == "EQUALS_MATCH" and (isinstance(value, compat.torch.Tensor) or isinstance(live, compat.torch.Tensor)):
        # a tensor's == is elementwise: torch guards tensors with TENSOR_MATCH
        raise TypeError(f"EQUALS_MATCH cannot guard a tensor ({source.text} holds one): use TENSOR_MATCH")
    code = guard_code(kind, source.text, value, key)
    compat.add_leaf_guard(mgr, kind, value, source.text, [f"{code}  # {MARK} ({why})"], key=key)
    return AddedGuard(source.text, kind, code, why, from_source)


def add_lambda(root: Any, source: Source | None, scope: Scope, fn: Callable[[Any], bool], description: str) -> None:
    """A lambda guard: on the root (`source` None: `fn` gets the f_locals dict) or on the manager at `source`
    (`fn` gets the value there)."""
    mgr = root if source is None else manager_for(root, source, scope)[0]
    compat.add_manager_lambda_guard(mgr, fn, [f"{description}  # {MARK} (lambda)"])


# --------------------------------------------------------------------------------------------------------------
# reading the copy's tree
# --------------------------------------------------------------------------------------------------------------


def find_raw(node: compat.RawGuardManager, source: str) -> compat.RawGuardManager | None:
    """The manager whose source is `source` in a tree read by `compat.read_guard_manager`, or None."""
    if node.source == source:
        return node
    for child in node.children:
        hit = find_raw(child, source)
        if hit is not None:
            return hit
    return None


def leaf_types_at(node: compat.RawGuardManager | None) -> set[str]:
    return set() if node is None else {lf.guard_type for lf in node.leaves}


def _dict_key(code: str) -> tuple[bool, Any]:
    """(contains, key) of a DICT_CONTAINS code part: ``not ___dict_contains('forward', G['m'].__dict__)``."""
    m = re.match(r"^\s*(not\s+)?___dict_contains\((.*?),\s", code)
    if m is None:
        raise ValueError(f"cannot read the key of {code!r}")
    return m.group(1) is None, ast.literal_eval(m.group(2))


def _accessor_key(accessor: str) -> Any:
    inside = accessor[accessor.index("(") + 1: accessor.rindex(")")]
    return ast.literal_eval(inside)


def _step_value(node: compat.RawGuardManager, parent_value: Any) -> tuple[tuple[str, Any], Any]:
    """(accessor step, value) for `node` below a parent whose value is `parent_value`."""
    kind = node.accessor_type or ""
    if kind == "DictGetItemGuardAccessor":
        key = _accessor_key(node.accessor or "")
        return ("item", key), parent_value[key]
    if kind == "GetAttrGuardAccessor":
        name = node.attr_name or _accessor_key(node.accessor or "")
        return ("attr", name), getattr(parent_value, name)
    if kind == "GetGenericDictGuardAccessor":
        return ("dict", None), vars(parent_value)
    raise ValueError(f"{node.source}: no transport for a {kind or 'dict key/value'} accessor")


def carry(old: compat.RawGuardManager, new_root: Any, new_source: Source, scope: Scope, *,
          why: str = "transported", subtree: bool = True) -> Carried:
    """Rebuild on `new_source` (under `new_root`) the guards of the manager `old` (read from a tree; with
    `subtree`, every manager below it too), for the live value now at `new_source`.

    Each old leaf is first called on the new value (``LeafGuard.__call__``): a leaf that rejects it is a
    `ProblemKind.GUARD_FAILS` (an ``ID_MATCH`` too: Dynamo specialised on that object); a passing leaf of a
    buildable type is rebuilt from the new value; passing dimension-marking and length checks are left out.
    """
    out = Carried()
    try:
        mgr, value = manager_for(new_root, new_source, scope)
    except Exception as exc:  # noqa: BLE001 - the new object cannot be read: nothing to guard it with
        out.problems.append(Problem(ProblemKind.NO_VALUE, new_source.text, detail=f"{type(exc).__name__}: {exc}"))
        return out
    _carry_node(old, mgr, value, new_source.text, (old.source, new_source.text), out, why, subtree)
    return out


def _carry_node(old: compat.RawGuardManager, mgr: Any, value: Any, new_text: str, roots: tuple[str, str],
                out: Carried, why: str, subtree: bool) -> None:
    """Carry `old`'s leaves onto `mgr` (value `value`, source `new_text`), then its children. `roots` is (the
    transport's old source, its new source): every source below is renamed from the one to the other."""
    for leaf in old.leaves:
        if leaf.relational:
            out.left_out.append((new_text, leaf.guard_type))
            continue
        code = parse_code_part(leaf.parts[0])[0] if leaf.parts else ""
        kind = leaf.guard_type
        try:
            ok = bool(leaf.guard(value))
        except Exception:  # noqa: BLE001 - a leaf that raises rejects the value, as torch treats it
            ok = False
        if not ok:
            out.problems.append(Problem(ProblemKind.GUARD_FAILS, new_text, kind, code, old_source=old.source,
                                        detail=f"it holds {describe(value)}"))
            continue
        if kind in BUILDABLE:
            key = None
            if kind == "DICT_CONTAINS":
                try:
                    _contains, key = _dict_key(code)
                except ValueError as exc:
                    out.problems.append(Problem(ProblemKind.UNSUPPORTED, new_text, kind, code, detail=str(exc)))
                    continue
            _rebuild(mgr, kind, value, new_text, out, why, old.source, key)
        elif kind in _PASS_ONLY:
            out.left_out.append((new_text, kind))
        else:
            out.problems.append(Problem(ProblemKind.UNSUPPORTED, new_text, kind, code,
                                        detail=f"a {kind} leaf cannot be rebuilt on another source"))
    if not subtree:
        return
    for child in old.children:
        try:
            step, child_value = _step_value(child, value)
        except (KeyError, AttributeError, IndexError, TypeError) as exc:
            if child.leaves or child.children:
                out.problems.append(Problem(ProblemKind.NO_VALUE, _rebased_text(child.source, *roots),
                                            old_source=child.source, detail=f"{type(exc).__name__}: {exc}"))
            continue
        except ValueError as exc:
            out.problems.append(Problem(ProblemKind.UNSUPPORTED, child.source, detail=str(exc)))
            continue
        child_text = _rebased_text(child.source, *roots)
        try:
            sub = compat.child_guard_manager(mgr, step, child_text, child_value, f_code=None, f_globals=None,
                                             holder=value)
        except Exception as exc:  # noqa: BLE001
            out.problems.append(Problem(ProblemKind.UNSUPPORTED, child_text, detail=f"{type(exc).__name__}: {exc}"))
            continue
        _carry_node(child, sub, child_value, child_text, roots, out, why, True)


def _rebased_text(source: str, old: str, new: str) -> str:
    return new + source[len(old):] if source.startswith(old) else source


def _rebuild(mgr: Any, kind: str, value: Any, source: str, out: Carried, why: str, from_source: str,
             key: Any = None) -> None:
    code = guard_code(kind, source, value, key)
    try:
        compat.add_leaf_guard(mgr, kind, value, source, [f"{code}  # {MARK} ({why})"], key=key)
    except Exception as exc:  # noqa: BLE001 - torch refused to build it: say so
        out.problems.append(Problem(ProblemKind.UNSUPPORTED, source, kind, code, detail=f"{type(exc).__name__}: "
                                                                                        f"{exc}"))
        return
    out.added.append(AddedGuard(source, kind, code, why, from_source))
