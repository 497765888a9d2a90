"""The advice sweep: every fix the debugger prints at a recompile stop, pasted into the program, does what its text
says (tests/programs, the project's corpus: one program per kind of advice).

`advice_driver.py` runs the programs under the debugger (``--break-on recompile,graph-break``) and keeps each
stop's choices and advice; `apply_fix.py` applies each printed fix to a copy of its program (the user's call
replaced by the printed one, a stance line run first, an input marked before each call) and counts the graphs
torch compiles, beside the program as it is. Both run in child processes (Dynamo state must not leak into the
test process), a few programs per process.

What is asserted, per kind of fix:
* a ``guard_filter_fn`` (``drop``): printed only when checked, on the user's own call; pasted in, fewer graphs;
* ``recompile_limit=N`` on the user's call (``skip``): fewer graphs, the same output (later misses run eagerly);
* ``set_stance("eager_on_recompile")`` (``eager``/``skip``): from the program's start nothing compiles, and
  the program runs to its end;
* ``mark_dynamic`` / ``mark_unbacked`` (``dynamic``): fewer graphs;
* every call site a fix names exists in the program, at the line it names.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import builtin_filter_type

from corpus import PROGRAMS, PROGRAMS_DIR
from forkrun import python

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "advice_driver.py"
APPLY = HERE / "apply_fix.py"
TIMEOUT_S = 1200

pytestmark = [pytest.mark.slow]

#: programs whose advice each test below looks at by name (all of tests/programs runs in the sweep)
KINDS = {
    "builtin": "builtin_function_arg.py",
    "subclass": "tensor_subclass_metadata.py",
    "marking": "mark_dynamic_input.py",
    "size_one": "size_one_dim.py",
    "optimizer": "compiled_optimizer_step.py",
    "resume": "outer_resume_recompile.py",
    "module_compile": "module_compile.py",
    "try": "try_graph_break.py",
    "fullgraph": "fullgraph_recompile.py",
    "limit": "recompile_limit.py",
}


def _programs() -> list[str]:
    return [str(PROGRAMS_DIR / name) for name in PROGRAMS]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    """``python CMD...`` (cmd[0] is sys.executable) as a fresh process, forked (forkrun.py)."""
    return python(cmd[1:], timeout=TIMEOUT_S, cwd=str(PROGRAMS_DIR))


def _batches(items: list, n: int = 2) -> list[list]:
    return [items[i::n] for i in range(n) if items[i::n]]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict[str, dict]:
    """Every program's stops and advice, keyed by program file name."""
    out = tmp_path_factory.mktemp("advice")
    batches = _batches(_programs())
    with ThreadPoolExecutor(max_workers=len(batches)) as pool:
        procs = list(pool.map(lambda ib: _run([sys.executable, str(DRIVER), str(out / f"stops{ib[0]}.json"),
                                               *ib[1]]), enumerate(batches)))
    results: dict[str, dict] = {}
    for i, proc in enumerate(procs):
        path = out / f"stops{i}.json"
        assert path.exists(), proc.stderr[-3000:]
        for r in json.loads(path.read_text()):
            results[Path(r["program"]).name] = r
    return results


def _fix_jobs(sweep: dict[str, dict]) -> list[dict]:
    """One job per printed fix (and a baseline per program that printed one)."""
    jobs: list[dict] = []
    for name, run in sweep.items():
        program = str(PROGRAMS_DIR / name)
        fixes = []
        for stop in run["stops"]:
            if stop["kind"] != "recompile":
                continue
            site = (stop["advice"] or {}).get("call_site")
            for choice in stop["choices"]:
                permanent = choice["permanent"] or ""
                for line in permanent.splitlines():
                    code = line.split("   # ", 1)[0].strip()
                    if site is not None and "   # in place of " in line:
                        fixes.append((choice["kind"], {"kind": "replace", "lineno": site["lineno"],
                                                       "old": site["text"], "new": code}, stop, choice))
                    elif code.startswith("torch.compiler.set_stance(\"eager_on_recompile\")"):
                        fixes.append((choice["kind"], {"kind": "prepend", "code": code}, stop, choice))
                    elif site is not None and re.match(r"torch\._dynamo(\.decorators)?\.mark_(dynamic|unbacked)\(",
                                                       code):
                        fixes.append((choice["kind"], {"kind": "mark", "lineno": site["lineno"],
                                                       "old": site["text"], "call": code}, stop, choice))
        if not fixes:
            continue
        jobs.append({"program": program, "fix": {"kind": "none"}, "choice": "baseline", "name": name})
        seen = set()
        for kind, fix, stop, choice in fixes:
            key = json.dumps(fix, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            jobs.append({"program": program, "fix": fix, "choice": kind, "name": name,
                         "raises": (stop.get("limit") or {}).get("raises"),
                         "warned": any("RESULTS MAY BE WRONG" in w or "results may be wrong" in w
                                       for w in choice["warnings"])})
    for i, job in enumerate(jobs):
        job["id"] = i
    return jobs


@pytest.fixture(scope="module")
def applied(sweep, tmp_path_factory) -> list[dict]:
    """Each fix job with what applying it gave (graphs, frames, stdout, error)."""
    out = tmp_path_factory.mktemp("applied")
    jobs = _fix_jobs(sweep)
    by_program: dict[str, list[dict]] = {}
    for job in jobs:
        by_program.setdefault(job["name"], []).append(job)
    batches = _batches(list(by_program.values()))
    batch_jobs = [[j for group in batch for j in group] for batch in batches]

    def run(ib: tuple[int, list[dict]]) -> subprocess.CompletedProcess:
        i, batch = ib
        (out / f"jobs{i}.json").write_text(json.dumps(batch))
        return _run([sys.executable, str(APPLY), str(out / f"jobs{i}.json"), str(out / f"results{i}.json")])

    with ThreadPoolExecutor(max_workers=max(1, len(batch_jobs))) as pool:
        procs = list(pool.map(run, enumerate(batch_jobs)))
    done = []
    for i, (proc, batch) in enumerate(zip(procs, batch_jobs)):
        path = out / f"results{i}.json"
        assert path.exists(), proc.stderr[-3000:]
        for job, result in zip(batch, json.loads(path.read_text())):
            done.append({**job, **result})
    return done


def _baseline(applied: list[dict], name: str) -> dict:
    return next(j for j in applied if j["name"] == name and j["choice"] == "baseline")


def _recompile_stops(sweep: dict, key: str) -> list[dict]:
    return [s for s in sweep[KINDS[key]]["stops"] if s["kind"] == "recompile"]


def _choice(stop: dict, kind: str) -> dict:
    return next(c for c in stop["choices"] if c["kind"] == kind)


# --------------------------------------------------------------------------------------------------------------
# every printed fix, pasted in
# --------------------------------------------------------------------------------------------------------------


def test_every_program_ran_to_its_end_under_the_debugger(sweep):
    for name, run in sweep.items():
        assert run["status"] == 0, (name, (run["traceback"] or "")[-2000:])


def test_every_call_site_a_fix_names_is_in_the_program_at_its_line(sweep):
    checked = 0
    for name, run in sweep.items():
        lines = (PROGRAMS_DIR / name).read_text().splitlines()
        for stop in run["stops"]:
            site = (stop.get("advice") or {}).get("call_site")
            if site is None:
                continue
            assert Path(site["filename"]).name == name
            assert site["text"] in "\n".join(lines[site["lineno"] - 1:]), (name, site)
            checked += 1
    assert checked >= 8


def test_printed_guard_filters_remove_the_recompile_they_were_printed_for(applied):
    drops = [j for j in applied if j["choice"] == "drop"]
    assert len(drops) >= 4, [j["name"] for j in drops]
    for job in drops:
        base = _baseline(applied, job["name"])
        # a dropped value guard may change results (the program's own asserts then fail): only where it warned so
        assert job["error"] is None or job["warned"], (job["name"], job["error"], job["source"][-1500:])
        assert job["graphs"] < base["graphs"], (job["name"], job["fix"], job["graphs"], base["graphs"])
    assert any(j["error"] is None for j in drops)


def test_recompile_limit_on_the_users_call_compiles_less_and_changes_no_output(applied):
    skips = [j for j in applied if j["choice"] == "skip" and j["fix"]["kind"] == "replace"]
    assert skips
    for job in skips:
        base = _baseline(applied, job["name"])
        assert "recompile_limit=" in job["fix"]["new"]
        assert job["error"] is None, (job["name"], job["error"])
        assert job["graphs"] < base["graphs"], (job["name"], job["graphs"], base["graphs"])
        assert job["stdout"] == base["stdout"], job["name"]


def test_eager_on_recompile_from_the_start_compiles_nothing(applied):
    stances = [j for j in applied if j["fix"]["kind"] == "prepend"]
    assert stances
    for job in stances:
        base = _baseline(applied, job["name"])
        # nothing compiles from the start, and the program runs as plain Python (its output may differ only where
        # it reports on compiling itself, e.g. a recompile limit it expects to hit)
        assert job["error"] is None, (job["name"], job["error"])
        assert job["graphs"] == 0 and job["frames"] == 0, job["name"]
        assert base["graphs"] > 0, job["name"]


def test_mark_dynamic_and_mark_unbacked_lines_remove_the_recompile(applied):
    marks = [j for j in applied if j["fix"]["kind"] == "mark"]
    assert {j["name"] for j in marks} >= {KINDS["size_one"]}
    for job in marks:
        base = _baseline(applied, job["name"])
        assert job["error"] is None, (job["name"], job["error"])
        assert job["graphs"] < base["graphs"], (job["name"], job["fix"]["call"], job["graphs"], base["graphs"])


# --------------------------------------------------------------------------------------------------------------
# each kind of program
# --------------------------------------------------------------------------------------------------------------




def test_builtin_function_argument_filter_names_builtin_match(sweep):
    (stop,) = _recompile_stops(sweep, "builtin")
    drop = _choice(stop, "drop")
    # the type torch's own filter entries give it (the tree's leaf is an ID_MATCH on every torch)
    kind = builtin_filter_type()
    assert stop["advice"]["drop"]["ok"] and stop["advice"]["drop"]["dropped"] == [f"op {kind}"]
    assert f'e.guard_type == "{kind}"' in drop["permanent"]
    if kind != "ID_MATCH":
        assert "ID_MATCH" not in drop["permanent"]
    assert drop["permanent"].startswith('torch.compile(apply, backend="eager", options={"guard_filter_fn": ')


def test_tensor_subclass_metadata_filter_names_its_own_entry_type(sweep):
    (stop,) = _recompile_stops(sweep, "subclass")
    drop = _choice(stop, "drop")
    assert 'e.guard_type == "TENSOR_SUBCLASS_METADATA_MATCH"' in drop["permanent"]
    assert "LAMBDA_GUARD" not in drop["permanent"]


def test_a_dynamic_marking_guard_gets_no_filter_and_says_why(sweep):
    (stop,) = _recompile_stops(sweep, "marking")
    drop = _choice(stop, "drop")
    assert not drop["available"] and drop["permanent"] is None
    assert "DIMENSION_DYNAMIC_MARKING_GUARD" in drop["why_not"] and "x TENSOR_MATCH" in drop["why_not"]
    assert [w["kind"] for w in stop["advice"]["drop"]["why_not"]] == ["shared entry"]


def test_size_one_dimension_gets_mark_unbacked_with_the_warning(sweep):
    stops = _recompile_stops(sweep, "size_one")
    first = stops[0]                                     # 4 -> 1
    (dynamic,) = [c for c in first["choices"] if c["kind"] == "dynamic" and c["decision"] == "dynamic x 0"]
    assert dynamic["permanent"].startswith("torch._dynamo.decorators.mark_unbacked(x, 0)")
    assert any("torch specialises sizes 0 and 1" in w for w in dynamic["warnings"])
    assert "mark_dynamic" not in dynamic["permanent"]


def test_compiled_optimizer_step_fix_goes_on_the_users_call(sweep):
    stops = _recompile_stops(sweep, "optimizer")
    assert stops
    for stop in stops:
        site = stop["advice"]["call_site"]
        assert site["text"] == 'torch.compile(opt.step, backend="eager")' and site["target"] == "method SGD.step"


def test_resume_function_fix_goes_on_the_outer_functions_call(sweep):
    (stop,) = _recompile_stops(sweep, "resume")
    assert stop["code"].startswith("torch_dynamo_resume_in_pipeline")
    assert stop["advice"]["call_site"]["text"] == 'torch.compile(pipeline, backend="eager", dynamic=False)'


def test_module_compile_fix_goes_on_layer_compile(sweep):
    (stop,) = _recompile_stops(sweep, "module_compile")
    site = stop["advice"]["call_site"]
    assert site["kind"] == "Module.compile" and site["text"] == 'layer.compile(backend="eager")'
    assert _choice(stop, "drop")["permanent"].startswith('layer.compile(backend="eager", options={"guard_filter_fn"')


def test_graph_break_in_a_try_block_stops_with_what_dynamo_did(sweep):
    breaks = [s for s in sweep[KINDS["try"]]["stops"] if s["kind"] == "graph-break"]
    (stop,) = breaks
    text = stop["detail"]["graph break"]
    assert "guarded" in stop["message"] and "falls back to eager" in stop["message"]
    assert "what Dynamo did instead" in text and "try_graph_break.py:11" in text


def test_fullgraph_skip_offers_no_recompile_limit_that_would_raise(sweep):
    for stop in _recompile_stops(sweep, "fullgraph"):
        skip = _choice(stop, "skip")
        assert "recompile_limit" not in (skip["permanent"] or ""), skip["permanent"]
        assert "eager_on_recompile" in skip["permanent"]
