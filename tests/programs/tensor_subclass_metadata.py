"""A tensor subclass whose ``__tensor_flatten__`` metadata (a tag) changes between calls. Dynamo guards the
metadata with a lambda guard on the input; torch's guard filter entry for it is ``TENSOR_SUBCLASS_METADATA_MATCH``
(with no derived leaf type), so a filter that names the lambda guard matches nothing."""

import torch
import torch.utils._pytree as pytree


class Tagged(torch.Tensor):
    """A wrapper tensor that carries a string tag through every op (the tag is flatten metadata)."""

    @staticmethod
    def __new__(cls, inner, tag):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, strides=inner.stride(), dtype=inner.dtype,
                                                   device=inner.device, requires_grad=inner.requires_grad)

    def __init__(self, inner, tag):
        self.inner = inner
        self.tag = tag

    def __tensor_flatten__(self):
        return ["inner"], self.tag

    @staticmethod
    def __tensor_unflatten__(inner_tensors, tag, outer_size, outer_stride):
        return Tagged(inner_tensors["inner"], tag)

    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs=None):
        tag = next(a.tag for a in pytree.tree_leaves(args) if isinstance(a, Tagged))
        unwrap = lambda t: t.inner  # noqa: E731
        out = func(*pytree.tree_map_only(Tagged, unwrap, args), **pytree.tree_map_only(Tagged, unwrap, kwargs or {}))
        return pytree.tree_map_only(torch.Tensor, lambda o: Tagged(o, tag), out)


def double(x):
    return x * 2


def main():
    cdouble = torch.compile(double, backend="eager")
    for tag in ("a", "b"):
        out = cdouble(Tagged(torch.ones(3), tag))
        print(tag, out.tag, out.inner.tolist())


if __name__ == "__main__":
    main()
