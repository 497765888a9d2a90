"""Save a copy's edits and guard operations, and replay them in a fresh process (dynadbg.toolkit: save / load).

`python examples/toolkit_save_replay.py` compiles `head`, re-binds its copy to `lin_b` with an extra guard, saves
it to a patch file (JSON: the instruction edits, the guard operations, the install mode), then runs itself again
as a new process that loads the file: the guards are rebuilt against that process's live objects. A third run,
where `lin_b` has another dtype, is refused: the patch no longer fits (the reason is printed).

Run: python examples/toolkit_save_replay.py            (or: ... save FILE / ... replay FILE / ... stale FILE)
"""

import os
import subprocess
import sys
import tempfile

import torch

from dynadbg import toolkit

torch.manual_seed(0)
lin_a = torch.nn.Linear(8, 8)
lin_b = torch.nn.Linear(8, 8)


def head(x, scale):
    return lin_a(x).relu() * scale


def compiled():
    cf = torch.compile(head, backend="eager")
    cf(torch.randn(4, 8), 2)
    return cf


def save(path):
    cf = compiled()
    (entry,) = toolkit.entries(cf)
    draft = entry.copy().rebind_global("lin_a", lin_b).add_guard("G['lin_b'].training", "EQUALS_MATCH")
    toolkit.save(path, draft.install("front"))
    print(f"saved to {path}")


def replay(path, stale=False):
    if stale:
        lin_b.double()
    cf = compiled()
    x = torch.randn(4, 8)
    try:
        (handle,) = toolkit.load(path, cf)
    except toolkit.Refused as exc:
        print("refused:", str(exc).splitlines()[1].strip())
        return
    assert torch.allclose(cf(x, 2), lin_b(x).relu() * 2) and handle.hits == 1
    print(f"replayed: copy {handle.compile_id} serves lin_b ({handle.hits} call)")


def main():
    if len(sys.argv) == 3:
        {"save": save, "replay": replay, "stale": lambda p: replay(p, stale=True)}[sys.argv[1]](sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "head.patch.json")
        for step in ("save", "replay", "stale"):
            out = subprocess.run([sys.executable, __file__, step, path], capture_output=True, text=True, check=True)
            print(out.stdout.strip())


if __name__ == "__main__":
    main()
