"""Lesson 3: a graph break. `int(total)` needs a real Python number, which a graph cannot give."""

import torch


def normalise(x):
    y = x * 2
    total = int(y.sum())      # a Python int: the graph has to stop here
    return y / total


compiled = torch.compile(normalise, backend="eager")
result = compiled(torch.ones(4))
print("result:", result.tolist())
