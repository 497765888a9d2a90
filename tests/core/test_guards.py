"""Guard trees from real `torch.compile(backend="eager")` entries: what-if statuses, ids, diffs and text."""

from __future__ import annotations

import gc
import re

import pytest
import torch

from dynadbg.core import compat
from dynadbg.core.guards import (
    GuardDiff,
    all_failing_guards,
    closure_locals,
    diff_guard_trees,
    entry_guard_tree,
    iter_leaves,
    iter_managers,
    location_text,
    parse_code_part,
)
from dynadbg.core.format.guards import format_failing, format_guard_tree
from dynadbg.core.model import GuardStatus, GuardTree, LeafGuardView, SourceLocation

compat.load()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


# --------------------------------------------------------------------------------------------------------------
# programs
# --------------------------------------------------------------------------------------------------------------

def f(x, n, cfg, lst):
    y = x + n
    if cfg["flag"]:
        y = y * cfg["scale"]
    return y + len(lst)


def f_args(**over):
    args = dict(x=torch.ones(3), n=3, cfg={"flag": True, "scale": 2.0}, lst=[1, 2])
    args.update(over)
    return args


def compiled_f_entry(dynamic=None):
    torch.compile(f, backend="eager", dynamic=dynamic)(**f_args())
    entries = compat.cache_entries(f.__code__)
    assert len(entries) == 1
    return entries[0]


def leaf_by(tree: GuardTree, source: str, guard_type: str) -> LeafGuardView:
    found = [leaf for leaf in iter_leaves(tree) if leaf.source == source and leaf.guard_type == guard_type]
    assert len(found) == 1, (source, guard_type, found)
    return found[0]


def manager_state(root) -> list[tuple[str, int, list[str]]]:
    """(source, fail_count, child sources in order) for every manager: what check() would change."""
    out = []

    def walk(mgr):
        kids = list(mgr.get_child_managers())
        out.append((mgr.get_source(), mgr.fail_count(), [k.get_source() for k in kids]))
        for kid in kids:
            walk(kid)

    walk(root)
    return out


# --------------------------------------------------------------------------------------------------------------
# reading the tree
# --------------------------------------------------------------------------------------------------------------

def test_tree_structure_ids_and_counts():
    entry = compiled_f_entry()
    tree = entry_guard_tree(entry)

    assert tree.compile_id == "0/0"
    assert not tree.evaluated and tree.passed is None and tree.failing == ()
    assert tree.root.source == "L" and tree.root.manager_type == "RootGuardManager" and tree.root.accessor is None
    managers = [node for _, node in iter_managers(tree)]
    assert [m.id for m in managers] == [f"m{i}" for i in range(len(managers))]
    leaves = list(iter_leaves(tree))
    assert [leaf.id for leaf in leaves] == [f"g{i}" for i in range(len(leaves))]
    assert tree.leaf_count == len(leaves) == tree.root.leaf_count + len(tree.epilogue)
    assert all(leaf.status is GuardStatus.NOT_EVALUATED for leaf in leaves)

    root_types = [leaf.guard_type for leaf in tree.root.leaves]
    assert {"GLOBAL_STATE", "TORCH_FUNCTION_MODE_STACK", "DEFAULT_DEVICE"} <= set(root_types)

    cfg = next(m for m in managers if m.source == "L['cfg']")
    assert cfg.accessor == "FrameLocalsGuardAccessor(key='cfg', framelocals_idx=2)"
    assert cfg.value_type == "<class 'dict'>"
    assert [c.source for c in cfg.children] == ["L['cfg']['flag']", "L['cfg']['scale']"]
    assert cfg.children[0].accessor == "DictGetItemGuardAccessor('flag')"
    assert cfg.leaf_count == 3

    n = leaf_by(tree, "L['n']", "EQUALS_MATCH")
    assert n.code == ("L['n'] == 3",)
    assert n.user_line == "y = x + n"
    assert n.location is not None and n.location.filename.endswith("test_guards.py") and n.location.function == "f"
    assert re.fullmatch(r".*test_guards\.py:\d+ in f", location_text(n.location))
    assert n.expected == "3" and n.actual is None

    dims = leaf_by(tree, "L['x']", "DIMENSION_DYNAMIC_MARKING_GUARD")
    assert len(dims.code) == 5 and dims.code[0] == "hasattr(L['x'], '_dynamo_dynamic_indices') == False"

    # same tree => same ids; torch's own text is kept for reference
    again = entry_guard_tree(entry)
    assert [(leaf.id, leaf.source, leaf.code) for leaf in iter_leaves(again)] == \
           [(leaf.id, leaf.source, leaf.code) for leaf in leaves]
    assert tree.text == ""
    assert "TREE_GUARD_MANAGER" in entry_guard_tree(entry, with_text=True).text


def test_parse_code_part_forms():
    assert parse_code_part("L['n'] == 3                                                   # y = x + n  # a/demo.py:18 in f") \
        == ("L['n'] == 3", SourceLocation("a/demo.py", 18, "f", "y = x + n"), None)
    assert parse_code_part("utils_device.CURRENT_DEVICE == None     # _dynamo/output_graph.py:1122 in init_ambient_guards") \
        == ("utils_device.CURRENT_DEVICE == None",
            SourceLocation("_dynamo/output_graph.py", 1122, "init_ambient_guards"), None)
    assert parse_code_part("___check_type_id(L['cfg'], 1), type=<class 'dict'>  # if cfg[\"flag\"]:  # d.py:8 in f (HINT: type dict)") \
        == ("___check_type_id(L['cfg'], 1), type=<class 'dict'>", SourceLocation("d.py", 8, "f", 'if cfg["flag"]:'),
            "HINT: type dict")
    assert parse_code_part("L['y'].size()[0] == L['x'].size()[1]  # duck sizing added this equality (to avoid x)") \
        == ("L['y'].size()[0] == L['x'].size()[1]", None, "duck sizing added this equality (to avoid x)")
    assert parse_code_part("___check_torch_function_mode_stack()") == ("___check_torch_function_mode_stack()", None, None)
    # the location's text is torch's spelling again
    assert location_text(SourceLocation("a/demo.py", 18, "f", "y = x + n")) == "a/demo.py:18 in f"
    assert location_text(SourceLocation("a/demo.py", 18, "f"), short=True) == "demo.py:18"


# --------------------------------------------------------------------------------------------------------------
# what-if evaluation
# --------------------------------------------------------------------------------------------------------------

def test_three_failures_at_once_while_check_verbose_reports_one():
    entry = compiled_f_entry()
    new = f_args(n=4, cfg={"flag": False, "scale": 3.0})

    torch_report = entry.guard_manager.check_verbose(new)
    assert not torch_report.result and len(torch_report.verbose_code_parts) == 1   # torch: only the first

    tree = entry_guard_tree(entry, new)
    assert tree.evaluated and tree.passed is False
    # tree order: child managers sorted by source (stable ids whatever torch's fail-count reordering does)
    assert [(leaf.source, leaf.guard_type, leaf.status) for leaf in tree.failing] == [
        ("L['cfg']['flag']", "TRUE_MATCH", GuardStatus.FAIL),
        ("L['cfg']['scale']", "EQUALS_MATCH", GuardStatus.FAIL),
        ("L['n']", "EQUALS_MATCH", GuardStatus.FAIL),
    ]
    assert [(leaf.expected, leaf.actual) for leaf in tree.failing] == [("True", "False"), ("2.0", "3.0"), ("3", "4")]
    assert [leaf.user_line for leaf in tree.failing] == ['if cfg["flag"]:', 'y = y * cfg["scale"]', "y = x + n"]
    assert tree.first_failure is not None and tree.first_failure.startswith("L['n'] == 3  # y = x + n  # ")
    # everything else passes, and the managers aggregate
    others = [leaf for leaf in iter_leaves(tree) if leaf not in tree.failing]
    assert others and all(leaf.status is GuardStatus.PASS for leaf in others)
    assert tree.root.status is GuardStatus.FAIL
    lst = next(node for _, node in iter_managers(tree) if node.source == "L['lst']")
    assert lst.status is GuardStatus.PASS

    same = entry_guard_tree(entry, f_args())
    assert same.passed is True and same.failing == () and same.first_failure is None
    assert same.root.status is GuardStatus.PASS


def test_tensor_mismatch_reason_from_torch_and_when_masked():
    entry = compiled_f_entry()
    first = entry_guard_tree(entry, f_args(x=torch.ones(2, 2)))
    x = leaf_by(first, "L['x']", "TENSOR_MATCH")
    assert x.status is GuardStatus.FAIL
    assert x.reason == "tensor 'L['x']' rank mismatch. expected 1, actual 2"        # check_verbose's text
    assert x.expected == "Tensor float32 size=[3] stride=[1] requires_grad=False"
    assert x.actual == "Tensor float32 size=[2, 2] stride=[2, 1] requires_grad=False"

    # L['n'] fails first, so check_verbose never reaches L['x']: the reason is worked out here
    masked = entry_guard_tree(entry, f_args(n=5, x=torch.ones(3, dtype=torch.float64)))
    assert masked.first_failure.startswith("L['n'] == 3")
    x = leaf_by(masked, "L['x']", "TENSOR_MATCH")
    assert x.status is GuardStatus.FAIL
    assert x.reason == "tensor 'L['x']' dtype mismatch. expected torch.float32, actual torch.float64"


def test_missing_dict_key_is_no_value_not_an_exception():
    entry = compiled_f_entry()
    tree = entry_guard_tree(entry, f_args(cfg={"flag": True}))
    scale = leaf_by(tree, "L['cfg']['scale']", "EQUALS_MATCH")
    assert scale.status is GuardStatus.NO_VALUE
    assert scale.reason == "KeyError on L['cfg']['scale']"
    node = next(node for _, node in iter_managers(tree) if node.source == "L['cfg']['scale']")
    assert node.status is GuardStatus.NO_VALUE
    assert tree.failing == (scale,)                 # torch fails the entry at that accessor
    assert tree.passed is False
    assert tree.first_failure == "KeyError on L['cfg']['scale']"
    assert leaf_by(tree, "L['cfg']['flag']", "TRUE_MATCH").status is GuardStatus.PASS

    # a whole missing argument: everything below it is NO_VALUE, one representative is listed
    args = f_args()
    del args["cfg"]
    tree = entry_guard_tree(entry, args)
    below = [leaf for leaf in iter_leaves(tree) if leaf.source.startswith("L['cfg']")]
    assert len(below) == 3 and all(leaf.status is GuardStatus.NO_VALUE for leaf in below)
    assert [leaf.source for leaf in tree.failing] == ["L['cfg']"]


def iterate_dict(x, d):
    s = x
    for k, v in d.items():
        s = s + v
    return s


def test_dict_guard_manager_positions():
    torch.compile(iterate_dict, backend="eager")(torch.ones(2), {"a": 1, "b": 2})
    entry = compat.cache_entries(iterate_dict.__code__)[0]
    tree = entry_guard_tree(entry)
    d = next(node for _, node in iter_managers(tree) if node.source == "L['d']")
    assert d.manager_type == "DictGuardManager"
    assert [(c.source, c.accessor) for c in d.children] == [
        ("list(dict.keys(L['d']))[0]", "dict key #0"), ("L['d']['a']", "dict value #0"),
        ("list(dict.keys(L['d']))[1]", "dict key #1"), ("L['d']['b']", "dict value #1"),
    ]

    short = entry_guard_tree(entry, {"x": torch.ones(2), "d": {"a": 1}})
    d = next(node for _, node in iter_managers(short) if node.source == "L['d']")
    assert [c.status for c in d.children] == [GuardStatus.PASS, GuardStatus.PASS,
                                              GuardStatus.NO_VALUE, GuardStatus.NO_VALUE]
    assert d.status is GuardStatus.FAIL and short.passed is False

    changed = entry_guard_tree(entry, {"x": torch.ones(2), "d": {"a": 1, "b": 5}})
    assert [(leaf.source, leaf.expected, leaf.actual) for leaf in changed.failing] == [("L['d']['b']", "2", "5")]


def make_scaled(k, lin):
    def scaled(x):
        return lin(x) * k
    return scaled


def test_closure_variables_are_guarded_as_locals():
    lin = torch.nn.Linear(2, 2)
    fn = make_scaled(3, lin)
    torch.compile(fn, backend="eager")(torch.ones(2))
    entry = compat.cache_entries(fn.__code__)[0]
    assert closure_locals(fn) == {"k": 3, "lin": lin}

    ok = entry_guard_tree(entry, {"x": torch.ones(2)}, closure=closure_locals(fn))
    assert ok.passed is True
    k = leaf_by(ok, "L['k']", "EQUALS_MATCH")
    assert k.status is GuardStatus.PASS and k.user_line == "return lin(x) * k"

    bad = entry_guard_tree(entry, {"x": torch.ones(2)}, closure=closure_locals(make_scaled(4, lin)))
    assert [(leaf.source, leaf.expected, leaf.actual) for leaf in bad.failing] == [("L['k']", "3", "4")]

    # arguments only: captured values are missing, reported as NO_VALUE, never raised
    bare = entry_guard_tree(entry, {"x": torch.ones(2)})
    assert leaf_by(bare, "L['k']", "EQUALS_MATCH").status is GuardStatus.NO_VALUE
    assert bare.passed is False and bare.first_failure == "KeyError on L['k']"


def add_pair(x, y):
    return x + y


def test_relational_guard_listed_once_and_judged_through_the_root():
    torch.compile(add_pair, backend="eager")(torch.ones(2), torch.ones(2))
    entry = compat.cache_entries(add_pair.__code__)[0]
    # torch hangs the same NO_TENSOR_ALIASING object under both L['x'] and L['y']
    assert "NO_TENSOR_ALIASING" in [type(g).__name__ for g in entry.guard_manager.root.get_child_managers()[1]
                                    .get_leaf_guards()]

    tree = entry_guard_tree(entry)
    aliasing = [leaf for leaf in iter_leaves(tree) if leaf.guard_type == "NO_TENSOR_ALIASING"]
    assert len(aliasing) == 1 and aliasing[0].relational and aliasing[0].source == "L['x']"
    assert aliasing[0].code == ("check_no_aliasing(L['x'], L['y'])",)
    y = next(node for _, node in iter_managers(tree) if node.source == "L['y']")
    assert "NO_TENSOR_ALIASING" not in [leaf.guard_type for leaf in y.leaves]

    t = torch.ones(2)
    assert leaf_by(entry_guard_tree(entry, {"x": t, "y": torch.ones(2)}), "L['x']", "NO_TENSOR_ALIASING").status \
        is GuardStatus.PASS
    same = entry_guard_tree(entry, {"x": t, "y": t})
    assert [(leaf.guard_type, leaf.status) for leaf in same.failing] == [("NO_TENSOR_ALIASING", GuardStatus.FAIL)]
    # the inputs that are one tensor are named, in torch's recompile-log words
    assert same.failing[0].reason == """Duplicate tensors found: ["L['x']", "L['y']"]"""
    assert same.failing[0].expected == "distinct: L['x'], L['y']"
    assert same.failing[0].actual == "same storage: L['x'] is L['y']"
    # another guard failing first (x's size) masks the aliasing guard in check_verbose; it is still judged
    small = torch.ones(3)
    masked = entry_guard_tree(entry, {"x": small, "y": small})
    assert "rank mismatch" not in masked.first_failure and "size mismatch" in masked.first_failure
    assert leaf_by(masked, "L['x']", "NO_TENSOR_ALIASING").status is GuardStatus.FAIL


def test_evaluation_never_calls_check():
    entry = compiled_f_entry()
    root = entry.guard_manager.root
    before = manager_state(root)
    for args in (f_args(n=4), f_args(cfg={"flag": False, "scale": 1.0}), f_args(lst=[1]), f_args(cfg={})):
        tree = entry_guard_tree(entry, args)
        assert tree.failing
    all_failing_guards(compat.cache_entries(f.__code__), f_args(n=9))
    assert manager_state(root) == before

    # the probe is sensitive: check() itself bumps a fail count and moves the failing child to the front
    assert root.check(f_args(lst=[1])) is False
    after = manager_state(root)
    assert after != before
    assert after[0][2][0] == "L['lst']"


def matmul(x, y):
    return x @ y


def test_epilogue_guards_with_dynamic_shapes():
    torch.compile(matmul, backend="eager", dynamic=True)(torch.ones(2, 3), torch.ones(3, 4))
    entry = compat.cache_entries(matmul.__code__)[0]
    tree = entry_guard_tree(entry)
    assert tree.epilogue and all(leaf.epilogue and leaf.guard_type == "LAMBDA_GUARD" for leaf in tree.epilogue)
    assert all(len(leaf.code) == 1 for leaf in tree.epilogue)        # one view per expression
    codes = [leaf.code[0] for leaf in tree.epilogue]
    assert "L['y'].size()[0] == L['x'].size()[1]" in codes
    duck = tree.epilogue[codes.index("L['y'].size()[0] == L['x'].size()[1]")]
    assert duck.note is not None and duck.note.startswith("duck sizing")
    assert tree.leaf_count == tree.root.leaf_count + len(tree.epilogue)
    assert tree.epilogue[0].id == f"g{tree.root.leaf_count}"

    ok = entry_guard_tree(entry, {"x": torch.ones(5, 7), "y": torch.ones(7, 2)})
    assert ok.passed is True

    bad = entry_guard_tree(entry, {"x": torch.ones(2, 3), "y": torch.ones(5, 4)})
    assert [(leaf.code[0], leaf.status) for leaf in bad.failing] == [
        ("L['y'].size()[0] == L['x'].size()[1]", GuardStatus.FAIL)]
    assert bad.first_failure.startswith("L['y'].size()[0] == L['x'].size()[1]")
    passing = [leaf for leaf in bad.epilogue if leaf is not bad.failing[0]]
    assert passing and all(leaf.status is GuardStatus.PASS for leaf in passing)

    size_one = entry_guard_tree(entry, {"x": torch.ones(1, 3), "y": torch.ones(3, 4)})
    assert [leaf.code[0] for leaf in size_one.failing] == ["2 <= L['x'].size()[0]"]


def test_global_state_guard_reports_torch_reason():
    entry = compiled_f_entry()
    with torch.no_grad():
        tree = entry_guard_tree(entry, f_args())
    state = leaf_by(tree, "L", "GLOBAL_STATE")
    assert state.status is GuardStatus.FAIL
    assert state.reason.startswith("GLOBAL_STATE changed: grad_mode")
    assert tree.failing == (state,)
    assert leaf_by(tree, "L", "DEFAULT_DEVICE").status is GuardStatus.PASS
    assert entry_guard_tree(entry, f_args()).passed is True

    torch.set_default_device("cpu")          # sets utils_device.CURRENT_DEVICE and pushes a DeviceContext mode
    try:
        tree = entry_guard_tree(entry, f_args())
    finally:
        torch.set_default_device(None)
    assert [(leaf.guard_type, leaf.expected, leaf.actual) for leaf in tree.failing] == [
        ("TORCH_FUNCTION_MODE_STACK", "the mode stack at compile time", "mode stack [DeviceContext]"),
        ("DEFAULT_DEVICE", "None", "device(type='cpu')"),
    ]

    with torch.autocast("cpu"):               # global state, and the tensors' thread-local dispatch keys
        tree = entry_guard_tree(entry, f_args())
    assert [leaf.guard_type for leaf in tree.failing] == ["GLOBAL_STATE", "TENSOR_MATCH"]
    assert tree.failing[0].reason == "GLOBAL_STATE changed: autocast(cpu)_enabled"
    assert tree.failing[1].reason.startswith("tensor 'L['x']' dispatch key set mismatch.")


def test_invalidated_entry_carries_the_reason():
    def make():
        class Tmp:
            def __init__(self):
                self.a = 2
        return Tmp()

    def scale(x, o):
        return x * o.a

    import weakref

    o = make()
    torch.compile(scale, backend="eager")(torch.ones(2), o)
    cls = weakref.ref(type(o))
    del o
    gc.collect()
    if cls() is not None:  # e.g. Python 3.12 can keep a fresh class alive a while (type caches)
        pytest.skip("this interpreter kept the guarded class alive, so torch did not invalidate the entry")
    entry = compat.cache_entries(scale.__code__)[0]
    assert entry.code is None                                  # torch keeps the dead entry listed

    tree = entry_guard_tree(entry, {"x": torch.ones(2)})
    assert tree.invalidated == "Cache line invalidated because type(L['o']) got deallocated"
    assert tree.first_failure == tree.invalidated
    assert tree.passed is False and len(tree.failing) == 1
    assert tree.failing[0].guard_type == "CACHE_ENTRY_INVALIDATED"
    assert entry_guard_tree(entry).first_failure == tree.invalidated
    assert format_failing([tree]) == "0/0: invalidated: Cache line invalidated because type(L['o']) got deallocated"


class WarmupScaled(torch.nn.Module):
    """As in ../shared/cases/002_module_int_counter_attr.py (pytorch#128319)."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.counter = 0

    def forward(self, x):
        self.counter += 1
        warm = min(self.counter, 4) / 4.0
        return self.proj(x) * warm


def test_module_int_counter_attr_every_entry_fails_on_its_counter():
    m = WarmupScaled()
    cm = torch.compile(m, backend="eager")
    x = torch.randn(2, 4)
    cm(x)
    cm(x)                                                # counter 1 -> 2: recompiles, entry 0/1
    entries = compat.cache_entries(WarmupScaled.forward.__code__)
    assert [str(e.compile_id) for e in entries] == ["0/1", "0/0"]

    trees = all_failing_guards(entries, {"self": m, "x": x})     # counter is now 2
    assert [t.compile_id for t in trees] == ["0/1", "0/0"]
    for tree, was in zip(trees, ("1", "0")):
        assert [(leaf.source, leaf.guard_type) for leaf in tree.failing] == [("L['self'].counter", "EQUALS_MATCH")]
        counter = tree.failing[0]
        assert counter.code == (f"L['self'].counter == {was}",)
        assert (counter.expected, counter.actual) == (was, "2")
        assert counter.user_line == "self.counter += 1"
        assert counter.note.startswith("HINT: torch.compile considers integer attributes of the nn.Module")
        assert tree.first_failure.startswith(f"L['self'].counter == {was}  # self.counter += 1  # ")

    text = format_failing(trees)
    assert text.index("0/1: 1 failing guard") < text.index("0/0: 1 failing guard")
    assert "  g" in text and "EQUALS_MATCH  L['self'].counter == 1\n" in text
    assert "     line: self.counter += 1  (" in text
    assert "     expected 1, actual 2" in text
    assert "     note: HINT: torch.compile considers integer attributes" in text


# --------------------------------------------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------------------------------------------

def test_diff_guard_trees():
    cf = torch.compile(f, backend="eager", dynamic=False)
    cf(**f_args())
    cf(**f_args(n=4))
    new_entry, old_entry = compat.cache_entries(f.__code__)
    old, new = entry_guard_tree(old_entry), entry_guard_tree(new_entry)
    assert diff_guard_trees(old, new) == [GuardDiff("changed", "L['n']", "EQUALS_MATCH", "L['n'] == 3", "L['n'] == 4",
                                                    leaf_by(old, "L['n']", "EQUALS_MATCH").id,
                                                    leaf_by(new, "L['n']", "EQUALS_MATCH").id)]
    assert diff_guard_trees(old, old) == []

    torch.compile(add_pair, backend="eager")(torch.ones(2), torch.ones(2))
    other = entry_guard_tree(compat.cache_entries(add_pair.__code__)[0])
    diffs = diff_guard_trees(old, other)
    kinds = {(d.kind, d.source, d.guard_type) for d in diffs}
    assert ("removed", "L['n']", "EQUALS_MATCH", ) in kinds
    assert ("added", "L['y']", "TENSOR_MATCH") in kinds
    assert ("added", "L['x']", "NO_TENSOR_ALIASING") in kinds
    assert not any(d.source == "L" for d in diffs)              # ambient guards are the same
    removed = next(d for d in diffs if d.kind == "removed" and d.source == "L['n']")
    assert removed.old_code == "L['n'] == 3" and removed.new_code is None and removed.new_id is None


# --------------------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------------------

def stable(text: str) -> str:
    """Golden-comparable text: object ids and file locations replaced."""
    text = re.sub(r"\b\d{9,}\b", "ID", text)
    return re.sub(r"\((?:[^()\s]*/)?[^()\s]*\.py:\d+ in (\w+)\)", r"(LOC in \1)", text)


def test_format_guard_tree_golden_parts():
    entry = compiled_f_entry()
    tree = entry_guard_tree(entry, f_args(n=4, cfg={"flag": False, "scale": 3.0}, lst=[1, 2, 3]))
    text = stable(format_guard_tree(tree))
    assert text == stable(format_guard_tree(entry_guard_tree(entry, f_args(n=4, cfg={"flag": False, "scale": 3.0},
                                                                          lst=[1, 2, 3]))))
    lines = text.splitlines()
    assert lines[0] == f"guards of 0/0: {tree.leaf_count} leaves, 4 failing"
    assert lines[1] == "L  [RootGuardManager]  FAIL"
    assert lines[2].startswith("  g0 PASS ")

    ids = {(leaf.source, leaf.guard_type): leaf.id for leaf in iter_leaves(tree)}
    n, cfg_type, flag, scale = (ids["L['n']", "EQUALS_MATCH"], ids["L['cfg']", "TYPE_MATCH"],
                                ids["L['cfg']['flag']", "TRUE_MATCH"], ids["L['cfg']['scale']", "EQUALS_MATCH"])
    lst_type, lst_len = ids["L['lst']", "TYPE_MATCH"], ids["L['lst']", "LENGTH_CHECK"]
    expected_block = f"""\
  L['n']  [GuardManager via FrameLocalsGuardAccessor(key='n', framelocals_idx=1)]  FAIL
    {n} FAIL EQUALS_MATCH  L['n'] == 3  # y = x + n  (LOC in f)
      expected 3, actual 4"""
    assert expected_block in text
    expected_block = f"""\
  L['cfg']  [GuardManager via FrameLocalsGuardAccessor(key='cfg', framelocals_idx=2)]  FAIL
    {cfg_type} PASS TYPE_MATCH  ___check_type_id(L['cfg'], ID), type=<class 'dict'>  # if cfg["flag"]:  (LOC in f)
    L['cfg']['flag']  [GuardManager via DictGetItemGuardAccessor('flag')]  FAIL
      {flag} FAIL TRUE_MATCH  L['cfg']['flag'] == True  # if cfg["flag"]:  (LOC in f)
        expected True, actual False
    L['cfg']['scale']  [GuardManager via DictGetItemGuardAccessor('scale')]  FAIL
      {scale} FAIL EQUALS_MATCH  L['cfg']['scale'] == 2.0  # y = y * cfg["scale"]  (LOC in f)
        expected 2.0, actual 3.0
  L['lst']  [GuardManager via FrameLocalsGuardAccessor(key='lst', framelocals_idx=3)]  FAIL
    {lst_type} PASS TYPE_MATCH  ___check_type_id(L['lst'], ID), type=<class 'list'>  # return y + len(lst)  (LOC in f)
    {lst_len} FAIL LENGTH_CHECK  len(L['lst']) == 2  # return y + len(lst)  (LOC in f)
      expected len 2, actual len 3"""
    assert expected_block in text
    failing_block = f"""\
failing (4):
  {flag} TRUE_MATCH L['cfg']['flag']: L['cfg']['flag'] == True  (expected True, actual False)
  {scale} EQUALS_MATCH L['cfg']['scale']: L['cfg']['scale'] == 2.0  (expected 2.0, actual 3.0)
  {lst_len} LENGTH_CHECK L['lst']: len(L['lst']) == 2  (expected len 2, actual len 3)
  {n} EQUALS_MATCH L['n']: L['n'] == 3  (expected 3, actual 4)
first failure: L['n'] == 3  # y = x + n  # """
    assert failing_block in text

    plain = format_guard_tree(entry_guard_tree(entry))
    assert plain.splitlines()[0] == f"guards of 0/0: {tree.leaf_count} leaves"
    assert f"    {n} EQUALS_MATCH  L['n'] == 3  # y = x + n  (" in plain
    assert "failing" not in plain

    short = format_guard_tree(tree, max_leaves=3).splitlines()
    cut_at = short.index(f"... {tree.leaf_count - 3} more leaves not shown")
    assert sum(1 for line in short[:cut_at] if re.match(r"\s+g\d+ ", line)) == 3
    assert "failing (4):" in short                       # the summary is never cut


def test_leaf_count_of_a_real_model_matches_a_raw_walk():
    """../shared/cases/021: a 24-block LayerNorm+Linear net has 577 leaf guard objects on torch 2.13."""

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(8)
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return self.lin(self.norm(x)) + 2

    class Net(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.blocks = torch.nn.ModuleList([Block() for _ in range(n)])

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            return x * 5

    net, x = Net(24), torch.randn(4, 8)
    torch.compile(net, backend="eager")(x)
    entry = compat.cache_entries(Net.forward.__code__)[0]

    seen: list = []  # keep every leaf referenced: identity is only stable while a reference is held

    def raw_count(mgr):
        kids = list(mgr.get_child_managers())
        if hasattr(mgr, "get_key_value_managers"):
            for _, (km, vm) in mgr.get_key_value_managers().items():
                kids += [m for m in (km, vm) if m is not None]
        fresh = [g for g in mgr.get_leaf_guards() if not any(g is s for s in seen)]  # relational guards once
        seen.extend(fresh)
        return len(fresh) + sum(raw_count(k) for k in kids)

    tree = entry_guard_tree(entry, {"self": net, "x": x})
    assert tree.root.leaf_count == raw_count(entry.guard_manager.root)
    if torch.__version__.startswith("2.13"):
        assert tree.root.leaf_count == 574
    epilogue = entry.guard_manager.root.get_epilogue_lambda_guards()
    assert len(tree.epilogue) == sum(len(g.verbose_code_parts()) for g in epilogue)
    assert tree.leaf_count == tree.root.leaf_count + len(tree.epilogue)
    if torch.__version__.startswith("2.13"):
        # torch 2.13 checks object aliasing (the two modules' `F`) in an epilogue lambda, not only shapes
        epilogue = entry.guard_manager.root.get_epilogue_lambda_guards()
        assert len(tree.epilogue) == sum(len(g.verbose_code_parts()) for g in epilogue) == 1
        assert tree.epilogue[0].code[0].endswith("_normalization'].F is G['__import_torch_dot_nn_dot_modules_dot_linear'].F")
        assert tree.leaf_count == 575
    assert tree.passed is True
    net.blocks[3].norm.eps = 1.0
    after = entry_guard_tree(entry, {"self": net, "x": x})
    assert [leaf.code[0] for leaf in after.failing] == [
        "L['self']._modules['blocks']._modules['3']._modules['norm'].eps == 1e-05"]
    assert after.failing[0].actual == "1.0"


def _folder_sharing_only_root() -> str | None:
    """A writable folder whose path shares only ``/`` with torch's install (where torch cuts names wrong)."""
    import os
    import tempfile

    base = os.path.dirname(os.path.dirname(torch.utils._traceback.__file__))
    for where in ("/var/tmp", "/dev/shm", os.path.expanduser("~"), "/tmp"):
        if os.path.isdir(where) and os.access(where, os.W_OK) and os.path.commonpath([where, base]) == "/":
            return tempfile.mkdtemp(dir=where, prefix="dynadbg-loc-")
    return None


def test_guard_location_names_the_file_where_torch_cuts_its_first_letter():
    """Torch names a guard's file by the path after the folder it shares with torch's install; when that is only
    ``/`` it also drops the first letter (``/var/tmp/x/prog.py`` is shown ``ar/tmp/x/prog.py``). The guard
    tree's location names the real file then; elsewhere it keeps torch's (correct) short form."""
    import importlib.util
    import os
    import shutil
    from torch.utils._traceback import shorten_filename

    folder = _folder_sharing_only_root()
    if folder is None:
        pytest.skip("no writable folder shares only / with torch's install here")
    try:
        path = os.path.join(folder, "prog.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("def f(x, n):\n    return x * n\n")
        spec = importlib.util.spec_from_file_location("dynadbg_loc_prog", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        torch.compile(module.f, backend="eager")(torch.ones(2), 3)
        (entry,) = compat.cache_entries(module.f.__code__)
        leaf = leaf_by(entry_guard_tree(entry), "L['n']", "EQUALS_MATCH")
        assert shorten_filename(path) == path[2:], "torch no longer cuts the first letter: the repair can go"
        assert leaf.location is not None and leaf.location.filename == path and leaf.location.lineno == 2
        assert location_text(leaf.location) == f"{path}:2 in f"
        # a name torch shortens correctly is kept as torch writes it
        assert parse_code_part("L['n'] == 3  # y  # tests/programs/x.py:3 in f")[1].filename == "tests/programs/x.py"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
