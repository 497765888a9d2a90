"""Guards whose expected value is not a plain constant: a tensor subclass whose metadata (``scale``) changes, a
``mark_dynamic`` after a static compile, an ID_MATCH on a module-level function that is swapped, a dict global
that was empty at compile time and no longer is, and a symbolic int (``range(start + 1, end)``) whose guard
``L['start'] == 4`` fails with start 5. Each failing guard must show its compile-time value and the actual one."""

import torch
import torch.utils._pytree as pytree


class Scaled(torch.Tensor):
    @staticmethod
    def __new__(cls, data, scale):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype, device=data.device)

    def __init__(self, data, scale):
        self.data_ = data
        self.scale = scale

    def __tensor_flatten__(self):
        return ["data_"], {"scale": self.scale}

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return Scaled(inner["data_"], meta["scale"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        args = pytree.tree_map_only(Scaled, lambda a: a.data_ * a.scale, args)
        return func(*args, **kwargs)

    def __repr__(self):
        return f"Scaled(scale={self.scale})"


def double(x):
    return x * 2


ACT = torch.relu
summary = {}


def use_act(x):
    return ACT(x) + 1


def use_summary(x):
    if summary:
        return x + 1
    return x - 1


def window(x, start, end):
    acc = x
    for i in range(start + 1, end):
        acc = acc + i
    return acc


def main():
    global ACT
    f = torch.compile(double, backend="eager")
    f(Scaled(torch.ones(2), 1.0))
    f(Scaled(torch.ones(2), 3.0))

    g = torch.compile(lambda x: x.sin() + 1, backend="eager")
    g(torch.ones(4, 3))
    y = torch.ones(4, 3)
    torch._dynamo.mark_dynamic(y, 0)
    g(y)

    h = torch.compile(use_act, backend="eager")
    h(torch.ones(2))
    ACT = torch.sigmoid
    h(torch.ones(2))

    s = torch.compile(use_summary, backend="eager")
    s(torch.ones(2))
    summary["loss"] = 1.0
    s(torch.ones(2))

    w = torch.compile(window, backend="eager")
    w(torch.zeros(1), 4, 8)
    w(torch.zeros(1), 5, 8)
    w(torch.zeros(1), 6, 8)
    print("ok: all ran")


if __name__ == "__main__":
    main()
