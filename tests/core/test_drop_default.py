"""The default ``drop`` at a recompile stop: what it leaves out (global state, ``.training`` flags, dispatch
modes, whole-tensor ``TENSOR_MATCH``) and why, on a real net with two BatchNorm layers switched from train() to
eval() under ``torch.no_grad()``; results compared with a plain run of the same program in a child process."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dynadbg.core.model import DecisionKind, HeldBackReason
from helpers import drive, drive_answering
from programs import batchnorm_modes as bn
from programs import recompiles as progs
from forkrun import python

PROGRAM = Path(__file__).resolve().parent / "programs" / "batchnorm_modes.py"


def plain_results(*scales: int) -> list:
    """The program's outputs without the debugger (a child process: no dynadbg, a fresh Dynamo cache)."""
    out = python([str(PROGRAM), *map(str, scales)], timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(len(x) == len(y) and all(math.isclose(p, q, rel_tol=1e-5, abs_tol=1e-6)
                                                             for p, q in zip(x, y)) for x, y in zip(a, b))


def start(*args):  # noqa: ANN201
    return lambda s: s.start_callable(bn.run, *args)


def drop_choice(stop):  # noqa: ANN001, ANN201
    return next(c for c in stop.choices if c.kind is DecisionKind.DROP)


def failing_ids(stop) -> dict[str, str]:  # noqa: ANN001
    """Failing leaf id → source, of the most recently used entry."""
    return {leaf.id: leaf.source for leaf in stop.recompile.entries[0].failing}


def test_default_leaves_out_training_and_global_state_and_accepting_it_keeps_results_right():
    results: list = []
    run = drive(start(results), ["drop", "c", "c"], break_on=("recompile",))
    first = run.stops[0]
    choice = drop_choice(first)
    held = {h.guard.leaf_id: h for h in choice.held_back}
    sources = failing_ids(first)
    training = [gid for gid, src in sources.items() if src.endswith(".training")]
    assert len(training) == 2
    assert {held[gid].reason for gid in training} == {HeldBackReason.MODE_FLAG}
    (state,) = [h for h in choice.held_back if h.guard.guard_type == "GLOBAL_STATE"]
    assert state.reason is HeldBackReason.GLOBAL_STATE
    # only the int argument is in the default (automatic dynamic makes it symbolic in the new entry)
    assert [sources[gid] for gid in choice.decision.guard_ids] == ["L['scale']"]
    out = run.output_of("drop")
    assert out.error is None and out.resumed
    said = out.output.splitlines()
    assert any(line.startswith("left out (global state): ") for line in said), out.output
    (modes,) = [line for line in said if line.startswith("left out (module mode flags): ")]
    assert all(gid in modes for gid in training) and f"drop {' '.join(training)}" in modes
    assert "training" not in out.output.split("permanently:")[1]     # the printed filter keeps the mode guards
    assert same(results, plain_results(1, 2, 3)), (results, plain_results(1, 2, 3))


def test_drop_by_id_still_drops_a_left_out_guard_and_lists_it_once():
    results: list = []

    def answer(run, stop):  # noqa: ANN001, ANN202
        if len(run.stops) == 1 and not run.outputs:
            gid = next(g for g, src in failing_ids(stop).items() if src.endswith("['bn1'].training"))
            return f"drop {gid}"
        return "c"

    run = drive_answering(start(results), answer, break_on=("recompile",))
    (command, out) = run.outputs[0]
    assert out.error is None and "left out" not in out.output          # exactly what was named
    assert "bn1'].training is a constant to Dynamo" in out.output
    (message,) = [m for m in run.messages if m.startswith("drop:")]
    # torch builds one `.training` guard as four filter entries of one name and type: said once, counted
    assert message.count("bn1'].training") == 1 and "×4" in message, message


def test_empty_default_drops_nothing_and_says_why():
    results: list = []
    run = drive(start(results, (1, 1, 1)), ["drop", "c", "c"], break_on=("recompile",))
    out = run.output_of("drop")
    assert not out.resumed and out.error is not None
    assert out.error.startswith("drop: nothing to drop by default of 0/0")
    assert "left out (global state): g1" in out.error and "left out (module mode flags): " in out.error
    assert run.session.recompiles.records()[0].action is None       # nothing was scheduled
    assert run.session._guard_dropper is None
    assert same(results, plain_results(1, 1, 1))


def test_whole_tensor_match_is_left_out_for_dynamic_to_handle():
    run = drive(lambda s: s.start_callable(progs.run_sizes, [], (3, 4)), ["drop", "c"], break_on=("recompile",))
    choice = drop_choice(run.stops[0])
    assert [h.reason for h in choice.held_back] == [HeldBackReason.WHOLE_TENSOR]
    assert choice.held_back[0].guard.source == "L['x']"
    err = run.output_of("drop").error
    assert err is not None and "left out (whole tensors): " in err and "`dynamic NAME DIM`" in err


@pytest.mark.parametrize("gtype, source, reason", [
    ("GLOBAL_STATE", "L", HeldBackReason.GLOBAL_STATE),
    ("TORCH_FUNCTION_MODE_STACK", "L", HeldBackReason.DISPATCH_MODE),
    ("DEFAULT_DEVICE", "L", HeldBackReason.DISPATCH_MODE),
    ("TENSOR_MATCH", "L['x']", HeldBackReason.WHOLE_TENSOR),
    ("ID_MATCH", "L['self'].training", HeldBackReason.MODE_FLAG),
    ("EQUALS_MATCH", "L['n']", None),
])
def test_held_back_reason_by_guard(gtype, source, reason):
    from dynadbg.core.decisions import held_back_reason
    from dynadbg.core.model import LeafGuardView

    assert held_back_reason(LeafGuardView("g1", gtype, source, ())) is reason
