"""Instruction edits (issue 5) on real eager compiles: install at the compile stop and at later stops, undo,
rejection of every kind of invalid edit, patch files (save, load, --patch), the preview API, and `set` on a
tensor local."""

from __future__ import annotations

import dis
import json
import os
import sys
import textwrap
from typing import Any, Callable

import pytest
import torch

from dynadbg.core import edits as E
from dynadbg.core import guards as G
from dynadbg.core import model as M
from dynadbg.core import patchfile as PF
from dynadbg.core.format.edits import format_stack
from dynadbg.core.commands import CommandLine
from dynadbg.core.session import Session
from helpers import QueueListener
from forkrun import python


# ------------------------------------------------------------------------------------------------------------
# programs and a driver that answers each stop by looking at it
# ------------------------------------------------------------------------------------------------------------


def double_sum(x):
    return (x * 2).sum()


def other_fn(x):
    return x - 1


def run_double_sum(results, calls=3):
    cf = torch.compile(double_sum, backend="eager")
    for _ in range(calls):
        results.append(float(cf(torch.ones(3))))


def with_handler(x, fail):
    y = x + 1
    try:
        if fail:
            raise ValueError("boom")
    except ValueError:
        y = y * 10
    return y.sum()


def run_with_handler(results):
    cf = torch.compile(with_handler, backend="eager")
    results.append(float(cf(torch.ones(2), False)))
    results.append(float(cf(torch.ones(2), True)))


def drive_with(start: Callable[[Session], None], respond: Callable[[Any, Callable[[str], Any], int], Any],
               break_on=("entry",)):
    """Run a program; `respond(stop, execute, n)` answers stop n and returns the last CommandResult (the program
    is detached when that did not resume it). Returns (stops, exit result, session, messages, outputs)."""
    listener = QueueListener()
    session = Session(listener, break_on=break_on)
    commands = CommandLine(session)
    outputs: list[tuple[str, Any]] = []

    def execute(line: str) -> Any:
        res = commands.execute(line)
        outputs.append((line, res))
        return res

    start(session)
    stops = []
    while True:
        kind, payload = listener.events.get(timeout=180)
        if kind == "exit":
            return stops, payload, session, listener.messages, outputs
        stops.append(payload)
        last = respond(payload, execute, len(stops) - 1)
        if last is None or not (last.resumed or last.quit):
            session.detach()


def final_return_row(stop) -> int:
    rows = stop.frame.code.instructions
    return max(r.index for r in rows if r.opname == "RETURN_VALUE")


RET7 = "POP_TOP; LOAD_CONST 7"


# ------------------------------------------------------------------------------------------------------------
# installing
# ------------------------------------------------------------------------------------------------------------


def test_insert_at_compile_stop_runs_in_this_call_and_the_next():
    results: list[float] = []
    said: dict[str, Any] = {}

    def respond(stop, ex, n):
        if n == 0:
            assert stop.kind.value == "compile"
            res = ex(f"insert {final_return_row(stop)} {RET7}")
            assert res.error is None, res.error
            said["insert"] = res
        return ex("c")

    stops, result, session, messages, outputs = drive_with(
        lambda s: s.start_callable(run_double_sum, results), respond, ("compile",))
    assert result.status == 0
    assert results == [7.0, 7.0, 7.0]
    assert "this call runs it" in said["insert"].output
    outcome = said["insert"].data
    assert isinstance(outcome, M.EditOutcome) and outcome.diff.added == 2 and outcome.diff.removed == 0
    # the compile stop's snapshot was rebuilt with the edited listing
    assert len(stops) == 1


def test_compile_stop_snapshot_shows_the_edit():
    results: list[float] = []
    seen = {}

    def respond(stop, ex, n):
        ex(f"insert {final_return_row(stop)} {RET7}")
        seen["ll"] = ex("ll").output
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results, 1), respond, ("compile",))
    rows = [line for line in seen["ll"].strip().splitlines() if not line.startswith("      -- ")]  # no headers
    tail = rows[-3:]
    assert "POP_TOP" in tail[0] and "LOAD_CONST" in tail[1] and "7" in tail[1] and "RETURN_VALUE" in tail[2]


def test_same_edit_at_a_later_stop_runs_from_the_next_call():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["insert"] = ex(f"insert {final_return_row(stop)} {RET7}")
        return ex("c")

    stops, result, *_ = drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("entry",))
    assert said["insert"].error is None, said["insert"].error
    assert "from the next call" in said["insert"].output
    assert results == [6.0, 7.0, 7.0]
    # the second call entered the edited code object (a new generated code: another entry stop)
    assert stops[1].frame.code.key != stops[0].frame.code.key
    assert stops[1].frame.code.key == id(said["insert"].data.code)   # the outcome's code is what runs
    assert [i.opname for i in stops[1].frame.code.instructions][-3:] == ["POP_TOP", "LOAD_CONST", "RETURN_VALUE"]


def test_patch_undo_at_a_later_stop_restores_dynamo_code():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:  # the second call runs the edit
            said["undo"] = ex("patch undo")
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("entry",))
    assert said["undo"].error is None and "restored" in said["undo"].output
    assert results == [6.0, 7.0, 6.0]


def test_patch_undo_all_at_a_later_stop_restores_dynamo_code():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:  # the second call runs the edit; no compile of the patched code is at this stop
            said["undo"] = ex("patch undo all")
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("entry",))
    assert said["undo"].error is None, said["undo"].error
    assert "restored for double_sum" in said["undo"].output
    assert results == [6.0, 7.0, 6.0]


def test_patch_undo_of_a_compile_stop_edit_later_and_at_the_stop():
    results: list[float] = []

    def respond(stop, ex, n):
        if stop.kind.value == "compile":
            ex(f"insert {final_return_row(stop)} {RET7}")
        elif n == 1:  # first call, running the edited code the cache entry holds
            assert ex("patch undo").error is None
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("compile", "entry"))
    assert results == [7.0, 6.0, 6.0]

    torch._dynamo.reset()
    results.clear()

    def respond_at_stop(stop, ex, n):
        ex(f"insert {final_return_row(stop)} {RET7}")
        res = ex("patch undo")
        assert res.error is None and "restored" in res.output
        assert "no change" in ex("patch show").output
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond_at_stop, ("compile",))
    assert results == [6.0, 6.0, 6.0]


def test_edits_accumulate_and_rows_refer_to_the_edited_listing():
    results: list[float] = []

    def respond(stop, ex, n):
        row = final_return_row(stop)
        # returning 5 with Dynamo's value left below it is refused (a return takes only its own value) ...
        assert ex(f"insert {row} LOAD_CONST 5").error.startswith("rejected (values left on the stack)")
        assert ex(f"insert {row} POP_TOP; LOAD_CONST 5").error is None   # ... popping Dynamo's value first is fine
        assert ex(f"edit {row + 1} LOAD_CONST 8").error is None       # the LOAD_CONST 5 row, now 8
        listing = ex("patch show").data
        assert isinstance(listing, M.PatchDiff) and listing.added == 2
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results, 2), respond, ("compile",))
    assert results == [8.0, 8.0]


def test_exception_table_code_round_trips_and_still_handles_exceptions():
    expected: list[float] = []
    run_with_handler(expected)
    torch._dynamo.reset()
    results: list[float] = []
    problems = []

    def respond(stop, ex, n):
        code_rows = stop.frame.code.instructions
        res = ex(f"insert {len(code_rows) - 1} NOP")
        if res.error:
            problems.append(res.error)
        return ex("c")

    drive_with(lambda s: s.start_callable(run_with_handler, results), respond, ("compile",))
    assert not problems
    assert results == expected == [4.0, 40.0]


def test_dynamo_code_passes_the_validator():
    codes = []
    import torch._dynamo.convert_frame as cf

    handle = cf.register_bytecode_hook(lambda orig, new: codes.append(new))
    try:
        run_with_handler([])
        from programs import simple

        simple.run_graph_break([])
        simple.run_with_block([])
    finally:
        handle.remove()
    assert len(codes) >= 4
    for code in codes:
        analysis = E.analyze_stack(code)
        assert analysis.ok, (code.co_name, analysis.problems)
        assert analysis.max_depth <= code.co_stacksize


# ------------------------------------------------------------------------------------------------------------
# invalid edits: rejected with the reason, nothing installed
# ------------------------------------------------------------------------------------------------------------

INVALID = [
    ("insert 1 POP_TOP", "stack underflow"),
    ("insert 1 BINARY_OP +", "stack underflow"),
    ("edit 3 NOT_AN_OPCODE", "unknown opcode"),
    ("insert 1 CACHE", "unknown opcode"),
    ("insert 1 LOAD_FAST no_such_local", "bad argument"),
    ("insert 1 LOAD_CONST ]", "bad argument"),
    ("insert 1 POP_TOP 3", "bad argument"),
    ("insert 1 LOAD_CONST", "bad argument"),
    ("insert {ret} LOAD_CONST 7", "values left on the stack"),
    ("insert {ret} JUMP_FORWARD 999", "jump to nowhere"),
    ("insert {ret} JUMP_FORWARD 1", "jump to nowhere"),
    ("insert 1 LOAD_DEREF not_a_cell", "changed argument layout"),
    ("delete 0", "changed argument layout"),
    ("insert 0 NOP", "changed argument layout"),
    ("insert 9999 NOP", "index"),
    ("delete x", "syntax"),
]


@pytest.mark.parametrize("break_on", [("compile",), ("entry",)])
def test_each_invalid_edit_is_rejected_and_nothing_is_installed(break_on):
    results: list[float] = []
    errors: dict[str, str | None] = {}

    def respond(stop, ex, n):
        if n == 0:
            ret = final_return_row(stop)
            for command, _kind in INVALID:
                res = ex(command.format(ret=ret))
                errors[command] = res.error
            errors["show"] = ex("patch show").output
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, break_on)
    for command, kind in INVALID:
        assert errors[command] is not None, command
        assert errors[command].startswith(f"rejected ({kind})"), (command, errors[command])
        assert "\n" not in errors[command]
    assert "no change" in errors["show"]
    assert results == [6.0, 6.0, 6.0]


def test_stack_depth_mismatch_is_found():
    # a conditional jump that skips a push: the join sees two depths
    src = textwrap.dedent("""
        def g(a):
            return a
    """)
    ns: dict[str, Any] = {}
    exec(src, ns)
    g = ns["g"].__code__
    rows = list(dis.get_instructions(g))
    ret = max(k for k, r in enumerate(rows) if r.opname == "RETURN_VALUE")
    op = E.parse_edit("insert", f"{ret} LOAD_CONST 1; POP_JUMP_FORWARD_IF_TRUE {ret}; LOAD_CONST 2") \
        if sys.version_info[:2] == (3, 11) else E.parse_edit("insert", f"{ret} LOAD_CONST 1; POP_JUMP_IF_TRUE {ret}; LOAD_CONST 2")
    new = E.apply_edit(g, op)
    assert not isinstance(new, M.EditError), new
    problem = E.validate(g, new)
    assert problem is not None and problem.kind == "stack depth mismatch", problem


# ------------------------------------------------------------------------------------------------------------
# the API a front end's edit dialog uses
# ------------------------------------------------------------------------------------------------------------


def _dynamo_code_of_double_sum():
    codes = []
    import torch._dynamo.convert_frame as cf

    handle = cf.register_bytecode_hook(lambda orig, new: codes.append(new))
    try:
        run_double_sum([], 1)
    finally:
        handle.remove()
    return codes[0]


def test_preview_gives_stack_depths_and_diff_without_installing():
    code = _dynamo_code_of_double_sum()
    rows = list(dis.get_instructions(code))
    ret = len(rows) - 1
    good = E.preview_edit(code, [], E.parse_edit("insert", f"{ret} {RET7}"))
    assert good.ok and good.code is not None
    assert good.diff.added == 2 and [line.tag for line in good.diff.lines].count("+") == 2
    depth_rows = {r.index: r for r in good.analysis.rows}
    assert depth_rows[ret].opname == "POP_TOP" and depth_rows[ret].depth == 1 and depth_rows[ret].effect == -1
    assert depth_rows[ret + 1].depth == 0 and depth_rows[ret + 2].depth == 1
    bad = E.preview_edit(code, [], E.parse_edit("insert", "1 BINARY_OP +"))
    assert not bad.ok and bad.error.kind == "stack underflow" and bad.error.index == 1
    assert bad.analysis is not None and bad.analysis.rows[1].needs == 2 and bad.analysis.rows[1].depth == 0
    assert "BINARY_OP" in format_stack(bad.analysis, rows=[1])


def test_parse_edit_and_op_text():
    op = E.parse_edit("insert", "12 POP_TOP; LOAD_CONST 'a;b'; LOAD_GLOBAL NULL + print")
    assert op == M.EditOp("insert", 12, (M.NewInstr("POP_TOP"), M.NewInstr("LOAD_CONST", "'a;b'"),
                                         M.NewInstr("LOAD_GLOBAL", "NULL + print")))
    assert op.text == "insert 12 POP_TOP; LOAD_CONST 'a;b'; LOAD_GLOBAL NULL + print"
    assert E.parse_edit("edit", "3 load_fast x") == M.EditOp("edit", 3, (M.NewInstr("LOAD_FAST", "x"),))
    assert E.parse_edit("delete", "4") == M.EditOp("delete", 4)
    assert isinstance(E.parse_edit("edit", "3 NOP; NOP"), M.EditError)
    assert isinstance(E.parse_edit("insert", "3"), M.EditError)
    from dynadbg.cli import split_commands

    assert split_commands("insert 9 POP_TOP; LOAD_CONST 7; c") == ["insert 9 POP_TOP; LOAD_CONST 7", "c"]


def test_fingerprint_ignores_per_run_names():
    a = _dynamo_code_of_double_sum()
    torch._dynamo.reset()
    b = _dynamo_code_of_double_sum()
    names = [n for n in a.co_names if n.startswith("__compiled_fn")]
    assert names and names != [n for n in b.co_names if n.startswith("__compiled_fn")]
    assert E.fingerprint(a) == E.fingerprint(b)
    assert E.fingerprint(a) != E.fingerprint(E.apply_edit(a, E.parse_edit("insert", "1 NOP")))


# ------------------------------------------------------------------------------------------------------------
# patch files
# ------------------------------------------------------------------------------------------------------------


def _save_patch(tmp_path) -> str:
    path = str(tmp_path / "ret7.json")

    def respond(stop, ex, n):
        assert ex(f"insert {final_return_row(stop)} {RET7}").error is None
        res = ex(f"patch save {path}")
        assert res.error is None and "saved 1" in res.output
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, [], 1), respond, ("compile",))
    torch._dynamo.reset()
    return path


def test_patch_file_round_trips_into_a_fresh_run(tmp_path):
    path = _save_patch(tmp_path)
    doc = json.loads(open(path).read())
    assert doc["format"] == "dynadbg-patch" and doc["version"] == PF.PATCH_FILE_VERSION == 2
    (item,) = doc["patches"]
    assert item["name"] == "double_sum" and item["firstlineno"] == double_sum.__code__.co_firstlineno
    specs = PF.read_patch_file(path)
    assert not isinstance(specs, M.EditError)
    assert specs[0].ops[0].text.endswith(RET7)
    # a fresh run with the file loaded before the program starts (what `run --patch FILE` does)
    results: list[float] = []

    def start(s):
        s.patch_manager.add_pending(specs)
        s.start_callable(run_double_sum, results)

    stops, result, session, messages, _ = drive_with(start, lambda stop, ex, n: ex("c"), ())
    assert results == [7.0, 7.0, 7.0]
    assert any("patch applied to double_sum" in m for m in messages), messages
    # saving again gives the same patch
    again = tmp_path / "again.json"
    assert [v.key for v in session.patch_manager.patches()] == [specs[0].key]
    again.write_text(json.dumps(PF.patch_file_json([(specs[0].key, specs[0].ops)])))
    assert PF.read_patch_file(str(again))[0] == M.PatchSpec(specs[0].key, specs[0].ops, specs[0].torch_version,
                                                          specs[0].python_version)


def test_patch_load_at_a_stop_and_its_rejections(tmp_path):
    path = _save_patch(tmp_path)
    malformed = tmp_path / "bad.json"
    malformed.write_text("{not json")
    wrong_shape = tmp_path / "shape.json"
    wrong_shape.write_text(json.dumps({"format": "dynadbg-patch", "version": 1, "patches": [{"name": "f"}]}))
    other = tmp_path / "other.json"
    doc = json.loads(open(path).read())
    doc["patches"][0]["name"] = "other_fn"
    other.write_text(json.dumps(doc))
    changed = tmp_path / "changed.json"
    doc = json.loads(open(path).read())
    doc["patches"][0]["fingerprint"] = "0" * 64
    changed.write_text(json.dumps(doc))
    results: list[float] = []
    said: dict[str, Any] = {}

    def respond(stop, ex, n):
        if n == 0:
            for name in ("bad", "shape", "other", "changed", "missing"):
                said[name] = ex(f"patch load {tmp_path / (name + '.json')}")
            said["show"] = ex("patch show")
            said["good"] = ex(f"patch load {path}")
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("compile",))
    assert said["bad"].error.startswith("rejected (patch file)") and "not valid JSON" in said["bad"].error
    assert said["shape"].error.startswith("rejected (patch file)")
    assert said["missing"].error.startswith("rejected (patch file)") and "cannot read" in said["missing"].error
    assert said["other"].error.startswith("rejected (no match)") and "other_fn" in said["other"].error
    assert said["changed"].error.startswith("rejected (no match)") and "Dynamo's code differs" in said["changed"].error
    for name in ("bad", "shape", "other", "changed", "missing"):
        assert "\n" not in said[name].error
    assert "no change" in said["show"].output        # nothing was installed by the rejected loads
    assert said["good"].error is None and "this call runs it" in said["good"].output
    assert results == [7.0, 7.0, 7.0]


def test_a_patch_that_no_longer_matches_says_so(tmp_path):
    path = _save_patch(tmp_path)
    doc = json.loads(open(path).read())
    doc["patches"][0]["fingerprint"] = "ab" * 32
    doc["torch"] = "2.99.0"
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(doc))
    specs = PF.read_patch_file(str(stale))
    results: list[float] = []

    def start(s):
        s.patch_manager.add_pending(specs)
        s.start_callable(run_double_sum, results)

    _stops, _result, _session, messages, _ = drive_with(start, lambda stop, ex, n: ex("c"), ())
    assert results == [6.0, 6.0, 6.0]
    mismatch = [m for m in messages if "does not match Dynamo's code" in m]
    assert len(mismatch) == 1 and "\n" not in mismatch[0] and "double_sum" in mismatch[0]
    assert any("made with torch 2.99.0" in m for m in messages)
    assert any("never applied" in m for m in messages)


SCRIPT = """
import torch

def double_sum(x):
    return (x * 2).sum()

cf = torch.compile(double_sum, backend="eager")
print("results", [float(cf(torch.ones(3))) for _ in range(2)])
"""


@pytest.mark.slow
def test_cli_run_with_patch_file(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    patch_file = tmp_path / "p.json"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    cmd = ["-m", "dynadbg", "run", "--plain", "--break-on", "compile"]
    # make the patch with a scripted run: the -c list keeps `insert ...; LOAD_CONST 7` together
    out = python(cmd + ["-c", "ll", str(script)], env=env, timeout=300)
    rows = [ln for ln in out.stdout.splitlines() if "RETURN_VALUE" in ln]
    ret = int(rows[-1].split()[0].lstrip("▶"))
    made = python(cmd + ["-c", f"insert {ret} POP_TOP; LOAD_CONST 7; patch save {patch_file}; c", str(script)],
                  env=env, timeout=300)
    assert "results [7.0, 7.0]" in made.stdout, made.stdout + made.stderr
    run = python(["-m", "dynadbg", "run", "--plain", "--break-on", "entry", "--patch", str(patch_file), "-c", "c",
                  str(script)], env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "results [7.0, 7.0]" in run.stdout and "patch applied to double_sum" in run.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    rejected = python(["-m", "dynadbg", "run", "--plain", "--patch", str(bad), str(script)], env=env, timeout=300)
    assert rejected.returncode == 2
    assert rejected.stderr.strip().count("\n") == 0 and "rejected (patch file)" in rejected.stderr
    assert "results" not in rejected.stdout


# ------------------------------------------------------------------------------------------------------------
# locals
# ------------------------------------------------------------------------------------------------------------


def test_set_a_tensor_local_at_the_entry_stop_changes_that_call_only():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["set"] = ex("set x = torch.full((3,), 10.0)")
        return ex("c")

    drive_with(lambda s: s.start_callable(run_double_sum, results), respond, ("entry",))
    assert said["set"].error is None and said["set"].output.startswith("x = ")
    assert results == [60.0, 6.0, 6.0]


# ------------------------------------------------------------------------------------------------------------
# edits and guards together
# ------------------------------------------------------------------------------------------------------------


def test_guards_and_guard_add_in_a_frame_running_edited_code():
    """The second call runs the edit from a precompile entry: `guards` shows its tree, and a guard added there
    decides whether the edited code serves later calls."""
    results: list[float] = []
    said = {}

    def run(results):
        cf = torch.compile(double_sum, backend="eager")
        for v in (1.0, 1.0, 1.0, 50.0):
            results.append(float(cf(torch.full((3,), v))))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            said["guards"] = ex("guards")
            said["add"] = ex("guard add float(L['x'].sum()) < 10")
        return ex("c")

    _stops, _result, session, _messages, _ = drive_with(lambda s: s.start_callable(run, results), respond, ("entry",))
    assert said["guards"].error is None and "TENSOR_MATCH" in said["guards"].output
    assert said["add"].error is None, said["add"].error
    assert results == [6.0, 7.0, 7.0, 300.0]   # the 50.0 call fails the added guard: Dynamo's code, recompiled


class _Counted:
    """An eager backend that counts the graphs Dynamo compiles (a recompile is one more)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, gm, example_inputs):
        self.count += 1
        return gm.forward


def _live(fn) -> list[tuple[str, str, Any]]:
    """(kind, made by, hits) of each live entry of `fn`, as `toolkit.entries` lists them."""
    from dynadbg.core import toolkit

    return [(e.kind.value, e.made_by, e.hits) for e in toolkit.entries(fn) if not e.invalidated]


def test_a_leaf_guard_added_in_a_frame_running_the_edit_is_a_leaf_of_the_edits_copy():
    """`edit` at the first stop, `guard add L['x'].dtype == torch.float32` at the next (a frame the edit's copy
    runs): the leaf goes on that copy, `guards` lists it like torch's own, a float32 call is served by the copy and
    a float64 call misses it, misses Dynamo's entry too (its TENSOR_MATCH) and recompiles, with the patch."""
    torch._dynamo.reset()
    graphs, results, seen, said = _Counted(), [], [], {}

    def run(results):
        cf = torch.compile(double_sum, backend=graphs)
        for dt in (torch.float32, torch.float32, torch.float32, torch.float64):
            results.append(float(cf(torch.ones(3, dtype=dt))))
            seen.append(_live(double_sum))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            said["add"] = ex("guard add L['x'].dtype == torch.float32")
            said["guards"] = ex("guards")
        return ex("c")

    try:
        _stops, result, _session, messages, _ = drive_with(lambda s: s.start_callable(run, results), respond)
        assert result.exception is None, result.exception
        add = said["add"]
        assert add.error is None, add.error
        assert "EQUALS_MATCH L['x'].dtype == torch.float32" in add.output and "instruction edit's copy" in add.output
        (leaf,) = [lf for lf in G.iter_leaves(said["guards"].data) if lf.source == "L['x'].dtype"]
        assert (leaf.guard_type, leaf.code[0]) == ("EQUALS_MATCH", "L['x'].dtype == torch.float32")
        # calls 2 and 3 ran the edit (7.0); the float64 call recompiled and the patch re-applied to that compile
        assert results == [6.0, 7.0, 7.0, 7.0]
        assert graphs.count == 2 and any("patch applied to double_sum" in m for m in messages), messages
        # the copy in front served call 3 (the copy with the leaf) and not the float64 call
        precompiled = [[h for k, _who, h in rows if k == "precompile"] for rows in seen]
        assert precompiled[1:] == [[0], [1], [1]], seen
        assert len([r for r in seen[3] if r[0] == "cache"]) == 2
    finally:
        torch._dynamo.reset()


def test_guard_undo_of_a_leaf_on_the_edits_copy_rebuilds_the_copy_without_it():
    torch._dynamo.reset()
    graphs, results, seen, said = _Counted(), [], [], {}

    def run(results):
        cf = torch.compile(double_sum, backend=graphs)
        for dt in (torch.float32, torch.float32, torch.float64):
            results.append(float(cf(torch.ones(3, dtype=dt))))
            seen.append(_live(double_sum))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            said["add"] = ex("guard add L['x'].dtype == torch.float32")
            said["undo"] = ex("guard undo")
            said["guards"] = ex("guards")
            said["list"] = ex("guard")
        return ex("c")

    try:
        _stops, result, *_ = drive_with(lambda s: s.start_callable(run, results), respond)
        assert result.exception is None, result.exception
        assert said["add"].error is None and said["undo"].error is None, said["undo"].error
        assert "swapped for copy" in said["undo"].output and "no guard edits" in said["undo"].output
        assert not [lf for lf in G.iter_leaves(said["guards"].data) if lf.source == "L['x'].dtype"]
        assert said["list"].output.rstrip().endswith("(undone)")
        # the copy still runs the edit, without the leaf; the float64 call still recompiles (Dynamo's TENSOR_MATCH)
        assert results == [6.0, 7.0, 7.0] and graphs.count == 2
    finally:
        torch._dynamo.reset()


def test_patch_undo_after_a_guard_edit_on_the_edits_copy_says_the_guard_went_with_it():
    torch._dynamo.reset()
    graphs, results, said = _Counted(), [], {}

    def run(results):
        cf = torch.compile(double_sum, backend=graphs)
        for dt in (torch.float32, torch.float32, torch.float32, torch.float64):
            results.append(float(cf(torch.ones(3, dtype=dt))))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            said["add"] = ex("guard add L['x'].dtype == torch.float32")
        if n == 2:
            said["undo"] = ex("patch undo")
            said["list"] = ex("guard")
        return ex("c")

    try:
        _stops, result, *_ = drive_with(lambda s: s.start_callable(run, results), respond)
        assert result.exception is None, result.exception
        assert said["add"].error is None, said["add"].error
        undo = said["undo"]
        assert undo.error is None and undo.data.guard_edits_gone == (1,), undo.data
        assert "guard edit 1, made on the edit's copy, went with it" in undo.output, undo.output
        assert said["list"].output.rstrip().endswith("(undone)")
        # from the next call Dynamo's own code runs; the float64 call recompiles it, with no patch and no guard
        assert results == [6.0, 7.0, 7.0, 6.0] and graphs.count == 2
    finally:
        torch._dynamo.reset()


def test_a_later_edit_carries_the_guard_edit_to_its_new_copy_and_patch_save_writes_it(tmp_path):
    torch._dynamo.reset()
    graphs, results, said = _Counted(), [], {}
    path = tmp_path / "p.json"

    def run(results):
        cf = torch.compile(double_sum, backend=graphs)
        for _ in range(4):
            results.append(float(cf(torch.ones(3))))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            said["add"] = ex("guard add L['x'].dtype == torch.float32")
        if n == 2:
            said["edit"] = ex(f"insert {final_return_row(stop)} POP_TOP; LOAD_CONST 8")
        if n == 3:
            said["guards"] = ex("guards")
            said["save"] = ex(f"patch save {path}")
        return ex("c")

    try:
        _stops, result, *_ = drive_with(lambda s: s.start_callable(run, results), respond)
        assert result.exception is None, result.exception
        assert said["add"].error is None and said["edit"].error is None, said["edit"].error
        assert results == [6.0, 7.0, 7.0, 8.0] and graphs.count == 1
        assert [lf.code[0] for lf in G.iter_leaves(said["guards"].data) if lf.source == "L['x'].dtype"] == [
            "L['x'].dtype == torch.float32"]
        assert said["save"].error is None
        (saved,) = json.loads(path.read_text())["patches"]
        assert saved["guards"] == [{"op": "add", "source": "L['x'].dtype", "guard_type": "EQUALS_MATCH"}]
    finally:
        torch._dynamo.reset()


class _Scale:
    def __init__(self, scale):
        self.scale = scale


class _OtherScale(_Scale):
    pass


def scaled_sum(x, cfg):
    return (x * cfg.scale).sum()


def test_guard_drop_in_a_frame_running_the_edit_drops_it_from_the_edits_copy():
    """`guard drop` of the TYPE_MATCH on L['cfg'] in a frame the edit's copy runs: the copy without it serves a
    call with another type (no recompile, the edit runs); `guards` no longer lists it."""
    torch._dynamo.reset()
    graphs, results, seen, said = _Counted(), [], [], {}

    def run(results):
        cf = torch.compile(scaled_sum, backend=graphs)
        for cfg in (_Scale(2.0), _Scale(2.0), _OtherScale(2.0)):
            results.append(float(cf(torch.ones(3), cfg)))
            seen.append(_live(scaled_sum))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:
            (leaf,) = [lf for lf in G.iter_leaves(ex("guards").data)
                       if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH"]
            said["drop"] = ex(f"guard drop {leaf.id}")
            said["guards"] = ex("guards")
        return ex("c")

    try:
        _stops, result, *_ = drive_with(lambda s: s.start_callable(run, results), respond)
        assert result.exception is None, result.exception
        drop = said["drop"]
        assert drop.error is None and "instruction edit's copy" in drop.output, drop.output
        left = [(lf.source, lf.guard_type) for lf in G.iter_leaves(said["guards"].data)]
        assert ("L['cfg']", "TYPE_MATCH") not in left and ("L['cfg'].scale", "EQUALS_MATCH") in left
        assert results == [6.0, 7.0, 7.0] and graphs.count == 1
        assert [h for k, _w, h in seen[2] if k == "precompile"] == [1]
    finally:
        torch._dynamo.reset()


def test_a_guard_drop_recompile_keeps_the_instruction_edit():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
            from dynadbg.core import guards as G

            leaf = next(lf for lf in G.iter_leaves(ex("guards").data) if lf.source == "L['x']")
            said["drop"] = ex(f"guard drop {leaf.id}")
        return ex("c")

    _stops, _result, _session, messages, _ = drive_with(lambda s: s.start_callable(run_double_sum, results),
                                                        respond, ("entry",))
    assert said["drop"].error is None
    assert results == [6.0, 7.0, 7.0]
    assert any("patch applied to double_sum" in m for m in messages), messages


# ------------------------------------------------------------------------------------------------------------
# one install path: an edit at a later stop is a dynadbg.toolkit copy
# ------------------------------------------------------------------------------------------------------------


def test_an_edit_at_a_later_stop_is_a_toolkit_copy_that_counts_its_calls():
    from dynadbg.core import compat, toolkit

    results: list[float] = []
    seen: list[list[tuple[str, str, Any]]] = []

    def run(results):
        cf = torch.compile(double_sum, backend="eager")
        for _ in range(3):
            results.append(float(cf(torch.ones(3))))
            seen.append([(e.kind.value, e.made_by, e.hits) for e in toolkit.entries(double_sum)
                         if not e.invalidated])

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        return ex("c")

    _stops, result, *_ = drive_with(lambda s: s.start_callable(run, results), respond, ("entry",))
    assert result.exception is None, result.exception
    assert results == [6.0, 7.0, 7.0]
    # the copy is tried before Dynamo's entry, and its hit count rises with each call it serves
    precompile = [[row for row in rows if row[0] == "precompile"] for rows in seen]
    assert [[(k, who) for k, who, _h in rows] for rows in precompile] == [[("precompile", "toolkit")]] * 3
    assert [rows[0][2] for rows in precompile] == [0, 1, 2]
    assert all(("cache", "dynamo", None) in rows for rows in seen)
    # the session's end takes the copy out
    assert compat.precompile_entries(double_sum.__code__) == []
    assert not [h for h in toolkit.installed() if h.record.original is double_sum.__code__]


def test_patch_undo_at_a_later_stop_leaves_torchs_cache_as_it_was():
    from dynadbg.core import compat, toolkit

    results: list[float] = []
    state: dict[str, Any] = {}

    def torch_state(results):
        code = double_sum.__code__
        return ([id(e.guard_manager) for e in compat.cache_entries(code)],
                [id(e.guard_manager) for e in compat.precompile_entries(code)],
                [h.compile_id for h in toolkit.installed() if h.record.original is code])

    def run(results):
        cf = torch.compile(double_sum, backend="eager")
        results.append(float(cf(torch.ones(3))))
        state["after the first call"] = torch_state(results)
        results.append(float(cf(torch.ones(3))))
        state["after the undo"] = torch_state(results)
        results.append(float(cf(torch.ones(3))))

    def respond(stop, ex, n):
        if n == 0:
            ex(f"insert {final_return_row(stop)} {RET7}")
        if n == 1:   # the second call runs the copy
            state["undo"] = ex("patch undo")
        return ex("c")

    drive_with(lambda s: s.start_callable(run, results), respond, ("entry",))
    assert state["undo"].error is None, state["undo"].error
    assert results == [6.0, 7.0, 6.0]
    entries, pre, copies = state["after the first call"]
    assert len(entries) == 1 and len(pre) == 1 and len(copies) == 1
    assert state["after the undo"] == (entries, [], [])
