"""What Dynamo imposes (`dynadbg.core.facts`), checked against torch where torch can say it: the guard filter
entries a leaf of the guard tree stands for, the names of what Dynamo generates, the parts of a graph-break
reason."""

from __future__ import annotations

import torch

from dynadbg.core import compat, facts
from dynadbg.core.decisions import drop_spec
from dynadbg.core.guards import entry_guard_tree, iter_leaves
from dynadbg.core.model import LeafGuardView

compat.load()


def _filter_entries_and_tree(fn, *args):  # noqa: ANN001, ANN202
    """Every ``GuardFilterEntry`` torch hands a user's ``guard_filter_fn`` for one compile of `fn`, and the guard
    tree of the entry it builds."""
    seen: list = []

    def keep_all(entries):  # noqa: ANN001, ANN202
        seen.extend(entries)
        return [True] * len(entries)

    torch._dynamo.reset()
    torch.compile(fn, backend="eager", dynamic=False, options={"guard_filter_fn": keep_all})(*args)
    (entry,) = compat.cache_entries(fn.__code__)
    return seen, entry_guard_tree(entry)


def scaled(x, n, flag, t, d):  # noqa: ANN001, ANN201
    y = x * n if flag and "b" not in d else x
    return y + len(t)


def test_every_leaf_a_filter_can_drop_has_a_filter_entry_of_the_types_facts_names():
    entries, tree = _filter_entries_and_tree(scaled, torch.ones(2), 3, True, (1, 2), {"a": 1})
    by_source: dict[str, set[str]] = {}
    for e in entries:
        source, gtype, derived, *_ = compat.guard_filter_entry_fields(e)
        by_source.setdefault(source, set()).update((gtype, *derived))
    checked = set()
    for leaf in iter_leaves(tree):
        if leaf.relational or not leaf.source.startswith("L["):
            continue
        types = facts.filter_types(leaf.guard_type, leaf.source, leaf.code)
        if leaf.guard_type in facts.PART_OF_ENTRY:
            # built by another guard's entry: no filter entry of its own, dropping is refused
            assert types is None and facts.PART_OF_ENTRY[leaf.guard_type] in by_source[leaf.source]
            assert "no guard filter removes it alone" in str(_refusal(leaf))
            continue
        assert types is not None and set(types) & by_source[leaf.source], (leaf.guard_type, leaf.source,
                                                                            by_source[leaf.source])
        checked.add(leaf.guard_type)
    # the int's and the bool's constant guards, the tensor's, the tuple's length, the dict's missing key
    assert {"EQUALS_MATCH", "TENSOR_MATCH", "LENGTH_CHECK", "DICT_CONTAINS"} <= checked, checked


def _refusal(leaf: LeafGuardView) -> Exception:
    try:
        drop_spec(leaf)
    except ValueError as exc:
        return exc
    raise AssertionError(f"{leaf.guard_type} was accepted")


def test_one_taxonomy_for_drop_and_guard_drop():
    """``drop`` (a `DropSpec`) and ``guard drop`` filter a leaf by the same types: `facts.filter_types`."""
    n = LeafGuardView("g3", "EQUALS_MATCH", "L['n']", ("L['n'] == 3",), expected="3")
    assert drop_spec(n).filter_types == facts.filter_types("EQUALS_MATCH", "L['n']") == facts.CONSTANT_FILTER_TYPES
    assert facts.snippet_types("EQUALS_MATCH", facts.CONSTANT_FILTER_TYPES) == ("CONSTANT_MATCH", "EQUALS_MATCH")
    assert facts.filter_types("TORCH_FUNCTION_MODE_STACK", "L") == ("TORCH_FUNCTION_STATE",)
    assert facts.filter_types("DICT_CONTAINS", "L['d']") == ("DICT_CONTAINS", "DICT_NOT_CONTAINS")
    assert facts.filter_types("LAMBDA_GUARD", "L", ("x == 1",)) is None  # an ambient guard: no filter entry
    assert facts.filter_types("LAMBDA_GUARD", "L", ("___stack0",), epilogue=True) == ("SHAPE_ENV",)
    assert {"EQUALS_MATCH", "ID_MATCH"} <= facts.PINNING_GUARDS and "TENSOR_MATCH" in facts.SHAPE_GUARDS


def test_dynamo_names_and_graph_break_reasons():
    assert facts.is_resume_name("MLP.torch_dynamo_resume_in_forward_at_26")
    assert facts.resume_origin_name("torch_dynamo_resume_in_forward_at_26") == "forward"
    assert facts.short_graph_name("__compiled_fn_2_17e8b037_93a1_4c1e_8d6f_0a1b2c3d4e5f") == "__compiled_fn_2"
    assert facts.readable_global("__import_torch_dot__dynamo_dot_utils") == "torch._dynamo.utils"
    assert facts.callable_name("Stepper.forward") == "model" and facts.callable_name("f") == "f"
    summary, notes = facts.parse_break_reason(
        "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
        "  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.\n"
        "  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`\n\n  Developer debug context: call_method")
    assert summary == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert [n.split(":")[0] for n in notes] == ["Explanation", "Hint"]
    assert facts.config_suggestions(notes[1]) == ["torch._dynamo.config.capture_scalar_outputs = True"]


def _relu(t):  # noqa: ANN001, ANN202
    return t.relu()


class _Box:
    k = 2


_BOX = _Box()


def test_tensor_match_code_is_read_once_for_every_reader():
    """torch's ``TENSOR_MATCH`` code part of a real entry reads as the sizes, strides, dtype and requires_grad of
    the tensor it was traced with (a dynamic dimension as None), and the guard pane's one-row form puts them first
    and leaves no object address; a code part of another kind is not read as one."""
    from dynadbg.core.format.guards import short_leaf_code

    def f(x, w, n):  # noqa: ANN001, ANN202
        return _relu(x @ w) * n * _BOX.k

    torch._dynamo.reset()
    x, w = torch.ones(4, 3), torch.ones(3, 2, requires_grad=True)
    torch._dynamo.mark_dynamic(x, 0)
    torch.compile(f, backend="eager", dynamic=False)(x, w, 2)
    (entry,) = compat.cache_entries(f.__code__)
    all_leaves = list(iter_leaves(entry_guard_tree(entry)))
    leaves = {leaf.source: leaf for leaf in all_leaves if leaf.guard_type == "TENSOR_MATCH"}
    cx, cw = facts.tensor_check_in(leaves["L['x']"].code), facts.tensor_check_in(leaves["L['w']"].code)
    assert cx is not None and cw is not None
    assert (cx.size, cx.stride, cx.dtype, cx.requires_grad) == ((None, 3), (3, 1), "torch.float32", False)
    assert (cw.size, cw.stride, cw.requires_grad) == ((3, 2), (2, 1), True)
    assert short_leaf_code(leaves["L['w']"].code[0]) == (
        "check_tensor(L['w'], size=[3, 2], stride=[2, 1], float32, requires_grad=True, …)")
    (type_leaf,) = [leaf for leaf in all_leaves if leaf.source == "G['_BOX']" and leaf.guard_type == "TYPE_MATCH"]
    (id_leaf,) = [leaf for leaf in all_leaves if leaf.guard_type == "ID_MATCH"]
    assert facts.tensor_check(type_leaf.code[0]) is None
    assert facts.type_check(type_leaf.code[0]) == (type_leaf.code[0].split("), ")[0] + ")", "test_facts._Box")
    assert short_leaf_code(type_leaf.code[0]) == "type=_Box  ___check_type_id(G['_BOX'], …)"
    assert short_leaf_code(id_leaf.code[0]).startswith("___check_obj_id(G['_relu'].__code__, …), type=<class 'code'>")
