"""Serve a swapped module without recompiling (dynadbg.toolkit.rebind).

Two ways compiled code meets a new module:

* the function reads a *global* `lin_a`, and should now run on `lin_b` (both stay alive): `rebind` copies the
  cache entry, makes its code load `lin_b`, moves the guards Dynamo built on `lin_a` over to `lin_b`, checks that
  `lin_b` passes each of them (dtype, shape, ...), and installs the copy in place of the original. A later dtype
  change of `lin_b` makes Dynamo compile again, for `lin_b` (persist: the re-bind is applied to that compile too);
  the stale graph never runs on it.
* a *submodule path* of a compiled model (`layers.1`): `rebind` swaps the new layer in and checks the entry's own
  guards on it: with torch's module inlining they look at types and tensor metadata, not identity, so they accept
  it as they are and nothing is installed.

Run: python examples/toolkit_swap_module.py
"""

import torch

from dynadbg import toolkit

torch.manual_seed(0)
lin_a = torch.nn.Linear(8, 8)
lin_b = torch.nn.Linear(8, 8)
compiles = []


def backend(gm, example_inputs):
    compiles.append(gm)
    return gm.forward


def head(x):
    return lin_a(x).relu().sum(dim=-1)


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x


def main():
    x = torch.randn(4, 8)
    chead = torch.compile(head, backend=backend)
    chead(x)
    (result,) = toolkit.rebind(chead, {"lin_a": lin_b})
    print(toolkit.rebind_text(result))
    assert torch.allclose(chead(x), lin_b(x).relu().sum(dim=-1)) and len(compiles) == 1
    print(f"served lin_b with {len(compiles)} compile; the copy served {toolkit.installed()[0].hits} call(s)")

    lin_b.double()
    out = chead(x.double())
    assert out.dtype == torch.float64 and torch.allclose(out, lin_b(x.double()).relu().sum(dim=-1))
    print(f"after lin_b.double(): Dynamo compiled again ({len(compiles)} compiles), for lin_b")
    toolkit.remove_all()

    model = Stack()
    cmodel = torch.compile(model, backend=backend)
    cmodel(x)
    before = len(compiles)
    (swap,) = toolkit.rebind(cmodel, {"layers.1": torch.nn.Linear(8, 8)})
    print(toolkit.rebind_text(swap))
    assert swap.accepted_by and not swap.installed
    assert torch.allclose(cmodel(x), model(x)) and len(compiles) == before
    print("the swapped model runs the same cache entry: no recompile")


if __name__ == "__main__":
    main()
