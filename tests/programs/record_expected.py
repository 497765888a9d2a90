"""Record what torch logs for the programs of this corpus: ``python tests/programs/record_expected.py [NAME...]``.

Runs each program (``*.py`` here with a ``.expected.md`` beside it, or the NAMEs given) in a fresh process with
``TORCH_LOGS="recompiles,graph_breaks"`` and writes ``NAME.expected.md``: exit code, the number of recompiles and
graph breaks torch logged, each recompile's reasons (short form, newest entry first, as printed), each graph
break (compile id, file:line, whether torch suppressed its user stack as a duplicate, the reason head), and the
program's stdout — the format of ``../shared/cases/*.expected.md``, which the corpus tests parse
(tests/cases/test_cases_report.py, ``parse_expected``). Record on Python 3.11 with torch 2.13 (what the
stdout comparison assumes); rerun after a torch upgrade and review the diff.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_LOG = re.compile(r"^[VWI]\d{4} [\d:.]+ \d+ \S+\] \[(?P<cid>[^\]]+)\] \[__(?P<kind>recompiles|graph_breaks)\] ?(?P<text>.*)$")


def _relative(path: str) -> str:
    return "programs/" + os.path.basename(path)


def parse_log(stderr: str) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str, bool, str]]]:
    recompiles: list[tuple[str, str, list[str]]] = []
    breaks: list[tuple[str, str, bool, str]] = []
    lines = stderr.splitlines()
    i = 0
    while i < len(lines):
        m = _LOG.match(lines[i])
        i += 1
        if m is None:
            continue
        cid, kind, text = m["cid"], m["kind"], m["text"]
        if kind == "recompiles" and text.startswith("Recompiling function "):
            name = text.split()[2]
            reasons: list[str] = []
            while i < len(lines) and (n := _LOG.match(lines[i])) and n["cid"] == cid and n["kind"] == kind:
                body = n["text"].strip()
                i += 1
                if body.startswith("- ") and re.match(r"^- \d+/\d+: ", body):
                    reasons.append(re.sub(r"\s{2,}#", "  #", body[2:].rstrip()))
            recompiles.append((cid, name, reasons))
        elif kind == "graph_breaks" and text.startswith("Graph break"):
            where = re.search(r" in user code at (\S+):(\d+)", text)
            dup = "user stack suppressed" in text
            reason_parts: list[str] = []
            while i < len(lines) and (n := _LOG.match(lines[i])) and n["cid"] == cid and n["kind"] == kind:
                body = n["text"]
                i += 1
                if body.startswith("Graph Break Reason:"):
                    reason_parts.append(body[len("Graph Break Reason:"):].strip())
                    while i < len(lines) and (k := _LOG.match(lines[i])) and k["cid"] == cid:
                        more = k["text"].strip()
                        if not more:                    # torch puts an empty line before the reason's detail
                            i += 1
                            continue
                        if more.startswith(("Explanation:", "Hint:", "Developer debug")):
                            break
                        reason_parts.append(more)
                        i += 1
                    break
            if where is not None:
                breaks.append((cid, f"{_relative(where[1])}:{where[2]}", dup, " ".join(reason_parts)))
    return recompiles, breaks


def record(program: Path) -> str:
    env = dict(os.environ, TORCH_LOGS="recompiles,graph_breaks", PYTHONHASHSEED="0")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env,
                          cwd=str(program.parent), timeout=600)
    wall = time.monotonic() - start
    recompiles, breaks = parse_log(proc.stderr)
    doc = (program.read_text().split('"""')[1].strip() if program.read_text().startswith('"""') else "").splitlines()
    out = [f"## {program.name}", "", f"- what: {' '.join(line.strip() for line in doc)}",
           f"- exit code {proc.returncode}, wall time {wall:.1f} s",
           f"- recompiles logged: {len(recompiles)}; graph breaks logged: {len(breaks)}", ""]
    if recompiles:
        out += ["**Recompile reasons** (newest cache entry first, as printed):", ""]
        for cid, name, reasons in recompiles:
            out.append(f"- `[{cid}]` Recompiling function {name}")
            out += [f"    - `{r}`" for r in reasons]
        out.append("")
    if breaks:
        out += ["**Graph breaks**:", ""]
        for cid, where, dup, reason in breaks:
            out.append(f"- `[{cid}]` at `{where}`{' (user stack suppressed: duplicate)' if dup else ''}: {reason}")
        out.append("")
    out += ["**Program stdout**:", "", "```", proc.stdout.rstrip("\n"), "```", ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    names = argv or sorted(p.name.replace(".expected.md", ".py") for p in HERE.glob("*.expected.md"))
    for name in names:
        program = HERE / name
        text = record(program)
        program.with_suffix(".expected.md").write_text(text)
        print(f"{name}: {text.splitlines()[3]}; {text.splitlines()[4]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
