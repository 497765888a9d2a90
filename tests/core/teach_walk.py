"""Run one program with the capture installed and every generated instruction traced; check the teaching
engine on everything Dynamo generated.

Usage: python teach_walk.py SCRIPT_OR_MODULE_FILE [--dump]

A script runs as ``__main__``; a module of `tests/core/programs` (no ``__main__`` block) is imported and its
``run_*`` functions are called with a fresh results list. Every instruction of every generated code object
(cache entries' code, resume functions' own code) that runs is traced: at each one the tracked stack depth
(`stack.FrameState`, checked against the live stack top on 3.11) is compared with the provenance of the
slots, and every slot's origin must be an instruction that pushes a value and ran earlier on this path.
After the run, roles and opcode explanations are computed for every generated code object seen.

stdout: the program's own output (and the role listings with --dump). stderr, last line, JSON:
{"codes", "instructions", "stepped", "unknown": [...], "unexplained": [...], "provenance_problems": [...],
 "roles": {role: count}, "sources": {source: count}, "opnames": [...], "status"}
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from collections import Counter
from types import CodeType, FrameType
from typing import Any


def main() -> int:
    target = os.path.abspath(sys.argv[1])
    dump = "--dump" in sys.argv
    from dynadbg.core import compat, flow, stack
    from dynadbg.core.capture import Capture
    from dynadbg.core.tracing import make_backend

    compat.load()
    cap = Capture(count_hits=False)
    cap.install()
    problems: list[str] = []
    stepped = 0
    seen_codes: dict[int, CodeType] = {}

    class Handler:
        def __init__(self) -> None:
            self.states: dict[FrameType, tuple[stack.FrameState, list[int]]] = {}

        def wants_frame(self, code: CodeType) -> bool:
            return cap.is_generated(code) or _is_resume_own(code)

        def on_call(self, frame: FrameType) -> None:
            seen_codes[id(frame.f_code)] = frame.f_code
            self.states[frame] = (stack.FrameState(frame, stack.code_index(frame.f_code)), [])

        def on_instruction(self, frame: FrameType, offset: int) -> None:
            nonlocal stepped
            st = self.states.get(frame)
            if st is None:
                return
            fs, path = st
            fs.advance(offset)
            if fs.index < 0:
                return
            path.append(fs.index)
            stepped += 1
            code = frame.f_code
            depth = fs.depth
            if compat.STACKTOP_IS_EXACT:
                live = fs.exact_stack()
                if live is not None:
                    depth = len(live)
            problems.extend(slot_problems(code, fs.index, path, depth, room=50 - len(problems)))

        def on_return(self, frame: FrameType, value: Any) -> None:
            self.states.pop(frame, None)

        def on_exception(self, frame: FrameType, offset: int, exc: BaseException) -> None:
            st = self.states.get(frame)
            if st is not None:
                # the next instruction is the handler (or the frame unwinds): FrameState re-bases its depth
                # from the exception table, provenance replays the same jump
                st[0].pending_exception_offset = offset

    handler = Handler()
    backend = make_backend(handler)  # type: ignore[arg-type]

    def _is_resume_own(code: CodeType) -> bool:
        return code.co_name.startswith("torch_dynamo_resume_in_") and "__is_tracing_resume_prologue" in \
            code.co_varnames

    def callback(code: CodeType) -> None:
        if cap.is_generated(code):
            backend.watch(code)
            for op in flow.ops_of(code):
                if op.opname == "LOAD_GLOBAL" and str(op.argval).startswith("__resume_at"):
                    rc = cap.resume_global(str(op.argval))
                    if rc is not None:
                        backend.watch(rc)

    compat.set_debugger_callback(callback)
    status = 0
    try:
        if _is_script(target):
            sys.argv = [target]
            runpy.run_path(target, run_name="__main__")
        else:
            sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(target))))
            mod = runpy.run_path(target, run_name="teach_walk_module")
            for name, fn in sorted(mod.items()):
                if name.startswith("run_") and callable(fn):
                    try:
                        fn([])
                    except TypeError:
                        pass
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        status = 1
    finally:
        compat.set_debugger_callback(None)
        backend.release()
        cap.uninstall()

    summary = {"status": status, "stepped": stepped, "provenance_problems": problems[:50],
               **analyse_capture(cap, dump=dump)}
    sys.stdout.flush()
    sys.stderr.write("\n" + json.dumps(summary) + "\n")
    return 0


def slot_problems(code: CodeType, index: int, path: list[int], depth: int, room: int = 50) -> list[str]:
    """What is wrong with the slot provenance of `code` before instruction `index`, reached by `path` (the indices
    the frame ran, `index` last) with `depth` values on the value stack: the slot count must be the depth, and
    each slot's origin an instruction that pushes and ran earlier on the path (or the handler entry's push)."""
    from dynadbg.core import flow, provenance, roles

    try:
        prov = provenance.provenance(code, index, path=path, generated=False)
    except Exception as exc:  # noqa: BLE001
        return [f"{code.co_name}@{index}: provenance raised {exc!r}"]
    if len(prov.slots) != depth:
        return [f"{code.co_name}@{index} {prov.path}: {len(prov.slots)} slots, live depth {depth}"] if room > 0 else []
    out: list[str] = []
    ops, _ = roles.flow_of(code)
    ran = set(path[:-1])
    for s in prov.slots:
        if s.index < 0:
            # pushed by the interpreter when it entered a handler: the raising instruction ran
            if s.opname != provenance.HANDLER or s.value_index not in ran:
                out.append(f"{code.co_name}@{index}: slot {s.slot} has no origin ({s})")
            continue
        op = ops[s.index]
        pushes = 1 if op.opname == "COPY" else flow.pops_pushes(op)[1]
        if pushes < 1 or s.index not in ran:
            out.append(f"{code.co_name}@{index}: slot {s.slot} names {s.index} {op.opname}, "
                       f"which {'pushes nothing' if pushes < 1 else 'did not run before'}")
    return out


def analyse_capture(cap: Any, dump: bool = False) -> dict[str, Any]:
    """Roles, opcode explanations and guard-type explanations of every generated code object `cap` (a
    `dynadbg.core.capture.Capture`, installed or not) kept: the summary's keys ``codes``, ``instructions``,
    ``unknown``, ``unexplained``, ``roles``, ``sources``, ``opnames``, ``capture_errors``, ``guard_types``,
    ``guard_types_unexplained``."""
    from dynadbg.core import explain, roles
    from dynadbg.core.model import Role

    frames = cap.frames()
    codes: list[CodeType] = []
    for rec in list(cap._frames.values()):  # the test walks every code object the capture kept alive
        if rec.is_resume:
            codes.append(rec.code)
        for comp in rec.compiles:
            if comp.entry is not None:
                codes.append(comp.entry.code)
    unknown: list[str] = []
    unexplained: set[str] = set()
    role_counts: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    opnames: set[str] = set()
    n_instr = 0
    for code in codes:
        facts = roles.facts_from_capture(cap, code, frames)
        cr = roles.code_roles(code, facts)
        ops, _ = roles.flow_of(code)
        n_instr += len(ops)
        for r, op in zip(cr.roles, ops):
            role_counts[r.role.value] += 1
            sources[r.source] += 1
            opnames.add(op.opname)
            if r.role == Role.UNKNOWN:
                unknown.append(f"{code.co_name}@{r.index} {op.opname} {op.argrepr}")
            if explain.opcode_help(op.opname) is None:
                unexplained.add(op.opname)
        # every instruction can be explained end to end (static stack, no live values)
        for i in range(len(ops)):
            explain.explain(code, i, facts=facts)
        if dump:
            print(f"=== {code.co_name} ({'resume own code' if facts.is_resume_function else 'generated'})")
            for reg in cr.regions:
                print(f"  -- [{reg.start}-{reg.end}] {reg.title} ({reg.source})")
                for k in range(reg.start, reg.end + 1):
                    r = cr.roles[k]
                    print(f"     {k:4} {ops[k].opname:26} {ops[k].argrepr[:40]:40} {r.role.value:15} {r.detail}")
    guard_types: set[str] = set()

    def walk(node: Any) -> None:
        for leaf in node.leaves:
            guard_types.add(leaf.guard_type)
        for child in node.children:
            walk(child)

    for fv in cap.frames(guards=True):
        for entry in fv.entries:
            tree = entry.guard_tree
            if tree is not None:
                walk(tree.root)
                for leaf in tree.epilogue:
                    guard_types.add(leaf.guard_type)
    return {
        "codes": len(codes), "instructions": n_instr,
        "unknown": unknown[:50], "unexplained": sorted(unexplained),
        "roles": dict(role_counts), "sources": dict(sources), "opnames": sorted(opnames),
        "capture_errors": cap.errors[:5], "guard_types": sorted(guard_types),
        "guard_types_unexplained": sorted(g for g in guard_types if explain.guard_help(g) is None),
    }


def _is_script(path: str) -> bool:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return "__main__" in text or "/shared/cases/" in path or path.endswith("_script.py") or \
        "def run_" not in text


if __name__ == "__main__":
    raise SystemExit(main())
