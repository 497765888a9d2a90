"""Budgets given per test with the dynadbg marker (no command-line option)."""

import pytest
import torch


@torch.compile(backend="eager")
def offset(x, k):
    return x + k


@pytest.mark.dynadbg(max_recompiles=0)
def test_marker_budget_zero():
    x = torch.zeros(2)
    offset(x, 1)
    offset(x, 5)


@pytest.mark.dynadbg(max_recompiles=3)
def test_marker_budget_three():
    x = torch.zeros(2)
    offset(x, 7)
    offset(x, 8)
