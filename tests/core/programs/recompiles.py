"""Programs that recompile, for the recompile-insight tests (imported: their code objects are stable in a run)."""

import gc

import torch


def three(x, n, flag, cfg):
    y = x * n
    if flag:
        y = y + 1
    return y * cfg["scale"]


def run_three(results):
    """Second call changes an int, a bool and a float inside a dict at once: three guards of 0/0 fail."""
    cf = torch.compile(three, backend="eager")
    results.append(cf(torch.ones(3), 1, True, {"scale": 0.5}).tolist())
    results.append(cf(torch.ones(3), 2, False, {"scale": 0.25}).tolist())


class Counter(torch.nn.Module):
    """Case 002's pattern: an int attribute bumped in forward (static to Dynamo: every call recompiles)."""

    def __init__(self):
        super().__init__()
        self.counter = 0

    def forward(self, x):
        self.counter += 1
        return x * (min(self.counter, 4) / 4.0)


def run_counter(results, calls=4, limit=None):
    """`limit` sets torch._dynamo.config.recompile_limit here: torch 2.13's config is per thread (ContextVars),
    so a value set by the test thread is not seen by the program's worker thread."""
    if limit is not None:
        torch._dynamo.config.recompile_limit = limit
    m = Counter()
    cm = torch.compile(m, backend="eager")
    for _ in range(calls):
        results.append(float(cm(torch.ones(2)).sum()))
    results.append(("counter", m.counter))


def scale_rows(x):
    return x * 2


def run_sizes(results, sizes=(3, 4, 5, 6)):
    """Every call a new size, automatic dynamic off: without mark_dynamic each size is a new entry."""
    prev = torch._dynamo.config.automatic_dynamic_shapes
    torch._dynamo.config.automatic_dynamic_shapes = False
    try:
        cf = torch.compile(scale_rows, backend="eager")
        for n in sizes:
            results.append(float(cf(torch.ones(n)).sum()))
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = prev


def add(a, b):
    return a + b


def run_grad_mode(results):
    cf = torch.compile(add, backend="eager")
    results.append(cf(torch.ones(2), torch.ones(2)).sum().item())
    with torch.no_grad():
        results.append(cf(torch.ones(2), torch.ones(2)).sum().item())


def run_aliasing(results):
    cf = torch.compile(add, backend="eager")
    t = torch.ones(2)
    results.append(cf(t, torch.ones(2)).sum().item())
    results.append(cf(t, t).sum().item())


def scaled(x, o):
    return x * o.scale


def _make_obj():
    class Holder:
        scale = 2.0

    return Holder()


def run_invalidated(results):
    """The class of a guarded object is deallocated: torch invalidates the entry (``... got deallocated``)."""
    import weakref

    cf = torch.compile(scaled, backend="eager")
    o = _make_obj()
    results.append(cf(torch.ones(2), o).sum().item())
    cls = weakref.ref(type(o))
    del o
    gc.collect()
    results.append(cls() is None)  # whether the interpreter let the class go (3.12 may keep it a while)
    results.append(cf(torch.ones(2), _make_obj()).sum().item())


def make_closure(k):
    def inner(x, cfg):
        return x * k + cfg["a"]

    return inner


def times_n(x, n):
    return x * n


def run_counted(results, compiles, ns=(1, 2, 1, 3)):
    """`times_n` under a backend that records each compile it is asked for (a compile Dynamo really made, counted
    outside dynadbg), called with the ints `ns`; int specialisation only (dynamic=False), so each new n misses."""

    def counting_backend(gm, example_inputs):
        compiles.append(len(results))   # how many calls had finished when this compile ran
        return gm.forward

    cf = torch.compile(times_n, backend=counting_backend, dynamic=False)
    for n in ns:
        results.append(cf(torch.ones(2), n).tolist())
