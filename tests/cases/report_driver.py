"""Run one script under `dynadbg.core.report.run_report` in a fresh process (torch state must not leak between
cases): ``python report_driver.py OUT_JSON OUT_TEXT SCRIPT [ARGS...]``. The program's own output goes to this
process's stdout/stderr, as it would without the debugger; the reports go to the files: the JSON, the full text
(``report --full``) to OUT_TEXT and the summary (plain ``report``) to OUT_TEXT.summary. Exits with the script's
status."""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    out_json, out_text, script, *args = argv
    from dynadbg.core.report import run_report

    result = run_report(script, args)
    sys.stdout.flush()
    if result.exit.traceback:
        sys.stderr.write(result.exit.traceback)
    with open(out_json, "w") as fh:
        json.dump(result.json(), fh, indent=1)
    with open(out_text, "w") as fh:
        fh.write(result.text(full=True))
    with open(out_text + ".summary", "w") as fh:
        fh.write(result.text())
    return result.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
