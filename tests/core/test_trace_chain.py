"""The inlining chain a full record shows is the chain at that step.

`Frame.chain` is computed once per frame (an outer translator waits in its call while the frame runs). The
oracle here computes the chain afresh at every traced instruction, by walking the translator's parents, and every
step's chain (`Attempt.details[...].chain`, `Attempt.chain`) must equal it: inlined helpers three deep with a
graph break at the bottom (a restart re-traces them), helpers called twice from one frame, and generators Dynamo
traces inlined (a generator's translator is resumed by each ``next`` from the loop)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
import torch

from dynadbg.core import trace

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
CORE_PROGRAMS = Path(__file__).resolve().parent / "programs"


class _FreshChain(trace.TraceRecorder):
    """The recorder, plus the chain walked afresh at each full record (by attempt, ordinal)."""

    def __init__(self) -> None:
        super().__init__(full=True)
        self.fresh: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
        self.seen: dict[int, trace.Attempt] = {}

    def _full_record(self, att: trace.Attempt, ordinal: int, tx: Any, frame: trace.Frame, nodes: int,
                     guards: int) -> None:
        super()._full_record(att, ordinal, tx, frame, nodes, guards)
        self.seen[id(att)] = att
        links = []
        p = vars(tx).get("parent")
        while p is not None:
            pip = p.instruction_pointer
            links.append((att.frame_of(p), (pip - 1) if pip else 0))
            p = vars(p).get("parent")
        self.fresh[(id(att), ordinal)] = tuple(reversed(links))


def _deep() -> None:
    def c(t: torch.Tensor) -> torch.Tensor:
        return t * 3

    def b(t: torch.Tensor) -> torch.Tensor:
        return c(t + 1) - c(t)

    def a(t: torch.Tensor) -> torch.Tensor:
        u = b(t)
        return b(u) + 1

    def f(x: torch.Tensor) -> torch.Tensor:
        y = a(x)
        z = a(y.sin())
        return z.cos()

    torch.compile(f, backend="eager")(torch.ones(3))


def _script(path: Path) -> Any:
    return lambda: runpy.run_path(str(path), run_name="__main__")


@pytest.mark.parametrize("program", ["deep", "inline_helpers_break.py", "generator_graph_break.py",
                                     "trace_helpers.py"])
def test_every_steps_chain_is_the_chain_then(program: str, capsys: pytest.CaptureFixture[str]) -> None:
    torch._dynamo.reset()
    rec = _FreshChain().install()
    try:
        if program == "deep":
            _deep()
        else:
            _script(CORE_PROGRAMS / program if program == "trace_helpers.py" else PROGRAMS / program)()
    finally:
        rec.uninstall()
    assert rec.errors == []
    depth = {"trace_helpers.py": 2, "generator_graph_break.py": 1}.get(program, 3)
    assert max(a.max_depth for a in rec.seen.values()) >= depth
    if program == "generator_graph_break.py":  # the case the chain once per frame got wrong
        assert any(att.chain_at for att in rec.seen.values())
    wrong = []
    for (aid, ordinal), fresh in rec.fresh.items():
        att = rec.seen[aid]
        if att.details[ordinal].chain != fresh:
            wrong.append((att.compile_id, att.number, ordinal, att.step(ordinal).code_name,
                          att.details[ordinal].chain, fresh))
        assert tuple((f.code_name, f.index) for f in att.chain(ordinal)[:-1]) == tuple(
            (att.frames[fi].code.co_name, ip) for fi, ip in fresh)
    assert wrong == []
