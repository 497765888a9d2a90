"""Run programs under a `Session` with ``--break-on recompile,graph-break`` and record every piece of advice each
stop prints: ``python advice_driver.py OUT_JSON PROGRAM...`` (the programs one after another in this process,
``torch._dynamo.reset()`` between them: child processes are costly on shared cores).

At each recompile stop the driver keeps the stop's choices (`RecompileChoice`: availability, why not, permanent
code, warnings, detail) and the record's advice data (call site, checked guard filter, dynamic sizes), then
answers ``recompile`` (the program runs as without the debugger); at a graph-break stop it keeps the stop's
detail and continues. At the end of each program: every compiled frame's entries, and the call sites recorded.
"""

from __future__ import annotations

import json
import sys
from dynadbg.core.commands import CommandLine
from dynadbg.core.listeners import QueueListener


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


def _site(site) -> dict | None:  # noqa: ANN001
    if site is None:
        return None
    return {"kind": site.kind.value, "filename": site.filename, "lineno": site.lineno, "text": site.text,
            "line": site.line, "target": site.target, "decorator": site.decorator}


def _plan(plan) -> dict | None:  # noqa: ANN001
    if plan is None:
        return None
    return {"ok": plan.ok, "source": plan.source, "compile_id": plan.compile_id, "leaf_ids": list(plan.leaf_ids),
            "dropped": [e.label for e in plan.dropped],
            "why_not": [{"kind": w.kind.value, "leaf": w.leaf_type, "source": w.source} for w in plan.why_not]}


def run_one(program: str) -> dict:
    import torch

    from dynadbg.core import format as fmt
    from dynadbg.core.format import permanent_text
    from dynadbg.core.format.advice import choice_detail_text, choice_why_not_text
    from dynadbg.core.format.recompile import choice_warning_texts
    from dynadbg.core.model import StopKind
    from dynadbg.core.session import Session

    _restore_config()
    torch._dynamo.reset()
    listener = QueueListener()
    session = Session(listener, break_on=("recompile", "graph-break"))
    commands = CommandLine(session)
    session.start_script(program, [])
    stops = []
    while True:
        kind, payload = listener.events.get(timeout=600)
        if kind == "exit":
            result = payload
            break
        stop = payload
        if stop.kind is StopKind.RECOMPILE:
            record = commands.execute("why").data
            advice = getattr(record, "advice", None)
            stops.append({
                "kind": "recompile", "code": stop.frames[-1].code.name if stop.frames else None,
                "compile_id": getattr(record, "compile_id", None),
                "choices": [{"kind": c.kind.value, "available": c.available, "why_not": choice_why_not_text(c),
                             "permanent": permanent_text(c.permanent) if c.permanent else None,
                             "warnings": choice_warning_texts(c), "detail": choice_detail_text(c),
                             "decision": c.decision.command} for c in stop.choices],
                "advice": None if advice is None else {
                    "call_site": _site(advice.call_site), "recorded": advice.recorded, "drop": _plan(advice.drop),
                    "dynamic": [{"name": d.name, "dim": d.dim, "size": d.size} for d in advice.dynamic]},
                "limit": None if record is None or record.limit is None else {
                    "hit_now": record.limit.hit_now, "raises": record.limit.raises, "counted": record.limit.counted},
            })
            commands.execute("recompile")
        else:
            stops.append({"kind": stop.kind.value, "message": stop.message, "detail": dict(fmt.stop_blocks(stop))})
            commands.execute("c")
    frames = [{"name": f.name, "filename": f.filename, "firstlineno": f.firstlineno, "skipped": f.skipped,
               "entries": [e.compile_id for e in f.entries]} for f in session.compiled_frames()]
    sites = [_site(s) for s in session.capture.callsites.sites()] if session.capture is not None else []
    return {"program": program, "status": result.status, "traceback": result.traceback, "stops": stops,
            "frames": frames, "call_sites": sites, "messages": listener.messages}


def main(argv: list[str]) -> int:
    out_json, *programs = argv
    results = [run_one(p) for p in programs]
    sys.stdout.flush()
    with open(out_json, "w") as fh:
        json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
