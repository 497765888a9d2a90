"""Guard diffs in text show what changed: a long changed guard is cut around its first difference, never to two
identical strings (a tensor's size guard differs deep inside a long ``check_tensor(...)``)."""

from __future__ import annotations

from dynadbg.core.format.recompile import diffs_text
from dynadbg.core.model import DiffKind, EntryDiff, GuardDiff
from dynadbg.core.values import cut_pair

_HEAD = ("check_tensor(L['kwargs']['input_ids'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
         "AutogradCPU), torch.int64, device=None, requires_grad=False, ")
OLD = _HEAD + "size=[2, 8], stride=[8, 1])"
NEW = _HEAD + "size=[2, None], stride=[None, 1])"


def test_changed_tensor_guard_shows_the_size_that_changed() -> None:
    diff = EntryDiff("0/0", "0/1", (GuardDiff(DiffKind.CHANGED, "L['kwargs']['input_ids']", "TENSOR_MATCH", OLD, NEW),))
    line = diffs_text([diff]).splitlines()[1]
    old, new = line.split(": ", 1)[1].split(" → ")
    assert old != new
    assert "size=[2, 8]" in old and "size=[2, None]" in new
    assert old.startswith("…") and len(line) < 200  # the common head is elided, with a marker


def test_cut_pair_never_gives_two_identical_texts() -> None:
    for old, new in [("x" * 400 + "a", "x" * 400 + "b"), ("a" + "x" * 400, "b" + "x" * 400),
                     ("x" * 200 + "a" * 300, "x" * 200 + "b" * 300), (OLD, NEW), ("y" * 500, "y" * 499)]:
        a, b = cut_pair(old, new, 160)
        assert a != b, (old[:20], new[:20])
        assert len(a) <= 162 and len(b) <= 162
    assert cut_pair("L['n'] == 3", "L['n'] == 4") == ("L['n'] == 3", "L['n'] == 4")  # short: unchanged
