"""Run one script under a `Session` with ``--break-on recompile`` in a fresh process (torch state must not leak
between cases) and record every recompile stop: ``python recompile_driver.py OUT_JSON SCRIPT [ARGS...]``.

At each stop the driver runs ``why`` and answers ``recompile``; it writes the stops (message, entry count, the
detail blocks, the recorded analysis as `report.record_json`) and, at the end, every compiled frame's entry
ids and hit counts. The program's own output goes to this process's stdout/stderr. Exits with the script's
status.
"""

from __future__ import annotations

import json
import sys
from dynadbg.core.commands import CommandLine
from dynadbg.core.listeners import QueueListener


def main(argv: list[str]) -> int:
    out_json, script, *args = argv
    from dynadbg.core import format as fmt
    from dynadbg.core.report import record_json
    from dynadbg.core.session import Session

    listener = QueueListener()
    session = Session(listener, break_on=("recompile",))
    commands = CommandLine(session)
    session.start_script(script, args)
    stops = []
    while True:
        kind, payload = listener.events.get(timeout=600)
        if kind == "exit":
            result = payload
            break
        why = commands.execute("why")
        stops.append({
            "message": payload.message,
            "entry_count": payload.entry_count,
            "detail": dict(fmt.stop_blocks(payload)),
            "why": why.output,
            "record": record_json(why.data) if why.data is not None else None,
        })
        commands.execute("recompile")
    frames = [{"name": f.name, "firstlineno": f.firstlineno, "skipped": f.skipped,
               "entries": [{"compile_id": e.compile_id, "hits": e.hits} for e in f.entries]}
              for f in session.compiled_frames()]
    timeline = [record_json(r) for r in session.recompiles.records()]
    sys.stdout.flush()
    if result.traceback:
        sys.stderr.write(result.traceback)
    with open(out_json, "w") as fh:
        json.dump({"status": result.status, "stops": stops, "frames": frames, "timeline": timeline,
                   "messages": listener.messages}, fh, indent=1)
    return result.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
