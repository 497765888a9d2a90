"""Two submodules compiled with two different backend callables (a fresh ``aot_autograd(...)`` each): the
second compiled call of a shared function finds an entry whose guards all pass but whose backend is another
callable, so torch rejects it (BACKEND_MATCH) and compiles again. The debugger must say the entry was rejected
for its backend, naming both backends — never that it would serve the call."""

import torch
from torch._dynamo.backends.common import aot_autograd
from functorch.compile import make_boxed_func


# backend name: compiler_fn  (what torch calls the backend aot_autograd returns)
def make_backend():
    def compiler(gm, example_inputs):
        return make_boxed_func(gm.forward)
    return aot_autograd(fw_compiler=compiler)


def shared(x):
    return torch.relu(x) * 2


class Branch(torch.nn.Module):
    def forward(self, x):
        return shared(x) + 1


def main():
    a = torch.compile(Branch(), backend=make_backend())
    b = torch.compile(Branch(), backend=make_backend())
    x = torch.ones(4)
    ra = a(x)
    rb = b(x)
    assert torch.equal(ra, rb)
    print("ok: both branches agree")


if __name__ == "__main__":
    main()
