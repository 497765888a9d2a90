"""Record what the real engine answers at a program's recompile stops, as canned data for the fake engine.

Re-make the recordings (after a change to the engine's results or to torch), from the repository root::

    .venv/bin/python tests/app/record_fake.py

``counter`` runs ``tests/programs/module_int_counter.py`` under the real engine (`dynadbg.core.session.Session` and
a `dynadbg.core.listeners.QueueListener`), continues to the first recompile stop, recompiles, continues to the
second (the call both cache entries reject) and writes ``tests/app/recordings/module_int_counter.json``: each stop
(its frame, recompile record and choices), its guard trees and guard diffs (``stop``, ``guard_trees``,
``guard_diffs``; ``stop2``, ``guard_trees2``, ``guard_diffs2``), as JSON of the frozen model types (`freeze`;
`thaw` reads it back). ``forward`` compiles ``tests/app/fake_program.py``'s ``Scale.forward`` for n=3 and calls it
again with n=4, and writes ``tests/app/recordings/fake_program_forward.json``: the real engine's `guard_trees`
at the n=3 entry stop (``n3``) and at the n=4 recompile stop (``n4``), and that recompile stop (``stop``).
``counter`` also records the entry stop that follows its second recompile stop (``entry``: forward's generated
code for compile 0/2). ``mode_switch`` runs ``tests/programs/eval_after_training.py`` (a model with BatchNorm
layers switched to eval() under ``torch.no_grad()``) to its recompile stop and the entry stop after recompiling,
and writes ``tests/app/recordings/eval_after_training.json`` (``stop``, ``guard_trees``, ``guard_diffs``,
``entry``).
What changes from run to run is replaced by stable values: code keys and object identities by numbers in order
of first use (per stop), ids and addresses inside texts by ``<id>`` / ``0x0``, uuids (in graph functions' names)
by zeros, the repository's path by ``<repo>`` and torch's install folder by ``<site-packages>``, times by 0.
Compile ids and Dynamo's counters are per process: each recording is made in a fresh interpreter
(``--only NAME --stdout`` prints one instead of writing it; ``tests/app/test_recording.py`` runs that and fails
when a file no longer matches what the engine answers today).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = Path(__file__).resolve().parent / "recordings"
PROGRAM = ROOT / "tests" / "programs" / "module_int_counter.py"
RECORDING = RECORDINGS / "module_int_counter.json"
FAKE_PROGRAM = ROOT / "tests" / "app" / "fake_program.py"
FORWARD_RECORDING = RECORDINGS / "fake_program_forward.json"
MODE_SWITCH_PROGRAM = ROOT / "tests" / "programs" / "eval_after_training.py"
MODE_SWITCH_RECORDING = RECORDINGS / "eval_after_training.json"

#: Fields that hold a run's object ids (renumbered in order of first use).
_ID_FIELDS = frozenset({"key", "code_key", "identity", "resume_keys", "original_key"})
#: Fields that hold times or sizes measured in this run (recorded as 0).
_TIME_FIELDS = frozenset({"seconds", "elapsed", "duration", "compile_seconds", "nbytes", "time", "wall_s"})
_BIG_NUMBER = re.compile(r"\b\d{9,}\b")
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
#: torch names a compiled graph's function with a fresh uuid (``__compiled_fn_5_ecec9b7c_325d_4591_a902_...``)
_UUID = re.compile(r"[0-9a-f]{8}([_-])[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}")
#: The folder torch is installed in (a module's repr names its file there).
_SITE_PACKAGES = str(Path(importlib.util.find_spec("torch").origin).parents[1])  # type: ignore[arg-type]


def _torch_names_from() -> "re.Pattern[str] | None":
    """What torch writes before a checkout file's path in a guard's location: torch shortens a file name by the
    folder it shares with torch's own install (``torch.utils._traceback.shorten_filename``), so with torch
    installed outside the checkout ``tests/programs/x.py`` reads ``dynadbg/tests/programs/x.py`` (or longer; when
    the only folder shared is ``/``, torch also drops the path's first letter: ``ork/ci/dynadbg/tests/...``).
    Asked of torch's own function, so the recording matches wherever the checkout and torch lie."""
    from torch.utils._traceback import shorten_filename

    prefix = shorten_filename(str(ROOT / "tests"))[: -len("tests")]
    if not prefix or prefix.startswith("/"):  # the checkout holds torch (prefix empty), or nothing shared at all
        return None
    return re.compile(r"(?<![\w/.<])" + re.escape(prefix))


_TORCH_NAMES_FROM = _torch_names_from()
_MODULE_FILE = re.compile(r"(<module '[\w.]+' from ')[^']*'")
_CODE_FILE = re.compile(r'(<code object [\w<>]+ at 0x[0-9a-f]+, file ")[^"]*"')


class _Scrub:
    """Replaces run-dependent values by stable ones (see the module docstring)."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}

    def number(self, value: int) -> int:
        return self.ids.setdefault(value, 0x1000 + 16 * len(self.ids))

    def text(self, value: str) -> str:
        # torch's own files first: its install folder may lie inside the checkout (.venv) or anywhere else (CI)
        value = value.replace(_SITE_PACKAGES, "<site-packages>").replace(str(ROOT), "<repo>")
        if _TORCH_NAMES_FROM is not None:  # the checkout's files as torch names them here: from the checkout
            value = _TORCH_NAMES_FROM.sub("", value)
        # a module's or a code object's repr names its file, which a value summary may cut in the middle: the file
        # is left out
        value = _CODE_FILE.sub(r'\1<file>"', _MODULE_FILE.sub(r"\1<file>'", value))
        # a uuid keeps its shape (a graph function's name stays a name), all zeros
        value = _UUID.sub(lambda m: m.group(1).join(("0" * 8, "0" * 4, "0" * 4, "0" * 4, "0" * 12)), value)
        return _ADDRESS.sub("0x0", _BIG_NUMBER.sub("<id>", value))


def freeze(value: Any, scrub: _Scrub | None = None, name: str = "") -> Any:
    """`value` (model dataclasses, enums, tuples, dicts, plain values) as JSON data, run-dependent values scrubbed."""
    scrub = scrub if scrub is not None else _Scrub()
    if name in _ID_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return scrub.number(value)
    if name in _ID_FIELDS and isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return {"__tuple__": [scrub.number(v) for v in value]}
    if name in _TIME_FIELDS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return 0
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, enum.Enum):
        return {"__enum__": f"{type(value).__module__}:{type(value).__qualname__}", "value": value.value}
    if isinstance(value, str):
        return scrub.text(value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"__tuple__": [freeze(v, scrub) for v in value]}
    if isinstance(value, list):
        return [freeze(v, scrub) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"__frozenset__": sorted((freeze(v, scrub) for v in value), key=json.dumps)}
    if isinstance(value, dict):
        return {"__dict__": [[freeze(k, scrub), freeze(v, scrub, str(k))] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if type(value).__name__ == "SourceLocation" and value.filename.startswith(str(ROOT) + "/"):
            # where torch cuts a checkout file's name wrong (it shares only / with torch), dynadbg names the whole
            # path (`compat.guard_location_file`): recorded as torch's right short form, from the checkout
            value = dataclasses.replace(value, filename=value.filename[len(str(ROOT)) + 1:])
        fields = {f.name: freeze(getattr(value, f.name), scrub, f.name) for f in dataclasses.fields(value) if f.init}
        return {"__type__": f"{type(value).__module__}:{type(value).__qualname__}", "fields": fields}
    if isinstance(value, tuple):  # a NamedTuple
        return {"__type__": f"{type(value).__module__}:{type(value).__qualname__}",
                "items": [freeze(v, scrub) for v in value]}
    raise TypeError(f"cannot record a {type(value).__qualname__}")


def _class(path: str) -> Any:
    module, _, qualname = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def thaw(data: Any) -> Any:
    """The values `freeze` wrote (frozen model types again)."""
    if isinstance(data, list):
        return [thaw(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__tuple__" in data:
        return tuple(thaw(v) for v in data["__tuple__"])
    if "__frozenset__" in data:
        return frozenset(thaw(v) for v in data["__frozenset__"])
    if "__dict__" in data:
        return {thaw(k): thaw(v) for k, v in data["__dict__"]}
    if "__enum__" in data:
        return _class(data["__enum__"])(data["value"])
    cls = _class(data["__type__"])
    if "items" in data:
        return cls(*(thaw(v) for v in data["items"]))
    return cls(**{k: thaw(v) for k, v in data["fields"].items()})


def _entry_of_the_new_compile(session: Any, listener: Any, record: Any) -> Any:
    """After a decision at a recompile stop of `record`: continue to the entry stop into the code object's new
    compile (its generated code, the compile `record` predicted), and return that stop."""
    from dynadbg.core.model import Stop, StopKind

    while True:
        kind, stop = listener.next()
        if kind != "stop":
            raise RuntimeError(f"{record.frame_name} ended before the entry into its new compile ({kind})")
        if stop.kind is StopKind.ENTRY and stop.compile_id == record.compile_id:
            current = session.current_stop()
            assert isinstance(current, Stop) and current.frame is not None and current.frame.code.generated
            return current
        session.set_continue()


def record(program: Path = PROGRAM, recompiles: int = 2) -> dict[str, Any]:
    """Run `program` under the real engine to its first `recompiles` recompile stops, recompiling at each, and on
    to the entry stop into the last one's new compile; what the fake needs of them, frozen: ``stop``,
    ``guard_trees``, ``guard_diffs`` of the first, ``stop2``, ``guard_trees2``, ``guard_diffs2`` of the second
    (``module_int_counter.py``: the call that two cache entries reject), ``entry`` (that entry stop: the new
    compile's generated code running that call)."""
    from dynadbg.core.listeners import QueueListener
    from dynadbg.core.model import Decision, DecisionKind, Stop, StopKind
    from dynadbg.core.session import Session

    listener = QueueListener()
    session = Session(listener)
    session.start_script(str(program))
    answers: dict[str, Any] = {}
    suffixes = ["", *(str(n) for n in range(2, recompiles + 1))]
    try:
        for suffix in suffixes:
            kind, stop = listener.next()
            while kind == "stop" and stop.kind is not StopKind.RECOMPILE:
                session.set_continue()
                kind, stop = listener.next()
            if kind != "stop":
                raise RuntimeError(f"{program.name} ended before recompile stop {suffix or '1'}")
            current = session.current_stop()
            assert isinstance(current, Stop) and current.recompile is not None
            # (what_if and recompile_records repeat these at a recompile stop: the trees, the stop's record)
            answers |= {f"stop{suffix}": current, f"guard_trees{suffix}": session.guard_trees(),
                        f"guard_diffs{suffix}": session.guard_diffs()}
            session.decide(Decision(DecisionKind.RECOMPILE))
        answers["entry"] = _entry_of_the_new_compile(session, listener, answers[f"stop{suffixes[-1]}"].recompile)
    finally:
        session.quit()
        session.wait(timeout=30)
    # one scrub per recompile stop (an object's id may be reused by another between the stops); the entry stop
    # shares the last one's (the same call: its code objects and inputs are the same objects)
    scrubs = {suffix: _Scrub() for suffix in suffixes}
    suffix_of = {**{k + suffix: suffix for suffix in suffixes for k in ("stop", "guard_trees", "guard_diffs")},
                 "entry": suffixes[-1]}
    return {"program": str(program.relative_to(ROOT)),
            **{k: freeze(v, scrubs[suffix_of[k]]) for k, v in answers.items()}}


def record_mode_switch() -> dict[str, Any]:
    """``tests/programs/eval_after_training.py``: its one recompile stop (the model switched to eval() under
    ``torch.no_grad()``: GLOBAL_STATE, two BatchNorm ``.training`` flags and the step count fail) with its guard
    trees and guard diffs (``stop``, ``guard_trees``, ``guard_diffs``), and the entry stop into compile 0/1 after
    recompiling (``entry``)."""
    return record(MODE_SWITCH_PROGRAM, recompiles=1)


def _scale_model() -> Any:
    """``fake_program.py``'s ``model``: its imports, class definition and ``model = torch.compile(Scale(2.0), ...)``
    run at the file's own lines (so the call site the engine finds is the program's line, not this file's); the
    program's loop is not run: it would call with n = 1, 2, 3 and make ``n`` dynamic."""
    import ast

    tree = ast.parse(FAKE_PROGRAM.read_text(encoding="utf-8"))
    tree.body = [node for node in tree.body if isinstance(node, (ast.Import, ast.ClassDef, ast.Assign))]
    namespace: dict[str, Any] = {"__name__": "fake_program"}
    exec(compile(tree, str(FAKE_PROGRAM), "exec"), namespace)  # noqa: S102 - our own test program
    return namespace["model"]


def _scale_calls() -> None:
    """What `record_forward` debugs: ``fake_program.model`` (``Scale(2.0)`` compiled) called with n=3 (entry
    0/0), then n=4 (a miss)."""
    import torch

    model = _scale_model()
    for n in (3, 4):
        model(torch.ones(4, 4), n)


def record_forward() -> dict[str, Any]:
    """The guard tree of ``fake_program.Scale.forward``'s entry 0/0 (compiled for n=3) as the real engine answers
    `guard_trees`: at the entry stop of the n=3 call (``n3``) and at the recompile stop of the n=4 call (``n4``);
    and that recompile stop itself (``stop``: its frame, recompile record and choices)."""
    from dynadbg.core.listeners import QueueListener
    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session

    listener = QueueListener()
    session = Session(listener)
    session.start_callable(_scale_calls)
    answers: dict[str, Any] = {}
    try:
        while "n4" not in answers:
            kind, stop = listener.next()
            if kind != "stop":
                raise RuntimeError(f"the n=3, n=4 calls of Scale.forward ended before its recompile stop ({kind})")
            frame, record = stop.selected_frame, stop.recompile
            if stop.kind is StopKind.ENTRY and frame is not None and frame.code.name == "forward" and not answers:
                answers["n3"] = session.guard_trees()
            elif stop.kind is StopKind.RECOMPILE and record is not None and record.code_name == "forward":
                answers["n4"], answers["stop"] = session.guard_trees(), session.current_stop()
                break
            session.set_continue()
    finally:
        session.quit()
        session.wait(timeout=30)
    # one scrub per stop (an object's id may be reused by another between the stops)
    scrubs = {"n3": _Scrub(), "n4": _Scrub()}
    return {"program": str(FAKE_PROGRAM.relative_to(ROOT)),
            **{k: freeze(v, scrubs["n3" if k == "n3" else "n4"]) for k, v in answers.items()}}


def load(path: Path = RECORDING) -> dict[str, Any]:
    """A recording as model values (``stop``, ``guard_trees``, ``guard_diffs``, ``stop2``, ...; or ``n3``, ``n4``;
    and ``program``, its path)."""
    # the program's path back in this checkout, so the fake's `source` reads the file
    data = json.loads(path.read_text(encoding="utf-8").replace("<repo>", ROOT.as_posix()))
    return {k: (thaw(v) if k != "program" else v) for k, v in data.items()}


def dumps(data: dict[str, Any]) -> str:
    """The recording's file text: one top-level key per line, compact (tens of KB)."""
    lines = [f"{json.dumps(k)}: {json.dumps(data[k], sort_keys=True, separators=(',', ':'))}" for k in sorted(data)]
    return "{\n" + ",\n".join(lines) + "\n}\n"


#: Each recording: its file and the function that makes it (``--only NAME`` picks one).
RECORDERS = {"counter": (RECORDING, record), "forward": (FORWARD_RECORDING, record_forward),
             "mode_switch": (MODE_SWITCH_RECORDING, record_mode_switch)}


def main(argv: list[str]) -> int:
    """Write the recordings, each made in a fresh interpreter (compile ids are per process); ``--only NAME``
    (a key of `RECORDERS`): that one, in this interpreter (``--stdout``: printed instead, as `test_recording`
    compares it)."""
    if "--only" not in argv:
        for name in RECORDERS:
            done = subprocess.run([sys.executable, __file__, "--only", name], cwd=ROOT, check=False)
            if done.returncode:
                return done.returncode
        return 0
    path, recorder = RECORDERS[argv[argv.index("--only") + 1]]
    import torch

    # torch's global state (every GLOBAL_STATE guard's code) holds the number of threads, by default the machine's
    # core count: the recordings are made with 2 wherever they are made
    torch.set_num_threads(2)
    with contextlib.redirect_stdout(sys.stderr):  # the program's own prints are not the recording
        data = recorder()
    if "--stdout" in argv:
        sys.stdout.write(dumps(data))
        return 0
    RECORDINGS.mkdir(exist_ok=True)
    path.write_text(dumps(data), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
