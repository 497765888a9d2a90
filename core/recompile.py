"""Recompile insight: what a cache miss looks like, recorded as it happens, and what the user can do.

When a code object that already has cache entries misses all of them, Dynamo compiles it again. Torch's own
log names the *first* failing guard of each entry. This module records, at that moment and without pausing:

* every failing guard of every entry, evaluated on the inputs of that call (`dynadbg.core.guards`), with the
  one torch reports marked and spelled as torch spells it (``0/0: self.counter == 0``);
* failures that are not about the inputs: global state (grad mode, ...), the torch-function mode stack, the
  default device, dispatch keys, entries torch invalidated (``... got deallocated``);
* the guard diffs of consecutive entries (what each recompile changed);
* where the code stands against ``torch._dynamo.config.recompile_limit`` (the compile that follows may hit it);
* the compile id the recompile will get, the decision taken (recompile, eager, skip, drop, dynamic) and what
  came of it.

`RecompileLog` keeps those `RecompileRecord`s for a run (the session and ``dynadbg report`` each own one).
This module is the analysis. What the user can decide at a recompile stop (the choices, the guard filter of
``drop``, each choice's permanent code) is `dynadbg.core.decisions`; the plain text of records is
`dynadbg.core.format.recompile`, their JSON `dynadbg.core.report`. Every private torch API used here is in
`dynadbg.core.compat` (section "recompile").
"""

from __future__ import annotations

import dis
import io
import linecache
import re
import threading
import tokenize
from dataclasses import fields, replace
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import compat, facts
from .identity import IdentityCache
from .model import (
    AutoDynamicDim,
    CompiledFrameView,
    CompilesData,
    DecisionKind,
    DynamicOutcome,
    EntryDiff,
    EntryVerdict,
    FrameRecompiles,
    GuardTree,
    InputChange,
    LeafGuardView,
    LimitStatus,
    NonGuardFailure,
    OutcomeKind,
    RecompileOutcome,
    RecompileRecord,
    StackArg,
)
from .values import summarize

if TYPE_CHECKING:
    from .guards import GuardDiff

__all__ = [
    "CompilesData",
    "EntryDiff",
    "EntryVerdict",
    "FrameRecompiles",
    "LimitStatus",
    "NonGuardFailure",
    "RecompileLog",
    "RecompileRecord",
    "analyze_miss",
    "entry_diffs",
    "what_if",
]

#: Pseudo-leaves of `guards` that are no guard of any compile.
_PSEUDO = frozenset({"CACHE_ENTRY_INVALIDATED", "CHECK_VERBOSE", "BACKEND_MATCH"})  # and a dict manager's "len" leaf
#: Failure kinds that are not about the call's inputs.
NON_INPUT_KINDS = ("invalidated", "global state", "torch function mode", "default device", "saved-tensors hooks",
                   "dispatch keys", "torch check", "backend")


# --------------------------------------------------------------------------------------------------------------
# Records (frozen)
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------------------------------


def what_if(cache_entries: Sequence[Any], f_locals: dict[str, Any], *,
            closure: dict[str, Any] | None = None, backend: Any = None) -> list[GuardTree | str]:
    """Every entry's guard tree evaluated on `f_locals` (synthetic inputs welcome). Values that cannot be
    produced (a missing closure variable, a missing dict key) make their guards NO_VALUE; nothing raises for
    them. Relational guards (``NO_TENSOR_ALIASING``) are judged through the root's ``check_verbose``. With
    `backend` (the call's backend object), an entry compiled with another backend fails with a
    ``BACKEND_MATCH`` pseudo-leaf (`guards.entry_guard_tree`). An entry whose tree cannot be built is the
    error's text (``"TypeName: message"``) in its place."""
    return [_safe_tree(entry, f_locals, closure, backend) for entry in cache_entries]


def _safe_tree(entry: Any, f_locals: dict[str, Any], closure: dict[str, Any] | None,
               backend: Any = None) -> GuardTree | str:
    from .guards import entry_guard_tree

    try:
        return entry_guard_tree(entry, f_locals, closure=closure, backend=backend)
    except Exception as exc:  # noqa: BLE001 - one odd entry must not hide the others
        return f"{type(exc).__name__}: {exc}"


def _torch_reason(compile_id: str, text: str) -> str:
    return compat.strip_local_scope(f"{compile_id}: {text}")


def failure_kind(leaf: LeafGuardView) -> str:
    """What a failing leaf is about: ``"input"`` (``L[...]``), ``"global"`` (``G[...]``), ``"shape"`` (epilogue
    symbolic-shape guard) or one of `NON_INPUT_KINDS`."""
    gtype = leaf.guard_type
    if gtype == "CACHE_ENTRY_INVALIDATED":
        return "invalidated"
    if gtype == "CHECK_VERBOSE":
        return "torch check"
    if gtype == "BACKEND_MATCH":
        return "backend"
    if gtype == "GLOBAL_STATE":
        return "global state"
    if gtype == "TORCH_FUNCTION_MODE_STACK":
        return "torch function mode"
    if gtype == "DEFAULT_DEVICE":
        return "default device"
    if leaf.epilogue:
        return "shape"
    if leaf.source == "L" and "saved_tensors_hooks" in " ".join(leaf.code):
        return "saved-tensors hooks"
    if gtype == "TENSOR_MATCH" and leaf.reason and "dispatch key set mismatch" in leaf.reason \
            and " device mismatch. " not in leaf.reason:
        return "dispatch keys"
    if leaf.source.startswith("G"):
        return "global"
    return "input"


_GLOBAL_STATE_NOW: dict[str, Callable[[Any], str]] = {
    "grad_mode": lambda t: "grad mode is " + ("on" if t.is_grad_enabled() else "off (no_grad / inference)"),
    "deterministic_algorithms": lambda t: f"deterministic algorithms {t.are_deterministic_algorithms_enabled()}",
    "default_dtype": lambda t: f"default dtype {t.get_default_dtype()}",
    "num_threads": lambda t: f"num_threads {t.get_num_threads()}",
    "autocast_state": lambda t: "autocast state changed (an autocast context is entered or left)",
    "torch_function": lambda t: f"torch function {'enabled' if compat.torch_function_enabled() else 'disabled'}",
}


def _global_state_text(reason: str | None) -> str:
    """``"GLOBAL_STATE changed: grad_mode "`` → ``"GLOBAL_STATE changed: grad_mode (now: grad mode is off ...)"``."""
    text = (reason or "GLOBAL_STATE changed").strip()
    names = text.partition("changed:")[2].replace(",", " ").split()
    now = []
    try:
        import torch

        for name in names:
            describe = _GLOBAL_STATE_NOW.get(name)
            if describe is not None:
                now.append(describe(torch))
    except Exception:  # noqa: BLE001 - the description is a courtesy
        pass
    return f"{text} (now: {'; '.join(now)})" if now else text


def _non_input(verdict: EntryVerdict) -> list[NonGuardFailure]:
    out: list[NonGuardFailure] = []
    cid = verdict.compile_id
    if verdict.invalidated:
        out.append(NonGuardFailure("invalidated", cid, f"cache entry {cid} was invalidated: {verdict.invalidated}"))
        return out
    if verdict.passed:
        out.append(NonGuardFailure(
            "backend", cid, f"every guard of {cid} passes: torch did not use it for another reason (a different "
            f"backend callable: BACKEND_MATCH; or another isolate_recompiles region)"))
        return out
    for leaf in verdict.failing:
        kind = failure_kind(leaf)
        if kind not in NON_INPUT_KINDS:
            continue
        if kind == "global state":
            text = _global_state_text(leaf.reason)
        elif kind == "dispatch keys":
            text = leaf.reason or "dispatch keys differ"
        elif kind == "torch check":
            text = leaf.reason or "torch's check fails where no single guard does"
        elif kind == "backend":
            text = f"{cid} was {leaf.reason}" if leaf.reason else "compiled with another backend callable"
        else:
            text = f"{kind} changed: {'; '.join(leaf.code)}" + (f" (now {leaf.actual})" if leaf.actual else "")
        out.append(NonGuardFailure(kind, cid, text))
    return out


def _verdict(tree: GuardTree | str, entry: Any) -> EntryVerdict:
    if isinstance(tree, str):
        cid = str(getattr(entry, "compile_id", "?"))
        try:
            passed, parts, _ = compat.guard_check_verbose(entry.guard_manager, {})
            first = "; ".join(parts) or None
        except Exception:  # noqa: BLE001
            first = None
        return EntryVerdict(cid, False, first_failure=first, error=tree)
    torch_leaf = None
    if tree.first_failure:
        torch_leaf = _torch_leaf(tree)
    reason = None
    if tree.invalidated:
        reason = f"{tree.compile_id}: {tree.invalidated}"
    elif tree.first_failure:
        reason = _torch_reason(tree.compile_id, tree.first_failure)
    return EntryVerdict(
        compile_id=tree.compile_id,
        passed=bool(tree.passed),
        failing=tuple(tree.failing),
        first_failure=tree.first_failure,
        torch_reason=reason,
        torch_leaf=torch_leaf,
        invalidated=tree.invalidated,
        leaf_count=tree.leaf_count,
    )


def _torch_leaf(tree: GuardTree) -> str | None:
    """The failing leaf torch's first failure is about (its code or its reason starts torch's text)."""
    first = tree.first_failure or ""
    head = re.split(r"\s{2,}#", first, maxsplit=1)[0].strip()
    for leaf in tree.failing:
        if (leaf.code and head == "; ".join(leaf.code)) or (leaf.reason and head == leaf.reason.strip()):
            return leaf.id
    for leaf in tree.failing:
        if leaf.code and head.startswith(leaf.code[0]) or (leaf.reason and leaf.reason.strip() in head):
            return leaf.id
    for leaf in tree.failing:
        # torch's tensor-check text names the source (``tensor 'L['x']' ...``) even where ours is reworded
        if leaf.guard_type == "TENSOR_MATCH" and (head.startswith(f"tensor '{leaf.source}' ")
                                                  or head.startswith(f"expected type of '{leaf.source}'")):
            return leaf.id
    real = [leaf for leaf in tree.failing if leaf.guard_type != "BACKEND_MATCH"]
    if len(real) == 1:
        # torch's text is its own wording (e.g. "_has_dynamo_dim_marking is present on runtime tensor ..."),
        # but only one guard fails: that is the one torch reports
        return real[0].id
    return None


def entry_diffs(trees: Sequence[GuardTree], *, cache: dict[Any, tuple["GuardDiff", ...]] | None = None,
                keys: Sequence[Any] | None = None) -> tuple[EntryDiff, ...]:
    """Guard diffs of consecutive trees in compile order (`trees` oldest first): 0/0 → 0/1, 0/1 → 0/2, ...

    Args:
        cache: optional memo keyed by ``(keys[i], keys[i + 1])`` (e.g. the guard managers' ids with the compile
            ids): entries do not change, so a diff is computed once per pair.
    """
    from . import guards

    out = []
    for i in range(len(trees) - 1):
        old, new = trees[i], trees[i + 1]
        key = (keys[i], keys[i + 1]) if keys is not None else None
        diffs = cache.get(key) if cache is not None and key is not None else None
        if diffs is None:
            diffs = tuple(guards.diff_guard_trees(old, new))
            if cache is not None and key is not None:
                cache[key] = diffs
        out.append(EntryDiff(old.compile_id, new.compile_id, diffs))
    return tuple(out)


def _compile_order_key(compile_id: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", compile_id)) or (0,)


#: Tensor methods whose result is a Python number: the value leaves the graph (a graph break, unless
#: ``torch._dynamo.config.capture_scalar_outputs`` keeps it in as a symbolic value).
SCALAR_METHODS = frozenset({"item", "tolist"})
_STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL"})


def _without_comment(line: str) -> str:
    """`line` without its trailing ``# comment`` (tokenized, so a ``#`` inside a string stays)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return line[:tok.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return line.rstrip()


#: resume function code → `resume_stack_args` of it (its bytecode and source line do not change): a stop in a
#: resume function asks for it at every step (`snapshot.break_context`).
_STACK_ARGS: IdentityCache[CodeType, tuple[tuple[StackArg, ...], bool]] = IdentityCache()


def resume_stack_args(code: CodeType) -> tuple[tuple[StackArg, ...], bool]:
    """What each ``___stack*`` argument of a resume function carries, read off its bytecode (once per code
    object).

    A resume function's prologue pushes its ``___stack*`` arguments back on the value stack and jumps to the
    instruction where the original frame stopped (`dynadbg.core.roles` names the same parts). The last one pushed
    is the top of the stack: when that instruction stores it (``STORE_FAST peak``) it is the user's variable; the
    source line there gives the expression that made it, the attribute loaded last before the jump the call.

    Returns:
        One `StackArg` per ``___stack*`` argument, in argument order, and whether the value is a Python number
        made by a ``Tensor.item()``-style call (`SCALAR_METHODS`). ``((), False)`` for any other code object.
    """
    return _STACK_ARGS.setdefault_with(code, lambda: _resume_stack_args(code))


def _resume_stack_args(code: CodeType) -> tuple[tuple[StackArg, ...], bool]:
    if not facts.is_resume_name(code.co_name):
        return (), False
    names = facts.resume_arguments(code)[0]
    if not names:
        return (), False
    try:
        ins = list(dis.get_instructions(code))
    except Exception:  # noqa: BLE001 - unreadable bytecode: say only where the values came from
        ins = []
    jump = next((i for i in ins if i.opname.startswith("JUMP") and "IF" not in i.opname), None)
    at = next((k for k, i in enumerate(ins) if jump is not None and i.offset == jump.argval), None)
    target = ins[at] if at is not None else None
    stored = target.argval if target is not None and target.opname in _STORES else None
    method = None
    if at is not None:
        # the call that left the graph: the attribute (method) loaded last before the resume point
        method = next((str(i.argval) for i in reversed(ins[:at]) if i.opname in ("LOAD_METHOD", "LOAD_ATTR")), None)
    line = target.positions.lineno if target is not None and target.positions is not None else None
    src = _without_comment(linecache.getline(code.co_filename, line).strip()) if line else ""
    expr = src
    if stored is not None and re.match(rf"{re.escape(str(stored))}\s*=(?!=)", src):
        expr = src.split("=", 1)[1].strip()
    origin = facts.resume_origin_name(code.co_name)
    # .item() / .tolist(), or int(t) / float(t) / bool(t), which call it
    scalar = (method in SCALAR_METHODS and f".{method}(" in expr) or bool(re.match(r"(int|float|bool)\(", expr))
    out = []
    for k, name in enumerate(names):
        top = k == len(names) - 1
        out.append(StackArg(name, k, origin, top, line, str(stored) if top and stored is not None else None,
                            expr if top else None))
    return tuple(out), scalar


def changed_inputs(record: RecompileRecord) -> tuple[InputChange, ...]:
    """The inputs the failing guards of `record`'s most recently used entry saw change, one per input (its first
    failing guard with both values): inputs, globals and shapes; failures about global state are not inputs."""
    newest = record.entries[0] if record.entries else None
    if newest is None:
        return ()
    out: dict[str, InputChange] = {}
    for leaf in newest.failing:
        if leaf.actual is None or failure_kind(leaf) not in ("input", "global", "shape"):
            continue
        name = compat.strip_local_scope(leaf.source if not leaf.epilogue else "; ".join(leaf.code))
        if name not in out:
            arg = record.stack_arg(name)
            out[name] = InputChange(name, leaf.expected, leaf.actual, arg.variable if arg is not None else None)
    return tuple(out.values())


def _source_value(source: str, f_locals: dict[str, Any]) -> Any:
    """The value at a guard source under the frame's locals (``L['kwargs']['input_ids']``), None when it cannot
    be read."""
    try:
        return eval(compile(source, "<guard source>", "eval"), {"__builtins__": {}, "L": f_locals})  # noqa: S307
    except Exception:  # noqa: BLE001 - a source that needs more than the locals: nothing to say about it
        return None


def automatic_dynamic_dims(code: CodeType, f_locals: dict[str, Any], entries: Sequence[EntryVerdict], *,
                           closure: Any = None) -> tuple[AutoDynamicDim, ...]:
    """The dimensions torch's automatic dynamic shapes makes dynamic in the compile after this miss: each
    dimension a failing ``TENSOR_MATCH`` on an input saw change size (`LeafGuardView.size_changed`) where torch's
    size record of `code` (`compat.recorded_sizes`) has another size, or already has it dynamic, and nothing
    keeps it static (``automatic_dynamic_shapes`` off, as under ``torch.compile(dynamic=False)``; a size of 0 or
    1; ``mark_static``; a parameter or module attribute under torch's ``force_*_static_shapes``).

    Computed as Dynamo's ``_automatic_dynamic`` (torch/_dynamo/variables/builder.py) decides, before the compile;
    `RecompileLog.on_compiled` reads the new entry back. Empty when this torch keeps no size record (the feature
    is then listed in `compat.missing_features`). Never raises.
    """
    if compat.FEATURES.get("automatic dynamic") is not None:
        return ()
    try:
        if not compat.automatic_dynamic_on():
            return ()
    except Exception:  # noqa: BLE001 - no such config: nothing is said
        return ()
    out: dict[tuple[str, int], AutoDynamicDim] = {}
    for verdict in entries:
        for leaf in verdict.failing:
            if leaf.guard_type != "TENSOR_MATCH" or not leaf.size_changed or not leaf.source.startswith("L["):
                continue
            value = _source_value(leaf.source, f_locals)
            shape = getattr(value, "shape", None)
            if shape is None:
                continue
            try:
                recorded = compat.recorded_sizes(code, closure, leaf.source, len(shape))
                marked, whole = compat.static_dims(value, leaf.source)
            except Exception:  # noqa: BLE001 - an unreadable record: say nothing rather than guess
                continue
            if recorded is None or whole:
                continue
            for dim in leaf.size_changed:
                if (leaf.source, dim) in out or dim in marked or dim >= len(shape):
                    continue
                size = int(shape[dim])
                if size in (0, 1):          # torch specialises these whatever the record says
                    continue
                before = recorded[dim]
                name = compat.strip_local_scope(leaf.source)
                if before is None:
                    out[(leaf.source, dim)] = AutoDynamicDim(leaf.source, name, dim, (size,), already=True)
                elif before != size:
                    out[(leaf.source, dim)] = AutoDynamicDim(leaf.source, name, dim, (before, size))
    return tuple(out.values())


def analyze_miss(code: CodeType, f_locals: dict[str, Any], cache_entries: Sequence[Any], *, seq: int = 0,
                 diff_cache: dict[Any, tuple["GuardDiff", ...]] | None = None,
                 backend: Any = None, callback: Any = None, closure: Any = None) -> RecompileRecord:
    """Everything `RecompileRecord` holds for one cache miss, computed now (worker thread, before the compile).

    `backend` is the backend object of the call that missed (``CacheMissEvent.backend``): entries compiled with
    another backend callable are reported as rejected for it (BACKEND_MATCH), with both backends named.
    `callback` is torch's callback that missed (``CacheMissEvent.callback``): the recompile limit is read from
    it when ``torch.compile(..., recompile_limit=N)`` set one for this region.
    `closure` is the frame's closure cells (``CacheMissEvent.closure``): part of the key of torch's size record
    (`automatic_dynamic_dims`).

    Never raises: a failure is kept in ``record.error`` with whatever could be computed.
    """
    entries = list(cache_entries)
    name = getattr(code, "co_qualname", code.co_name)
    base = RecompileRecord(seq, id(code), name, code.co_filename, code.co_firstlineno,
                           compat.next_compile_id(entries), code_name=code.co_name,
                           is_resume=facts.is_resume_name(code.co_name))
    try:
        trees = what_if(entries, f_locals, backend=backend)
        verdicts = tuple(_verdict(t, e) for t, e in zip(trees, entries))
        non_input = tuple(f for v in verdicts for f in _non_input(v))
        inputs = tuple((str(k), summarize(v).text) for k, v in list(f_locals.items())[:40])
        good = [(t, e) for t, e in zip(trees, entries) if isinstance(t, GuardTree) and not t.invalidated]
        good.sort(key=lambda te: _compile_order_key(te[0].compile_id))
        keys = [(id(e.guard_manager), t.compile_id) for t, e in good]
        diffs = entry_diffs([t for t, _ in good], cache=diff_cache, keys=keys)
    except Exception as exc:  # noqa: BLE001 - analysis must never break the program
        return replace(base, error=f"{type(exc).__name__}: {exc}")
    limit = None
    try:
        state = compat.recompile_limit_state(code, f_locals, entries, callback)
        limit = LimitStatus(state["entries"], state["counted"], state["total"], state["limit"],
                            state["accumulated_limit"], state["exceeds"], state["is_recompile"],
                            state["limit_source"], state["raises"])
    except Exception:  # noqa: BLE001 - no limit information on this torch
        limit = None
    try:
        stack_args, scalar = resume_stack_args(code)
    except Exception:  # noqa: BLE001 - a naming aid only
        stack_args, scalar = (), False
    record = replace(base, entries=verdicts, non_input=non_input, inputs=inputs, diffs=diffs, limit=limit,
                     stack_args=stack_args, scalar_break=scalar)
    from .grouping import group_changes, group_failing

    auto = () if limit is not None and limit.hit_now else automatic_dynamic_dims(code, f_locals, verdicts,
                                                                                 closure=closure)
    changed = changed_inputs(record)
    try:
        groups = group_failing(verdicts, trees)
        changed_groups = group_changes(changed, groups)
    except Exception:  # noqa: BLE001 - grouping is a reading aid: without it every guard is listed alone
        groups, changed_groups = (), ()
    return replace(record, changed=changed, auto_dynamic=auto, groups=groups, changed_groups=changed_groups)


def _with_advice(record: RecompileRecord, event: Any) -> RecompileRecord:
    """`record` with its `advice.RecompileAdvice`, made by the capture that saw the miss (`Capture.advise`), when
    it can be made."""
    advise = getattr(getattr(event, "capture", None), "advise", None)
    if advise is None or record.error is not None:
        return record
    try:
        return replace(record, advice=advise(record, event.f_locals))
    except Exception:  # noqa: BLE001 - advice is checked or left out, never a broken program
        return record


def _read_back(record: RecompileRecord, event: Any, compile_id: str) -> tuple[DynamicOutcome, ...]:
    """What the new entry made of each dimension `record` predicted automatic dynamic would make dynamic: its
    ``TENSOR_MATCH`` on that input read back (`guards.tensor_match_sizes`)."""
    if not record.auto_dynamic:
        return ()
    from .guards import tensor_match_sizes

    out = []
    for d in record.auto_dynamic:
        try:
            sizes = tensor_match_sizes(event.guard_manager, d.source)
        except Exception:  # noqa: BLE001 - unreadable: the outcome says it is unknown
            sizes = None
        dynamic = None if sizes is None or d.dim >= len(sizes) else sizes[d.dim] is None
        out.append(DynamicOutcome(d.source, d.dim, compile_id, sizes, dynamic))
    return tuple(out)


class RecompileLog:
    """The `RecompileRecord`s of one run, in the order the misses happened.

    Wire `on_cache_miss` as `Capture`'s ``on_cache_miss`` (or call `record_miss` from a hook that decides) and
    `on_compiled` as a compile hook. Thread-safe; the analysis runs on the thread that missed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RecompileRecord] = []
        self._diff_cache: dict[Any, tuple["GuardDiff", ...]] = {}

    # hooks ---------------------------------------------------------------------------------------------------
    def record_miss(self, event: Any, *, pending: bool = False) -> RecompileRecord:
        """Analyse a `capture.CacheMissEvent` now and keep the record (decision ``recompile`` until told;
        `pending` while a stop decides: `update` it with ``decision=..., pending=False``)."""
        with self._lock:
            seq = len(self._records) + 1
        if getattr(event, "after_limit", False):
            return self._record_after_limit(event)
        record = analyze_miss(event.code, event.f_locals, event.cache_entries, seq=seq, diff_cache=self._diff_cache,
                              backend=getattr(event, "backend", None), callback=getattr(event, "callback", None),
                              closure=getattr(event, "closure", None))
        record = _with_advice(record, event)
        with self._lock:
            record = replace(record, seq=len(self._records) + 1, pending=pending)
            self._records.append(record)
        return record

    def _record_after_limit(self, event: Any) -> RecompileRecord:
        """A miss torch answers without compiling because the code hit its recompile limit: kept in the
        timeline (decision ``eager``, no compile id) with every entry checked on the call's inputs, as any miss
        (each entry rejects the call with guards that can be named); the limit is the one the hit was recorded
        with."""
        code = event.code
        record = analyze_miss(code, event.f_locals, event.cache_entries, diff_cache=self._diff_cache,
                              backend=getattr(event, "backend", None), callback=getattr(event, "callback", None))
        with self._lock:
            limit = next((r.limit for r in reversed(self._records)
                          if r.code_key == id(code) and r.limit is not None and r.limit.hit_now), record.limit)
            record = replace(record, seq=len(self._records) + 1, compile_id=None, limit=limit,
                             decision=DecisionKind.EAGER, outcome=RecompileOutcome(OutcomeKind.AFTER_LIMIT),
                             auto_dynamic=())   # nothing compiles: no entry for torch to make dynamic
            self._records.append(record)
        return record

    def on_cache_miss(self, event: Any) -> None:
        """`Capture`'s ``on_cache_miss``: record, never pause, let Dynamo recompile (returns None)."""
        try:
            self.record_miss(event)
        except Exception:  # noqa: BLE001 - recording must never break the program
            pass
        return None

    def on_compiled(self, event: Any) -> None:
        """A compile hook (`capture.CompileEvent`): the record that predicted this compile id gets its outcome."""
        key, cid = id(event.original_code), str(event.compile_id)
        with self._lock:
            for i in range(len(self._records) - 1, -1, -1):
                rec = self._records[i]
                if rec.code_key == key and rec.compile_id == cid and rec.outcome is None:
                    auto = _read_back(rec, event, cid)
                    self._records[i] = replace(rec, outcome=RecompileOutcome(OutcomeKind.COMPILED, cid,
                                                                             auto_dynamic=auto))
                    return

    # updates -------------------------------------------------------------------------------------------------
    def update(self, record: RecompileRecord, **changes: Any) -> RecompileRecord:
        """Replace fields of the kept record with `record`'s seq (``decision=``, ``action=``, ``outcome=``)."""
        with self._lock:
            index = record.seq - 1
            if 0 <= index < len(self._records) and self._records[index].code_key == record.code_key:
                self._records[index] = new = replace(self._records[index], **changes)
                return new
        return replace(record, **changes)

    # queries -------------------------------------------------------------------------------------------------
    def records(self) -> tuple[RecompileRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def latest(self, seq: int) -> RecompileRecord | None:
        with self._lock:
            return self._records[seq - 1] if 0 < seq <= len(self._records) else None

    def for_code(self, code_key: int) -> tuple[RecompileRecord, ...]:
        return tuple(r for r in self.records() if r.code_key == code_key)

    def find(self, code_key: int, compile_id: str) -> RecompileRecord | None:
        """The record whose compile got `compile_id` (the last one, if the id was predicted twice)."""
        found = None
        for r in self.records():
            if r.code_key == code_key and r.compile_id == compile_id:
                found = r
        return found


# --------------------------------------------------------------------------------------------------------------
# Dropping guards from the compile that follows (``drop``)
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# What the user could write instead (each choice's permanent equivalent)
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# Plain text
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# JSON (``dynadbg report --json``)
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# compiles / entries views
# --------------------------------------------------------------------------------------------------------------


def frame_recompiles(frame: CompiledFrameView, records: Sequence[RecompileRecord], *, serving: str | None = None,
                     hits_counted: bool = True) -> FrameRecompiles:
    mine = tuple(r for r in records if r.code_key == frame.key)
    base = {f.name: getattr(frame, f.name) for f in fields(CompiledFrameView)}
    limit = next((r.limit for r in reversed(mine) if r.limit is not None), None)
    return FrameRecompiles(**base, serving=serving, hits_counted=hits_counted, timeline=mine, limit=limit,
                           limit_hits=tuple(r for r in mine if r.limit_hit))


# --------------------------------------------------------------------------------------------------------------
# Graph-break stop
# --------------------------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------------------------
# report helpers
# --------------------------------------------------------------------------------------------------------------


def frame_guard_diffs(frame: CompiledFrameView) -> tuple[EntryDiff, ...]:
    """Guard diffs of a compiled frame's consecutive entries in compile order, from the guard trees its
    snapshot carries (``Capture.frames(guards=True)``); entries without a tree are left out."""
    trees = [e.guard_tree for e in frame.entries if e.guard_tree is not None and not e.guard_tree.invalidated
             and not e.invalidated]   # an entry torch invalidated (its objects were freed) is no entry to compare
    trees.sort(key=lambda t: _compile_order_key(t.compile_id))
    return entry_diffs(trees)


def reason_head(reason: str) -> str:
    """``"0/0: self.counter == 0  # self.counter += 1  # f.py:45 in forward"`` → ``"0/0: self.counter == 0"``."""
    first = reason.splitlines()[0] if reason else ""
    return re.split(r"\s{2,}#", first, maxsplit=1)[0].strip()


