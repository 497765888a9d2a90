"""Lesson 1: one small function, compiled once, and what torch.compile made of it."""

import torch


def scaled_sin(x):
    y = x * 2 + 1
    return torch.sin(y)


compiled = torch.compile(scaled_sin, backend="eager")
result = compiled(torch.ones(3))
print("result:", result.tolist())
