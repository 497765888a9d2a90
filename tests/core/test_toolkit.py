"""dynadbg.toolkit from a plain script (no session, no stop, no command strings): reading entries, checking
calls, drafts with guard and code edits, validation, the three install modes, persist, remove, rebind, and patch
files in a fresh process. Every program is compiled with the eager backend, on CPU."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch

from dynadbg import toolkit
from dynadbg.core import compat
from dynadbg.core.guards import iter_leaves
from forkrun import python

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True, scope="module")
def toolkit_patches_go_at_the_end():
    """Importing dynadbg.toolkit patches torch to note call sites: take the patches off for the tests after these."""
    toolkit.record_call_sites()
    yield
    toolkit.remove_all()
    toolkit.stop_recording_call_sites()
    assert torch._dynamo.convert_frame.wrap_guarded_code.__module__ == "torch._dynamo.types"


@pytest.fixture(autouse=True)
def clean():
    torch._dynamo.reset()
    yield
    toolkit.remove_all()
    torch._dynamo.reset()
    toolkit.remove_all()      # forgets originals waiting to be put back into a cache that no longer exists


class Graphs:
    """An eager backend that counts the FX graphs Dynamo compiles (a recompile adds one)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, gm, example_inputs):
        self.count += 1
        return gm.forward


torch.manual_seed(0)
lin_a = torch.nn.Linear(4, 4)
lin_b = torch.nn.Linear(4, 4)
lin_d = torch.nn.Linear(4, 4)


def reads_lin_a(x):
    return lin_a(x).relu()


class Config:
    def __init__(self, scale, version=1):
        self.scale = scale
        self.version = version


class OtherConfig(Config):
    pass


class ThirdConfig(Config):
    pass


def scaled(x, cfg):
    return x * cfg.scale + 1


def live(fn):
    return [e for e in toolkit.entries(fn) if not e.invalidated]


# ------------------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------------------


def test_entries_are_frozen_records_with_code_guards_backend_and_call_site():
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    assert entry.compile_id == "0/0" and entry.kind is toolkit.EntryKind.CACHE and entry.backend == "eager"
    assert entry.made_by == "dynamo" and entry.hits is None and not entry.invalidated
    assert any(i.opname == "LOAD_GLOBAL" and "__compiled_fn" in i.argrepr for i in entry.code.instructions)
    sources = {lf.source for lf in iter_leaves(entry.guards)}
    assert {"L['x']", "L['cfg']", "L['cfg'].scale"} <= sources
    assert entry.call_site is not None and entry.call_site.filename == __file__
    assert entry.call_site.line == "cf(torch.ones(3), Config(2.0))"
    with pytest.raises(Exception):
        entry.compile_id = "1/0"  # frozen
    assert toolkit.entries(scaled) == toolkit.entries(scaled.__code__)[:1] or toolkit.entries(scaled)


def test_check_names_every_failing_guard_and_changes_nothing():
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    assert entry.check(torch.ones(3), Config(2.0)).passed
    result = entry.check(torch.ones(2, 2), OtherConfig(3.0))
    assert not result.passed
    failing = {(lf.guard_type, lf.source) for lf in result.failing}
    assert {("TENSOR_MATCH", "L['x']"), ("TYPE_MATCH", "L['cfg']")} <= failing
    # side-effect free: the real call still hits the entry (no recompile), fail counts untouched
    graphs = Graphs()
    cg = torch.compile(scaled, backend=graphs)
    torch._dynamo.reset()
    cg(torch.ones(3), Config(2.0))
    toolkit.entries(cg)[0].check(torch.ones(5), Config(9.0))
    cg(torch.ones(3), Config(2.0))
    assert graphs.count == 1
    with pytest.raises(toolkit.ToolkitError, match="do not fit"):
        entry.check(1, 2, 3)


# ------------------------------------------------------------------------------------------------------------
# drafts and the install modes
# ------------------------------------------------------------------------------------------------------------


def test_copy_with_one_guard_dropped_and_one_real_guard_added_serves_next_to_the_original():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    assert float(cf(x, Config(2.0))[0]) == 3.0
    (entry,) = toolkit.entries(cf)
    type_leaf = next(lf for lf in iter_leaves(entry.guards)
                     if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH")
    draft = (entry.copy()
             .drop_guard(type_leaf.id)
             .add_guard("L['cfg']", "TYPE_MATCH")       # a real C++ leaf, built from the live object below
             .inputs(x, OtherConfig(2.0)))
    validation = draft.validate()
    assert validation.ok, toolkit.validation_text(validation)
    assert [(a.source, a.guard_type, a.why) for a in validation.added] == [("L['cfg']", "TYPE_MATCH", "added")]
    handle = draft.install(mode="next")
    assert handle.pending and handle.entry is None
    # a call only the copy accepts: torch makes the cache entry from it, no compile
    assert float(cf(x, OtherConfig(2.0))[0]) == 3.0
    assert float(cf(x, OtherConfig(2.0))[0]) == 3.0
    assert graphs.count == 1 and not handle.pending and handle.hits == 2
    copy = handle.entry
    assert copy is not None and copy.kind is toolkit.EntryKind.CACHE and copy.made_by == "toolkit"
    assert copy.compile_id == handle.compile_id != "0/0" and copy.hits == 2
    leaf = next(lf for lf in iter_leaves(copy.guards) if lf.source == "L['cfg']")
    assert leaf.guard_type == "TYPE_MATCH" and "OtherConfig" in leaf.code[0]
    assert copy.check(x, OtherConfig(2.0)).passed and handle.hits == 2       # checking is not serving
    # the original still serves its own calls
    assert float(cf(x, Config(2.0))[0]) == 3.0 and handle.hits == 2 and graphs.count == 1
    # the new guard fails (a third class): neither entry accepts it, Dynamo compiles
    assert float(cf(x, ThirdConfig(2.0))[0]) == 3.0
    assert graphs.count == 2 and handle.hits == 2
    # the kept guard on L['cfg'].scale still holds the copy to 2.0
    assert float(cf(x, OtherConfig(5.0))[0]) == 6.0 and graphs.count == 3


def managers(node):  # noqa: ANN001, ANN201
    yield node
    for child in node.children:
        yield from managers(child)


def sources_twice(tree):  # noqa: ANN001, ANN201
    """Sources that more than one manager of the tree guards (torch's own trees have none)."""
    seen = [n.source for n in managers(tree.root)]
    return sorted({s for s in seen if seen.count(s) > 1})


def test_an_added_leaf_joins_the_manager_its_source_already_has():
    """A guard added on ``L['x']`` (which has a manager already: its TENSOR_MATCH) goes under that manager, as
    Dynamo would build it; torch's accessor methods alone would make a second ``L['x']`` manager. A guard on a
    source below a local (``L['cfg'].version``) joins every manager along its path the same way."""
    cf = torch.compile(scaled, backend="eager")
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    handle = (entry.copy().inputs(x, Config(2.0)).add_guard("L['x']", "TYPE_MATCH")
              .add_guard("L['cfg'].version", "EQUALS_MATCH").install(mode="front"))

    copy = next(e for e in live(cf) if e.made_by == "toolkit")
    at_x = [n for n in managers(copy.guards.root) if n.source == "L['x']"]
    assert len(at_x) == 1, [n.source for n in managers(copy.guards.root)]
    assert {"TENSOR_MATCH", "TYPE_MATCH"} <= {lf.guard_type for lf in at_x[0].leaves}
    assert sources_twice(copy.guards) == [] == sources_twice(entry.guards)
    (at_cfg,) = [n for n in managers(copy.guards.root) if n.source == "L['cfg']"]
    assert {c.source for c in at_cfg.children} == {"L['cfg'].scale", "L['cfg'].version"}
    assert float(cf(x, Config(2.0))[0]) == 3.0 and handle.hits == 1   # the copy serves the call
    assert float(cf(x, Config(2.0, version=2))[0]) == 3.0 and handle.hits == 1   # the original does
    handle.remove()


def test_an_added_leaf_deep_in_a_module_joins_torchs_managers_dict_managers_included():
    """In a module, a source runs through ``__dict__`` managers and a ``DictGuardManager`` (``_modules`` of a
    ``ModuleList`` the code iterates, whose items are value managers by position): the added leaf goes under the
    very managers torch built, and a transport rebuilds its guards there too."""
    model = Stack()
    cm = torch.compile(model, backend="eager")
    x = torch.randn(2, 4)
    cm(x)
    (entry,) = toolkit.entries(cm)
    layer = "L['self']._modules['layers']._modules['1']"
    draft = entry.copy().add_guard(f"{layer}.in_features", "EQUALS_MATCH")
    assert draft.validate().ok
    handle = draft.install("front")
    copy = toolkit.entries(cm)[0]
    assert copy.made_by == "toolkit" and sources_twice(copy.guards) == [] == sources_twice(entry.guards)
    (at_layer,) = [n for n in managers(copy.guards.root) if n.source == layer]
    assert f"{layer}.in_features" in {c.source for c in managers(at_layer)}
    assert torch.allclose(cm(x), model(x)) and handle.hits == 1
    handle.remove()
    swapped = entry.copy().transport(layer, layer)
    assert swapped.validate().ok
    handle = swapped.install("front")
    assert sources_twice(toolkit.entries(cm)[0].guards) == []
    assert torch.allclose(cm(x), model(x)) and handle.hits == 1
    handle.remove()


def test_front_install_is_a_precompile_entry_and_a_miss_falls_back_to_the_original():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = (entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7")
              .add_guard("L['cfg'].version", "EQUALS_MATCH").inputs(x, Config(2.0)).install("front"))
    first = toolkit.entries(cf)[0]
    assert first.kind is toolkit.EntryKind.PRECOMPILE and first.compile_id == handle.compile_id
    assert cf(x, Config(2.0)) == 7 and handle.hits == 1
    # its own guard fails: torch goes on to the cache entry behind it (Dynamo's code, no compile)
    assert float(cf(x, Config(2.0, version=2))[0]) == 3.0
    assert handle.hits == 1 and graphs.count == 1
    handle.remove()
    assert compat.precompile_entries(scaled.__code__) == []
    assert float(cf(x, Config(2.0))[0]) == 3.0


def test_swap_of_a_front_copy_puts_the_new_draft_in_its_place_before_the_cache_entries():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7").install("front")
    assert cf(x, Config(2.0)) == 7 and handle.hits == 1
    swapped = handle.swap(entry.copy().insert(ret, "POP_TOP; LOAD_CONST 8")
                          .add_guard("L['cfg'].version", "EQUALS_MATCH").inputs(x, Config(2.0)))
    assert swapped.compile_id != handle.compile_id and handle.entry is None
    kinds = [(e.kind, e.compile_id) for e in live(cf)]
    assert kinds[0] == (toolkit.EntryKind.PRECOMPILE, swapped.compile_id) and len(kinds) == 2, kinds
    assert cf(x, Config(2.0)) == 8 and swapped.hits == 1
    # the new copy's guard fails: the cache entry behind it serves (Dynamo's code, no compile)
    assert float(cf(x, Config(2.0, version=2))[0]) == 3.0 and graphs.count == 1
    swapped.remove()
    assert compat.precompile_entries(scaled.__code__) == []


def test_replace_invalidates_the_original_a_miss_recompiles_and_remove_puts_it_back():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7").install("replace")
    assert [e.invalidated for e in toolkit.entries(cf)] == [True]
    assert cf(x, Config(2.0)) == 7 and cf(x, Config(2.0)) == 7 and handle.hits == 2 and graphs.count == 1
    # a call the copy rejects: the original is gone, Dynamo compiles the source again
    assert float(cf(x, Config(4.0))[0]) == 5.0 and graphs.count == 2
    handle.remove()
    # the original comes back without a compile; the copy never serves again
    assert float(cf(x, Config(2.0))[0]) == 3.0 and graphs.count == 2
    made = {e.made_by for e in live(cf)}
    assert made == {"dynamo"} and handle.entry is None and handle.hits == 2


def test_a_replaced_original_is_not_put_back_after_torch_resets_its_cache():
    """After ``torch._dynamo.reset()`` the entry a removed copy replaced must not come back: the next call
    compiles afresh (a debugging session started since would otherwise stop in code it never saw compiled)."""
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = live(cf)
    handle = entry.copy().add_lambda_guard(lambda f_locals: True, "always").install("replace")
    assert float(cf(x, Config(2.0))[0]) == 3.0 and handle.hits == 1
    handle.remove()
    torch._dynamo.reset()
    assert float(cf(x, Config(2.0))[0]) == 3.0
    assert graphs.count == 2                              # compiled again, not the entry from before the reset
    (back,) = live(cf)
    assert back.made_by == "dynamo" and back.code_obj is not entry.code_obj


def test_remove_leaves_a_clean_torch_state():
    cf = torch.compile(reads_lin_a, backend="eager")
    x = torch.randn(2, 4)
    cf(x)
    before = (torch._dynamo.convert_frame.CatchErrorsWrapper.__call__, torch._dynamo.convert_frame.wrap_guarded_code)
    toolkit.stop_recording_call_sites()
    try:
        bare = (torch._dynamo.convert_frame.CatchErrorsWrapper.__call__,
                torch._dynamo.convert_frame.wrap_guarded_code)
        handles = [toolkit.entries(cf)[0].copy().rebind_global("lin_a", object_with_a_name()).install("front"),
                   toolkit.entries(cf)[-1].copy().install("replace", persist=True)]
        assert torch._dynamo.convert_frame.wrap_guarded_code is not bare[1]
        for h in handles:
            h.remove()
        assert compat.precompile_entries(reads_lin_a.__code__) == []
        assert torch.allclose(cf(x), lin_a(x).relu())     # the replaced original comes back at this call
        assert (torch._dynamo.convert_frame.CatchErrorsWrapper.__call__,
                torch._dynamo.convert_frame.wrap_guarded_code) == bare
        assert "__dynadbg_bound_" not in " ".join(reads_lin_a.__globals__)
        assert toolkit.installed() == ()
        assert torch.allclose(cf(x), lin_a(x).relu())
        assert {e.made_by for e in live(cf)} == {"dynamo"}
    finally:
        toolkit.record_call_sites()
    assert (torch._dynamo.convert_frame.CatchErrorsWrapper.__call__,
            torch._dynamo.convert_frame.wrap_guarded_code) != bare or before == bare


def object_with_a_name():
    """A Linear that no global names: rebind_global pins it under a name of its own."""
    return torch.nn.Linear(4, 4)


def test_persist_reapplies_the_draft_when_dynamo_recompiles():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs, dynamic=False)
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7").install("replace", persist=True)
    assert cf(torch.ones(3), Config(2.0)) == 7
    # another shape: the copy misses, Dynamo compiles, the draft is applied to that compile as well
    assert cf(torch.ones(5), Config(2.0)) == 7 and graphs.count == 2
    assert cf(torch.ones(5), Config(2.0)) == 7 and graphs.count == 2 and handle.hits == 3
    handle.remove()
    assert float(cf(torch.ones(6), Config(2.0))[0]) == 3.0


def test_each_entry_a_persisted_copy_became_counts_its_own_calls():
    """The handle counts every call its copies served; each entry shows only its own, and a re-applied copy says
    which copy it was re-applied from (its call site is that copy's install, not a call of its own)."""
    cf = torch.compile(scaled, backend="eager", dynamic=False)
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7").install("replace", persist=True)
    for n in (3, 5, 5, 5, 6):        # shapes 5 and 6 miss the copy: Dynamo compiles, the draft is re-applied
        assert cf(torch.ones(n), Config(2.0)) == 7
    copies = {e.compile_id: e for e in live(cf)}
    assert handle.hits == 5 and sorted(e.hits for e in copies.values()) == [1, 1, 3]
    mine = copies[handle.compile_id]
    assert mine.hits == 1 and mine.reapplied_from is None
    again = [e for e in copies.values() if e is not mine]
    assert {e.reapplied_from for e in again} == {handle.compile_id}
    line = toolkit.entry_line(again[0])
    assert f"(re-applied from copy {handle.compile_id} installed at test_toolkit.py:" in line, line
    assert "installed at" in toolkit.entry_line(mine) and "re-applied" not in toolkit.entry_line(mine)
    handle.remove()


# ------------------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------------------


def test_an_edit_that_feeds_the_graph_another_object_is_guarded_on_its_new_source():
    cf = torch.compile(reads_lin_a, backend="eager")
    x = torch.randn(2, 4)
    cf(x)
    (entry,) = toolkit.entries(cf)
    row = next(i.index for i in entry.code.instructions if i.opname == "LOAD_GLOBAL" and i.argrepr == "lin_a")
    draft = entry.copy().edit(row, "LOAD_GLOBAL", "lin_b")
    validation = draft.validate()
    assert validation.ok
    assert {(a.source, a.guard_type, a.why) for a in validation.added} == {
        ("G['lin_b']._parameters['weight']", "TENSOR_MATCH", "validator"),
        ("G['lin_b']._parameters['bias']", "TENSOR_MATCH", "validator")}
    assert (0, "G['lin_a']._parameters['weight']", "G['lin_b']._parameters['weight']") in validation.new_sources
    handle = draft.install("front")
    assert torch.allclose(cf(x), lin_b(x).relu()) and handle.hits == 1


def test_an_edit_to_an_object_the_graph_was_not_traced_for_is_refused_with_its_source():
    global lin_c
    lin_c = torch.nn.Linear(4, 4).double()
    cf = torch.compile(reads_lin_a, backend="eager")
    cf(torch.randn(2, 4))
    (entry,) = toolkit.entries(cf)
    row = next(i.index for i in entry.code.instructions if i.opname == "LOAD_GLOBAL" and i.argrepr == "lin_a")
    draft = entry.copy().edit(row, "LOAD_GLOBAL", "lin_c")
    with pytest.raises(toolkit.Refused) as info:
        draft.install("front")
    problems = info.value.validation.problems
    assert {(p.kind, p.source, p.guard_type) for p in problems} >= {
        (toolkit.ProblemKind.GUARD_FAILS, "G['lin_c']._parameters['weight']", "TENSOR_MATCH")}
    assert "G['lin_c']._parameters['weight']" in str(info.value) and "float32" in str(info.value)
    assert compat.precompile_entries(reads_lin_a.__code__) == []
    # forced: installed, and the problems stay on the entry
    handle = draft.install("front", force=True)
    assert handle.entry.warnings == problems


def test_dropping_a_guard_on_a_baked_value_or_a_graph_input_is_refused():
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    baked = entry.copy().drop_guard("L['cfg'].scale").validate()
    assert [(p.kind, p.source, p.guard_type) for p in baked.problems] == [
        (toolkit.ProblemKind.BAKED_VALUE, "L['cfg'].scale", "EQUALS_MATCH")]
    unguarded = entry.copy().drop_guard("L['x']").validate()
    assert (toolkit.ProblemKind.UNGUARDED_INPUT, "L['x']") in {(p.kind, p.source) for p in unguarded.problems}
    with pytest.raises(toolkit.ToolkitError, match="no guard g999"):
        entry.copy().drop_guard("g999")
    with pytest.raises(toolkit.ToolkitError, match="is not a source"):
        entry.copy().add_guard("cfg.scale")


def test_a_bad_instruction_edit_is_refused_before_anything_is_installed():
    cf = torch.compile(scaled, backend="eager")
    cf(torch.ones(3), Config(2.0))
    (entry,) = toolkit.entries(cf)
    with pytest.raises(toolkit.ToolkitError, match="not an opcode"):
        entry.copy().edit(3, "LOAD_NOTHING")
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    with pytest.raises(toolkit.ToolkitError, match="stack underflow"):
        entry.copy().insert(ret, "POP_TOP")          # cannot even be assembled
    bad = entry.copy().insert(ret, "LOAD_CONST 1")   # assembles, but returns with a value left on the stack
    with pytest.raises(toolkit.Refused, match="returns with 1 more value on the stack"):
        bad.install("front")
    assert compat.precompile_entries(scaled.__code__) == []


# ------------------------------------------------------------------------------------------------------------
# rebind
# ------------------------------------------------------------------------------------------------------------


def test_rebind_a_global_module_serves_the_new_one_without_recompiling_and_recompiles_for_a_dtype_change():
    global lin_e
    lin_e = torch.nn.Linear(4, 4)
    graphs = Graphs()
    cf = torch.compile(reads_lin_a, backend=graphs)
    x = torch.randn(2, 4)
    assert torch.allclose(cf(x), lin_a(x).relu())
    (result,) = toolkit.rebind(cf, {"lin_a": lin_e})
    assert result.new_source == "G['lin_e']" and result.installed and not result.swapped
    assert torch.allclose(cf(x), lin_e(x).relu()) and graphs.count == 1
    assert torch.allclose(cf(x), lin_e(x).relu()) and graphs.count == 1
    assert lin_a.weight.dtype == torch.float32 and reads_lin_a.__globals__["lin_a"] is lin_a
    lin_e.double()
    # not the stale graph: the copy's guards on G['lin_e'] miss, Dynamo compiles (traced for lin_e), the rebind
    # is applied to that compile too
    out = cf(x.double())
    assert graphs.count == 2 and out.dtype == torch.float64 and torch.allclose(out, lin_e(x.double()).relu())
    assert lin_a.weight.dtype == torch.float32 and reads_lin_a.__globals__["lin_a"] is lin_a


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x


def test_rebind_a_submodule_that_the_guards_accept_installs_nothing():
    graphs = Graphs()
    model = Stack()
    cm = torch.compile(model, backend=graphs)
    x = torch.randn(2, 4)
    cm(x)
    new_layer = torch.nn.Linear(4, 4)
    (result,) = toolkit.rebind(cm, {"layers.1": new_layer})
    assert result.swapped and result.accepted_by == ("0/0",) and result.installed == ()
    assert result.old_source == "L['self']._modules['layers']._modules['1']"
    assert model.layers[1] is new_layer
    assert torch.allclose(cm(x), model(x)) and graphs.count == 1 and toolkit.installed() == ()


def test_rebind_a_submodule_of_another_dtype_is_refused_with_the_failing_guard():
    model = Stack()
    cm = torch.compile(model, backend="eager")
    cm(torch.randn(2, 4))
    old = model.layers[2]
    with pytest.raises(toolkit.Refused) as info:
        toolkit.rebind(cm, {"layers.2": torch.nn.Linear(4, 4).double()})
    problem = info.value.validation.problems[0]
    assert problem.kind is toolkit.ProblemKind.GUARD_FAILS and problem.guard_type == "TENSOR_MATCH"
    assert problem.source.startswith("L['self']._modules['layers']._modules['2']._parameters")
    assert model.layers[2] is old     # nothing changed


def test_a_compiled_torch_module_lists_its_own_entries_and_rebinds_a_layer():
    """torch compiles an ``nn.Linear`` or ``nn.Sequential`` through ``wrap_inline``: the cache lives on that
    wrapper's one code object, shared by every module (and torch function) compiled so, with the module at
    ``L['fn']``. Each target lists the entries whose guards on ``L['fn']`` accept it; checks and rebinds work."""
    graphs = Graphs()
    x = torch.randn(2, 4)
    seq = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
    cs = torch.compile(seq, backend=graphs)
    assert toolkit.entries(cs) == ()
    cs(x)
    lin = torch.nn.Linear(4, 4)
    cl = torch.compile(lin, backend=graphs)
    cl(x)
    ce = torch.compile(torch.exp, backend=graphs)
    ce(x)
    assert graphs.count == 3
    (of_seq,) = toolkit.entries(cs)
    (of_lin,) = toolkit.entries(cl)
    (of_exp,) = toolkit.entries(ce)
    assert len({of_seq.compile_id, of_lin.compile_id, of_exp.compile_id}) == 3
    assert "L['fn']._modules['3']" in {lf.source for lf in iter_leaves(of_seq.guards)}
    assert of_seq.check(x).passed and not of_seq.check(torch.randn(2, 5)).passed
    assert of_lin.copy().add_guard("L['fn'].in_features", "EQUALS_MATCH").validate().ok
    new = torch.nn.Linear(4, 4)
    (result,) = toolkit.rebind(cs, {"3": new})
    assert result.old_source == "L['fn']._modules['3']" and result.accepted_by == (of_seq.compile_id,)
    assert seq[3] is new and torch.allclose(cs(x), seq(x)) and graphs.count == 3
    with pytest.raises(toolkit.Refused):
        toolkit.rebind(cs, {"2": torch.nn.Linear(4, 4).double()})


# ------------------------------------------------------------------------------------------------------------
# patch files: save here, load in a fresh process
# ------------------------------------------------------------------------------------------------------------

PROGRAM = textwrap.dedent("""
    import sys, torch
    from dynadbg import toolkit
    torch.manual_seed(0)
    lin_a = torch.nn.Linear(4, 4)
    lin_b = torch.nn.Linear(4, 4)

    class Config:
        def __init__(self, scale, version=1):
            self.scale, self.version = scale, version

    def f(x, cfg):
        return lin_a(x).relu() * cfg.scale

    graphs = []
    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    cf = torch.compile(f, backend=backend)
    x = torch.randn(2, 4)
    cf(x, Config(2.0))
    if sys.argv[1] == "save":
        entry = toolkit.entries(cf)[0]
        draft = entry.copy().rebind_global("lin_a", lin_b).add_guard("L['cfg'].version", "EQUALS_MATCH")
        toolkit.save(sys.argv[2], draft.inputs(x, Config(2.0)).install("front"))
    else:
        if sys.argv[1] == "stale":
            del lin_b
        try:
            handles = toolkit.load(sys.argv[2], cf, inputs=((x, Config(2.0)), {}))
        except toolkit.Refused as exc:
            print("REFUSED", str(exc).splitlines()[1])
            raise SystemExit(0)
        ok = torch.allclose(cf(x, Config(2.0)), torch.nn.functional.linear(x, lin_b.weight, lin_b.bias).relu() * 2)
        other = cf(x, Config(2.0, version=2))     # the loaded guard fails: the original (lin_a) serves
        print("LOADED", len(handles), ok, handles[0].hits, len(graphs),
              torch.allclose(other, lin_a(x).relu() * 2))
""")


def test_save_then_load_in_a_fresh_process_rebuilds_the_guards_and_refuses_a_stale_patch(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    patch = tmp_path / "copy.json"

    def run(*args):
        proc = python([str(prog), *args], timeout=300)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.strip().splitlines()
        return lines[-1] if lines else ""

    run("save", str(patch))
    doc = json.loads(patch.read_text())
    (item,) = doc["patches"]
    assert doc["version"] == 2 and item["mode"] == "front" and item["name"] == "f"
    assert {g["op"] for g in item["guards"]} == {"rebind_global", "transport", "add"}
    assert run("load", str(patch)) == "LOADED 1 True 1 1 True"
    refused = run("stale", str(patch))
    assert refused.startswith("REFUSED") and "G['lin_b']" in refused


@pytest.mark.slow
def test_rebind_under_inductor_serves_the_new_module_without_recompiling():
    global lin_f
    lin_f = torch.nn.Linear(4, 4)
    cf = torch.compile(reads_lin_a, backend="inductor")
    x = torch.randn(2, 4)
    with torch.no_grad():
        assert torch.allclose(cf(x), lin_a(x).relu(), atol=1e-6)
        (entry,) = toolkit.entries(cf)
        assert entry.backend == "inductor"
        graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        (result,) = toolkit.rebind(cf, {"lin_a": lin_f})
        assert result.installed
        assert torch.allclose(cf(x), lin_f(x).relu(), atol=1e-6)
        assert torch.allclose(cf(x), lin_f(x).relu(), atol=1e-6)
        handle = toolkit.installed()[0]
        assert handle.hits == 2 and handle.entry.backend == "inductor"
        assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs      # no new compile


class Holder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(4, 4))
        self.w2 = torch.nn.Parameter(torch.randn(4, 4))
        self.w3 = torch.nn.Parameter(torch.randn(4, 4, dtype=torch.float64))


holder = Holder()


def uses_w1(x):
    return x @ holder.w1


def test_rebind_attr_reads_another_parameter_and_the_validator_guards_it():
    cf = torch.compile(uses_w1, backend="eager")
    x = torch.randn(2, 4)
    with torch.no_grad():
        cf(x)
        (entry,) = toolkit.entries(cf)
        draft = entry.copy().rebind_attr("G['holder']", "w1", "w2")
        validation = draft.validate()
        assert validation.ok and [(a.source, a.why) for a in validation.added] == [
            ("G['holder']._parameters['w2']", "validator")]
        handle = draft.install("front")
        assert torch.allclose(cf(x), x @ holder.w2) and handle.hits == 1
        with pytest.raises(toolkit.Refused, match=r"G\['holder'\]._parameters\['w3'\].*torch.float64"):
            entry.copy().rebind_attr("G['holder']", "w1", "w3").install("front")
        with pytest.raises(toolkit.ToolkitError, match="never loads"):
            entry.copy().rebind_attr("G['holder']", "w9", "w2")


def test_a_lambda_guard_on_a_copy_decides_which_calls_it_serves():
    graphs = Graphs()
    cf = torch.compile(scaled, backend=graphs)
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    handle = (entry.copy().insert(ret, "POP_TOP; LOAD_CONST 7")
              .add_lambda_guard(lambda f_locals: f_locals["x"].sum() < 10, "L['x'].sum() < 10").install("front"))
    assert cf(x, Config(2.0)) == 7 and handle.hits == 1
    assert float(cf(x * 5, Config(2.0))[0]) == 11.0 and handle.hits == 1 and graphs.count == 1
    code = [c for lf in iter_leaves(handle.entry.guards) for c in lf.code]
    assert any("L['x'].sum() < 10" in c for c in code)


def test_under_skip_guard_eval_unsafe_the_copy_and_the_original_still_serve_their_own_calls():
    cf = torch.compile(scaled, backend="eager")
    x = torch.ones(3)
    cf(x, Config(2.0))
    (entry,) = toolkit.entries(cf)
    type_leaf = next(lf for lf in iter_leaves(entry.guards)
                     if lf.source == "L['cfg']" and lf.guard_type == "TYPE_MATCH")
    ret = max(i.index for i in entry.code.instructions if i.opname == "RETURN_VALUE")
    (entry.copy().drop_guard(type_leaf.id).add_guard("L['cfg']", "TYPE_MATCH").insert(ret, "POP_TOP; LOAD_CONST 7")
     .inputs(x, OtherConfig(2.0)).install("next"))
    assert cf(x, OtherConfig(2.0)) == 7 and float(cf(x, Config(2.0))[0]) == 3.0
    # torch runs only each entry's diff guards now: the copy's distinguishing source is among them
    with torch.compiler.set_stance("default", skip_guard_eval_unsafe=True):
        assert cf(x, OtherConfig(2.0)) == 7 and float(cf(x, Config(2.0))[0]) == 3.0


def test_an_unsupported_problem_reads_as_one_clean_line() -> None:
    """A refusal's text has no stray space before its detail, with or without the guard's code."""
    from dynadbg.core.format.toolkit import problem_text
    from dynadbg.core.toolkit_model import Problem, ProblemKind

    bare = Problem(ProblemKind.UNSUPPORTED, source="L['x']", detail="TypeError: no such accessor")
    assert problem_text(bare) == "on L['x']: TypeError: no such accessor"
    coded = Problem(ProblemKind.UNSUPPORTED, source="L['x']", guard_type="TENSOR_MATCH",
                    guard_code="check_tensor(L['x'], ...)", detail="TypeError")
    assert problem_text(coded) == "TENSOR_MATCH on L['x'] (check_tensor(L['x'], ...)): TypeError"
