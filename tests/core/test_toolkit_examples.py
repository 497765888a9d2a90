"""The README's toolkit examples (examples/toolkit_*.py, and the code block that opens the README's toolkit
section) run as a user runs them, in a child process: each example checks its own claims with asserts and prints
what it did; the README block is run exactly as written."""

from __future__ import annotations

import os

import pytest
from forkrun import python

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def run_example(name: str) -> str:
    proc = python([os.path.join(EXAMPLES, name)], timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def readme_toolkit_block() -> str:
    """The first ``python`` code block of the README's section "Scripting cache entries: `dynadbg.toolkit`"."""
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    section = text[text.index("## Scripting cache entries: `dynadbg.toolkit`"):]
    start = section.index("```python\n") + len("```python\n")
    return section[start:section.index("```", start)]


def test_readme_toolkit_block_runs_as_written(tmp_path):
    """The block defines all it uses; its comments say what it prints (its drop names a guard by source and type:
    leaf ids depend on the tree, and "g6" was L['x']'s TENSOR_MATCH, which install refused)."""
    prog = tmp_path / "prog.py"
    prog.write_text(readme_toolkit_block())
    proc = python([str(prog)], timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("0/0  cache  eager  ") and "dynamo  (compiled by the call at prog.py:" in lines[0]
    assert lines[1] == "[(\"L['cfg'].scale\", 'EQUALS_MATCH')]"
    assert lines[2].startswith("1 False 0/1  cache  eager  ") and "1 hits  toolkit  (installed at prog.py:" in lines[2]
    assert lines[3].startswith("layers.3: swapped in at L['self']._modules['layers']._modules['3']")
    assert lines[3].endswith("nothing installed, no recompile")
    assert (tmp_path / "copy.json").exists()


def test_swap_module_example_serves_lin_b_and_the_swapped_model_without_recompiling():
    out = run_example("toolkit_swap_module.py")
    assert "lin_a: the code now reads G['lin_b']" in out
    assert "served lin_b with 1 compile" in out
    assert "after lin_b.double(): Dynamo compiled again (2 compiles), for lin_b" in out
    assert "accept it as they are: nothing installed, no recompile" in out


def test_add_guard_example_recompiles_only_for_the_new_guard():
    out = run_example("toolkit_add_guard.py")
    assert "+ EQUALS_MATCH on L['cfg'].version (added)" in out
    assert "served 2 calls, 1 compile" in out and "Dynamo compiled again (2 compiles)" in out


def test_drop_guard_example_serves_the_subclass_next_to_the_original():
    out = run_example("toolkit_drop_guard.py")
    assert "dropping EQUALS_MATCH on L['cfg'].scale" in out
    assert "LegacyConfig: served by copy 0/1 (2 calls), Config by the original; 1 compile" in out


@pytest.mark.slow
def test_save_replay_example_replays_in_a_fresh_process_and_refuses_the_stale_patch():
    out = run_example("toolkit_save_replay.py")
    assert "replayed: copy 0/1 serves lin_b (1 call)" in out
    assert "refused:" in out and "G['lin_b']._parameters" in out and "torch.float64" in out
