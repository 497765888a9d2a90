"""Add a guard torch did not emit (dynadbg.toolkit: Draft.add_guard).

`scaled` reads `cfg.scale` but never `cfg.version`, so Dynamo's guards say nothing about the version: a config of
version 2 would run the code compiled for version 1. Here a copy of the entry gets a real C++ `EQUALS_MATCH` leaf on
`L['cfg'].version` (built from a live config, the way torch builds it) and replaces the original: version-1 calls
run the copy, a version-2 call fails the new guard and Dynamo compiles for it.

Run: python examples/toolkit_add_guard.py
"""

import torch

from dynadbg import toolkit

compiles = []


def backend(gm, example_inputs):
    compiles.append(gm)
    return gm.forward


class Config:
    def __init__(self, scale, version):
        self.scale, self.version = scale, version


def scaled(x, cfg):
    return x * cfg.scale


def main():
    x = torch.ones(3)
    cf = torch.compile(scaled, backend=backend)
    cf(x, Config(2.0, version=1))
    (entry,) = toolkit.entries(cf)
    assert not any(lf.source == "L['cfg'].version" for lf in _leaves(entry))
    handle = (entry.copy()
              .add_guard("L['cfg'].version", "EQUALS_MATCH")
              .inputs(x, Config(2.0, version=1))
              .install("replace"))
    print(toolkit.validation_text(handle.validation))
    cf(x, Config(2.0, version=1))
    cf(x, Config(2.0, version=1))
    assert handle.hits == 2 and len(compiles) == 1
    print(f"version 1: the copy {handle.compile_id} served {handle.hits} calls, {len(compiles)} compile")
    cf(x, Config(2.0, version=2))
    assert len(compiles) == 2
    print(f"version 2: the new guard failed, Dynamo compiled again ({len(compiles)} compiles)")
    for e in toolkit.entries(cf):
        print("  ", toolkit.entry_line(e))


def _leaves(entry):
    from dynadbg.core.guards import iter_leaves

    return list(iter_leaves(entry.guards))


if __name__ == "__main__":
    main()
