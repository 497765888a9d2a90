"""A sample suite for the dynadbg pytest plugin (run by tests/plugin/test_plugin.py in a child pytest)."""

import torch


@torch.compile(backend="eager")
def scale(x, n):
    return x * n + 1


@torch.compile(backend="eager")
def shout(x):
    y = x.sin()
    print("half way")
    return y.cos()


@torch.compile(backend="eager")
def steady(x):
    return x.relu() * 2


def test_int_argument_recompiles():
    x = torch.ones(3)
    assert scale(x, 2).tolist() == [3.0, 3.0, 3.0]
    assert scale(x, 3).tolist() == [4.0, 4.0, 4.0]


def test_graph_break():
    assert shout(torch.zeros(2)).tolist() == [1.0, 1.0]


def test_steady():
    x = torch.ones(4)
    for _ in range(3):
        assert steady(x).tolist() == [2.0] * 4
