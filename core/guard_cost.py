"""Guard cost: what each cache entry's guards cost per call, and where they come from.

Guard evaluation runs on every call of a compiled function, before the generated code: a model with thousands of
guards pays for all of them each time. For every cache entry this module gives:

* the guard count (leaf guards of the entry's tree, epilogue included, relational guards once);
* the guard evaluation time per call in microseconds, as torch itself measures it: Dynamo calls
  ``torch._dynamo.guards.profile_guard_manager(root, f_locals, 1)`` once per compile and logs the result as
  "Guard eval latency". `GuardCostLog` wraps that call (`compat.guard_profiler_target`) and keeps torch's figure,
  keyed by compile id; no timer of our own, no extra evaluation of a live tree. The figure is a cold-cache latency
  (torch flushes the CPU cache first), of one evaluation, on the inputs of the call that compiled the entry;
* the guard count grouped by source (`group_by_source`): the ambient root guards, each local input
  (``L['x']``), each first-level submodule of a module input (``L['self']._modules['enc']``: its whole subtree,
  parameters included), the module's own attributes (``L['self']``) and the globals (``G``);
* which of torch's documented ways to cut guard overhead applies (`advice`): the ``guard_filter_fn`` presets of
  ``torch.compiler`` and the ``skip_guard_eval_unsafe`` stance.

The grouping works on the report's JSON guard tree (``entries[].guard_tree``), so ``dynadbg diff`` can compute it
from two reports alone. Everything here is pure except `GuardCostLog`, which patches one torch attribute.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from . import compat

#: What torch's guard-eval figure is (`profile_guard_manager`, run once as the entry is built).
COLD_SAMPLE = ("timed by torch right after compiling, caches cold (profile_guard_manager): one sample, not what "
               "each later call pays")

__all__ = ["AMBIENT", "EntryCost", "GuardCostLog", "advice", "entry_cost_json", "group_by_source",
           "guard_count", "cost_text"]

#: Group name of the root's own leaves (grad mode, global state, torch-function mode stack, default device).
AMBIENT = "(ambient: global state, grad mode, default device)"
#: Group name of the epilogue lambda guards (symbolic-shape relations with dynamic shapes).
SHAPES = "(symbolic shapes)"
#: Group name for every global that is not a module with submodules.
GLOBALS = "G (globals)"

_ROOT_RE = re.compile(r"([LG])\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\d+)\]")
_MODULES_RE = re.compile(r"^\._modules\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]")


def source_group(source: str) -> str:
    """The group a guard source counts in (see the module docstring).

    ``"L['self']._modules['enc']._modules['0']._parameters['weight']"`` → ``"L['self']._modules['enc']"``;
    ``"L['x']"`` → ``"L['x']"``; ``"G['SCALE']"`` → ``"G (globals)"``; ``"L"`` → the ambient group.
    """
    if source in ("", "L"):
        return AMBIENT
    m = _ROOT_RE.search(source)
    if m is None:
        return GLOBALS if source.startswith("G") else source
    root = m.group(0)
    sub = _MODULES_RE.match(source[m.end():])
    if sub is not None:
        return root + sub.group(0)
    return GLOBALS if m.group(1) == "G" else root


def _iter_leaves(tree: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """(group source, leaf) of every leaf of a JSON guard tree, relational guards once (by leaf id)."""
    seen: set[str] = set()
    root = tree.get("root")
    stack: list[Mapping[str, Any]] = [root] if root else []
    while stack:
        node = stack.pop()
        for leaf in node.get("leaves", ()):
            lid = leaf.get("id")
            if lid in seen:
                continue
            seen.add(lid)
            yield leaf.get("source") or node.get("source") or "", leaf
        stack.extend(reversed(node.get("children", ())))
    for leaf in tree.get("epilogue", ()) or ():
        lid = leaf.get("id")
        if lid not in seen:
            seen.add(lid)
            yield SHAPES, leaf


def guard_count(tree: Mapping[str, Any] | None) -> int:
    """Leaf guards of a JSON guard tree (``dataclasses.asdict(model.GuardTree)``), 0 for None."""
    if not tree:
        return 0
    return sum(1 for _ in _iter_leaves(tree))


def group_by_source(tree: Mapping[str, Any] | None) -> dict[str, dict[str, int]]:
    """Guard counts per source group, largest first: ``{group: {"guards": n, "tensors": m}}`` where ``tensors``
    counts ``TENSOR_MATCH`` leaves (parameters and buffers for a module group)."""
    groups: dict[str, dict[str, int]] = {}
    if not tree:
        return groups
    for source, leaf in _iter_leaves(tree):
        key = source if source == SHAPES else source_group(source)
        g = groups.setdefault(key, {"guards": 0, "tensors": 0})
        g["guards"] += 1
        if leaf.get("guard_type") == "TENSOR_MATCH":
            g["tensors"] += 1
    return dict(sorted(groups.items(), key=lambda kv: (-kv[1]["guards"], kv[0])))


@dataclass(frozen=True)
class EntryCost:
    """Torch's guard-evaluation figure for one compile.

    Attributes:
        compile_id: ``"0/1"``.
        eval_us: mean latency in microseconds of one evaluation of the whole guard tree, cold cache, as returned
            by ``profile_guard_manager`` (the "Guard eval latency" Dynamo logs).
        iterations: evaluations torch averaged (Dynamo uses 1).
    """

    compile_id: str
    eval_us: float
    iterations: int = 1


class GuardCostLog:
    """Keeps torch's own guard-eval latency of every compile made while installed.

    `install()` wraps ``torch._dynamo.guards.profile_guard_manager`` (Dynamo calls it once per compile; the
    wrapper calls the original with Dynamo's arguments and records the figure it returns); `uninstall()` restores
    it. On a torch without the profiler, `disabled` holds the reason and nothing is recorded.
    """

    def __init__(self) -> None:
        self._costs: dict[str, EntryCost] = {}
        self._lock = threading.Lock()
        self._patch: compat.AttrPatch | None = None
        self.disabled: str | None = None

    def install(self) -> "GuardCostLog":
        if self._patch is not None:
            return self
        target = compat.guard_profiler_target()
        if target is None:
            self.disabled = compat.FEATURES.get("guard cost") or "guard cost disabled"
            return self
        owner, name = target
        patch = compat.AttrPatch(owner, name, None)
        original = patch.original

        def profile_guard_manager(root: Any, f_locals: Any, n_iters: int, *args: Any, **kwargs: Any) -> float:
            latency: float = original(root, f_locals, n_iters, *args, **kwargs)
            try:
                cid = compat.current_compile_id()
                if cid is not None:
                    with self._lock:
                        self._costs[cid] = EntryCost(cid, float(latency), int(n_iters))
            except Exception:  # noqa: BLE001 - recording must never break a compile
                pass
            return latency

        patch.replacement = profile_guard_manager
        patch.apply()
        self._patch = patch
        return self

    def uninstall(self) -> None:
        if self._patch is not None:
            self._patch.restore()
            self._patch = None

    def __enter__(self) -> "GuardCostLog":
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def get(self, compile_id: str) -> EntryCost | None:
        with self._lock:
            return self._costs.get(compile_id)

    def costs(self) -> dict[str, EntryCost]:
        with self._lock:
            return dict(self._costs)


def entry_cost_json(tree: Mapping[str, Any] | None, cost: EntryCost | None) -> dict[str, Any]:
    """The ``guard_cost`` object of one report entry (shape in `dynadbg.core.report`)."""
    return {
        "guards": guard_count(tree) if tree else None,
        "eval_us": round(cost.eval_us, 3) if cost is not None else None,
        "eval_iterations": cost.iterations if cost is not None else None,
        "by_source": group_by_source(tree) if tree else {},
    }


#: What each documented cut does, in our words, keyed by the name `advice` returns.
#: advice name → (the callable's name in the snippet when none is known, what the cut does and when it is safe);
#: the presets are passed as ``torch.compile(FN, options={"guard_filter_fn": torch.compiler.NAME})``.
_FILTER_ADVICE: dict[str, tuple[str, str]] = {
    "skip_guard_on_inbuilt_nn_modules_unsafe":
        ("m", "drops the guards on torch's own layers (nn.Linear, ...) that most programs never mutate"),
    "skip_guard_on_all_nn_modules_unsafe":
        ("m", "drops the guards on every nn.Module, your own included; "
              "safe only if no module attribute changes between calls"),
    "skip_guard_on_globals_unsafe":
        ("f", "drops the guards on globals; safe only if the globals the function reads never change"),
    "keep_tensor_guards_unsafe":
        ("f", "keeps only the tensor guards; safe only if every non-tensor input stays the same"),
}
#: advice name → its whole line, for the cuts that are no guard filter.
_OTHER_ADVICE: dict[str, str] = {
    "skip_guard_eval_unsafe":
        'torch.compiler.set_stance("default", skip_guard_eval_unsafe=True) after warm-up: '
        "runs only the guards that tell the existing entries apart; safe only when no new input would recompile",
}


def advice(groups: Mapping[str, Mapping[str, int]], *, entries: int, total: int | None = None) -> list[str]:
    """Which documented guard-overhead cuts fit an entry whose guards group as `groups` (`group_by_source`).

    Args:
        entries: cache entries of the code object (one entry and no recompiles: the stance applies).
        total: guard count (computed from `groups` when None).

    Returns:
        Names from ``torch.compiler`` (keys of the advice table), most relevant first; `advice_text` words them.
    """
    total = total if total is not None else sum(g["guards"] for g in groups.values())
    if total == 0:
        return []
    module = sum(g["guards"] for k, g in groups.items() if "._modules[" in k or k == "L['self']")
    globals_ = sum(g["guards"] for k, g in groups.items() if k == GLOBALS or k.startswith("G["))
    tensors = sum(g["tensors"] for g in groups.values())
    out: list[str] = []
    if module * 2 >= total:
        out += ["skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe"]
    if globals_ * 4 >= total:
        out.append("skip_guard_on_globals_unsafe")
    if tensors and (total - tensors) * 2 >= total and not out:
        out.append("keep_tensor_guards_unsafe")
    if entries == 1:
        out.append("skip_guard_eval_unsafe")
    if compat.torch is None:  # no torch loaded (diff of two files): name them all, torch is not asked
        return out
    present = compat.guard_filter_presets()
    return [name for name in out if present.get(name, True)]


def filter_cut(name: str) -> tuple[str, str] | None:
    """(placeholder name of the compiled callable, why) of an `advice` name that is a ``guard_filter_fn`` of
    ``torch.compiler``, else None."""
    return _FILTER_ADVICE.get(name)


def advice_text(name: str, fn: str | None = None) -> str:
    """One line for an `advice` name; `fn` names the compiled callable in its ``torch.compile(...)`` snippet
    (`facts.callable_name`: the name the recompile choices use), else a placeholder."""
    if name in _FILTER_ADVICE:
        default, why = _FILTER_ADVICE[name]
        return (f'torch.compile({fn or default}, options={{"guard_filter_fn": torch.compiler.{name}}}): {why}')
    return _OTHER_ADVICE.get(name, name)


def cost_text(cost_json: Mapping[str, Any], *, entries: int, max_groups: int = 6, indent: str = "  ") -> list[str]:
    """Lines for the text report: count, time per call, the largest groups, the cuts that apply."""
    n = cost_json.get("guards")
    us = cost_json.get("eval_us")
    head = f"{indent}guard cost: {'?' if n is None else n} guards"
    head += (f", {us:.1f} µs for one evaluation {COLD_SAMPLE}"
             if us is not None else ", evaluation time not measured on this torch")
    lines = [head]
    groups = cost_json.get("by_source") or {}
    for key, g in list(groups.items())[:max_groups]:
        extra = f" ({g['tensors']} tensor)" if g.get("tensors") else ""
        lines.append(f"{indent}  {g['guards']:>5}  {key}{extra}")
    if len(groups) > max_groups:
        rest = sum(g["guards"] for g in list(groups.values())[max_groups:])
        lines.append(f"{indent}  {rest:>5}  ... {len(groups) - max_groups} more sources")
    for name in advice(groups, entries=entries, total=n):
        lines.append(f"{indent}  to cut it: {advice_text(name)}")
    return lines
