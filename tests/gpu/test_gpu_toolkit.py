"""dynadbg.toolkit on the GPU: a compiled function reading the global ``lin_a`` (on CUDA) is re-bound to ``lin_b``
with no recompile and correct results; a later dtype change of ``lin_b`` makes Dynamo compile again, for it,
instead of running the stale graph; removing the copy brings the original back. Eager and inductor backends.

Self-contained. Run on a machine with CUDA:

    python -m pytest -q tests/gpu/test_gpu_toolkit.py -m gpu
"""

from __future__ import annotations

import pytest
import torch

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

lin_a: torch.nn.Module
lin_b: torch.nn.Module


def reads_lin_a(x):
    return lin_a(x).relu()


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_rebind_on_cuda_serves_lin_b_without_recompiling_and_recompiles_for_a_dtype_change(backend):
    global lin_a, lin_b
    from dynadbg import toolkit

    torch._dynamo.reset()
    torch.manual_seed(0)
    lin_a = torch.nn.Linear(64, 64).cuda()
    lin_b = torch.nn.Linear(64, 64).cuda()
    compiles = []

    def counting(gm, example_inputs):
        compiles.append(gm)
        if backend == "inductor":
            from torch._inductor.compile_fx import compile_fx

            return compile_fx(gm, example_inputs)
        return gm.forward

    cf = torch.compile(reads_lin_a, backend=counting)
    x = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        assert torch.allclose(cf(x), lin_a(x).relu(), atol=1e-4)
        (result,) = toolkit.rebind(cf, {"lin_a": lin_b})
        assert result.new_source == "G['lin_b']" and result.installed
        for _ in range(3):
            assert torch.allclose(cf(x), lin_b(x).relu(), atol=1e-4)
        handle = toolkit.installed()[0]
        assert len(compiles) == 1 and handle.hits == 3
        lin_b.double()
        out = cf(x.double())
        torch.cuda.synchronize()
        assert len(compiles) == 2 and out.dtype == torch.float64 and out.is_cuda
        assert torch.allclose(out, lin_b(x.double()).relu(), atol=1e-6)
        assert lin_a.weight.dtype == torch.float32
        handle.remove()
        assert torch.allclose(cf(x), lin_a(x).relu(), atol=1e-4) and len(compiles) == 2
    toolkit.remove_all()
    torch._dynamo.reset()
