"""Lesson 5: side effects. Changes to Python objects cannot live in a graph; they are replayed after it."""

import torch

history = []
calls = 0


class Counter:
    def __init__(self):
        self.last = None


counter = Counter()


def record(x):
    global calls
    calls = calls + 1          # a global
    history.append("seen")     # a list append
    counter.last = "record"    # an attribute
    return x + 1


compiled = torch.compile(record, backend="eager")
result = compiled(torch.ones(2))
print("result:", result.tolist())
print("calls:", calls, "history:", history, "counter.last:", counter.last)
