"""Scripting Dynamo's cache entries: read them, copy one, change its guards and code, validate, install, re-bind.

The engine behind the public ``dynadbg.toolkit`` (`app/toolkit.py`). Everything runs on the calling thread (the
program's own), with or without a debugging session; nothing here prints.

* `entries(target)` — the entries of a compiled function, module or code object as frozen `Entry` records (the
  precompile entries first, then the cache entries, in the order torch tries them). `Entry.check` evaluates every
  guard on a call's arguments (side-effect free); `Entry.copy` makes a `Draft`.
* A `Draft` holds operations, not torch objects: instruction edits in the debugger's edit language
  (`edit`/`insert`/`delete`, `dynadbg.core.edits`), `rebind_global` / `rebind_attr` (rewrite every load of a
  source), guard edits (`drop_guard`, `add_guard` of a real C++ leaf built from a live object, `add_lambda_guard`,
  `transport`). `validate` builds the copy and says what would be refused (`toolkit_model.Validation`); `install`
  refuses (`Refused`) unless the validation is clean or ``force=True`` (the problems then stay on the copy's
  `Entry.warnings`) and returns a `Handle`.
* `rebind(target, {name: new})` — make compiled code run on another object without recompiling.
* `save` / `load` — patch files (`dynadbg.core.patchfile`, format 2) with the edits and the guard operations;
  guards are rebuilt against the live objects when the file is loaded.

How a copy is installed (torch-internals §14; `compat`'s toolkit section): ``front`` loads a precompile entry
(`dynadbg.core.precompile`); ``next`` and ``replace`` wait for the first call that misses the entries torch has
and that the copy accepts, and answer it from the patched cache-miss callback with the copy, so torch itself makes
the cache entry (with the backend of the ``torch.compile`` call that missed); ``replace`` invalidates the original
first. ``persist=True`` re-applies the draft's operations to every later compile of the code (at
``wrap_guarded_code``). Each copy counts the calls it serves with an epilogue lambda guard (torch runs epilogue
guards after every other guard passed); the toolkit's own checks and dynadbg's guard views are not counted.
`Handle.remove` (and `remove_all`) puts back what the install changed; when nothing is installed or persisted the
toolkit's patches on torch are removed again.
"""

from __future__ import annotations

import atexit
import inspect
import itertools
import linecache
import os
import threading
from dataclasses import dataclass, field, replace
from types import CodeType, FunctionType, MethodType
from typing import Any, Callable, Mapping, Sequence

from . import compat, edits, precompile
from .disasm import code_view
from .identity import IdentityCache
from .guards import build_guard_tree, closure_locals, iter_leaves
from .model import CodeView, EditError, EditOp, GuardTree, PatchKey
from .toolkit_guards import Scope
from .toolkit_ops import apply_guard_ops
from .toolkit_model import (
    AddedGuard,
    CallSite,
    CheckResult,
    EntryKind,
    GuardOp,
    GuardOpKind,
    InstallMode,
    InstalledView,
    Problem,
    ProblemKind,
    RebindResult,
    Validation,
)
from .toolkit_sources import Source, attr_load_rows, global_load_rows, parse_source
from .toolkit_validate import guard_new_inputs

__all__ = [
    "Draft", "Entry", "Handle", "Refused", "ToolkitError", "entries", "installed", "load", "rebind", "remove_all",
    "save", "check_entry",
]


class ToolkitError(Exception):
    """A toolkit call that cannot be done as asked (bad argument, nothing compiled, an API this torch lacks).
    Nothing was changed."""


class Refused(ToolkitError):
    """`Draft.install` (or `rebind`, `load`) refused a copy: `validation.problems` says why. Nothing was
    installed. ``force=True`` installs it anyway."""

    def __init__(self, validation: Validation, message: str) -> None:
        super().__init__(message)
        self.validation = validation


# ==============================================================================================================
# What a call names: a compiled function, a module, a code object
# ==============================================================================================================


@dataclass(frozen=True)
class _Target:
    code: CodeType
    fn: Any = None                  # the plain function (or bound method) whose code it is, when known
    f_globals: dict[str, Any] | None = None
    module: Any = None              # the nn.Module, for a module target
    #: the frame local the module is (None: the code's first parameter, ``self``)
    module_local: str | None = None
    #: for code torch shares between callables (``wrap_inline``'s ``inner``): the one this target calls, held in
    #: `module_local`; `entries` lists only the entries whose guards on that local accept it
    callee: Any = None

    @property
    def self_name(self) -> str:
        """The frame local the module target is (``self``, or ``fn`` in ``wrap_inline``'s frame)."""
        return self.module_local or self.code.co_varnames[0]


def _resolve(target: Any) -> _Target:
    """The original code object behind what a user passes (see `entries`)."""
    if isinstance(target, _Target):
        return target
    if isinstance(target, CodeType):
        return _Target(target)
    torch = compat.torch
    shared = compat.wrap_inline_callee(target)
    if shared is not None:
        # a torch built-in module or function: torch compiled `inner(*args, **kwargs)`, which calls it as `fn`
        inner, local, callee = shared
        module = callee if isinstance(callee, torch.nn.Module) else None
        return _Target(inner.__code__, inner, inner.__globals__, module, local, callee)
    inner = getattr(target, "_orig_mod", None)          # torch.compile(module): an OptimizedModule
    if inner is not None and isinstance(target, torch.nn.Module):
        target = inner
    if isinstance(target, torch.nn.Module):
        forward = type(target).forward
        fn = getattr(forward, "_torchdynamo_orig_callable", forward)
        return _Target(fn.__code__, MethodType(fn, target), fn.__globals__, target)
    fn = getattr(target, "_torchdynamo_orig_callable", target)   # torch.compile(fn)
    bound_self = getattr(fn, "__self__", None)
    func = getattr(fn, "__func__", fn)
    if isinstance(func, FunctionType):
        if isinstance(bound_self, torch.nn.Module) and func.__name__ == "forward":
            return _Target(func.__code__, fn, func.__globals__, bound_self)
        return _Target(func.__code__, fn, func.__globals__)
    raise ToolkitError(f"cannot find the code object of a {type(target).__name__}: pass a compiled function, an "
                       f"nn.Module or a code object")


# ==============================================================================================================
# The registry: what the toolkit installed, persisted, and saw compiled (process-wide)
# ==============================================================================================================


class _Counter:
    """The epilogue guard of a copy: counts the calls it serves. Returns True always (it decides nothing).
    Calls made by dynadbg itself (its guard views, the toolkit's checks) or by torch's recompile analysis are
    not counted: they come from those files, while a real dispatch comes from the caller of the compiled
    function."""

    __slots__ = ("hits",)

    def __init__(self) -> None:
        self.hits = 0

    def __call__(self, _f_locals: Any) -> bool:
        if not compat.caller_filename(1).startswith(_NOT_COUNTED):
            self.hits += 1
        return True


_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NOT_COUNTED: tuple[str, ...] = (_HERE,)


class _Install:
    """One installed copy (the mutable record behind a `Handle`)."""

    def __init__(self, draft: "Draft", built: "_Built", mode: InstallMode, persist: bool,
                 forced: tuple[Problem, ...]) -> None:
        self.draft = draft
        self.built = built
        self.mode = mode
        self.persist = persist
        self.forced = forced
        self.original = draft.entry.original
        self.compile_id = compat.new_compile_id(draft.entry.handle_compile_id)
        self.pending = mode is not InstallMode.FRONT
        self.removed = False
        self.counter = built.counter
        #: id(wrapper) -> the counter of each copy `persist` made at a later compile (each entry counts its own)
        self.reapplied: dict[int, _Counter] = {}
        self.replaced: Any = None                    # (code, wrapper, compile id) of the entry `replace` invalidated
        self.keep: list[Any] = [draft.entry.code_obj]
        #: the user line that installed it (what `Entry.call_site` shows for a copy)
        self.call_site = _call_site()
        #: (compile id, problems) of later compiles `persist` could not apply the draft to
        self.not_reapplied: list[tuple[str, tuple[Problem, ...]]] = []
        #: the debugging session running when it was installed (`begin_session`), None outside one
        self.owner: Any = _REGISTRY.owner

    @property
    def hits(self) -> int:
        return self.counter.hits + sum(c.hits for c in self.reapplied.values())

    def hits_of(self, wrapper: Any) -> int:
        """The calls served by the one entry whose guard manager is `wrapper` (this copy, or one `persist` made)."""
        counter = self.reapplied.get(id(wrapper))
        return (counter if counter is not None else self.counter).hits

    def reapplied_from(self, wrapper: Any) -> str | None:
        """This copy's compile id when `wrapper` is the guard manager of a copy `persist` made from it."""
        return str(self.compile_id) if id(wrapper) in self.reapplied else None


class _Registry:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.installs: list[_Install] = []
        self.pending: dict[int, list[_Install]] = {}
        self.persisted: dict[int, list[_Install]] = {}
        #: generated code -> the call that compiled it (weak: Dynamo cleans up after code nobody holds)
        self.call_sites: IdentityCache[CodeType, CallSite] = IdentityCache()
        #: id(wrapper) -> install, for the entries a copy became
        self.by_wrapper: dict[int, _Install] = {}
        self.pinned: list[tuple[dict[str, Any], str]] = []
        self.recording = False
        self._patches: list[Any] = []
        self.serial = itertools.count()
        #: the debugging sessions running on this process, innermost last (`begin_session`)
        self.owners: list[Any] = []

    @property
    def owner(self) -> Any:
        return self.owners[-1] if self.owners else None

    # -- torch patches ---------------------------------------------------------------------------------------

    def ensure_hooks(self) -> None:
        """Patch the cache-miss callback and the compile hand-over (once; `compat.toolkit_target`)."""
        with self.lock:
            if self._patches:
                return
            compat.load()
            miss = compat.toolkit_target("toolkit: install as a cache entry")
            done = compat.toolkit_target("toolkit: persist across recompiles")
            if miss is None or done is None:
                raise ToolkitError(compat.FEATURES.get("toolkit: install as a cache entry")
                                   or compat.FEATURES.get("toolkit: persist across recompiles")
                                   or "this torch lacks the APIs the toolkit needs")
            miss_patch = compat.AttrPatch(miss[0], miss[1], None)
            miss_patch.replacement = self._make_miss(miss_patch.original)
            done_patch = compat.AttrPatch(done[0], done[1], None)
            done_patch.replacement = self._make_done(done_patch.original)
            miss_patch.apply()
            done_patch.apply()
            self._patches = [miss_patch, done_patch]

    def prune_restores(self) -> None:
        """Forget originals waiting to be put back whose code has no cache entries left at all (torch's cache
        was reset: a compile makes them again)."""
        with self.lock:
            for key, waiting in list(self.pending.items()):
                keep = [i for i in waiting if not isinstance(i, _Restore) or compat.cache_entries(i.original)]
                if keep:
                    self.pending[key] = keep
                else:
                    self.pending.pop(key, None)

    def release_hooks(self) -> None:
        """Remove the patches when nothing needs them (no pending copy, nothing persisted)."""
        with self.lock:
            if self.recording or any(self.pending.values()) or any(self.persisted.values()) or not self._patches:
                return
            for patch in reversed(self._patches):
                patch.restore()
            self._patches = []

    def _make_miss(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        reg = self

        def __call__(wrapper: Any, frame: Any, *args: Any, **kwargs: Any) -> Any:
            code = frame.f_code
            waiting = reg.pending.get(id(code))
            if waiting:
                try:
                    answer = reg._answer_miss(code, frame, waiting)
                except Exception:  # noqa: BLE001 - a toolkit fault must not break the user's call
                    answer = None
                if answer is not None:
                    return answer
            swapped = reg._swap_for_trace(code, frame) if reg.persisted.get(id(code)) else []
            try:
                return orig(wrapper, frame, *args, **kwargs)
            finally:
                for g, name, value in reversed(swapped):
                    g[name] = value

        return __call__

    def _answer_miss(self, code: CodeType, frame: Any, waiting: list[_Install]) -> Any:
        f_locals = dict(frame.f_locals)
        emptied: bool | None = None
        for inst in list(waiting):
            if inst.original is not code:
                continue
            if isinstance(inst, _Restore):
                if emptied is None:
                    emptied = not compat.cache_entries(code)
                if emptied:
                    # torch's cache of this code was emptied since the copy was removed (``torch._dynamo.reset()``,
                    # ``reset_code``): Dynamo compiles it afresh, as for any code it has not seen. Putting the old
                    # entry back would run code compiled before the reset, which a debugging session started since
                    # never recorded.
                    with self.lock:
                        if inst in waiting:
                            waiting.remove(inst)
                    self.release_hooks()
                    continue
            if not inst.built.wrapper.root.check_verbose(f_locals).result:
                continue
            with self.lock:
                waiting.remove(inst)
                inst.pending = False
            inst.built.counter.hits += 1      # this very call runs the copy, without a guard check in C++
            if isinstance(inst, _Restore):
                self.release_hooks()
            return compat.guarded_code_return(inst.built.code, inst.built.wrapper, inst.compile_id,
                                              f"dynadbg.toolkit copy of {inst.draft.entry.compile_id}")
        return None

    def _swap_for_trace(self, code: CodeType, frame: Any) -> list[tuple[dict[str, Any], str, Any]]:
        """A persisted ``rebind_global(old, new)``: while Dynamo compiles `code` again, ``old`` names the new
        object in the frame's globals, so the new entry is traced (and guarded) for it; `_reapply` then makes the
        code load ``new`` and moves those guards to ``G[new]``. Returns what to put back after the compile (the
        globals dict, the name, the old value)."""
        g = frame.f_globals
        out: list[tuple[dict[str, Any], str, Any]] = []
        for inst in self.persisted.get(id(code), ()):
            if inst.removed:
                continue
            for op in inst.draft.guard_ops:
                if op.kind is GuardOpKind.REBIND_GLOBAL and op.source in g and op.target in g:
                    out.append((g, op.source, g[op.source]))
                    g[op.source] = g[op.target]
        return out

    def _make_done(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        reg = self

        def wrap_guarded_code(guarded_code: Any) -> Any:
            try:
                reg._on_compile(guarded_code)
            except Exception:  # noqa: BLE001 - recording must never break the user's compile
                pass
            return orig(guarded_code)

        return wrap_guarded_code

    def _on_compile(self, guarded_code: Any) -> None:
        code = guarded_code.code
        original = compat.dynamo_original_of(code)
        site = _call_site()
        if site is not None:
            self.call_sites[code] = site
        if original is None:
            return
        for inst in list(self.persisted.get(id(original), ())):
            if inst.removed:
                continue
            _reapply(inst, guarded_code, original)

    def call_site_of(self, code: CodeType | None) -> CallSite | None:
        return None if code is None else self.call_sites.get(code)

    def precompile_items(self, original: CodeType) -> list[tuple[Any, CodeType]]:
        return [(i.built.wrapper, i.built.code) for i in self.installs
                if i.original is original and i.mode is InstallMode.FRONT and not i.removed]


_REGISTRY = _Registry()


def _forget_at_exit() -> None:
    """Drop the registry's references before the interpreter tears modules down: Dynamo's cleanup hooks fire
    when generated code objects are collected, and torch 2.14/2.15 print "Exception ignored" for hooks that run
    after its own module globals are gone."""
    reg = _REGISTRY
    with reg.lock:
        reg.installs.clear()
        reg.pending.clear()
        reg.persisted.clear()
        reg.by_wrapper.clear()
        reg.call_sites.clear()


atexit.register(_forget_at_exit)


def _call_site() -> CallSite | None:
    """The innermost frame on the stack outside torch and dynadbg: the user's call that is being compiled."""
    torch_dir = os.path.dirname(os.path.abspath(compat.torch.__file__)) + os.sep
    found = compat.innermost_frame_outside((torch_dir, *compat.own_source_paths(), "<frozen"))
    if found is None:
        return None
    name, lineno, function = found
    return CallSite(name, lineno, function, linecache.getline(name, lineno).strip() or None)


def record_call_sites() -> None:
    """Start noting, for every later compile, the user call that made it (`Entry.call_site`). Importing
    ``dynadbg.toolkit`` does this; compiles made before are listed without a call site."""
    try:
        _REGISTRY.ensure_hooks()
    except ToolkitError:
        return
    _REGISTRY.recording = True


def stop_recording_call_sites() -> None:
    """Stop `record_call_sites` (the toolkit's patches go when nothing else needs them)."""
    _REGISTRY.recording = False
    _REGISTRY.release_hooks()


# ==============================================================================================================
# Entries
# ==============================================================================================================


@dataclass(frozen=True)
class Entry:
    """One entry of a compiled code object (`entries`).

    Attributes:
        compile_id: ``"0/1"`` (a toolkit copy has a compile id of its own).
        kind: `EntryKind.CACHE` or `EntryKind.PRECOMPILE` (tried before every cache entry).
        code: the generated code it runs (the debugger's listing), None for an invalidated entry or a
            precompile entry dynadbg did not install.
        guards: its guard tree in the debugger's model (not evaluated; `check` evaluates it).
        backend: the compiler name (``"eager"``, ``"inductor"``), None when torch does not keep one.
        hits: calls it served, for copies the toolkit installed (counted by their epilogue guard); None for
            Dynamo's own entries (torch keeps no count).
        call_site: the user call that compiled it, when the toolkit was recording (`record_call_sites`); for a
            copy, the call that installed it.
        made_by: ``"dynamo"`` or ``"toolkit"`` (a copy: a script's, or a debugging session's edit or guard
            edit), ``"dynadbg"`` (a precompile entry the toolkit does not know).
        invalidated: True when torch will never run it again (it stays listed).
        warnings: the problems a ``force=True`` install overrode, as `Problem` records.
        reapplied_from: for an entry a ``persist=True`` copy became at a later compile (torch's compile id), the
            compile id of the copy it was re-applied from (its `call_site` is that copy's install); else None.
    """

    compile_id: str
    kind: EntryKind
    code: CodeView | None
    guards: GuardTree
    backend: str | None
    hits: int | None = None
    call_site: CallSite | None = None
    made_by: str = "dynamo"
    invalidated: bool = False
    warnings: tuple[Problem, ...] = ()
    reapplied_from: str | None = None
    original: CodeType | None = field(default=None, compare=False, repr=False)
    code_obj: CodeType | None = field(default=None, compare=False, repr=False)
    guard_manager: Any = field(default=None, compare=False, repr=False)
    torch_entry: Any = field(default=None, compare=False, repr=False)
    handle_compile_id: Any = field(default=None, compare=False, repr=False)
    target: Any = field(default=None, compare=False, repr=False)

    def check(self, *args: Any, **kwargs: Any) -> CheckResult:
        """Which guards pass and which fail for a call with these arguments (`check_entry`)."""
        return check_entry(self, args, kwargs)

    def copy(self) -> "Draft":
        """A `Draft` of this entry: its generated code and (at build time) a copy of its guard tree."""
        return Draft(self)


def entries(target: Any) -> tuple[Entry, ...]:
    """The entries of `target`, in the order torch tries them: precompile entries, then the cache entries
    (most recently used first), invalidated ones listed last as torch lists them.

    Args:
        target: what ``torch.compile`` was given or returned (a function, an ``nn.Module``, an
            ``OptimizedModule``), a bound ``forward``, or the code object itself.

    Raises:
        ToolkitError: no code object can be found for `target`.

    Rests on ``torch._dynamo.eval_frame._debug_get_cache_entry_list`` and
    ``torch._C._dynamo.eval_frame._debug_get_precompile_entries`` (`compat.cache_entries`,
    `compat.precompile_entries`). A torch built-in module or function compiled through ``wrap_inline``
    (`compat.wrap_inline_callee`) has the entries of that shared code whose guards on ``L['fn']`` accept it.
    """
    compat.load()
    tgt = _resolve(target)
    code = tgt.code
    if tgt.callee is not None:
        return tuple(e for e in _entries(tgt, code) if _accepts_callee(e, tgt))
    return tuple(_entries(tgt, code))


def _accepts_callee(entry: Entry, tgt: _Target) -> bool:
    """Whether the guards of `entry` on the local holding `tgt`'s callable accept it (torch tells the callables
    sharing ``wrap_inline``'s code apart there: a ``TYPE_MATCH`` for a module, an ``ID_MATCH`` for a function).
    An invalidated entry is listed when it was made for it as well."""
    local = f"L[{tgt.self_name!r}]"
    tree = build_guard_tree(entry.guard_manager, entry.compile_id, {tgt.self_name: tgt.callee})
    if tree.invalidated:
        return True
    return not any(lf.source == local for lf in tree.failing)


def _entries(tgt: _Target, code: CodeType) -> list[Entry]:
    out: list[Entry] = []
    ours = {id(i.built.wrapper): i for i in _REGISTRY.installs if i.original is code and not i.removed}
    for pre in compat.precompile_entries(code):
        wrapper = pre.guard_manager
        inst = ours.get(id(wrapper))
        cid = str(inst.compile_id) if inst else "?"
        run = inst.built.code if inst else None
        out.append(Entry(cid, EntryKind.PRECOMPILE, code_view(run, compile_id=cid) if run is not None else None,
                         _tree(wrapper, cid), inst.draft.entry.backend if inst else None,
                         inst.hits_of(wrapper) if inst else None, inst.call_site if inst else None,
                         "toolkit" if inst else "dynadbg", False,
                         inst.forced if inst else (), None, code, run, wrapper, None,
                         inst.compile_id if inst else None, tgt))
    for e in compat.cache_entries(code):
        cid, wrapper, run = compat.cache_entry_fields(e)
        inst = ours.get(id(wrapper)) or _REGISTRY.by_wrapper.get(id(wrapper))
        site = getattr(inst, "call_site", None) if inst else _REGISTRY.call_site_of(run)
        out.append(Entry(cid, EntryKind.CACHE, code_view(run, compile_id=cid) if run is not None else None,
                         _tree(wrapper, cid), compat.entry_backend_name(e), inst.hits_of(wrapper) if inst else None,
                         site, "toolkit" if inst else "dynamo", run is None,
                         inst.forced if inst else (), inst.reapplied_from(wrapper) if inst else None,
                         code, run, wrapper, e, getattr(e, "compile_id", None), tgt))
    return out


def _tree(wrapper: Any, compile_id: str) -> GuardTree:
    return build_guard_tree(wrapper, compile_id)


def _call_locals(entry: Entry, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The f_locals Dynamo guards for a call: the arguments bound to the function's parameters, its free
    variables, the module as ``self`` for a module target."""
    tgt: _Target | None = entry.target
    if tgt is None or tgt.fn is None:
        raise ToolkitError("this entry's function is not known (it was looked up by code object): pass the "
                           "function or module to entries() to check calls")
    fn = tgt.fn
    try:
        # the compiled code's own parameters, not those of what it wraps (``wrap_inline``'s ``inner`` has
        # ``functools.wraps``: ``(*args, **kwargs)``, not the module's ``forward``); the frame holds defaults too
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError as exc:
        raise ToolkitError(f"these arguments do not fit {getattr(fn, '__qualname__', fn)}: {exc}") from None
    bound.apply_defaults()
    f_locals = dict(bound.arguments)
    func = getattr(fn, "__func__", fn)
    self_obj = getattr(fn, "__self__", None)
    if self_obj is not None:
        first = func.__code__.co_varnames[0] if func.__code__.co_argcount else "self"
        f_locals = {first: self_obj, **f_locals}
    f_locals.update({k: v for k, v in closure_locals(func).items() if k not in f_locals})
    return f_locals


def check_entry(entry: Entry, args: Sequence[Any], kwargs: Mapping[str, Any]) -> CheckResult:
    """Evaluate every guard of `entry` on a call with `args`/`kwargs` (``LeafGuard.__call__`` per leaf and
    ``RootGuardManager.check_verbose``, never ``check()``: no fail count or child order changes; the copy's hit
    counter is not moved). Raises ToolkitError when the arguments do not fit the function."""
    f_locals = _call_locals(entry, args, kwargs)
    tree = build_guard_tree(entry.guard_manager, entry.compile_id, f_locals)
    return CheckResult(entry.compile_id, bool(tree.passed), tuple(tree.failing), tree)


# ==============================================================================================================
# Drafts
# ==============================================================================================================


@dataclass
class _Built:
    code: CodeType
    wrapper: Any
    counter: "_Counter"
    validation: Validation


class Draft:
    """A copy of one entry to change, validate and install (`Entry.copy`). Every method records an operation
    and returns the draft; nothing touches torch until `validate` or `install`.

    Instruction indexes are rows of the entry's listing (``entry.code.instructions``), as in the debugger's ``ll``;
    each edit's index refers to the listing the previous edits produced.
    """

    def __init__(self, entry: Entry) -> None:
        if entry.code_obj is None or entry.guard_manager is None or entry.invalidated:
            raise ToolkitError(f"entry {entry.compile_id} has no code to copy (it was invalidated, or it is a "
                               f"precompile entry dynadbg did not make)")
        if compat.guard_manager_invalidation(entry.guard_manager) is not None:
            raise ToolkitError(f"entry {entry.compile_id} was invalidated: nothing to copy")
        self.entry = entry
        self.edit_ops: list[EditOp] = []
        self.guard_ops: list[GuardOp] = []
        self.derived_from: dict[int, GuardOp] = {}      # index in edit_ops -> the rebind that made it
        self.call_inputs: dict[str, Any] | None = None
        self.current_code = entry.code_obj

    # -- scope -------------------------------------------------------------------------------------------------

    def inputs(self, *args: Any, **kwargs: Any) -> "Draft":
        """Arguments of a sample call: guards on locals (``L[...]``) are built from these live objects."""
        self.call_inputs = _call_locals(self.entry, args, kwargs)
        return self

    def scope(self) -> Scope:
        tgt: _Target | None = self.entry.target
        f_globals = tgt.f_globals if tgt is not None and tgt.f_globals is not None else {}
        f_locals = self.call_inputs
        if f_locals is None and tgt is not None and tgt.module is not None:
            f_locals = {tgt.self_name: tgt.module}
        return Scope(self.entry.original, f_globals, f_locals)  # type: ignore[arg-type]

    # -- instruction edits -----------------------------------------------------------------------------------

    def _add_edit(self, kind: str, text: str, derived: GuardOp | None = None) -> None:
        op = edits.parse_edit(kind, text)
        if isinstance(op, EditError):
            raise ToolkitError(str(op))
        new = edits.apply_edit(self.current_code, op)
        if isinstance(new, EditError):
            raise ToolkitError(str(new))
        if derived is not None:
            self.derived_from[len(self.edit_ops)] = derived
        self.edit_ops.append(op)
        self.current_code = new

    def edit(self, index: int, opname: str, arg: Any = None) -> "Draft":
        """Replace the instruction at row `index` (``edit IDX OPNAME [ARG]``)."""
        self._add_edit("edit", f"{index} {opname}" + ("" if arg is None else f" {arg}"))
        return self

    def insert(self, index: int, instructions: str) -> "Draft":
        """Insert ``"OPNAME [ARG]; OPNAME [ARG]..."`` before row `index` (``insert``)."""
        self._add_edit("insert", f"{index} {instructions}")
        return self

    def delete(self, index: int) -> "Draft":
        """Remove the instruction at row `index` (``delete``)."""
        self._add_edit("delete", str(index))
        return self

    def rebind_global(self, old: str, new: Any) -> "Draft":
        """Make every ``LOAD_GLOBAL old`` load `new` instead, and carry the guards on ``G[old]`` over to it.

        `new` is a global name of the function's module, or an object: the name it has there, else a global
        the toolkit makes for it (``__dynadbg_bound_<n>``, removed again with the copy). Raises ToolkitError
        when the code never loads `old`."""
        name = self._global_name(new)
        rows = global_load_rows(self.current_code, old)
        if not rows:
            raise ToolkitError(f"the code of entry {self.entry.compile_id} never loads the global {old!r}")
        op = GuardOp(GuardOpKind.REBIND_GLOBAL, old, target=name)
        self.guard_ops.append(op)
        import dis

        rows_info = list(dis.get_instructions(self.current_code))
        for row in rows:
            null = "NULL + " if (rows_info[row].arg or 0) & 1 else ""
            self._add_edit("edit", f"{row} LOAD_GLOBAL {null}{name}", derived=op)
        self.guard_ops.append(GuardOp(GuardOpKind.TRANSPORT, f"G[{old!r}]", target=f"G[{name!r}]"))
        return self

    def _global_name(self, new: Any) -> str:
        tgt: _Target | None = self.entry.target
        g = tgt.f_globals if tgt is not None else None
        if isinstance(new, str):
            if g is not None and new not in g:
                raise ToolkitError(f"{new!r} is not a global of {self.entry.original.co_filename}")  # type: ignore[union-attr]
            return new
        if g is None:
            raise ToolkitError("the function's globals are not known: pass the function to entries()")
        for name, value in g.items():
            if value is new and not name.startswith("__"):
                return name
        name = f"__dynadbg_bound_{next(_REGISTRY.serial)}"
        g[name] = new
        _REGISTRY.pinned.append((g, name))
        return name

    def rebind_attr(self, source: str, attr: str, new_attr: str) -> "Draft":
        """Make every load of attribute `attr` of the object at `source` (``"G['lin_a']"``) read `new_attr`:
        a ``LOAD_ATTR attr`` on it, or the key of a ``_parameters``/``_buffers``/``_modules`` subscript (how
        Dynamo reads a module's parameters). The validator then guards the new graph inputs."""
        base = _source(source)
        rows = attr_load_rows(self.current_code, base, attr)
        if not rows:
            raise ToolkitError(f"the code of entry {self.entry.compile_id} never loads {source}.{attr}")
        op = GuardOp(GuardOpKind.REBIND_ATTR, base.text, attr=attr, target=new_attr)
        self.guard_ops.append(op)
        for row, how in rows:
            self._add_edit("edit", f"{row} LOAD_ATTR {new_attr}" if how == "attr" else f"{row} LOAD_CONST "
                                                                                       f"{new_attr!r}", derived=op)
        return self

    # -- guard edits -------------------------------------------------------------------------------------------

    def drop_guard(self, which: str, guard_type: str | None = None) -> "Draft":
        """Drop a guard: `which` is a leaf id of ``entry.guards`` (``"g6"``; that leaf only) or a source
        (``"L['n']"``; with `guard_type`, that leaf of its manager, else the whole manager and everything
        below it). Raises ToolkitError when the tree has no such guard."""
        tree = self.entry.guards
        if which.startswith("g") and which[1:].isdigit():
            leaf = next((lf for lf in iter_leaves(tree) if lf.id == which), None)
            if leaf is None:
                raise ToolkitError(f"no guard {which} in entry {self.entry.compile_id}")
            if leaf.source == "L" or leaf.epilogue or leaf.relational:
                raise ToolkitError(f"{which} is a {'root' if leaf.source == 'L' else 'relational or epilogue'} "
                                   f"guard: a copy cannot leave it out (torch keeps root, relational and "
                                   f"epilogue guards in every copy)")
            self.guard_ops.append(GuardOp(GuardOpKind.DROP, leaf.source, leaf.guard_type))
            return self
        src = _source(which)
        if not any(lf.source == src.text and (guard_type is None or lf.guard_type == guard_type)
                   for lf in iter_leaves(tree)) and not _has_manager(tree, src.text):
            raise ToolkitError(f"no {guard_type or 'guard'} on {src.text} in entry {self.entry.compile_id}")
        self.guard_ops.append(GuardOp(GuardOpKind.DROP, src.text, guard_type))
        return self

    def add_guard(self, source: str, guard_type: str | None = None, *, like: Any = None, key: Any = None) -> "Draft":
        """Add a real leaf guard on `source`, built from the live object there (or "like this value": `like`),
        as torch builds it: ``TENSOR_MATCH``, ``TYPE_MATCH``, ``ID_MATCH``, ``EQUALS_MATCH``, ``DICT_CONTAINS``
        (`key`), ``NONE_MATCH``; None picks the one torch uses for such a value."""
        src = _source(source)
        if guard_type is not None and guard_type not in ("TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH",
                                                         "DICT_CONTAINS", "NONE_MATCH"):
            raise ToolkitError(f"cannot build a {guard_type} leaf (TENSOR_MATCH, TYPE_MATCH, ID_MATCH, "
                               f"EQUALS_MATCH, DICT_CONTAINS, NONE_MATCH)")
        if guard_type == "DICT_CONTAINS" and key is None:
            raise ToolkitError("DICT_CONTAINS needs key=")
        self.guard_ops.append(GuardOp(GuardOpKind.ADD, src.text, guard_type, target=None,
                                      description=None if key is None else repr(key),
                                      fn=(like, key)))
        return self

    def add_lambda_guard(self, fn: Callable[[Any], bool], description: str, source: str | None = None) -> "Draft":
        """Add a Python lambda guard: on the root (`fn` gets the frame's f_locals dict) or on `source` (`fn` gets
        the value there). False, or an exception, makes the copy miss. Patch files keep its description only."""
        self.guard_ops.append(GuardOp(GuardOpKind.LAMBDA, _source(source).text if source else "L",
                                      description=description, fn=fn))
        return self

    def transport(self, old_source: str, new_source: str, *, keep_old: bool = False) -> "Draft":
        """Rebuild the guards of `old_source` and everything below it for the object at `new_source`: each must
        accept the new object (also an ``ID_MATCH``: Dynamo specialised the code on that very object). The old
        subtree is left out of the copy unless `keep_old` (the code still reads it)."""
        old, new = _source(old_source), _source(new_source)
        if not _has_manager(self.entry.guards, old.text):
            raise ToolkitError(f"entry {self.entry.compile_id} has no guards on {old.text}")
        self.guard_ops.append(GuardOp(GuardOpKind.TRANSPORT, old.text, target=new.text,
                                      description="keep old" if keep_old else None))
        return self

    # -- validate and install ----------------------------------------------------------------------------------

    def validate(self) -> Validation:
        """Build the copy (nothing installed) and return what validation found."""
        return self._build().validation

    def build(self, *, code: CodeType | None = None, guard_manager: Any = None,
              f_locals: dict[str, Any] | None = None,
              f_globals: dict[str, Any] | None = None) -> tuple[CodeType, Any, Validation]:
        """Build the copy without installing it: (code, ``GuardManagerWrapper``, validation).

        `code`/`guard_manager` default to the entry's; given, they are another compile of the same code object (a
        compile being finished, as at the debugger's compile stop: the caller hands the results to it). `f_locals`
        and `f_globals` are the live objects guards are built from (a stop's frame), instead of `inputs`."""
        scope = self.scope()
        if f_locals is not None or f_globals is not None:
            scope = Scope(self.entry.original, f_globals if f_globals is not None else scope.f_globals,  # type: ignore[arg-type]
                          f_locals if f_locals is not None else scope.f_locals)
        built = self._build(code, guard_manager, scope)
        validation = built.validation
        if code is not None and self.edit_ops and edits.fingerprint(code) != edits.fingerprint(self.entry.code_obj):  # type: ignore[arg-type]
            validation = replace(validation, problems=validation.problems + (Problem(
                ProblemKind.EDIT, detail="the instruction edits were made for other Dynamo code than this compile's"),))
        return built.code, built.wrapper, validation

    def _build(self, base_code: CodeType | None = None, base_wrapper: Any = None, scope: Scope | None = None,
               edit_ops: Sequence[EditOp] | None = None) -> _Built:
        code = base_code or self.entry.code_obj
        assert code is not None  # __init__ refuses an entry without a code object
        return _build(self, code, base_wrapper or self.entry.guard_manager,
                      scope or self.scope(), list(self.edit_ops if edit_ops is None else edit_ops))

    def install(self, mode: str | InstallMode = "front", *, persist: bool = False, force: bool = False) -> "Handle":
        """Validate and install the copy (see `InstallMode` for what each mode does on a miss).

        Raises:
            Refused: validation found problems and `force` is False (nothing installed).
            ToolkitError: a bad mode, or this torch lacks an API the mode needs.
        """
        try:
            mode = InstallMode(mode)
        except ValueError:
            raise ToolkitError(f"mode must be one of {', '.join(m.value for m in InstallMode)}, not {mode!r}") from None
        compat.load()
        if mode is InstallMode.FRONT and compat.precompile_entries_supported() is not None:
            raise ToolkitError(compat.precompile_entries_supported() or "")
        built = self._build()
        if built.validation.problems and not force:
            from .format.toolkit import refusal_text

            raise Refused(built.validation, refusal_text(built.validation))
        if mode is not InstallMode.FRONT or persist:
            _REGISTRY.ensure_hooks()
        inst = _Install(self, built, mode, persist, built.validation.problems if force else ())
        original = self.entry.original
        if built.code is not self.entry.code_obj:
            # torch looks generated code up in its own tables (recompile reasons index orig_code_map)
            compat.register_replacement_code(self.entry.code_obj, built.code, original)  # type: ignore[arg-type]
        _widen_diff_guards(original, built.validation)  # type: ignore[arg-type]
        with _REGISTRY.lock:
            _REGISTRY.installs.append(inst)
            _REGISTRY.by_wrapper[id(built.wrapper)] = inst
            if mode is InstallMode.FRONT:
                precompile.set_entries(original, "toolkit", _REGISTRY.precompile_items(original))  # type: ignore[arg-type]
            else:
                if mode is InstallMode.REPLACE:
                    _invalidate_base(inst)
                _REGISTRY.pending.setdefault(id(original), []).append(inst)
            if persist:
                _REGISTRY.persisted.setdefault(id(original), []).append(inst)
        return Handle(inst)


def _widen_diff_guards(original: CodeType, validation: Validation) -> None:
    """Under ``set_stance(skip_guard_eval_unsafe=True)`` torch runs only each entry's diff guards: add the sources
    that tell a copy from the entries beside it (the guards it added, dropped or reads anew) to every live entry's
    diff guards, so the right one serves (torch does the same with the sources of failing guards at a
    recompile)."""
    sources = {a.source for a in validation.added} | {s for s, _t in validation.dropped}
    sources |= {new for _k, _old, new in validation.new_sources if new}
    if not sources:
        return
    for e in compat.cache_entries(original):
        if getattr(e, "code", None) is None or compat.guard_manager_invalidation(e.guard_manager) is not None:
            continue
        try:
            compat.populate_diff_guards(e.guard_manager, sorted(sources))
        except Exception:  # noqa: BLE001 - only the skip_guard_eval_unsafe stance needs them
            pass


def _source(text: str) -> Source:
    src = parse_source(text)
    if src is None:
        raise ToolkitError(f"{text!r} is not a source (write it as torch does: L['x'], G['lin'], "
                           f"G['lin']._parameters['weight'])")
    return src


def _has_manager(tree: GuardTree, source: str) -> bool:
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if node.source == source:
            return True
        stack.extend(node.children)
    return False


def _build(draft: Draft, base_code: CodeType, base_wrapper: Any, scope: Scope, edit_ops: list[EditOp]) -> _Built:
    """The copy: the edited code, a new guard tree, and what validation found (see the module docstring)."""
    problems: list[Problem] = []
    added: list[AddedGuard] = []
    dropped: list[tuple[str, str | None]] = []
    code = edits.build_patched(base_code, edit_ops) if edit_ops else base_code
    if isinstance(code, EditError):
        problems.append(Problem(ProblemKind.EDIT, detail=code.message))
        code = base_code
    base_root = base_wrapper.root
    applied = apply_guard_ops(base_root, draft.guard_ops, scope, check_baked=True)
    clone = applied.clone
    problems.extend(applied.problems)
    added.extend(applied.added)
    dropped.extend(applied.dropped)
    check = guard_new_inputs(base_code, code, base_root, clone, scope,
                             dropped=[s for s, t in dropped if t is None or t == "TENSOR_MATCH"])
    problems.extend(check.problems)
    added.extend(check.added)
    counter = _Counter()
    compat.add_epilogue_guard(clone, counter, ["True  # counts the calls this dynadbg.toolkit copy serves"])
    wrapper = compat.wrap_guard_root(clone, base_wrapper)
    try:
        compat.populate_diff_guards(wrapper, [a.source for a in added] + [s for s, _t in dropped])
    except Exception:  # noqa: BLE001 - only the skip_guard_eval_unsafe stance needs them
        pass
    validation = Validation(tuple(problems), tuple(added), tuple(dropped), tuple(check.changed),
                            draft.entry.compile_id)
    return _Built(code, wrapper, counter, validation)


def _invalidate_base(inst: _Install) -> None:
    """`replace`: invalidate the entry the draft was copied from, keeping what is needed to put it back."""
    entry = inst.draft.entry
    e = entry.torch_entry
    if e is None:
        if entry.kind is EntryKind.PRECOMPILE:
            raise ToolkitError("replace works on a cache entry; this is a precompile entry (remove its handle)")
        return
    inst.replaced = (entry.code_obj, entry.guard_manager, entry.handle_compile_id)
    compat.invalidate_cache_entry(e, f"replaced by dynadbg.toolkit copy {inst.compile_id}")


def _reapply(inst: _Install, guarded_code: Any, original: CodeType) -> None:
    """`persist`: apply the draft to a new compile of its code (at ``wrap_guarded_code``). The instruction edits
    need Dynamo's code to be what they were made for (same fingerprint), except edits a rebind made, which are
    made again for the new code. A draft that does not validate on the new compile leaves it as Dynamo made it."""
    dynamo = guarded_code.code
    draft = inst.draft
    ops: list[EditOp] | None = list(draft.edit_ops)
    if edits.fingerprint(dynamo) != edits.fingerprint(draft.entry.code_obj):  # type: ignore[arg-type]
        ops = _rederive(draft, dynamo)
    if ops is None:
        return
    scope_pair = compat.compile_frame_scope()
    scope = draft.scope()
    if scope_pair is not None:
        scope = Scope(original, scope_pair[1], scope_pair[0])
    built = _build(draft, dynamo, guarded_code.guard_manager, scope, ops)
    if built.validation.problems:
        inst.not_reapplied.append((str(guarded_code.compile_id), built.validation.problems))
        return
    inst.keep.extend((dynamo, built))
    built.counter.hits += 1      # the call that compiled it runs it next, without a guard check
    inst.reapplied[id(built.wrapper)] = built.counter
    guarded_code.code = built.code
    guarded_code.guard_manager = built.wrapper
    if built.code is not dynamo:
        compat.register_replacement_code(dynamo, built.code, original)
    _REGISTRY.by_wrapper[id(built.wrapper)] = inst


def _rederive(draft: Draft, code: CodeType) -> list[EditOp] | None:
    """The instruction edits of `draft`'s rebinds made again for another code; None when the draft has edits
    of its own (they name rows of the code they were made for)."""
    if len(draft.derived_from) != len(draft.edit_ops):
        return None
    return _rebind_edits(draft.guard_ops, code) or None


def _rebind_edits(guard_ops: Sequence[GuardOp], code: CodeType) -> list[EditOp]:
    """The instruction edits the ``REBIND_GLOBAL``/``REBIND_ATTR`` operations make on `code`."""
    import dis

    out: list[EditOp] = []
    rows_info = list(dis.get_instructions(code))
    for op in guard_ops:
        if op.kind is GuardOpKind.REBIND_GLOBAL:
            for row in global_load_rows(code, op.source):
                null = "NULL + " if (rows_info[row].arg or 0) & 1 else ""
                parsed = edits.parse_edit("edit", f"{row} LOAD_GLOBAL {null}{op.target}")
                if isinstance(parsed, EditOp):
                    out.append(parsed)
        elif op.kind is GuardOpKind.REBIND_ATTR:
            for row, how in attr_load_rows(code, _source(op.source), op.attr or ""):
                text = f"{row} LOAD_ATTR {op.target}" if how == "attr" else f"{row} LOAD_CONST {op.target!r}"
                parsed = edits.parse_edit("edit", text)
                if isinstance(parsed, EditOp):
                    out.append(parsed)
    return out


# ==============================================================================================================
# Handles
# ==============================================================================================================


class Handle:
    """An installed copy: its counts, its entry, and `remove`."""

    def __init__(self, inst: _Install) -> None:
        self.record = inst

    @property
    def compile_id(self) -> str:
        """The copy's own compile id (``"0/2"``)."""
        return str(self.record.compile_id)

    @property
    def mode(self) -> InstallMode:
        return self.record.mode

    @property
    def hits(self) -> int:
        """Calls the copy served (copies `persist` made at later compiles included)."""
        return self.record.hits

    @property
    def pending(self) -> bool:
        """True while a ``next``/``replace`` copy waits for the first call that needs it."""
        return self.record.pending

    @property
    def validation(self) -> Validation:
        return self.record.built.validation

    @property
    def entry(self) -> Entry | None:
        """The copy as torch holds it now, or None (pending, removed, or dropped by a reset)."""
        inst = self.record
        if inst.removed:
            return None
        wrappers = {id(inst.built.wrapper)} | {k for k, v in _REGISTRY.by_wrapper.items() if v is inst}
        for e in entries(inst.draft.entry.target if inst.draft.entry.target is not None else inst.original):
            if id(e.guard_manager) in wrappers:
                return e
        return None

    def view(self) -> InstalledView:
        inst = self.record
        return InstalledView(str(inst.compile_id), inst.draft.entry.compile_id, inst.mode, inst.pending, inst.hits,
                             inst.persist, inst.removed, inst.forced, tuple(inst.draft.edit_ops),
                             tuple(inst.draft.guard_ops), tuple(inst.not_reapplied))

    def remove(self) -> None:
        """Take the copy out and put back what installing it changed: the precompile entry goes, a cache entry
        it became is invalidated, a ``replace``d original comes back (without a recompile, at the first call
        that needs it; not after torch's cache of that code was emptied: then Dynamo compiles it), a persisted
        draft stops being re-applied, globals the toolkit made are deleted. Calling it twice does nothing."""
        _remove(self.record)

    def swap(self, draft: "Draft", *, force: bool = False) -> "Handle":
        """Put `draft` (a copy of the same entry with other operations) in place of this copy: this one is taken
        out without putting back what it replaced, the new one gets a compile id of its own. A ``next``/``replace``
        copy's successor waits, as this one did, for the first call that needs it (a ``replace``d original stays
        out and comes back when the new copy is removed); a ``front`` copy's is tried from the next call, in the
        old one's place before the cache entries. Returns the new copy's handle.

        Raises:
            Refused: the draft does not validate and `force` is False (this copy stays).
            ToolkitError: this copy was removed, or the draft is of another code object.
        """
        old = self.record
        if old.removed or draft.entry.original is not old.original:
            raise ToolkitError("swap works on an installed copy, with a draft of the same code")
        built = draft._build()  # noqa: SLF001 - the same module's draft
        if built.validation.problems and not force:
            from .format.toolkit import refusal_text

            raise Refused(built.validation, refusal_text(built.validation))
        new = _Install(draft, built, old.mode, old.persist, built.validation.problems if force else ())
        if old.mode is InstallMode.FRONT:
            return self._swap_front(old, new)
        new.replaced, new.owner = old.replaced, old.owner
        reg = _REGISTRY
        with reg.lock:
            ids = Handle._take_place(old, new)
            waiting = reg.pending.setdefault(id(old.original), [])
            reg.pending[id(old.original)] = [i for i in waiting if i is not old] + [new]
        for e in compat.cache_entries(old.original):  # type: ignore[arg-type]
            if id(e.guard_manager) in ids:
                compat.invalidate_cache_entry(e, f"dynadbg.toolkit copy {old.compile_id} swapped for {new.compile_id}")
        if built.code is not draft.entry.code_obj:
            compat.register_replacement_code(draft.entry.code_obj, built.code, old.original)  # type: ignore[arg-type]
        _widen_diff_guards(old.original, built.validation)  # type: ignore[arg-type]
        return Handle(new)

    @staticmethod
    def _swap_front(old: _Install, new: _Install) -> "Handle":
        """`swap` of a ``front`` copy: the new precompile entry takes the old one's place in the order they are
        tried (`precompile.set_entries`); the cache entries behind are left alone."""
        built, original = new.built, old.original
        if built.code is not new.draft.entry.code_obj:
            compat.register_replacement_code(new.draft.entry.code_obj, built.code, original)  # type: ignore[arg-type]
        _widen_diff_guards(original, built.validation)  # type: ignore[arg-type]
        reg = _REGISTRY
        with reg.lock:
            Handle._take_place(old, new)
            precompile.set_entries(original, "toolkit", reg.precompile_items(original))  # type: ignore[arg-type]
        return Handle(new)

    @staticmethod
    def _take_place(old: _Install, new: _Install) -> set[int]:
        """In the registry (its lock held), `new` takes `old`'s place: the wrappers that named `old` (returned),
        the list of installs, the persisted ones; `old` is marked removed."""
        reg = _REGISTRY
        old.removed = True
        ids = {k for k, v in reg.by_wrapper.items() if v is old} | {id(old.built.wrapper)}
        for k in ids:
            reg.by_wrapper.pop(k, None)
        reg.by_wrapper[id(new.built.wrapper)] = new
        reg.installs = [new if i is old else i for i in reg.installs]
        persisted = reg.persisted.get(id(old.original), [])
        if old in persisted:
            reg.persisted[id(old.original)] = [new if i is old else i for i in persisted]
        return ids

    def __repr__(self) -> str:
        v = self.view()
        state = "removed" if v.removed else "pending" if v.pending else "installed"
        return f"<dynadbg.toolkit copy {v.compile_id} of {v.copied_from} ({v.mode.value}, {state}, {v.hits} hits)>"


def _remove(inst: _Install) -> None:
    reg = _REGISTRY
    with reg.lock:
        if inst.removed:
            return
        inst.removed = True
        original = inst.original
        reg.installs = [i for i in reg.installs if i is not inst]
        waiting = reg.pending.get(id(original), [])
        if inst in waiting:
            waiting.remove(inst)
        persisted = reg.persisted.get(id(original), [])
        if inst in persisted:
            persisted.remove(inst)
        ids = {k for k, v in reg.by_wrapper.items() if v is inst} | {id(inst.built.wrapper)}
        for k in ids:
            reg.by_wrapper.pop(k, None)
        # a later copy that replaced this one would put it back on its own removal: it must not come back
        for key, pending in list(reg.pending.items()):
            reg.pending[key] = [p for p in pending if not (isinstance(p, _Restore) and id(p.built.wrapper) in ids)]
    if inst.mode is InstallMode.FRONT:
        precompile.set_entries(original, "toolkit", reg.precompile_items(original))  # type: ignore[arg-type]
    for e in compat.cache_entries(original):  # type: ignore[arg-type]
        if id(e.guard_manager) in ids:
            compat.invalidate_cache_entry(e, f"dynadbg.toolkit copy {inst.compile_id} removed")
    if inst.replaced is not None:
        _put_back(inst)
    if not reg.installs:
        for g, name in reg.pinned:
            g.pop(name, None)
        reg.pinned.clear()
    reg.release_hooks()


class _Restore(_Install):
    """The entry a ``replace`` invalidated, waiting to be put back as a cache entry at its next call."""

    original: CodeType  # always known here, unlike a draft's entry (`Entry.original` may be None)

    def __init__(self, original: CodeType, code: CodeType, wrapper: Any, compile_id: Any) -> None:  # noqa: D107
        self.original = original
        self.built = _Built(code, wrapper, _Counter(), Validation(()))
        self.compile_id = compat.new_compile_id(compile_id)
        self.pending = True
        self.removed = False
        self.mode = InstallMode.NEXT
        self.persist = False
        self.forced = ()
        self.counter = self.built.counter
        self.reapplied = {}
        self.replaced = None
        self.not_reapplied = []
        self.call_site = None
        self.owner = None
        self.draft = _RestoreDraft(compile_id)  # type: ignore[assignment]


class _RestoreDraft:
    def __init__(self, compile_id: Any) -> None:
        self.entry = _RestoreEntry(str(compile_id))


@dataclass
class _RestoreEntry:
    compile_id: str


def _put_back(inst: _Install) -> None:
    code, wrapper, compile_id = inst.replaced
    restore = _Restore(inst.original, code, wrapper, compile_id)  # type: ignore[arg-type]
    _REGISTRY.ensure_hooks()
    with _REGISTRY.lock:
        _REGISTRY.pending.setdefault(id(inst.original), []).insert(0, restore)


def installed() -> tuple[Handle, ...]:
    """Every copy the toolkit has installed in this process and not removed."""
    return tuple(Handle(i) for i in _REGISTRY.installs)


def remove_all() -> None:
    """`Handle.remove` every copy, and drop the toolkit's patches on torch when nothing needs them. Originals a
    ``replace`` invalidated come back at their next call, unless torch's cache of that code was emptied since
    (``torch._dynamo.reset()``, ``reset_code``: then Dynamo compiles it again)."""
    for inst in list(_REGISTRY.installs):
        _remove(inst)
    _REGISTRY.prune_restores()
    _REGISTRY.release_hooks()


# ==============================================================================================================
# Debugging sessions: what a session installs goes with it; its guard edits are drafts of the entry at a stop
# ==============================================================================================================


def begin_session(owner: Any) -> None:
    """Note that a debugging session runs from now on (`dynadbg.core.session.Session` calls it at start): every
    copy installed until `end_session` belongs to it, from the session's own guard edits or from a script the
    session runs."""
    with _REGISTRY.lock:
        _REGISTRY.owners.append(owner)


def end_session(owner: Any) -> tuple[str, ...]:
    """The session `owner` ended: `Handle.remove` every copy installed while it ran, except those installed
    with ``persist=True`` (the user asked for them to outlive the session), newest first, so each entry they
    replaced comes back. Returns the compile ids of the copies removed."""
    with _REGISTRY.lock:
        if owner in _REGISTRY.owners:
            _REGISTRY.owners.remove(owner)
        mine = [i for i in _REGISTRY.installs if i.owner is owner and not i.persist]
    for inst in reversed(mine):
        _remove(inst)
    _REGISTRY.prune_restores()
    _REGISTRY.release_hooks()
    return tuple(str(i.compile_id) for i in mine)


def entry_serving(original: CodeType, code: CodeType, f_globals: dict[str, Any] | None) -> Entry | None:
    """The live cache entry of `original` that runs the generated code `code` (the entry of a frame the
    debugger stopped in), with `f_globals` as the globals its guards read, or None (an invalidated entry, a
    precompile entry of a session's instruction edit)."""
    compat.load()
    tgt = _Target(original, None, f_globals)
    for e in entries(tgt):
        if e.kind is EntryKind.CACHE and not e.invalidated and e.code_obj is code:
            return e
    return None


def compile_entry(original: CodeType, dynamo_code: CodeType, guard_manager: Any, compile_id: Any,
                  f_globals: dict[str, Any] | None) -> Entry:
    """An `Entry` for a compile Dynamo has finished but not handed to torch's cache yet (the debugger's compile
    stop): `Entry.copy` then `Draft.build(code=..., guard_manager=...)` makes what the stop hands over instead."""
    cid = str(compile_id)
    return Entry(cid, EntryKind.CACHE, None, _tree(guard_manager, cid), None, original=original,
                 code_obj=dynamo_code, guard_manager=guard_manager, handle_compile_id=compile_id,
                 target=_Target(original, None, f_globals))


def waiting_copy(original: CodeType, code: CodeType) -> tuple[Any, str] | None:
    """(guard manager wrapper, compile id) of the newest copy of `original` installed as ``next``/``replace``
    that runs `code` and has not served a call yet (torch has no cache entry for it until then), or None."""
    with _REGISTRY.lock:
        for inst in reversed(_REGISTRY.pending.get(id(original), [])):
            if not isinstance(inst, _Restore) and inst.built.code is code:
                return inst.built.wrapper, str(inst.compile_id)
    return None


# ==============================================================================================================
# Re-binding
# ==============================================================================================================


def rebind(target: Any, mapping: Mapping[str, Any], *, swap: bool | None = None, mode: str = "replace",
           persist: bool = True, force: bool = False) -> tuple[RebindResult, ...]:
    """Make the compiled code of `target` run on other objects without recompiling.

    Each key of `mapping` names what the code reads now, each value the object it should run on:

    * a global name of the function's module (``{"lin_a": lin_b}``): the copies' code loads the new object's
      own global name (or a global the toolkit makes for it) wherever it loaded ``lin_a``, and the guards on
      ``G['lin_a']`` are rebuilt on it (`Draft.rebind_global`). ``lin_a`` itself is left alone.
    * a dotted path of submodules or attributes of a module target (``{"layers.3": new_layer}``): the new
      object is put there (``model.layers[3] = new_layer``: a swap; the module is the compiled code's input).
      When every entry's own guards accept it there, nothing is installed (`RebindResult.accepted_by`);
      otherwise the entries that reject it get a copy with the guards on that source rebuilt for the new
      object, each of which it must pass (a baked constant, another dtype or another identity is refused).

    `swap=True` swaps a global too (``fn.__globals__['lin_a'] = lin_b``); `swap=False` is refused for a path.
    `mode` and `persist` are `Draft.install`'s; by default a copy replaces its entry and is re-applied when
    Dynamo recompiles (so a later dtype change of the new object recompiles *for it*).

    Raises:
        Refused: a copy did not validate (nothing installed for that key, and nothing after it).
        ToolkitError: a key the code never reads, or no compiled entry.
    """
    compat.load()
    tgt = _resolve(target)
    out = []
    for key, new in mapping.items():
        is_path = tgt.module is not None and not (tgt.f_globals is not None and key in tgt.f_globals
                                                   and "." not in key and not hasattr(tgt.module, key))
        do_swap = is_path if swap is None else swap
        if is_path and not do_swap:
            raise ToolkitError(f"{key!r} is a path in the module: it is re-bound by swapping the object in "
                               f"(swap=True)")
        live = [e for e in entries(target) if e.kind is EntryKind.CACHE and not e.invalidated
                and e.made_by == "dynamo"]
        if not live:
            raise ToolkitError("no live cache entry to re-bind: call the compiled function once first")
        if do_swap:
            out.append(_rebind_swap(tgt, target, key, new, live, is_path, mode, persist, force))
        else:
            out.append(_rebind_rewrite(tgt, key, new, live, mode, persist, force))
    return tuple(out)


def _rebind_rewrite(tgt: _Target, key: str, new: Any, live: list[Entry], mode: str, persist: bool,
                    force: bool) -> RebindResult:
    readers = [e for e in live if e.code_obj is not None and global_load_rows(e.code_obj, key)]
    if not readers:
        raise ToolkitError(f"no compiled entry of {tgt.code.co_name} loads the global {key!r}")
    drafts = [e.copy().rebind_global(key, new) for e in readers]
    checked = [(d, d.validate()) for d in drafts]
    bad = [v for _d, v in checked if v.problems]
    if bad and not force:
        from .format.toolkit import refusal_text

        raise Refused(bad[0], refusal_text(bad[0]))
    handles = [d.install(mode, persist=persist, force=force) for d, _v in checked]
    name = next(op.target for op in drafts[0].guard_ops if op.kind is GuardOpKind.REBIND_GLOBAL)
    return RebindResult(key, f"G[{key!r}]", f"G[{name!r}]", False, (), tuple(h.compile_id for h in handles),
                        tuple(e.compile_id for e in readers))


def _slot(tgt: _Target, key: str, is_path: bool) -> tuple[Any, str, Source]:
    """(owner object, attribute name, source) of the slot `key` names."""
    if not is_path:
        return tgt.f_globals, key, Source("G", key)
    self_name = tgt.self_name
    owner = tgt.module
    src = Source("L", self_name)
    parts = key.split(".")
    for part in parts[:-1]:
        src = _module_step(src, owner, part)
        owner = getattr(owner, part)
    src = _module_step(src, owner, parts[-1])
    return owner, parts[-1], src


def _module_step(src: Source, owner: Any, name: str) -> Source:
    """The source Dynamo writes for ``owner.name``: through ``_modules``/``_parameters``/``_buffers`` for those,
    a plain attribute otherwise."""
    for holder in ("_modules", "_parameters", "_buffers"):
        if name in getattr(owner, holder, {}):
            return src.child(("attr", holder)).child(("item", name))
    return src.child(("attr", name))


def _rebind_swap(tgt: _Target, target: Any, key: str, new: Any, live: list[Entry], is_path: bool, mode: str,
                 persist: bool, force: bool) -> RebindResult:
    owner, name, src = _slot(tgt, key, is_path)
    old = owner[name] if isinstance(owner, dict) else getattr(owner, name)
    if isinstance(owner, dict):
        owner[name] = new
    else:
        setattr(owner, name, new)
    accepted: list[Entry] = []
    needs: list[Entry] = []
    scope_locals = {tgt.self_name: tgt.module} if tgt.module is not None else None
    for e in live:
        tree = build_guard_tree(e.guard_manager, e.compile_id, scope_locals or {})
        failing = [lf for lf in tree.failing if lf.source == src.text or lf.source.startswith((src.text + ".",
                                                                                                src.text + "["))]
        (needs if failing else accepted).append(e)
    handles = []
    try:
        drafts = [e.copy().transport(src.text, src.text) for e in needs]
        checked = [(d, d.validate()) for d in drafts]
        bad = [v for _d, v in checked if v.problems]
        if bad and not force:
            from .format.toolkit import refusal_text

            raise Refused(bad[0], refusal_text(bad[0]))
        handles = [d.install(mode, persist=persist, force=force) for d, _v in checked]
    except BaseException:
        if isinstance(owner, dict):
            owner[name] = old
        else:
            setattr(owner, name, old)
        raise
    return RebindResult(key, src.text, src.text, True, tuple(e.compile_id for e in accepted),
                        tuple(h.compile_id for h in handles), tuple(e.compile_id for e in needs))


# ==============================================================================================================
# Saving and loading
# ==============================================================================================================


def save(path: str, *items: Any) -> int:
    """Write drafts (or the handles of installed copies) to a patch file (JSON, `dynadbg.core.patchfile` format
    2): for each, the code object and Dynamo's code it was made for, its instruction edits, its guard operations
    and how it was installed. Lambda guards keep their description only. Returns how many were written.

    Raises:
        ToolkitError: nothing to save, or the file cannot be written.
    """
    from .patchfile import write_patch_file

    specs = []
    for item in items:
        inst = item.record if isinstance(item, Handle) else None
        draft = inst.draft if inst is not None else item
        if not isinstance(draft, Draft):
            raise ToolkitError(f"save takes drafts and handles, not {type(item).__name__}")
        original = draft.entry.original
        key = PatchKey(original.co_name, original.co_filename, original.co_firstlineno,  # type: ignore[union-attr]
                       edits.fingerprint(draft.entry.code_obj))  # type: ignore[arg-type]
        specs.append((key, tuple(draft.edit_ops), tuple(draft.guard_ops), inst.mode.value if inst else None,
                      bool(inst and inst.persist)))
    if not specs:
        raise ToolkitError("nothing to save")
    problem = write_patch_file(path, specs)
    if problem is not None:
        raise ToolkitError(str(problem))
    return len(specs)


def load(path: str, target: Any, *, inputs: tuple[Sequence[Any], Mapping[str, Any]] | None = None,
         mode: str | None = None, force: bool = False) -> tuple[Handle, ...]:
    """Install the patches of `path` that are for `target`'s code: each is matched to a live cache entry by
    the fingerprint of Dynamo's code, its guard operations are rebuilt against the objects alive now, validated
    and installed (the mode saved with it, or `mode`). Guards on locals (``L[...]``) are built from the
    arguments of a sample call, `inputs` = ``(args, kwargs)`` (`Draft.inputs`).

    Raises:
        ToolkitError: the file is malformed, or no patch in it is for `target`.
        Refused: a patch is stale: no entry has the code it was made for, or its guards cannot be rebuilt now
            (a source gone, a transported object that fails a guard); nothing of the file is installed.
    """
    from .patchfile import read_patch_file

    specs = read_patch_file(path)
    if isinstance(specs, EditError):
        raise ToolkitError(str(specs))
    tgt = _resolve(target)
    here = PatchKey(tgt.code.co_name, tgt.code.co_filename, tgt.code.co_firstlineno, "")
    mine = [s for s in specs if s.key.same_function(here)]
    if not mine:
        raise ToolkitError(f"{path} has no patch for {tgt.code.co_name} ({os.path.basename(tgt.code.co_filename)}:"
                           f"{tgt.code.co_firstlineno})")
    live = [e for e in entries(target) if e.kind is EntryKind.CACHE and e.code_obj is not None
            and not e.invalidated and e.made_by == "dynamo"]
    plan = []
    for spec in mine:
        entry = next((e for e in live if edits.fingerprint(e.code_obj) == spec.key.fingerprint), None)  # type: ignore[arg-type]
        if entry is None:
            v = Validation((Problem(ProblemKind.NOT_FOUND, detail=f"no live entry of {tgt.code.co_name} runs the "
                                                                  f"code this patch was made for (code "
                                                                  f"{spec.key.fingerprint[:12]}): the program, torch "
                                                                  f"or Python changed, or it was not compiled yet"),))
            from .format.toolkit import refusal_text

            raise Refused(v, f"{path}: stale patch: " + refusal_text(v))
        draft = entry.copy()
        if inputs is not None:
            draft.inputs(*inputs[0], **dict(inputs[1]))
        draft.edit_ops = list(spec.ops)
        draft.current_code = entry.code_obj  # type: ignore[assignment]
        draft.guard_ops = list(spec.guards)
        if draft.edit_ops and _rebind_edits(draft.guard_ops, entry.code_obj) == draft.edit_ops:  # type: ignore[arg-type]
            draft.derived_from = {k: draft.guard_ops[0] for k in range(len(draft.edit_ops))}
        for op in draft.edit_ops:
            new = edits.apply_edit(draft.current_code, op)
            if isinstance(new, EditError):
                v = Validation((Problem(ProblemKind.EDIT, detail=new.message),))
                from .format.toolkit import refusal_text

                raise Refused(v, f"{path}: stale patch: " + refusal_text(v))
            draft.current_code = new
        validation = draft.validate()
        if validation.problems and not force:
            from .format.toolkit import refusal_text

            raise Refused(validation, f"{path}: stale patch: " + refusal_text(validation))
        plan.append((draft, spec))
    return tuple(d.install(mode or s.mode or "front", persist=s.persist, force=force) for d, s in plan)
