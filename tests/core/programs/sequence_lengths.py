"""A token batch whose sequence length grows: 8, 16, 17, 32 (batch 2), compiled with the eager backend.

With torch's default automatic dynamic shapes, the call at length 16 misses the entry built for 8 and the compile
that follows makes the sequence dimension dynamic, so 17 and 32 are served by that second entry: two compiles in
all. Each `mode` keeps the dimension static instead, and then every new length compiles again:

* ``"config off"``: ``torch._dynamo.config.automatic_dynamic_shapes = False``, set in the program (torch's config
  is per thread);
* ``"dynamic=False"``: ``torch.compile(..., dynamic=False)``;
* ``"mark_static"``: ``torch._dynamo.mark_static(tokens, 1)`` on every batch.

As a script (for ``dynadbg report``) the mode is the first argument; the last line printed is torch's own count
of compiled graphs (``counters["stats"]["unique_graphs"]``).
"""

import sys

import torch
import torch._dynamo

LENGTHS = (8, 16, 17, 32)


def pooled(tokens):
    return (tokens * 0.5).sum(dim=1)


def run(results, lengths=LENGTHS, mode=""):
    """Call the compiled `pooled` once per length; append each result's first value, then torch's graph count."""
    from torch._dynamo.utils import counters

    prev = torch._dynamo.config.automatic_dynamic_shapes
    if mode == "config off":
        torch._dynamo.config.automatic_dynamic_shapes = False
    compiled = torch.compile(pooled, backend="eager", dynamic=False if mode == "dynamic=False" else None)
    before = counters["stats"]["unique_graphs"]
    try:
        for length in lengths:
            tokens = torch.ones(2, length)
            if mode == "mark_static":
                torch._dynamo.mark_static(tokens, 1)
            results.append(float(compiled(tokens)[0]))
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = prev
    results.append(("graphs", counters["stats"]["unique_graphs"] - before))


if __name__ == "__main__":
    out = []
    run(out, mode=sys.argv[1] if len(sys.argv) > 1 else "")
    print(*out[:-1])
    print("torch compiled graphs:", out[-1][1])
