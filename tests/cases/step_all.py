"""Run a script under the debugger, stepping every generated instruction (`s 1000000` at every stop), and check
the teaching engine on everything Dynamo generated: the corpus's one stepping driver.

At every traced instruction (`Session(on_traced=...)`) the value stack's slot provenance is checked against the
tracked depth (`teach_walk.slot_problems`); after the run, the roles, opcode explanations and guard-type
explanations of every generated code object the session's capture kept (`teach_walk.analyse_capture`).

Usage: python step_all.py SCRIPT [--no-check-depth]
stdout: the program's own output only. stderr (last line): a JSON summary
{"status", "traceback", "stops", "traced_instructions", "kinds", "depth_mismatches", "stepped",
 "provenance_problems", "codes", "unknown", "unexplained", "guard_types_unexplained", ...}.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core"))

from helpers import drive  # noqa: E402
from teach_walk import analyse_capture, slot_problems  # noqa: E402


def main() -> int:
    script = sys.argv[1]
    check = "--no-check-depth" not in sys.argv
    problems: list[str] = []
    stepped = 0

    def on_traced(frame, st) -> None:  # noqa: ANN001 - every traced instruction of generated code
        nonlocal stepped
        if st.index < 0:
            return
        path = st.__dict__.setdefault("_step_all_path", [])  # the indices this frame ran, kept on its state
        path.append(st.index)
        stepped += 1
        problems.extend(slot_problems(frame.f_code, st.index, path, st.depth, room=50 - len(problems)))

    run = drive(
        lambda s: s.start_script(script, []),
        ["s 1000000"] * 10_000,
        break_on=("entry", "exception", "graph-break"),
        timeout=600,
        check_depth=check,
        on_traced=on_traced,
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
        "stepped": stepped,
        "provenance_problems": problems[:50],
        **(analyse_capture(run.session.capture) if run.session.capture is not None else {"codes": 0}),
    }
    sys.stderr.write("\n" + json.dumps(summary) + "\n")
    return run.result.status


if __name__ == "__main__":
    raise SystemExit(main())
