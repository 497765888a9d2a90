"""Programs for the parity tests with torch's bytecode debugger (markers, set_trace, exceptions, returns)."""

import torch
import torch._dynamo.bytecode_debugger as torch_debugger

import dynadbg
from dynadbg import set_trace as eager_set_trace  # bound outside any trace: a graph break where it is called

log = []


def with_torch_marker(x):
    y = x.cos()
    torch_debugger.breakpoint()
    log.append("traced")  # a side effect replayed by the generated code after the graph
    return y + 1


def with_dynadbg_marker(x):
    y = x * 3
    dynadbg.set_trace()
    return y - 1


def with_eager_set_trace(x):
    y = x * 5
    eager_set_trace()
    z = y + 2
    return z


@torch._dynamo.disable
def explode(y, fail):
    if fail:
        raise ZeroDivisionError("31415 / 0")
    return y


def raises_inside(x, fail):
    y = x + 1
    y = explode(y, fail)
    return y * 2


def caller_with_break(x):
    a = x + 1
    print("break")
    b = inner(a)
    return b * 2


def inner(a):
    return a - 3


def two_stage(x):
    a = x * 2
    print("first break")
    b = a + 1
    return b


def run(fn, *args, calls=1, results=None):
    cf = torch.compile(fn, backend="eager")
    out = [cf(*args) for _ in range(calls)]
    if results is not None:
        results.extend(out)
    return out


def run_catching(results):
    cf = torch.compile(raises_inside, backend="eager")
    results.append(cf(torch.ones(2), False).tolist())
    try:
        cf(torch.ones(2), True)
    except ZeroDivisionError as exc:
        results.append(f"caught {exc}")
    results.append(cf(torch.ones(2), False).tolist())


def run_inside_handler(results, session):
    """A compiled call made while the program handles an exception that left an earlier call while exception
    stops were off: that exception is not this call's, so no stop."""
    cf = torch.compile(raises_inside, backend="eager")
    session.set_break_on("exception", False)
    try:
        cf(torch.ones(2), True)
    except ZeroDivisionError:
        session.set_break_on("exception", True)
        results.append(cf(torch.ones(2), False).tolist())


def with_builtin_breakpoint(x):
    y = x + 4
    breakpoint()
    return y * 2


# ---------------------------------------------------------------------------------------------------------------
# the last gaps against torch's debugger: returns of every generated frame, markers after the graph, re-entry
# ---------------------------------------------------------------------------------------------------------------


def scale(x):
    return x * 3


def make_many(n):
    """n functions with code objects of their own (each compiles to its own generated code)."""
    fns = []
    for k in range(n):
        scope = {}
        exec(f"def many_{k}(x):\n    return x + {k}\n", scope)  # noqa: S102 - test programs
        fns.append(scope[f"many_{k}"])
    return fns


def run_each(fns, x, results=None):
    out = [torch.compile(fn, backend="eager")(x) for fn in fns]
    if results is not None:
        results.extend(out)
    return out


def marker_only(x):
    torch_debugger.breakpoint()
    return x
