"""What a full trace recording keeps is what the first recorder kept, step by step.

The step hook keeps raw tuples and builds each step's `Detail` when it is read (`Attempt.details`), reuses the
locals' summaries position by position and finds lazy locals by type in one pass. `_OldAlgorithm` is the recorder
of before that change, restated here as the oracle (one `Detail`-like record per step from a dict of the locals by
name, every lazy local summarised again at each rebuild, its own `SummaryCache`). It runs beside the recorder on
the same translators at the same moments, and every step's stack, locals, inlining chain and added nodes and guards
must be equal (`TraceValue` is a frozen dataclass: equal field by field).
"""

from __future__ import annotations

import operator
import runpy
from pathlib import Path
from typing import Any

import pytest
import torch

from dynadbg.core import compat, trace, trace_read

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


class _OldAlgorithm(trace.TraceRecorder):
    """The recorder, plus the former `_full_record` keeping its own records in `old` (by attempt, ordinal)."""

    def __init__(self) -> None:
        super().__init__(full=True)
        self.old: dict[tuple[int, int], dict[str, Any]] = {}
        self._state: dict[tuple[int, int], dict[str, Any]] = {}
        self._caches: dict[int, trace_read.SummaryCache] = {}
        self.seen: dict[int, trace.Attempt] = {}
        self.full_steps = 0

    def _full_record(self, att: trace.Attempt, ordinal: int, tx: Any, frame: trace.Frame, nodes: int,
                     guards: int) -> None:
        self.seen[id(att)] = att
        prev = self.old.get((id(att), ordinal - 1)) if ordinal > 0 else None
        if prev is not None:
            _fi, _ip, _l, pn, pg = att.steps[ordinal - 1]
            if nodes > pn:
                prev["new_nodes"] = trace_read.newest_node_names(tx.output, nodes - pn)
            if guards > pg:
                prev["new_guards"] = trace_read.newest_guards(tx.output, guards - pg)
        super()._full_record(att, ordinal, tx, frame, nodes, guards)
        self.full_steps += 1
        summary = self._caches.setdefault(id(att), trace_read.SummaryCache()).summary
        st = self._state.setdefault((id(att), frame.index), {
            "vals": (), "locals": (), "lazy": (), "caches": (), "states": (), "stack_vts": (), "stack": ()})
        fields = vars(tx)
        stack_vts = tuple(fields["stack"])
        last = st["stack_vts"]
        same = 0
        limit = min(len(stack_vts), len(last))
        while same < limit and stack_vts[same] is last[same]:
            same += 1
        if same == len(stack_vts):
            stack = st["stack"] if same == len(last) else st["stack"][:same]
        else:
            stack = st["stack"][:same] + tuple(map(summary, stack_vts[same:]))
        st["stack_vts"], st["stack"] = stack_vts, stack
        loc = fields.get("symbolic_locals") or {}
        vals = tuple(loc.values())
        before = st["vals"]
        if (len(vals) == len(before) and all(map(operator.is_, vals, before))
                and all(map(operator.is_, compat.lazy_realized(st["caches"]), st["states"]))):
            locals_ = st["locals"]
        else:
            previous = {name: (vt, v) for (name, v), vt in zip(st["locals"], st["vals"])}
            stale = set(map(id, st["lazy"]))
            out = []
            for name, vt in loc.items():
                hit = previous.get(name)
                out.append((name, hit[1] if hit is not None and hit[0] is vt and id(vt) not in stale
                            else summary(vt)))
            locals_ = tuple(out)
            st["vals"], st["locals"] = vals, locals_
            kept = [(vt, c) for vt in vals if compat.is_lazy_tracker(vt) and (c := vars(vt).get("_cache")) is not None]
            st["lazy"], st["caches"] = tuple(vt for vt, _c in kept), tuple(c for _vt, c in kept)
            st["states"] = compat.lazy_realized(st["caches"])
        # walked at every step (the former recorder made it once per frame, stale in an inlined generator that a
        # loop resumes from another instruction: test_trace_chain.py)
        chain = self._old_chain(att, frame, fields)
        self.old[(id(att), ordinal)] = {"stack": stack, "locals": locals_, "chain": chain, "new_nodes": None,
                                        "new_guards": None}

    @staticmethod
    def _old_chain(att: trace.Attempt, frame: trace.Frame, fields: dict[str, Any]) -> tuple[tuple[int, int], ...]:
        chain: tuple[tuple[int, int], ...] = ()
        if frame.depth > 0:
            links = []
            p = fields.get("parent")
            while p is not None:
                pip = p.instruction_pointer
                links.append((att.frame_of(p), (pip - 1) if pip else 0))
                p = vars(p).get("parent")
            chain = tuple(reversed(links))
        return chain

    def _end(self, att: trace.Attempt) -> None:
        super()._end(att)
        # nothing of Dynamo's outlives the compile: the oracle's trackers go too
        self._state = {k: v for k, v in self._state.items() if k[0] != id(att)}
        self._caches.pop(id(att), None)


def _record(program: Any) -> _OldAlgorithm:
    torch._dynamo.reset()
    rec = _OldAlgorithm().install()
    try:
        program()
    finally:
        rec.uninstall()
    assert rec.errors == []
    return rec


def _transformer() -> None:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True).eval()
    torch.compile(layer, backend="eager")(torch.randn(2, 4, 8))


def _script(name: str) -> Any:
    return lambda: runpy.run_path(str(PROGRAMS / name), run_name="__main__")


@pytest.mark.parametrize("program", ["transformer", "inline_helpers_break.py", "generator_graph_break.py",
                                     "dynamic_shapes_trace.py", "transformer, compared by is"])
def test_every_full_record_is_what_the_former_recorder_kept(program: str, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    if program.endswith("by is"):  # a torch whose tracker classes define __eq__: the step hook compares by `is`
        monkeypatch.setattr(compat, "trackers_equal_by_identity", lambda root=None: False)
    rec = _record(_transformer if program.startswith("transformer") else _script(program))
    assert rec.eq_is_identity is not program.endswith("by is")
    assert rec.full_steps > 20
    for key, old in rec.old.items():
        att = rec.seen[key[0]]
        detail = att.details[key[1]]
        assert detail.stack == old["stack"], key
        assert detail.locals == old["locals"], key
        assert detail.chain == old["chain"], key
        # added nodes and guards as the next step found them (the last step's come from the attempt's end)
        if old["new_nodes"] is not None:
            assert detail.new_nodes == old["new_nodes"], key
        if old["new_guards"] is not None:
            assert detail.new_guards == old["new_guards"], key
        step = att.step(key[1])
        assert step.full
        assert att.chain(key[1])[-1].index == step.index
    assert sum(len(a.details) for a in rec.seen.values()) == rec.full_steps


def _reachable(root: Any) -> list[Any]:
    """Every object reachable from `root` through `gc.get_referents`, not descending into modules, classes,
    functions and code (what a record points at by design: the user's code objects)."""
    import gc
    import types

    stop = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.CodeType)
    seen: set[int] = set()
    out: list[Any] = []
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append(obj)
        if not isinstance(obj, stop):
            todo.extend(gc.get_referents(obj))
    return out


def test_nothing_of_dynamo_s_tracing_outlives_the_compile() -> None:
    """After a full recording of a compile with a graph break, the records reach no output graph (its FX graph,
    fake tensors and shape env), no instruction translator and no variable tracker: a recording bounded by steps
    must not hold every compile's tracing state until it is evicted."""
    from torch._dynamo.output_graph import OutputGraph
    from torch._dynamo.symbolic_convert import InstructionTranslatorBase
    from torch._dynamo.variables.base import VariableTracker

    rec = _record(_script("inline_helpers_break.py"))
    assert rec.total_steps > 20
    held = [type(o).__name__ for o in _reachable(rec.compiles)
            if isinstance(o, (OutputGraph, InstructionTranslatorBase, VariableTracker))]
    assert held == []


def test_make_value_is_the_dataclass_s_value() -> None:
    """`trace_model.make_value` (the recorder's fast constructor) makes what ``TraceValue(...)`` makes."""
    import pickle

    from dynadbg.core.trace_model import TraceValue, TraceValueKind, make_value

    for args in [(TraceValueKind.TENSOR, "TensorVariable", "Tensor[2] float32 cpu", "L['x']", "x", ("2",),
                  "float32", "cpu"),
                 (TraceValueKind.UNREALIZED, "LazyVariableTracker", "True", "L['self'].training", None, None, None,
                  None, "bool"),
                 (TraceValueKind.CONSTANT, "ConstantVariable", "2")]:
        fast, plain = make_value(*args), TraceValue(*args)  # type: ignore[arg-type]
        assert type(fast) is TraceValue
        assert fast == plain and hash(fast) == hash(plain) and repr(fast) == repr(plain)
        assert pickle.loads(pickle.dumps(fast)) == plain
        with pytest.raises(AttributeError):
            fast.text = "changed"  # type: ignore[misc]


def test_lazy_realizations_are_counted_and_the_records_match_without_the_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The step hook reads lazy locals' states only after a lazy tracker was realized (`TraceRecorder.realized`,
    counted by a patch of ``LazyCache.realize``). Realizations happen in a transformer layer's compile, and
    without that patch (a torch that lacks it) every step reads the states again and the records are the
    former recorder's too."""
    torch._dynamo.reset()
    rec = _OldAlgorithm().install()
    try:
        assert rec.realized == 0
        _transformer()
        assert rec.realized > 0
    finally:
        rec.uninstall()
    assert rec.realized == -1  # not counted once uninstalled
    targets = dict(compat.TRACE_PATCH_TARGETS)
    targets["trace: lazy realizations"] = ("torch._dynamo.variables.lazy", "LazyCache.no_such_method")
    monkeypatch.setattr(compat, "TRACE_PATCH_TARGETS", targets)
    torch._dynamo.reset()
    rec = _OldAlgorithm().install()
    try:
        assert rec.realized == -1
        _transformer()
    finally:
        rec.uninstall()
    assert rec.full_steps > 20
    for key, old in rec.old.items():
        detail = rec.seen[key[0]].details[key[1]]
        assert (detail.stack, detail.locals) == (old["stack"], old["locals"]), key


def test_trackers_compare_by_identity_unless_a_tracker_class_defines_eq() -> None:
    """The step hook compares the locals as tuples (``==``) only while no tracker class defines ``__eq__``: true of
    torch's trackers here; the walk finds a class that does, however deep."""
    assert compat.trackers_equal_by_identity()  # torch 2.13-2.15

    class Root:
        pass

    class Mid(Root):
        pass

    assert compat.trackers_equal_by_identity(Root)

    class Leaf(Mid):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    assert not compat.trackers_equal_by_identity(Root)
    assert Leaf() == Mid()  # what the step hook must not rely on


class _FullMidRun(_OldAlgorithm):
    """Full recording, off at the first step of a later run of a resumable frame (an inlined generator's resumed
    by its consumer) and on again at the run's next step (what `trace record light` then `trace record full` typed
    at stops do): that step is the run's first full record."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[int, int] = {}
        self.switched_at: list[int] = []

    def _counter(self, output: Any) -> Any:
        counts = super()._counter(output)
        rec = self

        def counting(out: Any) -> tuple[int, int]:
            att = rec.current
            frame = att.last_frame if att is not None else None
            if att is not None and frame is not None and frame.resumable:
                n = len(att.steps)
                if n == att.run_start:
                    rec.runs[frame.index] = rec.runs.get(frame.index, 0) + 1
                    if rec.runs[frame.index] >= 2 and frame.chain is not None and rec.full:
                        rec.full = False
                elif n == att.run_start + 1 and not rec.full:
                    rec.full = True
                    rec.switched_at.append(n)
            return counts(out)

        return counting


def test_a_full_recording_started_inside_a_generator_s_run_has_that_run_s_chain() -> None:
    """The chain of a resumable frame is kept at the first full record of each run (`Attempt.chain_links`): when
    full recording starts again in the middle of a run, that step walks the chain (the outer frames moved since
    the frame's last full record), and every step's chain is the one the former recorder walked at that step."""
    torch._dynamo.reset()
    rec = _FullMidRun().install()
    try:
        _script("generator_graph_break.py")()
        _transformer()
    finally:
        rec.uninstall()
    assert rec.errors == []
    assert len(rec.switched_at) >= 2 and rec.full_steps > 20
    for key, old in rec.old.items():
        att = rec.seen[key[0]]
        assert att.details[key[1]].chain == old["chain"], key
