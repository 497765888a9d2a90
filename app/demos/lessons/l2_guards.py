"""Lesson 2: guards. The compiled code is reused only while its guards say the inputs still match."""

import torch


def shift(x, offset):
    return x + offset


compiled = torch.compile(shift, backend="eager")
first = compiled(torch.ones(3), 1)
print("first call: ", first.tolist())
second = compiled(torch.ones(3), 2)
print("second call:", second.tolist())
