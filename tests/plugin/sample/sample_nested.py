"""One graph break in a helper called through two levels from compiled code (like a library's
`logger.warning_once`): torch logs it once per frame on the way down, the user wrote it once."""

import torch


def warn_once(x):
    print("warning: once")
    return x


def inner(x):
    return warn_once(x * 2) + 1


def middle(x):
    return inner(x * 3) - 1


@torch.compile(backend="eager")
def outer(x):
    return middle(x + 1) * 2


def test_nested_break():
    assert outer(torch.ones(2)).tolist() == [24.0, 24.0]
