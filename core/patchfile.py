"""Patch files: the instruction edits of a session as JSON (never pickle), written and read back.

For each patched code object: its name, file, first line and the fingerprint of Dynamo's code
(`edits.fingerprint`), and the edit ops as text. `dynadbg.core.patches` matches them to compiles by all four.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Iterable, Sequence

from .edits import EDIT_KINDS
from .model import EditError, EditOp, NewInstr, PatchKey, PatchSpec

#: Version of the patch-file format this module writes and reads.
PATCH_FILE_VERSION = 1
PATCH_FILE_FORMAT = "dynadbg-patch"


# ==============================================================================================================
# Patch files
# ==============================================================================================================


def patch_file_json(patches: Iterable[tuple[PatchKey, Sequence[EditOp]]]) -> dict[str, Any]:
    """The JSON document of a patch file (see the module docstring)."""
    import torch

    return {
        "format": PATCH_FILE_FORMAT,
        "version": PATCH_FILE_VERSION,
        "torch": str(torch.__version__),
        "python": ".".join(map(str, sys.version_info[:3])),
        "patches": [
            {"name": key.name, "file": key.filename, "firstlineno": key.firstlineno,
             "fingerprint": key.fingerprint, "ops": [op.to_json() for op in ops]}
            for key, ops in patches
        ],
    }


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
    if doc.get("version") != PATCH_FILE_VERSION:
        return bad(f"format version {doc.get('version')!r}; this dynadbg reads version {PATCH_FILE_VERSION}")
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
        if not isinstance(ops, list) or not ops:
            return bad(f"patch {number} has no \"ops\"")
        parsed: list[EditOp] = []
        for k, raw in enumerate(ops, 1):
            op = _op_from_json(raw)
            if isinstance(op, str):
                return bad(f"patch {number}, op {k}: {op}")
            parsed.append(op)
        specs.append(PatchSpec(PatchKey(name, filename, line, fp), tuple(parsed), torch_v, python_v))
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

    here_torch, here_py = str(torch.__version__), ".".join(map(str, sys.version_info[:3]))
    other_torch = spec.torch_version and spec.torch_version != here_torch
    if other_torch or spec.python_version and spec.python_version != here_py:
        return (f"patch for {spec.key.name} was made with torch {spec.torch_version or '?'} / Python "
                f"{spec.python_version or '?'}; this is torch {here_torch} / Python {here_py}")
    return None
