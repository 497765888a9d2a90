"""A ``mark_dynamic``ed input after a warm-up call without it: the first entry was compiled for an unmarked tensor
and guards that it carries no dynamic marking, so the marked call recompiles although its size is the same. The
check is one of the input's ``DIMENSION_DYNAMIC_MARKING_GUARD`` leaves; torch's guard filter has no entry of its
own for it (it is part of the tensor's ``TENSOR_MATCH`` entry), so no ``guard_filter_fn`` can drop it alone."""

import torch


def scale(x):
    return x * 3


def main():
    cscale = torch.compile(scale, backend="eager")
    print("warm-up", cscale(torch.ones(4, 2)).sum().item())
    x = torch.ones(4, 2)
    torch._dynamo.mark_dynamic(x, 0)
    print("marked", cscale(x).sum().item())


if __name__ == "__main__":
    main()
