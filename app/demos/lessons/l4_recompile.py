"""Lesson 4: a recompile. The second call changes a plain Python number, and a guard on it fails."""

import torch


def scale(x, factor):
    return x * factor


compiled = torch.compile(scale, backend="eager")
for factor in (2, 3, 3):
    result = compiled(torch.ones(3), factor)
    print(f"factor {factor}:", result.tolist())
