"""Small programs the engine tests run (imported, so their code objects are stable within a test run)."""

import torch


def graph_break(x, n):
    y = x * n
    print("brk")
    return y.sum() + 1


@torch._dynamo.disable
def maybe_fail(y, fail):
    if fail:
        raise ValueError("boom")
    return y


def with_block(x, fail):
    y = x + 1
    with torch.no_grad():
        y = maybe_fail(y, fail) * 2
    return y - 1


def run_graph_break(results, calls=((3.0, 2),)):
    cf = torch.compile(graph_break, backend="eager")
    for v, n in calls:
        results.append(float(cf(torch.full((3,), v), n)))


def run_with_block(results):
    cf = torch.compile(with_block, backend="eager")
    results.append(cf(torch.ones(3), False).tolist())
    try:
        cf(torch.ones(3), True)
    except ValueError as exc:
        results.append(f"caught {exc}")
