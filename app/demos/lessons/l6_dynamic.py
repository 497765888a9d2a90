"""Lesson 6: dynamic shapes. A new size fails a size guard once; then Dynamo compiles for any size."""

import torch


def double(x):
    return x * 2


def triple(x):
    return x * 3


compiled = torch.compile(double, backend="eager")
for n in (2, 3, 4):
    result = compiled(torch.ones(n))
    print(f"double, size {n}:", result.tolist())

# mark_dynamic says up front that dimension 0 will vary: the first compile is already for any size
other = torch.compile(triple, backend="eager")
first = torch.ones(5)
torch._dynamo.mark_dynamic(first, 0)
for x in (first, torch.ones(6)):
    result = other(x)
    print(f"triple, size {x.shape[0]}:", result.tolist())
