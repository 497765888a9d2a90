"""Apply printed fixes to programs and count what torch compiles: ``python apply_fix.py JOBS_JSON OUT_JSON``.

Each job names a program and one fix as the debugger printed it, applied to a copy of the program's source (the
program itself is never edited):

* ``{"kind": "replace", "lineno": N, "old": TEXT, "new": TEXT}``: the user's call (``old``, at line N) replaced by
  the printed call (``new``), e.g. ``torch.compile(f, options={"guard_filter_fn": ...})``;
* ``{"kind": "prepend", "code": TEXT}``: a line run before the program (``torch.compiler.set_stance(...)``);
* ``{"kind": "mark", "lineno": N, "old": TEXT, "call": TEXT}``: the compiled callable made at line N marks an
  input before every call (``call`` is the printed ``torch._dynamo.mark_dynamic(x, 0)`` /
  ``torch._dynamo.decorators.mark_unbacked(x, 0)`` line: its name is the function's parameter);
* ``{"kind": "none"}``: the program as it is (the baseline).

Jobs run one after another in this process (``torch._dynamo.reset()`` and Dynamo's counters cleared between
them). For each: the FX graphs torch compiled (``counters["stats"]["unique_graphs"]``), the frames it compiled
(``counters["frames"]["ok"]``), the program's stdout and the exception it ended with, if any.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
import traceback

_MARKING = '''
def _dynadbg_marking(compiled, call):
    import inspect as _inspect
    import re as _re
    import torch as _torch
    _m = _re.match(r"(torch\\._dynamo(?:\\.decorators)?\\.mark_(?:dynamic|unbacked))\\((\\w+), (-?\\d+)\\)", call)
    _mark, _name, _dim = eval(_m.group(1), {"torch": _torch}), _m.group(2), int(_m.group(3))
    _sig = _inspect.signature(compiled)

    def _call(*args, **kwargs):
        bound = _sig.bind(*args, **kwargs)
        _mark(bound.arguments[_name], _dim)
        return compiled(*args, **kwargs)

    return _call
'''


#: torch._dynamo.config as this process started: a program may change it (recompile_limit,
#: fail_on_recompile_limit_hit), and the next one in this process must not inherit that
_CONFIG = None


def _restore_config() -> None:
    global _CONFIG
    import torch

    if _CONFIG is None:
        _CONFIG = torch._dynamo.config.get_config_copy()
    else:
        torch._dynamo.config.load_config(_CONFIG)


def _fixed_source(source: str, fix: dict) -> str:
    kind = fix["kind"]
    if kind == "none":
        return source
    if kind == "prepend":
        return f"import torch\n{fix['code']}\n" + source
    lines = source.splitlines(keepends=True)
    index = fix["lineno"] - 1
    old = fix["old"]
    whole = "".join(lines[index:])
    at = whole.find(old)
    if at < 0:
        raise ValueError(f"the call {old!r} is not at line {fix['lineno']}")
    if kind == "replace":
        whole = whole[:at] + fix["new"] + whole[at + len(old):]
        return "".join(lines[:index]) + whole
    if kind == "mark":
        whole = whole[:at] + f"_dynadbg_marking({old}, {fix['call']!r})" + whole[at + len(old):]
        return _MARKING + "".join(lines[:index]) + whole
    raise ValueError(f"unknown fix kind {kind!r}")


def run_job(job: dict, tmp: str) -> dict:
    import torch
    from torch._dynamo.utils import counters

    program = job["program"]
    with open(program, encoding="utf-8") as fh:
        source = fh.read()
    try:
        fixed = _fixed_source(source, job["fix"])
    except ValueError as exc:
        return {"error": f"ValueError: {exc}", "graphs": None, "frames": None, "stdout": ""}
    path = os.path.join(tmp, f"job{job.get('id', 0)}_{os.path.basename(program)}")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(fixed)
    _restore_config()
    torch._dynamo.reset()
    torch.compiler.set_stance("default")
    counters.clear()
    out = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
    except BaseException as exc:  # noqa: BLE001 - the fix may make the program raise: that is the result
        error = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, Exception):
            error += "\n" + traceback.format_exc()
    finally:
        torch.compiler.set_stance("default")
    return {"error": error, "graphs": int(counters["stats"]["unique_graphs"]), "frames": int(counters["frames"]["ok"]),
            "stdout": out.getvalue(), "source": fixed if job["fix"]["kind"] != "none" else ""}


def main(argv: list[str]) -> int:
    jobs_json, out_json = argv
    with open(jobs_json, encoding="utf-8") as fh:
        jobs = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_job(job, tmp) for job in jobs]
    with open(out_json, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
