"""Run a script under the debugger, stepping every generated instruction (`s 1000000` at every stop).

Usage: python step_all.py SCRIPT [--no-check-depth]
stdout: the program's own output only. stderr (last line): a JSON summary
{"status", "stops", "depth_mismatches", "kinds"}.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core"))

from helpers import drive  # noqa: E402


def main() -> int:
    script = sys.argv[1]
    check = "--no-check-depth" not in sys.argv
    run = drive(
        lambda s: s.start_script(script, []),
        ["s 1000000"] * 10_000,
        break_on=("entry", "exception", "graph-break"),
        timeout=600,
        check_depth=check,
    )
    assert run.result is not None and run.session is not None
    kinds: dict[str, int] = {}
    for st in run.stops:
        kinds[st.kind.value] = kinds.get(st.kind.value, 0) + 1
    sys.stdout.flush()
    summary = {
        "status": run.result.status,
        "traceback": run.result.traceback,
        "stops": len(run.stops),
        "traced_instructions": run.session.traced_instructions,
        "kinds": kinds,
        "depth_mismatches": run.session.depth_mismatches[:20],
    }
    sys.stderr.write("\n" + json.dumps(summary) + "\n")
    return run.result.status


if __name__ == "__main__":
    raise SystemExit(main())
