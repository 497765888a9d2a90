"""Drop one guard from a copy (dynadbg.toolkit: Draft.drop_guard), installed next to the original.

`scaled` was compiled for a `Config`; a `LegacyConfig` (a subclass with the same fields) fails the entry's
`TYPE_MATCH` on `L['cfg']` and would recompile. A copy without that type guard, with a real `TYPE_MATCH` for
`LegacyConfig` added in its place, serves those calls beside the original, with no compile. The guard on
`cfg.scale` stays: the value was baked into the graph, and the toolkit refuses to drop it (shown below).

Run: python examples/toolkit_drop_guard.py
"""

import torch

from dynadbg import toolkit
from dynadbg.core.guards import iter_leaves

compiles = []


def backend(gm, example_inputs):
    compiles.append(gm)
    return gm.forward


class Config:
    def __init__(self, scale):
        self.scale = scale


class LegacyConfig(Config):
    pass


def scaled(x, cfg):
    return x * cfg.scale + 1


def main():
    x = torch.ones(3)
    cf = torch.compile(scaled, backend=backend)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    type_guard = next(lf for lf in iter_leaves(entry.guards)
                      if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH")
    refused = entry.copy().drop_guard("L['cfg'].scale").validate()
    print(toolkit.refusal_text(refused).splitlines()[1])
    assert not refused.ok

    handle = (entry.copy()
              .drop_guard(type_guard.id)
              .add_guard("L['cfg']", "TYPE_MATCH")
              .inputs(x, LegacyConfig(2.0))
              .install("next"))
    assert float(cf(x, LegacyConfig(2.0))[0]) == 3.0
    assert float(cf(x, LegacyConfig(2.0))[0]) == 3.0
    assert float(cf(x, Config(2.0))[0]) == 3.0
    assert len(compiles) == 1 and handle.hits == 2
    print(f"LegacyConfig: served by copy {handle.compile_id} ({handle.hits} calls), Config by the original; "
          f"{len(compiles)} compile")
    for e in toolkit.entries(cf):
        print("  ", toolkit.entry_line(e))


if __name__ == "__main__":
    main()
