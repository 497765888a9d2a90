"""Guard edits (issue 5) on real eager compiles: `guard add` (one recompile when a later call fails it; rejected
expressions), `guard drop` on the nn.Module int counter of tests/programs/module_int_counter.py (recompiles stop,
with the warning), `guard export` pasted into a copy of the program (same recompile count), `guard undo`, teardown."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
import torch

from dynadbg.core import compat
from dynadbg.core import guards as G
from dynadbg.core.commands import CommandLine
from dynadbg.core.session import Session
from helpers import QueueListener

#: the project's own program of public case 002 (an nn.Module int counter recompiles on every call): 4 calls
COUNTER = Path(__file__).resolve().parents[1] / "programs" / "module_int_counter.py"


def drive_with(start: Callable[[Session], None], respond: Callable[[Any, Callable[[str], Any], int], Any],
               break_on=("entry",)):
    """Run a program; `respond(stop, execute, n)` answers stop n and returns the last CommandResult (the program
    is detached when that did not resume it). Returns (stops, exit result, session, messages)."""
    listener = QueueListener()
    session = Session(listener, break_on=break_on)
    commands = CommandLine(session)
    start(session)
    stops = []
    while True:
        kind, payload = listener.events.get(timeout=180)
        if kind == "exit":
            return stops, payload, session, listener.messages
        stops.append(payload)
        last = respond(payload, commands.execute, len(stops) - 1)
        if last is None or not (last.resumed or last.quit):
            session.detach()


def frame_of(session: Session, name: str) -> Any:
    """The first code object named `name` that Dynamo compiled in the session."""
    return next(f for f in session.compiled_frames() if f.name == name)


def entries_of(session: Session, name: str) -> list[Any]:
    """Every cache entry the session saw for it (teardown resets edited code objects: they show as dropped)."""
    return list(frame_of(session, name).entries)


@pytest.fixture
def dynamo_config():
    """Put back the Dynamo config flag a guard edit test may switch."""
    saved = torch._dynamo.config.allow_unspec_int_on_nn_module
    yield
    torch._dynamo.config.allow_unspec_int_on_nn_module = saved


# ------------------------------------------------------------------------------------------------------------
# guard add
# ------------------------------------------------------------------------------------------------------------


def scaled(x):
    return x * 3


def run_scaled(results, values=(1.0, 1.0, 50.0, 50.0, 1.0)):
    cf = torch.compile(scaled, backend="eager")
    for v in values:
        results.append(float(cf(torch.full((3,), v)).sum()))


def test_guard_add_recompiles_exactly_once_when_a_later_call_fails_it():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex("guard add float(L['x'].sum()) < 10")
            said["list"] = ex("guard")
        return ex("c")

    _stops, result, session, _ = drive_with(lambda s: s.start_callable(run_scaled, results), respond, ("entry",))
    assert said["add"].error is None and "from the next call" in said["add"].output
    assert "1. add  scaled 0/0: float(L['x'].sum()) < 10" in said["list"].output
    assert results == [9.0, 9.0, 450.0, 450.0, 9.0]
    entries = entries_of(session, "scaled")
    assert len(entries) == 2                      # 0/0, and 0/1 after the third call failed the added guard
    (recompile,) = frame_of(session, "scaled").recompiles
    assert "DEBUGGER: float(x.sum()) < 10" in recompile.reasons[0]   # torch shortens L['x'] to x


def test_guard_add_at_the_compile_stop_applies_from_the_next_call():
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex("guard add float(L['x'].sum()) < 10")
            said["guards"] = ex("guards").output
        return ex("c")

    _stops, _result, session, _ = drive_with(lambda s: s.start_callable(run_scaled, results), respond, ("compile",))
    assert said["add"].error is None, said["add"].error
    assert "DEBUGGER: float(L['x'].sum()) < 10" in said["guards"]
    assert len(entries_of(session, "scaled")) == 2
    # the entry built with the guard was invalidated at the session's end: no live entry has it
    from dynadbg.core import toolkit

    live = [e for e in toolkit.entries(scaled) if not e.invalidated]
    assert live and not [lf for e in live for lf in _debugger_leaves(e.guards)]


@pytest.mark.parametrize("expr, why", [
    ("float(L['x'].sum()) <", "syntax error"),
    ("x.sum() < 10", "NameError"),
    ("L['nope'] > 1", "KeyError"),
    ("", "usage"),
])
def test_bad_guard_expressions_are_rejected_and_nothing_is_added(expr, why):
    results: list[float] = []
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex(f"guard add {expr}".rstrip())
            said["list"] = ex("guard")
        return ex("c")

    _stops, _result, session, _ = drive_with(lambda s: s.start_callable(run_scaled, results), respond, ("entry",))
    assert said["add"].error is not None and why in said["add"].error and "\n" not in said["add"].error
    assert said["list"].output == "no guard edits"
    assert len(entries_of(session, "scaled")) == 1     # no added guard: the 50.0 calls hit 0/0


def test_guard_undo_of_an_add_takes_its_copy_out():
    from dynadbg.core import toolkit

    graphs, results, said = _Graphs(), [], {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex("guard add float(L['x'].sum()) < 10")
            said["undo"] = ex("guard undo")
            said["list"] = ex("guard")
        return ex("c")

    _stops, _result, session, _ = drive_with(lambda s: s.start_callable(run_scaled_with, graphs, results),
                                             respond, ("entry",))
    assert said["undo"].error is None and "removed" in said["undo"].output
    assert f"copy {said['add'].data.edit.copy_id} is taken out" in said["undo"].output, said["undo"].output
    assert "(undone)" in said["list"].output
    # the 50.0 calls are served by the entry the copy stood in for, back without its guard: no recompile
    assert results == [9.0, 9.0, 450.0, 450.0, 9.0] and graphs.count == 1
    (back,) = [e for e in toolkit.entries(scaled) if not e.invalidated]
    assert back.made_by == "dynamo" and _debugger_leaves(back.guards) == []


def run_scaled_with(backend, results, values=(1.0, 1.0, 50.0, 50.0, 1.0)):
    cf = torch.compile(scaled, backend=backend)
    for v in values:
        results.append(float(cf(torch.full((3,), v)).sum()))


def _debugger_leaves(tree) -> list[Any]:
    """The leaves of a guard tree that `guard add EXPR` made (their code starts with ``DEBUGGER:``)."""
    return [lf for lf in G.iter_leaves(tree) if any(c.startswith("DEBUGGER:") for c in lf.code)]


def test_an_expression_guard_is_a_lambda_leaf_of_a_copy_that_goes_at_the_session_end():
    """`guard add EXPR` in a frame: a copy of the entry with the expression as a lambda guard replaces it (`guards`
    lists the guard in the copy's tree); a call that fails it recompiles; the session's end takes the copy out,
    and later sessions in the same process (with and without a reset of torch's caches) stop and edit as usual."""
    from dynadbg.core import toolkit

    graphs, results, said = _Graphs(), [], {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex("guard add float(L['x'].sum()) < 10")
            said["guards"] = ex("guards").data
            said["entries"] = [(e.made_by, e.invalidated) for e in toolkit.entries(scaled)]
        return ex("c")

    _s, result, session, messages = drive_with(lambda s: s.start_callable(run_scaled_with, graphs, results),
                                               respond, ("entry",))
    add = said["add"]
    assert result.status == 0 and add.error is None, add.error
    copy_id = add.data.edit.copy_id
    assert copy_id is not None and f"on copy {copy_id} of the entry" in add.output, add.output
    (leaf,) = _debugger_leaves(said["guards"])
    assert leaf.guard_type == "LAMBDA_GUARD" and leaf.code[0].startswith("DEBUGGER: float(L['x'].sum()) < 10")
    assert said["entries"] == [("dynamo", True)]          # the entry the copy replaces; the copy waits
    # call 2 ran the copy; call 3 (50.0) failed the expression and Dynamo compiled again; then no more compiles
    assert results == [9.0, 9.0, 450.0, 450.0, 9.0] and graphs.count == 2
    (recompile,) = frame_of(session, "scaled").recompiles
    assert "DEBUGGER: float(x.sum()) < 10" in recompile.reasons[0]
    # the session's end removed the copy: nothing of the guard is left in torch's cache
    assert any("removed 1 cache-entry copy" in m for m in messages), messages
    live = [e for e in toolkit.entries(scaled) if not e.invalidated]
    assert live and {e.made_by for e in live} == {"dynamo"}
    assert not [lf for e in live for lf in _debugger_leaves(e.guards)]

    def again(stop, ex, n):
        if n == 0:
            said["again"] = ex("guard add float(L['x'].sum()) < 100")
            said["again guards"] = ex("guards").data
        return ex("c")

    for reset in (False, True):     # the same process: Dynamo's entries from before, then a fresh cache
        if reset:
            torch._dynamo.reset()
        before, out = graphs.count, []
        _s, result, second, _ = drive_with(lambda s: s.start_callable(run_scaled_with, graphs, out, (1.0, 1.0)),
                                           again, ("entry",))
        assert result.status == 0 and out == [9.0, 9.0]
        assert said["again"].error is None, (reset, said["again"].error)
        assert [lf.code[0].split("  #")[0] for lf in _debugger_leaves(said["again guards"])] == [
            "DEBUGGER: float(L['x'].sum()) < 100"]
        assert graphs.count == before + (1 if reset else 0)    # after the reset it compiles afresh, once
        assert not [e for e in toolkit.entries(scaled) if e.made_by == "toolkit" and not e.invalidated]


# ------------------------------------------------------------------------------------------------------------
# guard drop, export, undo — tests/programs/module_int_counter.py (a module's int counter recompiles on every call)
# ------------------------------------------------------------------------------------------------------------


def _counter_leaf(ex) -> str:
    tree = ex("guards").data
    (leaf,) = [lf for lf in G.iter_leaves(tree) if lf.source == "L['self'].counter"]
    assert leaf.guard_type == "EQUALS_MATCH"
    return leaf.id


def _run_counter(respond, break_on):
    return drive_with(lambda s: s.start_script(str(COUNTER)), respond, break_on)


def test_the_counter_program_recompiles_on_every_call_without_edits(dynamo_config):
    _stops, result, session, _ = _run_counter(lambda stop, ex, n: ex("c"), ())
    assert result.status == 0
    assert len(entries_of(session, "forward")) == 4


def test_guard_drop_of_the_int_counter_stops_the_recompiles_with_a_warning(dynamo_config):
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["drop"] = ex(f"guard drop {_counter_leaf(ex)}")
        return ex("c")

    _stops, result, session, _ = _run_counter(respond, ("entry",))
    drop = said["drop"]
    assert drop.error is None
    assert "WARNING" in drop.output and "constant folding" in drop.output and "silently wrong" in drop.output
    assert drop.data.warning is not None
    entries = entries_of(session, "forward")
    # a copy of 0/0 without the counter guard replaces it (no compile): calls 2..4 run it
    assert len(entries) == 1 and "copy" in drop.output and "no recompile" in drop.output
    assert frame_of(session, "forward").recompiles == ()
    # the counter was baked in (constant folding): the program's own check of its results fails, as warned
    assert result.status == 1 and "AssertionError" in (result.exception or "")


def test_guard_drop_at_the_compile_stop_and_export_pasted_into_the_program(dynamo_config, tmp_path):
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["drop"] = ex(f"guard drop {_counter_leaf(ex)}")
            said["export"] = ex("guard export")
        return ex("c")

    _stops, result, session, _ = _run_counter(respond, ("compile",))
    assert said["drop"].error is None and "in effect from the next call" in said["drop"].output
    debugger_entries = len(entries_of(session, "forward"))
    debugger_recompiles = len(frame_of(session, "forward").recompiles)
    assert (debugger_entries, debugger_recompiles) == (1, 0)
    source = said["export"].output
    assert "def dynadbg_guard_filter(guard_entries):" in source and "L['self'].counter" in source

    # paste the exported filter into a copy of the program and run it without the debugger
    torch._dynamo.reset()
    program = COUNTER.read_text()
    head = program.split("assert m.counter == 4")[0]   # the first half: the module with the counter
    call = 'cm = torch.compile(m, backend="eager")'
    assert call in head
    modified = head.replace(call, source + "\n\n" + call[:-1] + ', options={"guard_filter_fn": dynadbg_guard_filter})')
    copy = tmp_path / "counter_with_filter.py"
    copy.write_text(modified)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(modified, str(copy), "exec"), namespace)
    code = namespace["Stepper"].forward.__code__
    live = torch._dynamo.eval_frame._debug_get_cache_entry_list(code)
    assert len(live) == debugger_entries            # the same recompile count: one entry, no recompile
    assert namespace["m"].counter == 1              # and the same constant-folded counter as in the debugger


def test_guard_undo_of_a_drop_brings_the_recompiles_back(dynamo_config):
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["drop"] = ex(f"guard drop {_counter_leaf(ex)}")
            said["undo"] = ex("guard undo")            # takes the copy without the guard out again
        return ex("c")

    _stops, result, session, _ = _run_counter(respond, ("entry",))
    assert said["undo"].error is None and "comes back" in said["undo"].output
    assert result.status == 0                          # the counter is guarded again: correct results
    assert len(entries_of(session, "forward")) == 4      # 0/0, then one per call again


def test_guard_drop_of_an_unknown_id_is_rejected():
    said = {}

    def respond(stop, ex, n):
        if n == 0:
            said["drop"] = ex("guard drop g999")
            said["export"] = ex("guard export")
        return ex("c")

    drive_with(lambda s: s.start_callable(run_scaled, []), respond, ("entry",))
    assert said["drop"].error is not None and "no guard g999" in said["drop"].error
    assert "nothing to export" in said["export"].output


def run_cfg_twice(results):
    cf = torch.compile(cfg_scaled, backend="eager")
    for cfg in (_Cfg(2.0), _OtherCfg(2.0)):
        results.append(float(cf(torch.ones(3), cfg).sum()))


def test_teardown_restores_the_guard_filter_and_a_second_session_is_clean():
    import torch._dynamo.convert_frame as cf

    torch._dynamo.reset()
    original = cf.CheckFunctionManager
    said = {}

    def drop_guards(stop, ex, n):
        if n == 0:
            leaves = list(G.iter_leaves(ex("guards").data))
            x_type = next(lf for lf in leaves if lf.source == "L['x']" and lf.guard_type == "TENSOR_MATCH")
            said["x"] = ex(f"guard drop {x_type.id}")      # a graph input: the copy would leave it unguarded
            cfg_type = next(lf for lf in leaves if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH")
            said["drop"] = ex(f"guard drop {cfg_type.id}")
        return ex("c")

    first: list[float] = []
    _s, _r, session, _ = drive_with(lambda s: s.start_callable(run_cfg_twice, first), drop_guards, ("entry",))
    assert said["x"].data.error.kind == "rejected"
    assert "reads L['x'] and no guard covers it" in said["x"].error and "nothing changed" in said["x"].error
    assert said["drop"].error is None
    assert cf.CheckFunctionManager is original
    second: list[float] = []
    # the first call gets the original entry back; the second fails its TYPE_MATCH and compiles, unfiltered
    _s, _r, session2, _ = drive_with(lambda s: s.start_callable(run_cfg_twice, second), lambda st, ex, n: ex("c"),
                                     ())
    assert first == second == [6.0, 6.0]
    new = compat.cache_entries(cfg_scaled.__code__)[0]        # the newest: session 2's compile
    tree = G.build_guard_tree(new.guard_manager, str(new.compile_id))
    assert any(lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH" for lf in G.iter_leaves(tree))
    torch._dynamo.reset()


def test_drop_at_a_recompile_stop_and_guard_drop_share_one_guard_filter(dynamo_config):
    """Both drops are rules of the session's one guard filter: one CheckFunctionManager patch, one export that
    lists the recompile stop's drop too, one warning text."""
    from helpers import drive
    from programs import recompiles as progs

    results: list = []
    run = drive(lambda s: s.start_callable(progs.run_counter, results, 2), ["c", "drop", "guard export", "c"],
                break_on=("entry", "recompile"))
    assert run.result is not None and run.result.status == 0
    drop = run.output_of("drop")
    assert drop.error is None and "RESULTS MAY BE WRONG" in drop.output and "constant folding" in drop.output
    export = run.output_of("guard export").output
    assert "DYNADBG_DROPPED_GUARDS" in export and "L['self'].counter" in export, export
    session = run.session
    assert session._guard_dropper.filter is session._guard_filter          # noqa: SLF001 - one service
    assert not session._guard_filter.installed                              # noqa: SLF001 - restored at the end


# ------------------------------------------------------------------------------------------------------------
# real leaf guards through dynadbg.core.toolkit: a copy of the entry replaces it; the session's copies go with it
# ------------------------------------------------------------------------------------------------------------


class _Graphs:
    """An eager backend that counts the FX graphs Dynamo compiles (a recompile adds one)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, gm, example_inputs):
        self.count += 1
        return gm.forward


def moded(x, mode):
    return x * 2          # `mode` is never read: Dynamo emits no guard on it


def run_moded(graphs, seen, modes):
    from dynadbg.core import toolkit

    cf = torch.compile(moded, backend=graphs)
    for m in modes:
        cf(torch.ones(3), m)
        seen.append([(e.made_by, e.hits, e.invalidated) for e in toolkit.entries(moded)])
    return cf


def test_guard_add_of_a_source_is_a_real_leaf_that_a_failing_call_recompiles():
    torch._dynamo.reset()
    graphs, seen, said = _Graphs(), [], {}

    def respond(stop, ex, n):
        if n == 0:
            said["add"] = ex("guard add L['mode']")
            said["guards"] = ex("guards")
            said["tensor"] = ex("guard add L['x'] == 1")
            said["unknown"] = ex("guard add L['nope'] TYPE_MATCH")
            said["list"] = ex("guard")
        return ex("c")

    _s, result, session, messages = drive_with(
        lambda s: s.start_callable(run_moded, graphs, seen, ("a", "a", "a", "b")), respond, ("compile",))
    assert result.status == 0
    add = said["add"]
    assert add.error is None and "EQUALS_MATCH L['mode'] == 'a'" in add.output, add.output
    # at the compile stop the entry is built with the leaf: `guards` lists it as torch's own, under its source
    (leaf,) = [lf for lf in G.iter_leaves(said["guards"].data) if lf.source == "L['mode']"]
    assert (leaf.guard_type, leaf.code[0]) == ("EQUALS_MATCH", "L['mode'] == 'a'")
    # refusals are typed errors carrying the toolkit's reason; nothing was added for them
    assert said["tensor"].data.error.kind == "rejected" and "use TENSOR_MATCH" in said["tensor"].error
    assert said["unknown"].data.error.kind == "eval" and "L['nope']" in said["unknown"].error
    assert said["list"].output.count("add") == 1
    # calls 2 and 3 ran the entry with the new guard; the 'b' call failed it and Dynamo compiled again
    assert graphs.count == 2
    torch._dynamo.reset()


def cfg_scaled(x, cfg):
    return x * cfg.scale


class _Cfg:
    def __init__(self, scale):
        self.scale = scale


class _OtherCfg(_Cfg):
    pass


def run_cfg(graphs, seen, keep):
    """Calls that a copy without the TYPE_MATCH on L['cfg'] serves; then the program installs two copies of its
    own through the toolkit (one persisted), as a script run under the debugger does."""
    from dynadbg.core import toolkit

    cf = torch.compile(cfg_scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, _Cfg(2.0))
    cf(x, _Cfg(2.0))                      # the stop here drops the TYPE_MATCH
    cf(x, _OtherCfg(2.0))                 # another type, same scale: the copy serves it, no recompile
    seen.append([(e.made_by, e.hits) for e in toolkit.entries(cfg_scaled) if not e.invalidated])
    base = next(e for e in toolkit.entries(moded) if not e.invalidated)
    for persist in (False, True):
        keep.append(base.copy().inputs(x, "a").add_guard("L['mode']").install("next", persist=persist))
    return cf


def test_guard_drop_at_a_frame_stop_is_a_copy_and_the_session_end_puts_torch_back():
    from dynadbg.core import toolkit

    torch._dynamo.reset()
    moded_cf = torch.compile(moded, backend="eager")
    moded_cf(torch.ones(3), "a")              # an entry the program copies with persist=True
    graphs, seen, keep, said = _Graphs(), [], [], {}

    def respond(stop, ex, n):
        if n == 0:
            tree = ex("guards").data
            (leaf,) = [lf for lf in G.iter_leaves(tree) if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH"]
            said["drop"] = ex(f"guard drop {leaf.id}")
            said["guards"] = ex("guards").data
            said["expr"] = ex("guard add L['cfg'].scale < 10")    # an expression guard on the copy's tree
            said["add"] = ex("guard add L['x'].dtype == torch.float32")     # a second edit: a new copy
            said["list"] = ex("guard")
            said["undo"] = ex("guard undo 3")
            said["after"] = ex("guards").data
        return ex("c")

    try:
        _s, result, session, messages = drive_with(lambda s: s.start_callable(run_cfg, graphs, seen, keep), respond,
                                                   ("entry",))
        assert result.status == 0, result
        drop = said["drop"]
        assert drop.error is None and "no recompile" in drop.output, drop.output
        # the copy's tree has no TYPE_MATCH on L['cfg'] any more; its other guards are there
        left = [(lf.source, lf.guard_type) for lf in G.iter_leaves(said["guards"])]
        assert ("L['cfg']", "TYPE_MATCH") not in left and ("L['cfg'].scale", "EQUALS_MATCH") in left
        # the add swapped in a copy with both edits; its undo swapped in one with the drop only
        assert said["add"].error is None and "EQUALS_MATCH L['x'].dtype == torch.float32" in said["add"].output
        first, _expr, second = said["list"].output.splitlines()
        assert first.endswith(said["add"].data.edit.copy_id + ")") and second.endswith(first[first.rindex("(copy"):])
        assert said["undo"].error is None and "swapped for copy" in said["undo"].output, said["undo"].output
        after = [(lf.source, lf.guard_type) for lf in G.iter_leaves(said["after"])]
        assert ("L['x'].dtype", "EQUALS_MATCH") not in after and ("L['cfg']", "TYPE_MATCH") not in after
        # the expression guard went along with both swaps
        assert said["expr"].error is None
        assert any(c.startswith("DEBUGGER: L['cfg'].scale < 10") for lf in G.iter_leaves(said["after"])
                   for c in lf.code), [lf.code for lf in G.iter_leaves(said["after"])]
        # the copy served the second call and the _OtherCfg one: one graph, the copy counted both
        assert graphs.count == 1
        assert seen[0] == [("toolkit", 2)], seen
        # the session's end removed its copy and the script's own unpersisted one, not the persisted one
        assert any("removed 2 cache-entry copies" in m for m in messages), messages
        assert [h.record.removed for h in keep] == [True, False]
        assert not any(e.made_by == "toolkit" and not e.invalidated for e in toolkit.entries(cfg_scaled))
        # torch's cache as it was: the original entry comes back at the next call (no compile), with its guard
        cf = torch.compile(cfg_scaled, backend=graphs)
        cf(torch.ones(3), _Cfg(2.0))
        assert graphs.count == 1
        (back,) = [e for e in toolkit.entries(cfg_scaled) if not e.invalidated]
        assert back.made_by == "dynamo" and back.hits is None
        assert ("L['cfg']", "TYPE_MATCH") in [(lf.source, lf.guard_type) for lf in G.iter_leaves(back.guards)]
        cf(torch.ones(3), _OtherCfg(2.0))     # its TYPE_MATCH rejects the other type again: a recompile
        assert graphs.count == 2
    finally:
        toolkit.remove_all()
        torch._dynamo.reset()
        toolkit.remove_all()
