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


def test_a_0d_tensor_says_so_and_a_sized_one_shows_its_sizes() -> None:
    """``Tensor[]`` alone read as "no shape known"; a 0-d tensor (one number, as ``y.sum()`` makes) says ``(0-d)``."""
    import torch

    from dynadbg.core.trace_read import tensor_text

    assert summarize(torch.tensor(1.0)).text == "Tensor[] (0-d) float32 cpu"
    assert summarize(torch.ones(2, 3)).text == "Tensor[2, 3] float32 cpu"
    assert tensor_text((), "float32", "cpu") == "Tensor[] (0-d) float32 cpu"   # a fake tensor while tracing
    assert tensor_text(("3", "s0"), "float32", None) == "Tensor[3, s0] float32"


def test_a_dict_reads_in_insertion_order_with_its_tensors_summarised_and_the_rest_counted_off() -> None:
    """A module's ``_modules`` of 300 layers reads ``'0', '1', '2'`` as the program built it (not sorted as text:
    ``'0', '1', '10', '100'``), six items then ``...``; a tensor inside is its summary, never its values."""
    layers = torch.nn.ModuleList(torch.nn.Linear(2, 2) for _ in range(300))
    text = summarize(layers._modules).text
    assert text.startswith("{'0': Linear(in_features=2, out_features=2, bias=True), '1': Linear("), text
    assert "'10'" not in text and "'100'" not in text
    params = summarize(layers[0]._parameters).text
    assert params == "{'weight': Parameter[2, 2] float32 cpu grad, 'bias': Parameter[2] float32 cpu grad}"
    assert summarize({}).text == "{}"
    assert summarize({"a": {"b": {"c": {"d": 1}}}}).text == "{'a': {'b': {'c': {...}}}}"
    many = summarize({str(k): k for k in range(10)}).text
    assert many == "{'0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, ...}"
