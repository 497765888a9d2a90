"""The Python API: `dynadbg.debug()` around a region and `dynadbg.set_trace()` inside a compiled function."""

from __future__ import annotations

import io
import re

import torch

import dynadbg


def f(x, n):
    y = x * n
    print("brk")
    return y.sum() + 1


def test_debug_region_stops_and_scripted_commands_run():
    out = io.StringIO()
    cf = torch.compile(f, backend="eager")
    with dynadbg.debug(commands=["s 2", "stack", "c"], out=out) as session:
        result = cf(torch.ones(3), 2)
    text = out.getvalue()
    assert float(result) == 7.0
    assert "[entry]  f  index 1" in text
    assert "(dynadbg) stack" in text and "value stack: 4 slots" in text
    assert [fr.name for fr in session.compiled_frames()][0] == "f"
    # hooks restored: a second region in the same thread works
    with dynadbg.debug(commands=[], out=io.StringIO()):
        assert float(cf(torch.ones(3), 2)) == 7.0


def test_quit_ends_only_the_region():
    cf = torch.compile(f, backend="eager")
    reached = []
    out = io.StringIO()
    with dynadbg.debug(commands=["q"], out=out):
        cf(torch.ones(3), 2)
        reached.append(True)
    assert reached == []
    assert "debugging ended by quit" in out.getvalue()


def test_set_trace_stops_in_the_generated_code_after_the_call(monkeypatch):
    @torch.compile(backend="eager")
    def g(x):
        y = x.sin()
        dynadbg.set_trace()
        return y * 2

    out = io.StringIO()
    from dynadbg import api

    monkeypatch.setattr(api, "make_driver", lambda: api.LineDriver(["locals", "c"], io.StringIO(), out))
    try:
        assert torch.equal(g(torch.zeros(2)), torch.zeros(2))
    finally:
        for s in list(api._active.values()):
            s.release()
        api._active.clear()
    text = out.getvalue()
    assert "--- dynadbg.set_trace()" in text
    # set_trace() inside compiled code is a breakpoint marker (no graph break): a breakpoint stop in g's generated
    # code, before the graph ran (only x is bound there)
    assert "[breakpoint]  g  index" in text
    assert re.search(r"x +Tensor\[2\] float32 cpu", text)
