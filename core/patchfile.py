"""Patch files: instruction edits and guard operations as JSON (never pickle), written and read back.

For each patched code object: its name, file, first line and the fingerprint of Dynamo's code
(`edits.fingerprint`), the edit ops as text, and (format 2) the guard operations (`toolkit_model.GuardOp`:
drop a guard, add a real leaf by source and type, a lambda guard's description, transport a subtree, rebind a
global or an attribute), with how a toolkit copy was installed. Guards are never stored as torch objects: they
are rebuilt against the live objects when the patch is applied. `dynadbg.core.patches` matches patches to
compiles by name, file, first line and fingerprint; `dynadbg.core.toolkit.load` to live cache entries. Format 1
files (edits only) are still read.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from . import compat
from .edits import EDIT_KINDS
from .model import EditError, EditOp, NewInstr, PatchKey, PatchSpec
from .toolkit_model import GuardOp, GuardOpKind

#: Version of the patch-file format this module writes; `PATCH_FILE_VERSIONS` it reads.
PATCH_FILE_VERSION = 2
PATCH_FILE_VERSIONS = (1, 2)
PATCH_FILE_FORMAT = "dynadbg-patch"


# ==============================================================================================================
# Patch files
# ==============================================================================================================


def patch_file_json(patches: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """The JSON document of a patch file (see the module docstring). Each item is ``(key, ops)`` or
    ``(key, ops, guard_ops, mode, persist)``."""
    import torch

    out = []
    for item in patches:
        key, ops = item[0], item[1]
        guards, mode, persist = (tuple(item[2]), item[3], bool(item[4])) if len(item) >= 5 else ((), None, False)
        doc: dict[str, Any] = {"name": key.name, "file": key.filename, "firstlineno": key.firstlineno,
                               "fingerprint": key.fingerprint, "ops": [op.to_json() for op in ops]}
        if guards:
            doc["guards"] = [g.to_json() for g in guards]
        if mode is not None:
            doc["mode"] = mode
            doc["persist"] = persist
        out.append(doc)
    return {
        "format": PATCH_FILE_FORMAT,
        "version": PATCH_FILE_VERSION,
        "torch": str(torch.__version__),
        "python": compat.PYTHON_VERSION_FULL,
        "patches": out,
    }


def write_patch_file(path: str, patches: Iterable[tuple[Any, ...]]) -> EditError | None:
    """Write `patch_file_json` of `patches` to `path`; an `EditError` when it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(patch_file_json(patches), fh, indent=2)
            fh.write("\n")
    except OSError as exc:
        return EditError("patch file", f"cannot write {path}: {exc.strerror or exc}")
    return None


def parse_patch_file(text: str, *, source: str = "patch file") -> list[PatchSpec] | EditError:
    """Parse and check a patch file's text: JSON of the expected shape, every op well formed. One-line errors."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return EditError("patch file", f"{source} is not valid JSON ({exc})")

    def bad(what: str) -> EditError:
        return EditError("patch file", f"{source}: {what}")

    if not isinstance(doc, dict) or doc.get("format") != PATCH_FILE_FORMAT:
        return bad(f"not a dynadbg patch file (no \"format\": \"{PATCH_FILE_FORMAT}\")")
    if doc.get("version") not in PATCH_FILE_VERSIONS:
        return bad(f"format version {doc.get('version')!r}; this dynadbg reads versions "
                   f"{', '.join(map(str, PATCH_FILE_VERSIONS))}")
    items = doc.get("patches")
    if not isinstance(items, list) or not items:
        return bad("\"patches\" must be a non-empty list")
    torch_v, python_v = str(doc.get("torch", "")), str(doc.get("python", ""))
    specs: list[PatchSpec] = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            return bad(f"patch {number} is not an object")
        name, filename, line, fp, ops = (item.get(k) for k in ("name", "file", "firstlineno", "fingerprint", "ops"))
        if not isinstance(name, str) or not isinstance(filename, str) or not isinstance(line, int) \
                or isinstance(line, bool) or not isinstance(fp, str) or not re.fullmatch(r"[0-9a-f]{64}", fp):
            return bad(f"patch {number} needs \"name\", \"file\", \"firstlineno\" (int) and a 64-hex \"fingerprint\"")
        guards_raw = item.get("guards", [])
        if not isinstance(ops, list) or not isinstance(guards_raw, list) or not (ops or guards_raw):
            return bad(f"patch {number} has no \"ops\" and no \"guards\"")
        parsed: list[EditOp] = []
        for k, raw in enumerate(ops, 1):
            op = _op_from_json(raw)
            if isinstance(op, str):
                return bad(f"patch {number}, op {k}: {op}")
            parsed.append(op)
        guards: list[GuardOp] = []
        for k, raw in enumerate(guards_raw, 1):
            gop = _guard_op_from_json(raw)
            if isinstance(gop, str):
                return bad(f"patch {number}, guard op {k}: {gop}")
            guards.append(gop)
        mode = item.get("mode")
        if mode is not None and mode not in ("front", "next", "replace"):
            return bad(f"patch {number}: \"mode\" must be front, next or replace")
        specs.append(PatchSpec(PatchKey(name, filename, line, fp), tuple(parsed), torch_v, python_v, tuple(guards),
                               mode, bool(item.get("persist", False))))
    return specs


def _op_from_json(raw: Any) -> EditOp | str:
    if not isinstance(raw, dict):
        return "not an object"
    kind, index, instrs = raw.get("op"), raw.get("index"), raw.get("instrs", [])
    if kind not in EDIT_KINDS:
        return f"\"op\" must be one of {', '.join(EDIT_KINDS)}"
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return "\"index\" must be a non-negative integer"
    if not isinstance(instrs, list):
        return "\"instrs\" must be a list of [OPNAME, ARG or null]"
    parsed = []
    for item in instrs:
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str) or not item[0]
                or not (item[1] is None or isinstance(item[1], str))):
            return "\"instrs\" must be a list of [OPNAME, ARG or null]"
        parsed.append(NewInstr(item[0].upper(), item[1]))
    want = {"edit": "one instruction", "insert": "at least one instruction", "delete": "no instructions"}[kind]
    if (kind == "edit" and len(parsed) != 1) or (kind == "insert" and not parsed) or (kind == "delete" and parsed):
        return f"{kind} needs {want}"
    return EditOp(kind, index, tuple(parsed))


def _guard_op_from_json(raw: Any) -> GuardOp | str:
    if not isinstance(raw, dict):
        return "not an object"
    try:
        kind = GuardOpKind(raw.get("op"))
    except ValueError:
        return f"\"op\" must be one of {', '.join(k.value for k in GuardOpKind)}"
    source = raw.get("source")
    if not isinstance(source, str) or not source:
        return "\"source\" must be a guard source (L['x'], G['lin'])"
    fields = {}
    for key in ("guard_type", "target", "attr", "description"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            return f"\"{key}\" must be text"
        fields[key] = value
    if kind in (GuardOpKind.TRANSPORT, GuardOpKind.REBIND_GLOBAL, GuardOpKind.REBIND_ATTR) and not fields["target"]:
        return f"a {kind.value} needs \"target\""
    return GuardOp(kind, source, fields["guard_type"], fields["target"], fields["attr"], fields["description"])


def read_patch_file(path: str) -> list[PatchSpec] | EditError:
    """`parse_patch_file` on a file; an unreadable file is an `EditError` too."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(16 * 1024 * 1024)
    except OSError as exc:
        return EditError("patch file", f"cannot read {path}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        return EditError("patch file", f"{path} is not UTF-8 text")
    return parse_patch_file(text, source=path)


def _version_note(spec: PatchSpec) -> str | None:
    import torch

    here_torch, here_py = str(torch.__version__), compat.PYTHON_VERSION_FULL
    other_torch = spec.torch_version and spec.torch_version != here_torch
    if other_torch or spec.python_version and spec.python_version != here_py:
        return (f"patch for {spec.key.name} was made with torch {spec.torch_version or '?'} / Python "
                f"{spec.python_version or '?'}; this is torch {here_torch} / Python {here_py}")
    return None
