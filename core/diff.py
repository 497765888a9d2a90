"""`dynadbg diff`: compare two ``report --json`` documents (two commits), or the reports of every rank of one
torchrun job (``--ranks DIR``).

Everything here works on the JSON alone (no torch): a report from another machine or another torch version
compares as well as one made here. Code objects are matched by file base name and function name (the n-th
``inner`` in a file matches the n-th ``inner``), not by line, so an edit above a function does not make it "new".

What is compared, per code object: whether it compiled (new / gone), its cache entries, its guard count per source
group (`guard_cost.group_by_source` over all its entries), its graph breaks (by reason and user line: new / gone),
its recompiles with torch's reasons and the failing guards dynadbg found, and torch's guard-eval latency. Reports
of schema ``/1`` (no guard cost) compare too: their guard counts come from the guard trees, their latency is null.

`diff_reports(a, b)` returns a JSON-able dict (shape below); `diff_text` words it; `worse(d, measures)` names the
measures on which B is worse than A (``dynadbg diff --fail-on``). `diff_ranks(reports)` compares each rank to the
lowest rank and lists the code objects that diverge; `ranks_text` words it.

    diff_reports -> {
      "schema": "dynadbg.diff/1", "a": str, "b": str,
      "totals": {measure: {"a": num, "b": num, "delta": num}},   # frames, entries, recompiles, graph_breaks,
                                                                  # guards, guard_eval_us
      "code_objects": [{"key": str, "name": str, "filename": str, "status": "new" | "gone" | "both",
                        "entries": [int, int], "recompiles": [int, int], "graph_breaks": [int, int],
                        "guards": [int, int], "guard_eval_us": [num | null, num | null],
                        "guards_by_source": [{"source": str, "a": int, "b": int}],   # changed groups only
                        "graph_breaks_new": [Break], "graph_breaks_gone": [Break],
                        "recompile_reasons_new": [str], "recompile_reasons_gone": [str],
                        "failing_guards_b": [Guard],      # guards behind B's recompiles (all failing, every entry)
                        "changed": bool}],
      "worse": [measure, ...]}                            # measures where B > A (recompiles, graph-breaks, guards)
    Break = {"reason": str, "user_line": str | null, "where": str}
    Guard = {"compile_id": str, "source": str, "code": str, "user_line": str | null, "expected": str | null,
             "actual": str | null}
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Mapping, Sequence

from .guard_cost import group_by_source, guard_count

__all__ = ["FAIL_ON", "DiffError", "diff_ranks", "diff_reports", "diff_text", "load_rank_reports",
           "load_report", "ranks_text", "worse"]

SCHEMA = "dynadbg.diff/1"
#: ``--fail-on`` measures -> the totals key they compare.
FAIL_ON: dict[str, str] = {"recompiles": "recompiles", "graph-breaks": "graph_breaks", "guards": "guards"}


class DiffError(Exception):
    """A report cannot be read: not a file, not JSON, not a dynadbg report. The message is one line."""


def load_report(path: str) -> dict[str, Any]:
    """Read one ``dynadbg report --json`` document.

    Raises:
        DiffError: missing file, invalid JSON, or JSON that is not a dynadbg report.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise DiffError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise DiffError(f"{path} is a directory, not a report "
                        "(use --ranks DIR for a directory of rank reports)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DiffError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DiffError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("dynadbg.report/") \
            or not isinstance(data.get("frames"), list):
        raise DiffError(f"{path} is not a dynadbg report (no \"schema\": \"dynadbg.report/N\" with frames)")
    return data


def _rank_of(name: str) -> int | None:
    m = re.fullmatch(r"rank(\d+)\.json", name)
    return int(m.group(1)) if m else None


def load_rank_reports(directory: str) -> dict[int, dict[str, Any]]:
    """``DIR/rank{R}.json`` for every rank R found, by rank.

    Raises:
        DiffError: not a directory, or fewer than two rank reports in it.
    """
    if not os.path.isdir(directory):
        raise DiffError(f"{directory} is not a directory")
    found = {r: os.path.join(directory, n) for n in os.listdir(directory) if (r := _rank_of(n)) is not None}
    if len(found) < 2:
        raise DiffError(f"{directory} holds {len(found)} rank report(s) (rank0.json, rank1.json, ...); "
                        "need two or more")
    return {r: load_report(found[r]) for r in sorted(found)}


# --------------------------------------------------------------------------------------------------------------
# per code object digest
# --------------------------------------------------------------------------------------------------------------


def _frames_by_key(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    seen: dict[tuple[str, str], int] = {}
    for frame in report.get("frames", ()):
        base = (os.path.basename(frame.get("filename") or "?"), frame.get("name") or "?")
        n = seen.get(base, 0)
        seen[base] = n + 1
        key = f"{base[1]} ({base[0]})" + (f" #{n + 1}" if n else "")
        out[key] = frame
    return out


def _entry_groups(entry: Mapping[str, Any]) -> dict[str, int]:
    cost = entry.get("guard_cost") or {}
    groups = cost.get("by_source")
    if not groups and entry.get("guard_tree"):
        groups = group_by_source(entry["guard_tree"])
    return {k: int(v.get("guards", 0)) for k, v in (groups or {}).items()}


def _entry_guards(entry: Mapping[str, Any]) -> int:
    cost = entry.get("guard_cost") or {}
    if cost.get("guards") is not None:
        return int(cost["guards"])
    return guard_count(entry.get("guard_tree"))


def _break_key(brk: Mapping[str, Any]) -> tuple[str, str]:
    reason = brk.get("short_reason") or " ".join(str(brk.get("reason", "")).split())
    return reason, (brk.get("user_line") or "").strip()


def _failing_guards(frame: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for rec in frame.get("recompiles", ()):
        analysis = rec.get("analysis") or {}
        for checked in analysis.get("entries_checked", ()):
            for leaf in checked.get("failing", ()):
                code = leaf.get("code") or []
                out.append({"compile_id": checked.get("compile_id"), "source": leaf.get("source"),
                            "code": "; ".join(code) if isinstance(code, list) else str(code),
                            "user_line": leaf.get("user_line"), "expected": leaf.get("expected"),
                            "actual": leaf.get("actual")})
    return out


def _digest(frame: Mapping[str, Any] | None) -> dict[str, Any]:
    if frame is None:
        return {"entries": 0, "recompiles": 0, "graph_breaks": 0, "guards": 0, "guard_eval_us": None,
                "groups": {}, "breaks": {}, "reasons": [], "failing": []}
    entries = frame.get("entries", ())
    groups: dict[str, int] = {}
    for e in entries:
        for k, v in _entry_groups(e).items():
            groups[k] = groups.get(k, 0) + v
    eval_us = [(e.get("guard_cost") or {}).get("eval_us") for e in entries]
    timed = [t for t in eval_us if t is not None]
    breaks: dict[tuple[str, str], Mapping[str, Any]] = {}
    for brk in frame.get("graph_breaks", ()):
        breaks.setdefault(_break_key(brk), brk)
    reasons = [r for rec in frame.get("recompiles", ()) for r in rec.get("reasons", ())]
    return {
        "entries": len(entries),
        "recompiles": len(frame.get("recompiles", ())),
        "graph_breaks": len(frame.get("graph_breaks", ())),
        "guards": sum(_entry_guards(e) for e in entries),
        "guard_eval_us": round(sum(timed), 3) if timed else None,
        "groups": groups,
        "breaks": breaks,
        "reasons": reasons,
        "failing": _failing_guards(frame),
    }


def _strip_ids(reason: str) -> str:
    """A recompile reason without its compile id (``"0/0: n == 2"`` → ``"n == 2"``): ids differ between runs."""
    return re.sub(r"[ \t]{2,}", "  ", re.sub(r"^\s*\d+/\d+:\s*", "", reason))


def _break_json(brk: Mapping[str, Any]) -> dict[str, Any]:
    where = f"{os.path.basename(brk['filename'])}:{brk.get('lineno')}" if brk.get("filename") else "(location unknown)"
    return {"reason": _break_key(brk)[0], "user_line": brk.get("user_line"), "where": where}


def _compare_frame(key: str, fa: Mapping[str, Any] | None, fb: Mapping[str, Any] | None) -> dict[str, Any]:
    da, db = _digest(fa), _digest(fb)
    frame = fb or fa or {}
    sources = sorted(set(da["groups"]) | set(db["groups"]))
    by_source = [{"source": s, "a": da["groups"].get(s, 0), "b": db["groups"].get(s, 0)} for s in sources
                 if da["groups"].get(s, 0) != db["groups"].get(s, 0)]
    reasons_a = {_strip_ids(r) for r in da["reasons"]}
    reasons_b = {_strip_ids(r) for r in db["reasons"]}
    row = {
        "key": key,
        "name": frame.get("name"),
        "filename": frame.get("filename"),
        "status": "new" if fa is None else "gone" if fb is None else "both",
        "entries": [da["entries"], db["entries"]],
        "recompiles": [da["recompiles"], db["recompiles"]],
        "graph_breaks": [da["graph_breaks"], db["graph_breaks"]],
        "guards": [da["guards"], db["guards"]],
        "guard_eval_us": [da["guard_eval_us"], db["guard_eval_us"]],
        "guards_by_source": by_source,
        "graph_breaks_new": [_break_json(b) for k, b in db["breaks"].items() if k not in da["breaks"]],
        "graph_breaks_gone": [_break_json(b) for k, b in da["breaks"].items() if k not in db["breaks"]],
        "recompile_reasons_new": sorted(reasons_b - reasons_a),
        "recompile_reasons_gone": sorted(reasons_a - reasons_b),
        "failing_guards_b": db["failing"],
    }
    row["changed"] = bool(
        row["status"] != "both" or da["entries"] != db["entries"] or da["recompiles"] != db["recompiles"]
        or da["graph_breaks"] != db["graph_breaks"] or da["guards"] != db["guards"] or by_source
        or row["graph_breaks_new"] or row["graph_breaks_gone"] or row["recompile_reasons_new"]
        or row["recompile_reasons_gone"]
    )
    return row


def _totals(report: Mapping[str, Any]) -> dict[str, Any]:
    frames = report.get("frames", ())
    digests = [_digest(f) for f in frames]
    timed = [d["guard_eval_us"] for d in digests if d["guard_eval_us"] is not None]
    return {
        "frames": len(frames),
        "entries": sum(d["entries"] for d in digests),
        "recompiles": sum(d["recompiles"] for d in digests),
        "graph_breaks": sum(d["graph_breaks"] for d in digests),
        "guards": sum(d["guards"] for d in digests),
        "guard_eval_us": round(sum(timed), 3) if timed else None,
    }


def diff_reports(a: Mapping[str, Any], b: Mapping[str, Any], *, name_a: str = "A", name_b: str = "B") -> dict[str, Any]:
    """Compare report `b` with report `a` (shape in the module docstring)."""
    fa, fb = _frames_by_key(a), _frames_by_key(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    rows = [_compare_frame(k, fa.get(k), fb.get(k)) for k in keys]
    ta, tb = _totals(a), _totals(b)
    totals = {}
    for k in ta:
        va, vb = ta[k], tb[k]
        delta = None if va is None or vb is None else round(vb - va, 3)
        totals[k] = {"a": va, "b": vb, "delta": delta}
    result = {"schema": SCHEMA, "a": name_a, "b": name_b, "totals": totals, "code_objects": rows}
    result["worse"] = [m for m, k in FAIL_ON.items() if (totals[k]["delta"] or 0) > 0]
    return result


def worse(diff: Mapping[str, Any], measures: Iterable[str]) -> list[str]:
    """The chosen `measures` (``FAIL_ON`` names) on which B is worse than A."""
    return [m for m in measures if m in diff.get("worse", ())]


def _pair(values: Sequence[Any]) -> str:
    a, b = values
    if a == b:
        return f"{a}"
    return f"{a} → {b}"


def diff_text(diff: Mapping[str, Any]) -> str:
    """The comparison for people: totals, then each code object that changed."""
    lines = [f"dynadbg diff: {diff['a']} → {diff['b']}", ""]
    names = {"frames": "code objects compiled", "entries": "cache entries", "recompiles": "recompiles",
             "graph_breaks": "graph breaks", "guards": "guards", "guard_eval_us": "guard eval µs (sum)"}
    for key, label in names.items():
        t = diff["totals"][key]
        delta = t["delta"]
        mark = "" if not delta else f"  ({'+' if delta > 0 else ''}{delta})"
        lines.append(f"  {label:<24} {_fmt(t['a'])} → {_fmt(t['b'])}{mark}")
    changed = [r for r in diff["code_objects"] if r["changed"]]
    lines.append("")
    if not changed:
        lines.append("no code object changed")
    for r in changed:
        status = {"new": "  [compiled only in B]", "gone": "  [compiled only in A]"}.get(r["status"], "")
        lines.append(f"{r['key']}{status}")
        for label, key in (("cache entries", "entries"), ("recompiles", "recompiles"),
                           ("graph breaks", "graph_breaks"), ("guards", "guards")):
            if r[key][0] != r[key][1]:
                lines.append(f"  {label}: {_pair(r[key])}")
        if r["guard_eval_us"][0] != r["guard_eval_us"][1]:
            lines.append(f"  guard eval µs: {_fmt(r['guard_eval_us'][0])} → {_fmt(r['guard_eval_us'][1])}")
        for g in r["guards_by_source"]:
            lines.append(f"    guards from {g['source']}: {g['a']} → {g['b']}")
        for reason in r["recompile_reasons_new"]:
            lines.append(f"  new recompile reason: {reason.splitlines()[0] if reason else reason}")
        for reason in r["recompile_reasons_gone"]:
            lines.append(f"  recompile reason gone: {reason.splitlines()[0] if reason else reason}")
        if r["recompiles"][1] > r["recompiles"][0]:
            for g in r["failing_guards_b"][:20]:
                where = f"  (line: {g['user_line']})" if g.get("user_line") else ""
                lines.append(f"    failing guard [{g['compile_id']}] {g['code']}{where}; "
                             f"expected {g.get('expected')}, actual {g.get('actual')}")
        for b in r["graph_breaks_new"]:
            lines.append(f"  new graph break at {b['where']}: {b['reason']}")
            if b.get("user_line"):
                lines.append(f"      {b['user_line']}")
        for b in r["graph_breaks_gone"]:
            lines.append(f"  graph break gone at {b['where']}: {b['reason']}")
    if diff.get("worse"):
        lines += ["", f"B is worse on: {', '.join(diff['worse'])}"]
    return "\n".join(lines) + "\n"


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


# --------------------------------------------------------------------------------------------------------------
# ranks
# --------------------------------------------------------------------------------------------------------------


def diff_ranks(reports: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """Compare the reports of every rank of one job: the code objects whose compiles, cache entries, guard counts
    or graph breaks differ between ranks (the divergence that stalls collectives).

    Returns:
        ``{"schema": "dynadbg.diff-ranks/1", "ranks": [int], "diverging": [Row], "reference": int}`` with
        ``Row = {"key", "name", "filename", "per_rank": {rank: {"compiled", "entries", "recompiles",
        "graph_breaks", "guards"}}, "differs": [measure], "failing_guards": {rank: [Guard]},
        "graph_breaks": {rank: [Break]}}``.
    """
    ranks = sorted(reports)
    by_rank = {r: _frames_by_key(reports[r]) for r in ranks}
    keys: list[str] = []
    for r in ranks:
        keys += [k for k in by_rank[r] if k not in keys]
    rows = []
    for key in keys:
        per_rank = {}
        failing = {}
        breaks = {}
        name = filename = None
        for r in ranks:
            frame = by_rank[r].get(key)
            d = _digest(frame)
            per_rank[r] = {"compiled": frame is not None, "entries": d["entries"], "recompiles": d["recompiles"],
                           "graph_breaks": d["graph_breaks"], "guards": d["guards"]}
            if d["failing"]:
                failing[r] = d["failing"]
            if d["breaks"]:
                breaks[r] = [_break_json(b) for b in d["breaks"].values()]
            if frame is not None:
                name, filename = frame.get("name"), frame.get("filename")
        differs = [m for m in ("compiled", "entries", "recompiles", "graph_breaks", "guards")
                   if len({per_rank[r][m] for r in ranks}) > 1]
        if differs:
            rows.append({"key": key, "name": name, "filename": filename, "per_rank": per_rank, "differs": differs,
                         "failing_guards": failing, "graph_breaks": breaks})
    return {"schema": "dynadbg.diff-ranks/1", "ranks": ranks, "reference": ranks[0], "diverging": rows}


def ranks_text(result: Mapping[str, Any]) -> str:
    """The rank comparison for people."""
    ranks = result["ranks"]
    lines = [f"dynadbg diff --ranks: {len(ranks)} ranks ({', '.join(map(str, ranks))})", ""]
    if not result["diverging"]:
        lines.append("every rank compiled the same code objects with the same entries, guards and graph breaks")
        return "\n".join(lines) + "\n"
    lines.append(f"{len(result['diverging'])} code object(s) differ between ranks "
                 "(a rank that recompiles or breaks where the others do not stalls their collectives):")
    for row in result["diverging"]:
        lines += ["", f"{row['key']}  differs in: {', '.join(row['differs'])}"]
        lines.append(f"  {'rank':>6} {'compiled':>9} {'entries':>8} {'recompiles':>11} "
                     f"{'graph breaks':>13} {'guards':>7}")
        for r in ranks:
            p = row["per_rank"][r]
            lines.append(f"  {r:>6} {'yes' if p['compiled'] else 'no':>9} {p['entries']:>8} {p['recompiles']:>11} "
                         f"{p['graph_breaks']:>13} {p['guards']:>7}")
        for r, guards in sorted(row["failing_guards"].items()):
            for g in guards[:20]:
                where = f"  (line: {g['user_line']})" if g.get("user_line") else ""
                lines.append(f"  rank {r} recompiled: failing guard [{g['compile_id']}] {g['code']}{where}; "
                             f"expected {g.get('expected')}, actual {g.get('actual')}")
        if "graph_breaks" in row["differs"]:
            for r, brks in sorted(row["graph_breaks"].items()):
                for b in brks:
                    lines.append(f"  rank {r} graph break at {b['where']}: {b['reason']}")
    return "\n".join(lines) + "\n"
