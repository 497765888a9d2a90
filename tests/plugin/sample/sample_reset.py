"""Two tests that share one compiled function: the second calls it with another int."""

import torch


@torch.compile(backend="eager")
def shift(x, k):
    return x - k


def test_first_value():
    shift(torch.zeros(2), 1)


def test_second_value():
    shift(torch.zeros(2), 2)
