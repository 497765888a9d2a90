"""Small compiled programs for the checked-advice tests (tests/core/test_advice.py), run in-process under a
`Session` (``Session.start_callable``): each appends what it computed to `results`."""

from __future__ import annotations

import torch


def scale(x, n):
    return x * n


def run_fullgraph_ints(results):
    """``fullgraph=True`` and a new int each call: every call after the first recompiles."""
    f = torch.compile(scale, backend="eager", fullgraph=True, dynamic=False)
    for n in (1, 2, 3):
        results.append(f(torch.ones(2), n).tolist())


def rows(x):
    return x.sum(dim=1)


def run_fullgraph_sizes(results):
    """``fullgraph=True``, ``dynamic=False``, the batch dimension 2, 3, 4: each new size recompiles."""
    f = torch.compile(rows, backend="eager", fullgraph=True, dynamic=False)
    for n in (2, 3, 4):
        results.append(f(torch.ones(n, 3)).tolist())


def double(x):
    return x * 2


def run_sizes_to_one(results):
    """Sizes 3, 4 (automatic dynamic makes dimension 0 symbolic, guarded ``2 <= size``), then 1: the size-1 call
    fails that 0/1-specialization guard."""
    f = torch.compile(double, backend="eager")
    for n in (3, 4, 1):
        results.append(f(torch.ones(n)).tolist())
