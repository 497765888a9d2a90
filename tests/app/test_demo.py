"""`dynadbg demo` on the bundled example, in line mode (a subprocess, as a user runs it)."""

from __future__ import annotations


import pytest
from forkrun import python


@pytest.mark.slow
def test_demo_stops_in_the_models_generated_code_and_before_its_recompile():
    proc = python(
        ["-m", "dynadbg", "demo", "--plain", "-c", "s 3; stack; c; c; entries; c"],
        timeout=300,
    )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the user's forward is compiled (not torch's module-call wrapper), then its resume function after .item()
    assert "[entry]  forward  index 1" in out
    assert "[step]  forward  index 4" in out
    assert "[entry]  torch_dynamo_resume_in_forward_at_" in out
    # scale=2 fails the int guard of entry 0/0: the recompile stop names it
    assert "[recompile]  forward" in out
    assert "L['scale'] == 1" in out
    assert "expected 1, actual 2" in out
    # the program's own output is all there
    assert out.count("scale=") == 3 and "device: " in out


@pytest.mark.slow
def test_guard_ids_are_the_same_at_every_stop_of_an_entry():
    """torch moves a failing child to the front of its manager; `guards` ids must not follow that reordering,
    or `drop gN` noted at one stop would name another guard at the next."""
    import re

    proc = python(
        ["-m", "dynadbg", "demo", "--plain", "-c", "guards; c; c; guards fail; c"],
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ids = re.findall(r"(g\d+) (?:PASS |FAIL )?EQUALS_MATCH  L\['scale'\] == 1", proc.stdout)
    assert len(ids) >= 2 and len(set(ids)) == 1, ids
