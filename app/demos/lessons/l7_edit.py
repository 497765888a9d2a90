"""Lesson 7: editing. Change an instruction of the generated code and a guard, see the effect, undo."""

import torch


def label(x):
    return x + 1, "original"


compiled = torch.compile(label, backend="eager")
for i in range(3):
    result, tag = compiled(torch.ones(2))
    print(f"call {i}: tag = {tag!r}, result = {result.tolist()}")
