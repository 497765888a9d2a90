"""Programs for the teaching-engine tests: a graph break with a value on the stack, and side effects of each
kind (imported, so their code objects are stable within a test run)."""

import torch

LOG: list = []
CALLS = 0


class Box:
    def __init__(self):
        self.seen = 0


BOX = Box()


def breaks_on_item(x, w):
    y = x * w
    n = int(y.sum())
    return y + n


def mutates(x):
    global CALLS
    CALLS = CALLS + 1
    LOG.append(1)
    BOX.seen = 5
    return x + 1


def run_breaks_on_item(results):
    cf = torch.compile(breaks_on_item, backend="eager")
    results.append(cf(torch.ones(3), torch.full((3,), 2.0)).tolist())


def run_mutates(results):
    cf = torch.compile(mutates, backend="eager")
    results.append(cf(torch.ones(2)).tolist())
