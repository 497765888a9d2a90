"""Value summaries (`dynadbg.core.values.summarize`): what the stack, locals and `explain` show for an object."""

from __future__ import annotations

import torch

from dynadbg.core.values import summarize


def test_a_bound_method_reads_as_its_name_and_its_object_not_an_address() -> None:
    """A value-stack slot holding ``t.item`` (the operand of the CALL at an ``.item()`` graph break)."""
    t = torch.ones(3)
    assert summarize(t.item).text == "method item of Tensor[3] float32 cpu"
    assert summarize(torch.nn.Linear(2, 2).forward).text == "method forward of Linear train mode"
    assert summarize(len).text == "<built-in function len>"  # a builtin function is bound to its module: unchanged
    assert " at 0x" not in summarize([].append).text
