"""A compiled function whose nested function lives across a graph break.

Dynamo rebuilds `inc` in the resume function, and the generated code keeps the globals dict among its constants,
so the generated code object cannot be hashed (`hash(code)` raises TypeError).
"""

import torch


@torch.compile(backend="eager")
def scale_then_inc(x):
    def inc(y):
        return y + 1

    x = x * 2
    print("eager print between the graphs")
    return inc(x)


def main(out: list) -> None:
    out.append(scale_then_inc(torch.ones(3)).tolist())
    out.append(scale_then_inc(torch.ones(3)).tolist())


if __name__ == "__main__":
    res: list = []
    main(res)
    print(res)
